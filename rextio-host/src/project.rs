//! The pipeline driver.
//!
//! ```text
//! rextio.toml + src/**/*.py
//!   -> frontend   parse_project        Vec<SourceModule>
//!   -> analysis   analyse_module       Vec<ModuleAnalysis>   (routes, claims, diagnostics, IR)
//!   -> inline     inline_calls         FnIr with straight-line native callees inlined
//!   -> unroll     specialise           FnIr with stated-length ModuleList loops written out
//!   -> ownership  mark_moves           FnIr with last uses moved
//!   -> emit       lower_function       Vec<LoweredFunction>  (failures demote to Python)
//!                 generate_crate       GeneratedCrate (Cargo.toml, lib.rs, line map)
//!   -> package    python_tree          wrapper modules with binding blocks
//!   -> build      cargo_driver::build  CargoOutcome (extension .so); functions whose Rust does
//!                                      not compile are demoted to Python and the crate rebuilt
//!   -> wheel      write_wheel          dist/*.whl
//!   -> outputs    .rextio/build/python, .rextio/reports/{check,build}.json
//! ```

use crate::analysis::{ModuleAnalysis, Route};
use crate::cargo_driver::{self, CargoError, CargoRequest};
use crate::config::{ConfigError, ProjectConfig};
use crate::emit::{self, lower_function, Placed};
use crate::frontend::{self, FrontendError, SourceModule};
use crate::python_env::{self, PythonError};
use crate::registry::Registry;
use crate::report::{Artifacts, BuildReport, CargoReport, CargoStatus, CheckReport, Timings};
use crate::wheel::WheelInfo;
use rextio_plugin_api::{CrateDependency, Diagnostic};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use thiserror::Error;

