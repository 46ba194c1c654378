//! The cargo build driver: runs cargo on the generated crate with the matched Python/libtorch
//! environment and a shared target directory, parses its JSON message stream for the
//! artifact, and fails with cargo's messages and the full command.

use crate::python_env::PythonInfo;
use cargo_metadata::Message;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use thiserror::Error;
use wait_timeout::ChildExt;

/// What the build needs.
#[derive(Debug, Clone)]
pub struct CargoRequest {
    /// The generated crate's directory.
    pub crate_dir: PathBuf,
    /// The library name to look for.
    pub lib_name: String,
    /// The interpreter.
    pub python: PythonInfo,
    /// Shared target directory.
    pub target_dir: PathBuf,
    /// Extra environment (from plugins' runtime crates).
    pub env: Vec<(String, String)>,
    /// Environment variables removed.
    pub forbidden_env: Vec<String>,
    /// Time limit.
    pub timeout: Duration,
    /// Where events go as cargo reports them (none: only the final result).
    pub events: Option<EventSink>,
}

/// Progress of a build, delivered as it happens: the pipeline's stages, and what cargo reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildEvent {
    /// A stage starts (`check`, `generate`, `compile`, `package`).
    Stage {
        /// The stage.
        name: &'static str,
    },
    /// The interpreter was chosen (before the first compile).
    Interpreter {
        /// [`crate::python_env::Discovery::summary`].
        summary: String,
        /// One note per discovered candidate skipped before it.
        notes: Vec<String>,
    },
    /// A compilation unit finished (`name` of the package).
    Compiled {
        /// Package name.
        package: String,
        /// Units finished so far.
        done: usize,
    },
    /// A compiler diagnostic, rendered by rustc.
    Diagnostic {
        /// Whether it is an error.
        error: bool,
        /// The rendered text.
        rendered: String,
    },
}

/// A receiver of [`BuildEvent`]s; cargo's are delivered on the thread that reads its output.
#[derive(Clone)]
pub struct EventSink(pub std::sync::Arc<dyn Fn(&BuildEvent) + Send + Sync>);

impl EventSink {
    /// Deliver one event.
    pub fn send(&self, e: &BuildEvent) {
        (self.0)(e);
    }
}

impl std::fmt::Debug for EventSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EventSink")
    }
}

/// The build's result.
#[derive(Debug, Clone)]
pub struct CargoOutcome {
    /// The built shared library.
    pub artifact: PathBuf,
    /// The command line, for reports.
    pub command: String,
}

/// A failed build.
#[derive(Debug, Error)]
pub enum CargoError {
    /// Cargo could not start.
    #[error("cannot run cargo ({command}): {source}")]
    Spawn {
        /// The command.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// Cargo failed.
    #[error("cargo failed ({status}) running: {command}\n{messages}")]
    Failed {
        /// Exit status.
        status: String,
        /// The command.
        command: String,
        /// Compiler messages and cargo's stderr (tail).
        messages: String,
        /// The errors rustc reported in the generated crate itself, by primary position.
        errors: Vec<CompileError>,
    },
    /// Cargo ran too long.
    #[error("cargo did not finish within {secs} s running: {command}; raise --timeout or check for a stuck build")]
    Timeout {
        /// Limit.
        secs: u64,
        /// The command.
        command: String,
    },
    /// No artifact found.
    #[error("cargo succeeded but produced no library named `{lib}` (command: {command})")]
    NoArtifact {
        /// Expected name.
        lib: String,
        /// The command.
        command: String,
    },
}

/// One error rustc reported in the generated crate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileError {
    /// File of the primary span, relative to the crate (`src/lib.rs`); `None` without a span.
    pub file: Option<String>,
    /// 1-based line of the primary span.
    pub line: u32,
    /// rustc's one-line message.
    pub message: String,
}

/// The default shared target directory for crates built with `python` (see
/// [`crate::paths::target_dir`]).
pub fn default_target_dir(python: &PythonInfo) -> PathBuf {
    crate::paths::target_dir(&python.prefix)
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// The environment cargo runs with (also used by tests to explain failures).
pub fn cargo_env(req: &CargoRequest) -> Vec<(String, String)> {
    let bin = req
        .python
        .executable
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin];
    paths.extend(std::env::split_paths(&path));
    let joined = std::env::join_paths(paths)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut env = vec![
        ("PATH".to_owned(), joined),
        (
            "VIRTUAL_ENV".to_owned(),
            req.python.prefix.to_string_lossy().into_owned(),
        ),
        (
            "PYO3_PYTHON".to_owned(),
            req.python.executable.to_string_lossy().into_owned(),
        ),
        (
            "CARGO_TARGET_DIR".to_owned(),
            req.target_dir.to_string_lossy().into_owned(),
        ),
    ];
    env.extend(req.env.iter().cloned());
    env
}

