//! `rextio`: the command-line interface over `rextio-host`.

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use rextio_host::report::render_text;
use rextio_host::{BuildOptions, Project, Registry};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "rextio",
    version,
    about = "Compile typed Python inference functions to native code"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Format {
    Text,
    Json,
}

#[derive(Subcommand)]
enum Cmd {
    /// Write a starter project (rextio.toml, a package named after DIR, an example).
    Init {
        /// Directory (default: current); created when missing.
        dir: Option<PathBuf>,
        /// The backend the example function uses.
        #[arg(long, value_enum, default_value = "torch")]
        backend: BackendArg,
        /// What the starter package holds: typed functions, or an nn.Module model (torch).
        #[arg(long, value_enum, default_value = "function")]
        template: TemplateArg,
    },
    /// Analyse a project: route and diagnostics per function.
    Check {
        /// Project root (default: current directory).
        root: Option<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        /// Exit non-zero if any function stays on Python.
        #[arg(long)]
        deny_fallback: bool,
    },
    /// Check, generate the native crate, and build it with cargo.
    Build {
        /// Project root (default: current directory).
        root: Option<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        /// Python interpreter (overrides REXTIO_PYTHON and rextio.toml).
        #[arg(long)]
        python: Option<PathBuf>,
        /// Cargo time limit in seconds.
        #[arg(long, default_value_t = 1800)]
        timeout: u64,
        /// Fail the build when generated Rust does not compile, instead of rebuilding with the
        /// functions it falls in on Python.
        #[arg(long)]
        strict: bool,
    },
    /// Build the project and install its wheel into the project's interpreter
    /// (`python -m pip install --no-deps --force-reinstall dist/<wheel>`); an unchanged wheel
    /// is not reinstalled.
    Develop {
        /// Project root (default: current directory).
        root: Option<PathBuf>,
        /// Python interpreter to build for and install into (overrides REXTIO_PYTHON and
        /// rextio.toml).
        #[arg(long)]
        python: Option<PathBuf>,
        /// Cargo time limit in seconds.
        #[arg(long, default_value_t = 1800)]
        timeout: u64,
        /// Fail when generated Rust does not compile (as `build --strict`).
        #[arg(long)]
        strict: bool,
    },
    /// List plugins, API versions, rules, types and device providers.
    Capabilities {
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Certify plugins on this host: build each certification project, check it against
    /// eager, and record evidence (what makes rules `verified`).
    Certify {
        /// Plugin ids (default: every registered plugin with a certification kit).
        plugins: Vec<String>,
        /// Python interpreter.
        #[arg(long)]
        python: Option<PathBuf>,
        /// Where to write the evidence artifacts.
        #[arg(long, default_value = "target/certify")]
        out: PathBuf,
    },
    /// Explain a diagnostic code.
    Explain {
        /// The code, e.g. RXT005 or RXTP-TORCH-002.
        code: String,
    },
    /// Generate documentation from the code tables (maintainers).
    #[command(hide = true)]
    Docs {
        /// Which document.
        #[arg(value_enum)]
        which: DocArg,
        /// Write it here instead of printing it.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Do not write: exit non-zero when the file at --out differs from what would be written.
        #[arg(long, requires = "out")]
        check: bool,
    },
    /// Remove .rextio/ and dist/.
    Clean {
        /// Project root (default: current directory).
        root: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum BackendArg {
    Torch,
    Tensorflow,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum TemplateArg {
    /// Typed functions taking the weights as parameters.
    Function,
    /// An nn.Module model class whose methods compile (torch).
    Module,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum DocArg {
    /// docs/diagnostics.md
    Diagnostics,
}

fn root_or_cwd(root: Option<PathBuf>) -> PathBuf {
    root.unwrap_or_else(|| PathBuf::from("."))
}

/// A path the user gave, made absolute against the current directory now, so that no later
/// step that runs elsewhere (a build, a child process in another directory) reads it
/// differently.
fn cli_path(p: PathBuf) -> PathBuf {
    std::path::absolute(&p).unwrap_or(p)
}

/// An interpreter the user gave: a path (it has a directory part) is made absolute like
/// [`cli_path`]; a bare command name (`python3`) is left to be found on `PATH`.
fn cli_python(p: PathBuf) -> PathBuf {
    if p.is_absolute() || p.components().count() > 1 {
        cli_path(p)
    } else {
        p
    }
}

impl Cmd {
    /// Every path argument resolved against the current directory ([`cli_path`],
    /// [`cli_python`]).
    fn resolve_paths(mut self) -> Cmd {
        let path = |p: &mut Option<PathBuf>| *p = p.take().map(cli_path);
        let python = |p: &mut Option<PathBuf>| *p = p.take().map(cli_python);
        match &mut self {
            Cmd::Init { dir: root, .. }
            | Cmd::Check { root, .. }
            | Cmd::Clean { root }
            | Cmd::Docs { out: root, .. } => path(root),
            Cmd::Build {
                root, python: py, ..
            }
            | Cmd::Develop {
                root, python: py, ..
            } => {
                path(root);
                python(py);
            }
            Cmd::Certify {
                python: py, out, ..
            } => {
                python(py);
                *out = cli_path(std::mem::take(out));
            }
            Cmd::Capabilities { .. } | Cmd::Explain { .. } => {}
        }
        self
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    let registry = Registry::builder().with_default_plugins().build()?;
    match cli.command.resolve_paths() {
        Cmd::Init {
            dir,
            backend,
            template,
        } => init(&registry, root_or_cwd(dir), backend, template),
        Cmd::Develop {
            root,
            python,
            timeout,
            strict,
        } => develop(&registry, root, python, timeout, strict),
        Cmd::Docs { which, out, check } => docs(&registry, which, out, check),
        Cmd::Check {
            root,
            format,
            deny_fallback,
        } => check(&registry, root, format, deny_fallback),
        Cmd::Build {
            root,
            format,
            python,
            timeout,
            strict,
        } => build(&registry, root, format, python, timeout, strict),
        Cmd::Capabilities { format } => {
            let caps = capabilities(&registry);
            match format {
                Format::Json => println!("{}", serde_json::to_string_pretty(&caps)?),
                Format::Text => print!("{}", render_capabilities(&caps)),
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Certify {
            plugins,
            python,
            out,
        } => certify(&registry, plugins, python, out),
        Cmd::Explain { code } => match rextio_host::explain::explain(&code, &registry) {
            Some((owner, doc)) => {
                print!("{}", rextio_host::explain::render(&owner, doc));
                Ok(ExitCode::SUCCESS)
            }
            None => {
                bail!("unknown diagnostic code `{code}`; codes look like RXT005 or RXTP-TORCH-002")
            }
        },
        Cmd::Clean { root } => {
            Project::open(root_or_cwd(root))?.clean()?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `rextio init`: write a starter project and say what to run next.
fn init(
    registry: &Registry,
    dir: PathBuf,
    backend: BackendArg,
    template: TemplateArg,
) -> Result<ExitCode> {
    let backend = match backend {
        BackendArg::Torch => rextio_host::init::Backend::Torch,
        BackendArg::Tensorflow => rextio_host::init::Backend::Tensorflow,
    };
    let template = match template {
        TemplateArg::Function => rextio_host::init::Template::Function,
        TemplateArg::Module => rextio_host::init::Template::Module,
    };
    let done = rextio_host::init::init_with(&dir, backend, template, registry)?;
    eprintln!(
        "created package `{}` for {}:",
        done.package,
        backend.plugin_id()
    );
    for f in &done.files {
        eprintln!("  {}", f.display());
    }
    eprintln!(
        "next: rextio check {0} --deny-fallback, then rextio develop {0}",
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// `rextio check`: the report; with `--deny-fallback`, failure when a function stays Python.
fn check(
    registry: &Registry,
    root: Option<PathBuf>,
    format: Format,
    deny_fallback: bool,
) -> Result<ExitCode> {
    let project = Project::open(root_or_cwd(root))?;
    let out = project.check(registry)?;
    match format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&out.report)?),
        Format::Text => print!("{}", render_text(&out.report, &out.modules)),
    }
    let fallback = out
        .report
        .routes()
        .iter()
        .any(|(_, r)| r == "fallback-python");
    Ok(if deny_fallback && fallback {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// `rextio build`: check, generate and build; the report and where the package landed.
fn build(
    registry: &Registry,
    root: Option<PathBuf>,
    format: Format,
    python: Option<PathBuf>,
    timeout: u64,
    strict: bool,
) -> Result<ExitCode> {
    let (_, out) = build_project(registry, root, python, timeout, strict)?;
    match format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&out.report)?),
        Format::Text => {
            print!("{}", render_text(&out.check.report, &out.check.modules));
            println!("python: {}", out.python_dir.display());
            if let Some(ext) = &out.extension {
                println!("extension: {}", ext.display());
            }
            if let Some(whl) = &out.wheel {
                println!("wheel: {}", whl.display());
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The project at `root` (default: the current directory), built with progress on stderr.
fn build_project(
    registry: &Registry,
    root: Option<PathBuf>,
    python: Option<PathBuf>,
    timeout: u64,
    strict: bool,
) -> Result<(Project, rextio_host::project::BuildOutput)> {
    let project = Project::open(root_or_cwd(root))?;
    eprintln!("rextio: building {}", project.root().display());
    let options = BuildOptions {
        python,
        timeout: Duration::from_secs(timeout),
        target_dir: None,
        strict,
        events: Some(progress()),
    };
    let out = project.build(registry, &options)?;
    Ok((project, out))
}

/// `rextio develop`: build, then install the wheel into the interpreter it was built for.
fn develop(
    registry: &Registry,
    root: Option<PathBuf>,
    python: Option<PathBuf>,
    timeout: u64,
    strict: bool,
) -> Result<ExitCode> {
    let (project, out) = build_project(registry, root, python.clone(), timeout, strict)?;
    print!("{}", render_text(&out.check.report, &out.check.modules));
    let Some(wheel) = &out.wheel else {
        bail!("the build produced no wheel");
    };
    // The interpreter the extension was built for; a pure-Python build resolves it the
    // same way.
    let interpreter = match &out.python {
        Some(d) => d.chosen.executable.clone(),
        None => {
            let d = project.python(python.as_deref())?;
            report_interpreter(&d.summary(), &d.notes());
            d.chosen.executable
        }
    };
    match rextio_host::develop::install(&project.state_dir(), wheel, &interpreter)? {
        rextio_host::develop::Installed::Installed(r) => println!(
            "installed {} {} into {} ({})",
            r.distribution,
            r.version,
            interpreter.display(),
            wheel.display()
        ),
        rextio_host::develop::Installed::Unchanged(r) => println!(
            "unchanged: {} {} is already installed into {} (sha256 {})",
            r.distribution,
            r.version,
            interpreter.display(),
            &r.sha256[..12.min(r.sha256.len())]
        ),
    }
    Ok(ExitCode::SUCCESS)
}

/// `rextio docs`: print a generated document, write it, or check that a file is current.
fn docs(registry: &Registry, which: DocArg, out: Option<PathBuf>, check: bool) -> Result<ExitCode> {
    let text = match which {
        DocArg::Diagnostics => rextio_host::docs::diagnostics_markdown(registry),
    };
    match (out, check) {
        (None, _) => print!("{text}"),
        (Some(path), true) => {
            let current = std::fs::read_to_string(&path).unwrap_or_default();
            if current != text {
                eprintln!(
                    "'{}' is stale; regenerate it with: {}",
                    path.display(),
                    rextio_host::docs::REGENERATE_DIAGNOSTICS
                );
                return Ok(ExitCode::FAILURE);
            }
        }
        (Some(path), false) => {
            std::fs::write(&path, text).with_context(|| format!("writing '{}'", path.display()))?
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `rextio certify`: certify the named plugins (default: every one with a kit); fails when a
/// rule failed or a kit covered none.
fn certify(
    registry: &Registry,
    plugins: Vec<String>,
    python: Option<PathBuf>,
    out: PathBuf,
) -> Result<ExitCode> {
    let ids: Vec<String> = if plugins.is_empty() {
        registry
            .plugins()
            .iter()
            .filter(|r| r.plugin.certification_kit().is_some())
            .map(|r| r.plugin.id().to_owned())
            .collect()
    } else {
        plugins
    };
    let mut ok = true;
    for id in ids {
        eprintln!(
            "rextio: certifying {id} on {}",
            rextio_host::certify::host_platform()
        );
        let (ev, path) = rextio_host::certify::certify(
            registry,
            &id,
            python.clone(),
            &out,
            &rextio_host::certify::evidence_dir(),
        )?;
        let failed: Vec<&str> = ev
            .rules
            .iter()
            .filter(|r| !r.passed)
            .map(|r| r.id.as_str())
            .collect();
        println!(
            "{id}: {} of {} native rules passed on {} (evidence: {})",
            ev.rules.len() - failed.len(),
            ev.rules.len(),
            ev.host_platform,
            path.display()
        );
        for f in &failed {
            println!("  FAILED {f}");
        }
        ok &= failed.is_empty() && !ev.rules.is_empty();
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Build progress on stderr: a spinner with the stage and cargo's latest unit on a terminal,
/// plain lines otherwise (logs, CI); compiler diagnostics as soon as cargo reports them.
fn progress() -> rextio_host::cargo_driver::EventSink {
    use indicatif::{ProgressBar, ProgressStyle};
    use rextio_host::cargo_driver::{BuildEvent, EventSink};
    use std::io::IsTerminal as _;
    if std::io::stderr().is_terminal() {
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {prefix:>8} {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(120));
        EventSink(std::sync::Arc::new(move |e: &BuildEvent| match e {
            BuildEvent::Stage { name } => {
                bar.set_prefix(*name);
                bar.set_message("");
                if *name == "done" {
                    bar.finish_and_clear();
                }
            }
            BuildEvent::Interpreter { summary, notes } => {
                for n in notes {
                    bar.println(format!("rextio: note: {n}"));
                }
                bar.println(format!("rextio: python: {summary}"));
            }
            BuildEvent::Compiled { package, done } => {
                bar.set_message(format!("{package} ({done} units)"));
            }
            BuildEvent::Diagnostic { rendered, .. } => bar.println(rendered.trim_end()),
        }))
    } else {
        EventSink(std::sync::Arc::new(|e: &BuildEvent| match e {
            BuildEvent::Stage { name } => eprintln!("rextio: stage {name}"),
            BuildEvent::Interpreter { summary, notes } => report_interpreter(summary, notes),
            BuildEvent::Compiled { package, done } => {
                eprintln!("rextio: compiled {package} ({done} units)")
            }
            BuildEvent::Diagnostic { rendered, .. } => eprintln!("{}", rendered.trim_end()),
        }))
    }
}

/// The chosen interpreter on stderr, after a note per candidate skipped before it.
fn report_interpreter(summary: &str, notes: &[String]) {
    for n in notes {
        eprintln!("rextio: note: {n}");
    }
    eprintln!("rextio: python: {summary}");
}

fn capabilities(registry: &Registry) -> serde_json::Value {
    let plugins: Vec<serde_json::Value> = registry
        .plugins()
        .iter()
        .map(|r| {
            serde_json::json!({
                "id": r.plugin.id(),
                "api_version": r.plugin.api_version(),
                "coverage": r.plugin.coverage(),
                "types": r.plugin.type_vocabulary(),
                "version": r.plugin.version(),
                "rules": rextio_host::certify::rules_with_verification(r.plugin.as_ref(), &rextio_host::certify::evidence_dir()),
                "platforms": r.plugin.platforms(),
                "diagnostic_codes": r.plugin.diagnostic_codes().iter().map(|c| serde_json::json!({"code": c.code, "summary": c.summary})).collect::<Vec<_>>(),
            })
        })
        .collect();
    let providers: Vec<serde_json::Value> = registry
        .providers()
        .iter()
        .map(|p| serde_json::json!({"id": p.provider.id(), "api_version": p.provider.api_version(), "manifest": p.provider.manifest()}))
        .collect();
    serde_json::json!({
        "host_api_version": rextio_plugin_api::API_VERSION.to_string(),
        "host_platform": rextio_host::certify::host_platform(),
        "device_provider_api_version": rextio_plugin_api::DEVICE_PROVIDER_API_VERSION.to_string(),
        "plugins": plugins,
        "device_providers": providers,
    })
}

fn render_capabilities(caps: &serde_json::Value) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let s = |v: &serde_json::Value| v.as_str().unwrap_or("").to_owned();
    let _ = writeln!(
        out,
        "plugin API {}, device provider API {}, host {}",
        s(&caps["host_api_version"]),
        s(&caps["device_provider_api_version"]),
        s(&caps["host_platform"])
    );
    for p in caps["plugins"].as_array().into_iter().flatten() {
        let _ = writeln!(
            out,
            "\nplugin {} (API {})",
            s(&p["id"]),
            s(&p["api_version"])
        );
        for t in p["types"].as_array().into_iter().flatten() {
            let _ = writeln!(
                out,
                "  type {}  {}  ({})",
                s(&t["annotation"]),
                s(&t["key"]),
                s(&t["description"])
            );
        }
        for c in p["platforms"].as_array().into_iter().flatten() {
            let _ = writeln!(
                out,
                "  platform {}-{}  {}  [{}]",
                s(&c["os"]),
                s(&c["arch"]),
                s(&c["status"]),
                s(&c["reason_code"])
            );
        }
        for r in p["rules"].as_array().into_iter().flatten() {
            let verified = if r["verified"].as_bool().unwrap_or(false) {
                "verified"
            } else {
                "unverified"
            };
            let _ = writeln!(
                out,
                "  rule {}  [{}, {}]  {}  -- {}",
                s(&r["id"]),
                s(&r["outcome"]),
                verified,
                s(&r["pattern"]),
                s(&r["constraint"])
            );
        }
    }
    if caps["device_providers"]
        .as_array()
        .is_none_or(|a| a.is_empty())
    {
        let _ = writeln!(out, "\nno device providers registered");
    }
    out
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            for cause in e.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::FAILURE
        }
    }
}