/// Anything that stops a check or build.
#[derive(Debug, Error)]
pub enum ProjectError {
    /// Configuration.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Sources.
    #[error(transparent)]
    Frontend(#[from] FrontendError),
    /// A plugin enabled in rextio.toml that is not registered.
    #[error("rextio.toml enables plugin `{id}`, which is not registered; available: {available}")]
    UnknownPlugin {
        /// The id.
        id: String,
        /// Registered ids.
        available: String,
    },
    /// A device provider named in `[target]` that is not registered.
    #[error("rextio.toml [target] names device provider `{id}`, which is not registered in this rextio (registered: {available}); accelerator lanes need a build with that provider")]
    UnknownProvider {
        /// The id.
        id: String,
        /// Registered ids.
        available: String,
    },
    /// Interpreter.
    #[error(transparent)]
    Python(#[from] PythonError),
    /// Cargo.
    #[error(transparent)]
    Cargo(#[from] CargoError),
    /// File system.
    #[error("cannot write '{path}': {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A plugin answered outside its declared rules or diagnostic codes.
    #[error("plugin contract violated: {0}")]
    PluginContract(String),
    /// The interpreter could not be run to compile the sources.
    #[error("cannot compile the sources with the project's interpreter: {0}")]
    Compile(String),
    /// The emitter could not assemble the crate (an internal error, not a plugin's).
    #[error("cannot generate the native crate: {0}")]
    Emit(String),
    /// Report serialization.
    #[error("cannot serialize report: {0}")]
    Json(#[from] serde_json::Error),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ProjectError + '_ {
    move |source| ProjectError::Io {
        path: path.to_owned(),
        source,
    }
}

/// The generated crate's record of the device target it was generated for (only for a ready
/// target).
pub const TARGET_STAMP: &str = "rextio-target.json";

fn write(path: &Path, text: &str) -> Result<(), ProjectError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
    }
    std::fs::write(path, text).map_err(io(path))
}

/// An opened project.
#[derive(Debug, Clone)]
pub struct Project {
    root: PathBuf,
    config: ProjectConfig,
    name: String,
}

/// The result of `check`.
pub struct CheckOutput {
    /// The report (also written to `.rextio/reports/check.json`).
    pub report: CheckReport,
    /// The device target's preflight, when `rextio.toml` has a `[target]`.
    pub preflight: Option<crate::target::Preflight>,
    /// Parsed modules.
    pub modules: Vec<SourceModule>,
    /// Analyses.
    pub analyses: Vec<ModuleAnalysis>,
    /// The interpreter that compiled every module, when one was found.
    pub compiled_with: Option<PathBuf>,
}

/// Options of `build`.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// `--python`.
    pub python: Option<PathBuf>,
    /// Cargo time limit.
    pub timeout: Duration,
    /// Shared target directory (default: `REXTIO_TARGET_DIR`, else one per Python environment
    /// under `~/.cache/rextio/target`; see [`crate::paths::target_dir`]).
    pub target_dir: Option<PathBuf>,
    /// `--strict`: generated Rust that does not compile fails the build instead of demoting
    /// the functions it falls in to Python.
    pub strict: bool,
    /// Where progress goes (stages, cargo's units and diagnostics as they happen).
    pub events: Option<cargo_driver::EventSink>,
}

impl Default for BuildOptions {
    fn default() -> Self {
        Self {
            python: None,
            timeout: Duration::from_secs(1800),
            target_dir: None,
            strict: false,
            events: None,
        }
    }
}

/// The result of `generate`: sources written, nothing compiled.
pub struct Generated {
    /// The check, after lowering demoted any function that could not be lowered.
    pub check: CheckOutput,
    /// The crate, when at least one function is native.
    pub crate_: Option<emit::GeneratedCrate>,
    /// Runtime crates of the plugins used, and the target provider's.
    pub deps: Vec<CrateDependency>,
    /// Environment the target provider's contribution gives cargo.
    pub provider_env: Vec<(String, String)>,
    /// Python requirements of the plugins used (the wheel's `Requires-Dist`).
    pub requires_dist: Vec<String>,
    /// `.rextio/build/python`.
    pub python_dir: PathBuf,
    /// `.rextio/build/crate`.
    pub crate_dir: PathBuf,
    /// Milliseconds spent in check.
    pub t_check: u128,
    /// Milliseconds spent lowering and generating.
    pub t_codegen: u128,
}

/// The result of `build`.
pub struct BuildOutput {
    /// The report (also written to `.rextio/reports/build.json`).
    pub report: BuildReport,
    /// The check part.
    pub check: CheckOutput,
    /// `.rextio/build/python`.
    pub python_dir: PathBuf,
    /// The extension, when something is native.
    pub extension: Option<PathBuf>,
    /// The wheel in `dist/`.
    pub wheel: Option<PathBuf>,
    /// The interpreter the extension was built for, and the candidates skipped before it
    /// (absent when nothing is native).
    pub python: Option<python_env::Discovery>,
}

/// How the generate-and-compile rounds of a build ended.
struct Rounds {
    /// The last round's generation.
    generated: Generated,
    /// Cargo's outcome.
    cargo: CargoReport,
    /// The extension copied into the Python tree, when cargo succeeded.
    extension: Option<PathBuf>,
    /// Cargo's error, when the build failed.
    failure: Option<CargoError>,
    /// The interpreter the crate was built for (found at the first compile).
    python: Option<python_env::Discovery>,
}

impl Rounds {
    fn end(
        generated: Generated,
        cargo: CargoReport,
        extension: Option<PathBuf>,
        failure: Option<CargoError>,
        python: Option<python_env::Discovery>,
    ) -> Self {
        Self {
            generated,
            cargo,
            extension,
            failure,
            python,
        }
    }
}

impl Project {
    /// Open `ROOT` (reads `ROOT/rextio.toml`).
    pub fn open(root: impl AsRef<Path>) -> Result<Self, ProjectError> {
        let root = root.as_ref();
        let root =
            std::fs::canonicalize(root).map_err(|_| ConfigError::Missing(root.to_owned()))?;
        let config = ProjectConfig::load(&root)?;
        let name = config.project.name.clone().unwrap_or_else(|| {
            root.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "project".into())
        });
        Ok(Self { root, config, name })
    }