/// What the reader thread collected from cargo's messages.
#[derive(Default)]
struct Seen {
    artifact: Option<PathBuf>,
    messages: Vec<String>,
    errors: Vec<CompileError>,
    done: usize,
}

impl Seen {
    fn take(&mut self, msg: Message, lib_name: &str, sink: Option<&EventSink>) {
        match msg {
            Message::CompilerArtifact(a) => {
                self.done += 1;
                if let Some(f) = sink {
                    f.send(&BuildEvent::Compiled {
                        package: a.target.name.clone(),
                        done: self.done,
                    });
                }
                if a.target.name == lib_name {
                    self.artifact = a
                        .filenames
                        .iter()
                        .find(|f| {
                            f.extension()
                                .is_some_and(|e| e == "so" || e == "dylib" || e == "dll")
                        })
                        .map(|f| f.clone().into_std_path_buf());
                }
            }
            Message::CompilerMessage(m) => {
                let error = m.message.level == cargo_metadata::diagnostic::DiagnosticLevel::Error;
                if m.target.name == lib_name && error {
                    let primary = m.message.spans.iter().find(|s| s.is_primary);
                    self.errors.push(CompileError {
                        file: primary.map(|s| s.file_name.clone()),
                        line: primary.map_or(0, |s| s.line_start as u32),
                        message: m.message.message.clone(),
                    });
                }
                if let Some(r) = m.message.rendered {
                    if let Some(f) = sink {
                        f.send(&BuildEvent::Diagnostic {
                            error,
                            rendered: r.clone(),
                        });
                    }
                    self.messages.push(r);
                }
            }
            _ => {}
        }
    }
}

/// Run the build.
pub fn build(req: &CargoRequest) -> Result<CargoOutcome, CargoError> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = req.crate_dir.join("Cargo.toml");
    let mut cmd = Command::new(&cargo);
    cmd.arg("build")
        .arg("--release")
        .arg("--message-format=json")
        .arg("--manifest-path")
        .arg(&manifest);
    for var in &req.forbidden_env {
        cmd.env_remove(var);
    }
    // Variables cargo sets for the process that runs us must not leak into a nested build.
    for var in [
        "CARGO_MANIFEST_DIR",
        "CARGO_PKG_NAME",
        "RUSTC_WRAPPER_FOR_PARENT",
        "CARGO_PRIMARY_PACKAGE",
    ] {
        cmd.env_remove(var);
    }
    let env = cargo_env(req);
    for (k, v) in &env {
        tracing::debug!(key = %k, value = %v, "cargo environment");
        cmd.env(k, v);
    }
    let shown_env: Vec<String> = env
        .iter()
        .filter(|(k, _)| k != "PATH")
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let command = format!(
        "{} {} build --release --message-format=json --manifest-path {}",
        shown_env.join(" "),
        Path::new(&cargo).display(),
        manifest.display()
    );
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(Stdio::null());
    let mut child = cmd.spawn().map_err(|source| CargoError::Spawn {
        command: command.clone(),
        source,
    })?;
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    // Cargo's JSON messages are read as they arrive, so progress and errors show while it runs.
    let lib_name = req.lib_name.clone();
    let sink = req.events.clone();
    let out_reader = std::thread::spawn(move || {
        let mut seen = Seen::default();
        if let Some(o) = stdout {
            let reader = std::io::BufReader::new(o);
            for msg in Message::parse_stream(reader).flatten() {
                seen.take(msg, &lib_name, sink.as_ref());
            }
        }
        seen
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(mut e) = stderr {
            let _ = e.read_to_string(&mut s);
        }
        s
    });
    let status = match child.wait_timeout(req.timeout) {
        Ok(Some(status)) => status,
        Ok(None) | Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(CargoError::Timeout {
                secs: req.timeout.as_secs(),
                command,
            });
        }
    };
    let Seen {
        artifact,
        messages,
        errors,
        ..
    } = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    if !status.success() {
        let mut text = messages.join("\n");
        text.push_str(&tail(&stderr, 60));
        return Err(CargoError::Failed {
            status: status.to_string(),
            command,
            messages: text,
            errors,
        });
    }
    match artifact {
        Some(artifact) => Ok(CargoOutcome { artifact, command }),
        None => Err(CargoError::NoArtifact {
            lib: req.lib_name.clone(),
            command,
        }),
    }
}
