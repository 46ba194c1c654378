//! # rextio-host
//!
//! The Rextio host as a library: a [`Registry`] of backend plugins, and a [`Project`] whose
//! `check` and `build` run the pipeline stages and return typed reports.
//!
//! ```text
//! rextio.toml + src/**/*.py
//!   config      ProjectConfig::load         ProjectConfig
//!   frontend    parse_project               Vec<SourceModule>      (AST, imports, aliases)
//!   analysis    analyse_module              Vec<ModuleAnalysis>    (routes, claims, diagnostics, FnIr)
//!                 via registry.offer         SiteResolution per site (contracts checked)
//!   target      preflight / gate            the provider's verdict on [target]; functions needing
//!                                           an unauthorised device capability demoted (RXT019)
//!   inline      inline_calls                FnIr with straight-line native callees inlined
//!   unroll      specialise                  FnIr with ModuleList loops of stated length written out
//!                                           behind a length check
//!   ownership   mark_moves                  FnIr with last uses of exclusive locals moved
//!   emit        lower_function              LoweredFunction        (plugin answers parsed; failures -> RXT014)
//!               generate_crate              GeneratedCrate         (Cargo.toml, lib.rs, line map)
//!   package     python_tree                 wrapper modules with binding blocks
//!   build       cargo_driver::build         CargoOutcome; rustc errors mapped to functions,
//!                                           which are demoted (RXT017) and the crate rebuilt
//!   wheel       write_wheel                 dist/<name>-<ver>-<tags>.whl
//!   report      CheckReport / BuildReport   .rextio/reports/{check,build}.json
//!   certify     certify                     evidence (rules verified on this host)
//! ```
//!
//! Each stage is a module with a typed input and output; stages never print (diagnostics are
//! values, logs go through `tracing`).
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
pub mod certify;
pub mod codes;
pub mod config;
pub mod constants;
pub mod develop;
pub mod docs;
pub mod emit;
pub mod explain;
pub mod frontend;
pub mod init;
pub mod inline;
pub mod ir;
pub mod ir_module;
pub mod ownership;
pub mod package;
pub mod paths;
pub mod project;
pub mod python_env;
pub mod registry;
pub mod report;
pub mod target;
pub mod unroll;
pub mod vendor;
pub mod wheel;

pub use project::{BuildOptions, BuildOutput, CheckOutput, Generated, Project, ProjectError};
pub use registry::{Registry, RegistryBuilder};