    /// The project root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The project name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The interpreter this project builds, develops, certifies and benches with: the one named
    /// by `--python` > `REXTIO_PYTHON` > `[toolchain] python`, else the first of
    /// `$VIRTUAL_ENV/bin/python`, `python3`, `python` on PATH that probes as a supported
    /// CPython (see [`python_env`]), with the candidates skipped on the way.
    pub fn python(&self, cli: Option<&Path>) -> Result<python_env::Discovery, PythonError> {
        python_env::discover(&python_env::Inputs::from_env(
            cli,
            self.config.toolchain.python.as_deref(),
            &self.root,
        ))
    }

    /// `.rextio/`.
    pub fn state_dir(&self) -> PathBuf {
        self.root.join(".rextio")
    }

    fn enabled(&self, registry: &Registry) -> Result<&[String], ProjectError> {
        for id in &self.config.plugins.enabled {
            if registry.plugin(id).is_none() {
                let available: Vec<&str> =
                    registry.plugins().iter().map(|r| r.plugin.id()).collect();
                return Err(ProjectError::UnknownPlugin {
                    id: id.clone(),
                    available: available.join(", "),
                });
            }
        }
        // Fail closed: an accelerator target nobody can authorise must not silently build for CPU.
        if let Some(id) = self
            .config
            .target
            .as_ref()
            .and_then(|t| t.device_provider.as_ref())
        {
            if !registry.providers().iter().any(|p| p.provider.id() == id) {
                let available: Vec<&str> = registry
                    .providers()
                    .iter()
                    .map(|p| p.provider.id())
                    .collect();
                let available = if available.is_empty() {
                    "none".to_owned()
                } else {
                    available.join(", ")
                };
                return Err(ProjectError::UnknownProvider {
                    id: id.clone(),
                    available,
                });
            }
        }
        Ok(&self.config.plugins.enabled)
    }

    /// Compiles every module with `python` (nothing executed): the first one CPython rejects is
    /// a syntax error with CPython's line and message.
    fn compile_modules(&self, modules: &[SourceModule], python: &Path) -> Result<(), ProjectError> {
        let files: Vec<PathBuf> = modules
            .iter()
            .map(|m| self.root.join(&m.rel_path))
            .collect();
        match python_env::compile_sources(python, &files) {
            Ok(None) => Ok(()),
            Ok(Some(e)) => {
                let path = modules
                    .iter()
                    .find(|m| self.root.join(&m.rel_path) == e.path)
                    .map_or(e.path, |m| m.rel_path.clone());
                Err(ProjectError::Frontend(FrontendError::Syntax {
                    path,
                    line: e.line,
                    column: e.column,
                    message: e.message,
                }))
            }
            Err(why) => Err(ProjectError::Compile(why)),
        }
    }

    /// Parse and analyse; writes `check.json`.
    pub fn check(&self, registry: &Registry) -> Result<CheckOutput, ProjectError> {
        let enabled = self.enabled(registry)?;
        let modules = frontend::parse_project(&self.root)?;
        // What CPython rejects at import never reaches a report or a package: with an
        // interpreter at hand, every module is also compiled by it (`build` compiles them again
        // when it builds for another interpreter).
        let compiled_with = match self.python(None) {
            Ok(d) => {
                self.compile_modules(&modules, &d.chosen.executable)?;
                Some(d.chosen.executable)
            }
            Err(_) => None,
        };
        let index = crate::analysis::index_project(&modules, registry, enabled);
        let mut analyses: Vec<ModuleAnalysis> =
            crate::analysis::analyse_project(&modules, registry, enabled, &index);
        let preflight = crate::target::preflight(registry, self.config.target.as_ref(), &analyses);
        crate::target::gate(&mut analyses, registry, preflight.as_ref());
        crate::analysis::propagate_routes(&mut analyses);
        let mut report = CheckReport::new(&analyses);
        report.target = preflight.as_ref().map(|p| p.report.clone());
        write(
            &self.state_dir().join("reports").join("check.json"),
            &serde_json::to_string_pretty(&report)?,
        )?;
        // A plugin that answers outside its declared rules and codes is broken: stop, naming it
        // (the report above keeps the details).
        let violations: Vec<String> = analyses
            .iter()
            .flat_map(|m| &m.functions)
            .flat_map(|f| &f.diagnostics)
            .filter(|d| d.code == crate::codes::PLUGIN_CONTRACT)
            .map(|d| d.message.clone())
            .collect();
        if !violations.is_empty() {
            return Err(ProjectError::PluginContract(violations.join("; ")));
        }
        Ok(CheckOutput {
            report,
            preflight,
            modules,
            analyses,
            compiled_with,
        })
    }

