//! # rextio-host
//!
//! The Rextio host as a library: a [`Registry`] of backend plugins, and a [`Project`] whose
//! `check` and `build` run the pipeline stages (see [`project`]) and return typed reports.
//!
//! ```no_run
//! let registry = rextio_host::Registry::builder().with_default_plugins().build()?;
//! let project = rextio_host::Project::open("examples/scoring")?;
//! let check = project.check(&registry)?;
//! let built = project.build(&registry, &rextio_host::BuildOptions::default())?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod analysis;
pub mod cargo_driver;
pub mod codegen;
pub mod codes;
pub mod config;
pub mod evidence;
pub mod explain;
pub mod frontend;
pub mod ir;
pub mod lower;
pub mod ownership;
pub mod project;
pub mod python_env;
pub mod registry;
pub mod report;
pub mod wheel;

pub use project::{BuildOptions, BuildOutput, CheckOutput, Generated, Project, ProjectError};
pub use registry::{Registry, RegistryBuilder};