    /// Check, lower and generate: writes the Python tree and the crate sources, without
    /// running cargo.
    pub fn generate(&self, registry: &Registry) -> Result<Generated, ProjectError> {
        self.generate_with(registry, &BTreeMap::new())
    }

    /// [`Project::generate`], with the functions in `demoted` (by qualified name) kept on
    /// Python with the given diagnostic instead of being lowered.
    fn generate_with(
        &self,
        registry: &Registry,
        demoted: &BTreeMap<String, Diagnostic>,
    ) -> Result<Generated, ProjectError> {
        let t0 = Instant::now();
        let mut check = self.check(registry)?;
        let t_check = t0.elapsed().as_millis();

        let t1 = Instant::now();
        demote_listed(&mut check.analyses, demoted);
        let (placed, used_plugins) = lower_all(&mut check, registry);
        let target = check.report.target.take();
        check.report = CheckReport::new(&check.analyses);
        check.report.target = target;
        write(
            &self.state_dir().join("reports").join("check.json"),
            &serde_json::to_string_pretty(&check.report)?,
        )?;

        let needs = PluginNeeds::gather(registry, &used_plugins, &check)?;
        // The runtime crates' sources travel with the plugins; write them under the cache.
        let crates_root = crate::vendor::crates_root();
        let deps =
            crate::vendor::materialize(needs.deps, &crates_root).map_err(io(&crates_root))?;
        let ext_name = emit::extension_name(&self.name, &self.root);
        let python_dir = self.state_dir().join("build").join("python");
        if python_dir.exists() {
            std::fs::remove_dir_all(&python_dir).map_err(io(&python_dir))?;
        }
        for (rel, text) in
            crate::package::python_tree(&check.modules, &placed, &ext_name, &needs.preload)
        {
            write(&python_dir.join(rel), &text)?;
        }
        let crate_dir = self.state_dir().join("build").join("crate");
        let generated = if placed.iter().all(|p| p.function.rust_fn.is_none()) {
            None
        } else {
            let g = emit::generate_crate(&ext_name, &placed, &deps, &needs.inits)
                .map_err(|d| ProjectError::Emit(d.message))?;
            write_crate(&crate_dir, &g, registry, &check, &needs.provider_env)?;
            Some(g)
        };
        let t_codegen = t1.elapsed().as_millis();

        Ok(Generated {
            check,
            crate_: generated,
            deps,
            provider_env: needs.provider_env,
            requires_dist: needs.requires_dist,
            python_dir,
            crate_dir,
            t_check,
            t_codegen,
        })
    }

    /// Check, generate, and build with cargo; writes the Python tree and `build.json`.
    pub fn build(
        &self,
        registry: &Registry,
        options: &BuildOptions,
    ) -> Result<BuildOutput, ProjectError> {
        let stage = |name: &'static str| {
            if let Some(e) = &options.events {
                e.send(&cargo_driver::BuildEvent::Stage { name });
            }
        };
        let t_cargo = Instant::now();
        let Rounds {
            generated: generated_out,
            cargo: cargo_report,
            extension,
            failure,
            python,
        } = self.compile_rounds(registry, options, &stage)?;
        let Generated {
            check,
            crate_: generated,
            requires_dist,
            python_dir,
            crate_dir,
            t_check,
            t_codegen,
            ..
        } = generated_out;
        let t_package = Instant::now();
        stage("package");
        let wheel = match failure {
            None => Some(self.package_wheel(&python_dir, requires_dist, python.as_ref())?),
            Some(_) => None,
        };
        let target = check.preflight.as_ref().map(|p| {
            let mut t = p.report.clone();
            t.lock = crate::target::lock_record(registry, p);
            t
        });
        let report = BuildReport {
            contract_version: crate::report::CONTRACT_VERSION,
            target,
            modules: check.report.modules.clone(),
            artifacts: Artifacts {
                python_dir: python_dir.to_string_lossy().into_owned(),
                extension: extension.as_ref().map(|p| p.to_string_lossy().into_owned()),
                crate_dir: generated
                    .as_ref()
                    .map(|_| crate_dir.to_string_lossy().into_owned()),
                wheel: wheel.as_ref().map(|p| p.to_string_lossy().into_owned()),
            },
            timings_ms: Timings {
                check: t_check,
                codegen: t_codegen,
                cargo: t_package
                    .duration_since(t_cargo)
                    .as_millis()
                    .saturating_sub(t_check + t_codegen),
                package: t_package.elapsed().as_millis(),
            },
            cargo: cargo_report,
            python: python.clone(),
        };
        write(
            &self.state_dir().join("reports").join("build.json"),
            &serde_json::to_string_pretty(&report)?,
        )?;
        stage("done");
        if let Some(e) = failure {
            return Err(e.into());
        }
        Ok(BuildOutput {
            report,
            check,
            python_dir,
            extension,
            wheel,
            python,
        })
    }

    /// Generate and compile until cargo succeeds, or fails in a way no demotion fixes: rustc
    /// errors that all fall inside placed functions demote those functions to Python (unless
    /// `strict`) and the crate is generated again without them.
    fn compile_rounds(
        &self,
        registry: &Registry,
        options: &BuildOptions,
        stage: &dyn Fn(&'static str),
    ) -> Result<Rounds, ProjectError> {
        let mut demoted: BTreeMap<String, Diagnostic> = BTreeMap::new();
        let mut python: Option<python_env::Discovery> = None;
        loop {
            stage("generate");
            let generated = self.generate_with(registry, &demoted)?;
            stage("compile");
            let Some(g) = &generated.crate_ else {
                let cargo = CargoReport {
                    status: CargoStatus::Skipped,
                    command: None,
                };
                return Ok(Rounds::end(generated, cargo, None, None, python));
            };
            let info = match &python {
                Some(d) => d.chosen.clone(),
                None => {
                    let d = self.python(options.python.as_deref())?;
                    if let Some(e) = &options.events {
                        e.send(&cargo_driver::BuildEvent::Interpreter {
                            summary: d.summary(),
                            notes: d.notes(),
                        });
                    }
                    let info = d.chosen.clone();
                    let check = &generated.check;
                    if check.compiled_with.as_deref() != Some(info.executable.as_path()) {
                        self.compile_modules(&check.modules, &info.executable)?;
                    }
                    python = Some(d);
                    info
                }
            };
            let deps = &generated.deps;
            let target_dir = options
                .target_dir
                .clone()
                .unwrap_or_else(|| cargo_driver::default_target_dir(&info));
            let req = CargoRequest {
                crate_dir: generated.crate_dir.clone(),
                lib_name: g.lib_name.clone(),
                python: info,
                target_dir,
                env: deps
                    .iter()
                    .flat_map(|d| d.build_env.iter().cloned())
                    .chain(generated.provider_env.iter().cloned())
                    .collect(),
                forbidden_env: deps
                    .iter()
                    .flat_map(|d| d.forbidden_env.iter().cloned())
                    .collect(),
                timeout: options.timeout,
                events: options.events.clone(),
            };
            match cargo_driver::build(&req) {
                Ok(outcome) => {
                    let dest = generated.python_dir.join(format!("{}.so", g.lib_name));
                    // Replace by unlink + copy so a process that mapped the old file keeps it.
                    let _ = std::fs::remove_file(&dest);
                    std::fs::copy(&outcome.artifact, &dest).map_err(io(&dest))?;
                    let cargo = CargoReport {
                        status: CargoStatus::Ok,
                        command: Some(outcome.command),
                    };
                    return Ok(Rounds::end(generated, cargo, Some(dest), None, python));
                }
                Err(e) => {
                    let newly = if options.strict {
                        BTreeMap::new()
                    } else {
                        demotions(&e, g, &generated.check)
                    };
                    if newly.is_empty() || newly.keys().any(|q| demoted.contains_key(q)) {
                        let cargo = CargoReport {
                            status: CargoStatus::Failed,
                            command: None,
                        };
                        return Ok(Rounds::end(generated, cargo, None, Some(e), python));
                    }
                    for (q, d) in newly {
                        tracing::warn!(function = %q, "{}", d.message);
                        demoted.insert(q, d);
                    }
                }
            }
        }
    }

    /// Write the project's wheel of `python_dir` into `dist/` (older wheels of the project
    /// removed first: they would shadow the new one on install): tagged for the interpreter the
    /// extension was built for, or pure Python when nothing was compiled.
    fn package_wheel(
        &self,
        python_dir: &Path,
        requires_dist: Vec<String>,
        python: Option<&python_env::Discovery>,
    ) -> Result<PathBuf, ProjectError> {
        let (python_tag, abi_tag, platform_tag, requires_python) = match python {
            Some(d) => (
                d.chosen.python_tag.clone(),
                d.chosen.abi_tag.clone(),
                d.chosen.platform_tag.clone(),
                Some(format!("=={}.*", d.chosen.version)),
            ),
            None => ("py3".to_owned(), "none".to_owned(), "any".to_owned(), None),
        };
        let info = WheelInfo {
            name: self.name.clone(),
            version: self
                .config
                .project
                .version
                .clone()
                .unwrap_or_else(|| "0.0.0".to_owned()),
            python_tag,
            abi_tag,
            platform_tag,
            requires_python,
            requires_dist,
            summary: None,
        };
        let dist = self.root.join("dist");
        let prefix = format!("{}-", crate::wheel::normalize(&self.name));
        if let Ok(entries) = std::fs::read_dir(&dist) {
            for e in entries.flatten() {
                let n = e.file_name().to_string_lossy().into_owned();
                if n.starts_with(&prefix) && n.ends_with(".whl") {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        crate::wheel::write_wheel(python_dir, &dist, &info).map_err(|e| ProjectError::Io {
            path: dist.clone(),
            source: std::io::Error::other(e.to_string()),
        })
    }

    /// Remove `.rextio/` and `dist/`.
    pub fn clean(&self) -> Result<(), ProjectError> {
        for dir in [self.state_dir(), self.root.join("dist")] {
            if dir.exists() {
                std::fs::remove_dir_all(&dir).map_err(io(&dir))?;
            }
        }
        Ok(())
    }
}

/// Keep the functions listed in `demoted` (their generated Rust did not compile in an earlier
/// round) on Python with that diagnostic, and their callers with them.
fn demote_listed(analyses: &mut [ModuleAnalysis], demoted: &BTreeMap<String, Diagnostic>) {
    for f in analyses.iter_mut().flat_map(|m| m.functions.iter_mut()) {
        if let (Some(d), true) = (demoted.get(&f.qualname), f.ir.is_some()) {
            demote(f, d.clone());
        }
    }
    crate::analysis::propagate_routes(analyses);
}

/// Send one function back to Python with diagnostic `d`.
fn demote(f: &mut crate::analysis::FunctionAnalysis, d: Diagnostic) {
    f.diagnostics.push(d.at(f.span));
    f.route = Route::Fallback;
    f.claims.clear();
    f.ir = None;
    f.callees.clear();
}

/// Lower every function with IR, with the plugins that claimed its sites: a function whose
/// lowering fails stays on Python with its diagnostic (RXT014), its callers follow, and lowering
/// is repeated until every remaining native function lowers. The placed functions and the
/// plugins they use.
fn lower_all(
    check: &mut CheckOutput,
    registry: &Registry,
) -> (Vec<Placed>, std::collections::BTreeSet<String>) {
    let auth = check
        .preflight
        .as_ref()
        .and_then(|p| p.authorization.as_ref());
    loop {
        let mut callees: BTreeMap<String, usize> = BTreeMap::new();
        for f in check.analyses.iter().flat_map(|m| &m.functions) {
            if f.ir.is_some() {
                let next = callees.len();
                callees.insert(f.qualname.clone(), next);
            }
        }
        // Straight-line callees are inlined into their callers' bodies (regions span them).
        let bodies: BTreeMap<String, crate::ir::FnIr> = check
            .analyses
            .iter()
            .flat_map(|m| &m.functions)
            .filter_map(|f| Some((f.qualname.clone(), f.ir.clone()?)))
            .collect();
        let mut placed = Vec::new();
        let mut used_plugins = std::collections::BTreeSet::new();
        let mut failed = false;
        for (mi, m) in check.analyses.iter_mut().enumerate() {
            for f in &mut m.functions {
                let Some(ir) = &f.ir else {
                    continue;
                };
                // Candidates without plugins are scalar helpers: their body is emitted for
                // native callers, with no Python entry point of its own.
                let (ids, exposed) = match &f.route {
                    Route::Native(ids) => (ids.clone(), true),
                    Route::Fallback => (Vec::new(), false),
                };
                let index = callees.get(&f.qualname).copied().unwrap_or(0);
                let ir = crate::inline::inline_calls(ir, &bodies);
                let ir = crate::unroll::specialise(&ir);
                match lower_function(&ir, &ids, registry, auth, &callees, index, exposed) {
                    Ok(lowered) => {
                        used_plugins.extend(ids.iter().cloned());
                        let key = match &f.class {
                            Some(c) => format!("m{mi}_{c}__{}", lowered.name),
                            None => format!("m{mi}_{}", lowered.name),
                        };
                        placed.push(Placed {
                            module: m.module.clone(),
                            key,
                            function: lowered,
                        });
                    }
                    Err(d) => {
                        demote(f, d);
                        failed = true;
                    }
                }
            }
        }
        if !failed {
            return (placed, used_plugins);
        }
        crate::analysis::propagate_routes(&mut check.analyses);
    }
}

/// What the plugins a build uses (and a ready target's provider) ask of the generated crate and
/// the wrapper package.
struct PluginNeeds {
    /// Crate dependencies, the plugin API first when any plugin is used (not yet materialised).
    deps: Vec<CrateDependency>,
    /// Modules the wrapper imports before loading the extension.
    preload: Vec<String>,
    /// Module-init steps.
    inits: Vec<emit::InitStep>,
    /// The wheel's `Requires-Dist`.
    requires_dist: Vec<String>,
    /// Environment the provider's contribution gives cargo.
    provider_env: Vec<(String, String)>,
}

impl PluginNeeds {
    fn gather(
        registry: &Registry,
        used_plugins: &std::collections::BTreeSet<String>,
        check: &CheckOutput,
    ) -> Result<Self, ProjectError> {
        let mut deps: Vec<CrateDependency> = Vec::new();
        let mut preload: Vec<String> = Vec::new();
        let mut inits: Vec<emit::InitStep> = Vec::new();
        let mut requires_dist: Vec<String> = Vec::new();
        let add_dep = |deps: &mut Vec<CrateDependency>, dep: CrateDependency| {
            if !deps.iter().any(|d| d.name == dep.name) {
                deps.push(dep);
            }
        };
        for id in used_plugins {
            let Some(reg) = registry.plugin(id) else {
                continue;
            };
            if reg.negotiated.module_init {
                if let Some(init) = reg.plugin.module_init() {
                    inits.push(emit::init_step(reg, &init).map_err(ProjectError::Emit)?);
                }
                for r in reg.plugin.python_requirements() {
                    if !requires_dist.contains(&r.requirement) {
                        requires_dist.push(r.requirement);
                    }
                }
            }
            let support = if reg.negotiated.runtime_support_crates {
                reg.plugin.runtime_support_crates()
            } else {
                Vec::new()
            };
            for dep in reg.plugin.runtime_crate().into_iter().chain(support) {
                add_dep(&mut deps, dep);
            }
            for m in reg.plugin.coverage().preload_modules {
                if !preload.contains(&m) {
                    preload.push(m);
                }
            }
        }
        // A ready target's provider contribution: its crates join the plugins' (a name already
        // there keeps the plugin's), its environment reaches cargo.
        let contribution = check
            .preflight
            .as_ref()
            .and_then(|p| p.contribution.as_ref());
        for dep in contribution.iter().flat_map(|c| &c.dependencies) {
            add_dep(&mut deps, dep.clone());
        }
        let provider_env = contribution.iter().flat_map(|c| c.env.clone()).collect();
        let api = (!used_plugins.is_empty()).then(crate::vendor::plugin_api_dependency);
        Ok(Self {
            deps: api.into_iter().chain(deps).collect(),
            preload,
            inits,
            requires_dist,
            provider_env,
        })
    }
}

/// Write the generated crate under `crate_dir`, with, for a ready target, what it was generated
/// for (the target's lock record: the provider's own account of the checked requirement and its
/// contribution).
fn write_crate(
    crate_dir: &Path,
    g: &emit::GeneratedCrate,
    registry: &Registry,
    check: &CheckOutput,
    provider_env: &[(String, String)],
) -> Result<(), ProjectError> {
    write(&crate_dir.join("Cargo.toml"), &g.cargo_toml)?;
    write(&crate_dir.join("Cargo.lock"), &g.cargo_lock)?;
    write(&crate_dir.join("src").join("lib.rs"), &g.lib_rs)?;
    let stamp = crate_dir.join(TARGET_STAMP);
    match check
        .preflight
        .as_ref()
        .filter(|p| p.authorization.is_some())
    {
        Some(p) => {
            let record = serde_json::json!({
                "provider": p.report.provider,
                "capability": p.report.capability,
                "requirements": p.request.domain,
                "lock": crate::target::lock_record(registry, p),
                "contribution": {
                    "dependencies": p.contribution.iter()
                        .flat_map(|c| c.dependencies.iter().map(|d| &d.name))
                        .collect::<Vec<_>>(),
                    "env": provider_env.iter().map(|(k, _)| k).collect::<Vec<_>>(),
                },
            });
            write(&stamp, &serde_json::to_string_pretty(&record)?)
        }
        None => {
            let _ = std::fs::remove_file(&stamp);
            Ok(())
        }
    }
}

/// The functions a failed build can be rebuilt without: every rustc error of the generated crate
/// must fall inside one placed function's items. An error elsewhere (the module init, a
/// dependency, the environment) demotes nothing, so the build fails as it is.
fn demotions(
    err: &CargoError,
    generated: &emit::GeneratedCrate,
    check: &CheckOutput,
) -> BTreeMap<String, Diagnostic> {
    let CargoError::Failed { errors, .. } = err else {
        return BTreeMap::new();
    };
    let mut out: BTreeMap<String, Diagnostic> = BTreeMap::new();
    for e in errors {
        let in_lib = e.file.as_deref().is_some_and(|f| f.ends_with("src/lib.rs"));
        let Some(q) = in_lib.then(|| generated.function_at_line(e.line)).flatten() else {
            return BTreeMap::new();
        };
        if out.contains_key(q) {
            continue;
        }
        let rules = check
            .analyses
            .iter()
            .flat_map(|m| &m.functions)
            .find(|f| f.qualname == q)
            .map(|f| {
                f.claims
                    .iter()
                    .map(|c| format!("{} `{}`", c.plugin_id, c.rule_id))
                    .collect::<std::collections::BTreeSet<_>>()
                    .into_iter()
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default();
        let d = Diagnostic::error(
            crate::codes::NATIVE_COMPILE_FAILED,
            format!(
                "the Rust generated for `{q}` from {rules} did not compile (rustc: {}); the function runs on Python",
                e.message
            ),
        )
        .with_suggestion("report this to the plugin's authors; `rextio build --strict` fails the build instead");
        out.insert(q.to_owned(), d);
    }
    out
}
