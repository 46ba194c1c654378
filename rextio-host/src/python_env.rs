//! Interpreter discovery, the way maturin does it: a list of candidates, each run on a real
//! probe file (`probe_python.py`, written under the cache directory) that prints what the
//! interpreter is as JSON; the first one that runs and is supported is chosen.
//!
//! ```text
//! named (the first present wins, never replaced):  --python > REXTIO_PYTHON > [toolchain] python
//! discovered (in order, broken ones skipped):      $VIRTUAL_ENV/bin/python > python3 > python on PATH
//! ```
//!
//! An interpreter the user named is used or fails the build with the probe's reason: building
//! for another one would tag the wheel for an interpreter nobody asked for. Discovered
//! candidates that do not run, are not CPython or are older than [`MIN_PYTHON`] are skipped,
//! each with a note ([`Skipped`]) that the build reports. Build, develop and certify all use
//! [`discover`] through [`crate::Project::python`], so one project has one interpreter.

use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use thiserror::Error;
use wait_timeout::ChildExt as _;

/// The oldest CPython a build is made for: the oldest the first-party backends' frameworks ship
/// wheels for (torch 2.13).
pub const MIN_PYTHON: (u32, u32) = (3, 10);

/// How long one probe may take (a candidate that hangs is skipped, not waited on forever).
const PROBE_TIMEOUT: Duration = Duration::from_secs(60);

/// The probe, written to a file and run as `python -E -s probe_python.py`. Python 2 syntax too,
/// so that an old `python` on PATH is reported as too old rather than as a syntax error.
pub const PROBE_SCRIPT: &str = include_str!("scripts/probe_python.py");

/// What the probe printed.
#[derive(Debug, Clone, Deserialize)]
struct ProbeOutput {
    implementation: String,
    version: Vec<u32>,
    sys_executable: String,
    prefix: PathBuf,
    base_prefix: PathBuf,
    platform: String,
    ext_suffix: Option<String>,
    soabi: Option<String>,
    #[serde(default)]
    abiflags: String,
    pointer_width: u32,
}

/// The chosen interpreter, as the probe found it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct PythonInfo {
    /// The interpreter path as given or found on PATH (not resolved, so a venv's `bin/` stays
    /// on PATH).
    pub executable: PathBuf,
    /// Where the choice came from (`--python`, `REXTIO_PYTHON`, `$VIRTUAL_ENV`, ...).
    pub source: String,
    /// `sys.executable`.
    pub sys_executable: String,
    /// `sys.prefix` (the venv root for a venv).
    pub prefix: PathBuf,
    /// `sys.base_prefix`.
    pub base_prefix: PathBuf,
    /// `CPython`.
    pub implementation: String,
    /// `major.minor`.
    pub version: String,
    /// `major.minor.micro`.
    pub full_version: String,
    /// Wheel interpreter tag, e.g. `cp311`.
    pub python_tag: String,
    /// Wheel ABI tag, e.g. `cp311` (`cp313t` for a free-threaded build).
    pub abi_tag: String,
    /// Wheel platform tag, e.g. `linux_x86_64`.
    pub platform_tag: String,
    /// `sysconfig.get_config_var("EXT_SUFFIX")`, e.g. `.cpython-311-x86_64-linux-gnu.so`.
    pub ext_suffix: String,
    /// `SOABI`, when the interpreter has one.
    pub soabi: Option<String>,
}

/// A discovered candidate that was not used, and why.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Skipped {
    /// The interpreter path.
    pub path: PathBuf,
    /// Where it came from.
    pub source: String,
    /// Why it was skipped.
    pub reason: String,
}

/// The outcome of discovery: the interpreter, and the candidates skipped before it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Discovery {
    /// The interpreter.
    pub chosen: PythonInfo,
    /// Candidates tried first and skipped, in order.
    pub skipped: Vec<Skipped>,
}

impl Discovery {
    /// One line naming the interpreter, its version and where it came from.
    pub fn summary(&self) -> String {
        let c = &self.chosen;
        format!(
            "{} ({} {}, {}, from {})",
            c.executable.display(),
            c.implementation,
            c.full_version,
            c.abi_tag,
            c.source
        )
    }

    /// One line per skipped candidate.
    pub fn notes(&self) -> Vec<String> {
        self.skipped.iter().map(Skipped::note).collect()
    }
}

impl Skipped {
    /// `skipped PATH (SOURCE): REASON`.
    pub fn note(&self) -> String {
        format!(
            "skipped {} ({}): {}",
            self.path.display(),
            self.source,
            self.reason
        )
    }
}

/// No usable interpreter.
#[derive(Debug, Error)]
pub enum PythonError {
    /// The interpreter the user named cannot be used.
    #[error("cannot use Python interpreter '{path}' (chosen by {source_name}): {reason}; fix it, or pass --python with a CPython >= {}.{}", MIN_PYTHON.0, MIN_PYTHON.1)]
    NotRunnable {
        /// Path.
        path: PathBuf,
        /// Where the choice came from.
        source_name: String,
        /// Why.
        reason: String,
    },
    /// No candidate could be used.
    #[error("no usable Python interpreter found (CPython >= {}.{} needed): {tried}; activate a virtual environment, set REXTIO_PYTHON, pass --python or set [toolchain] python in rextio.toml", MIN_PYTHON.0, MIN_PYTHON.1)]
    NoneFound {
        /// Every candidate and why it was skipped (`none on PATH` when there were none).
        tried: String,
    },
}

/// One interpreter to try.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Its path.
    pub path: PathBuf,
    /// Where it came from.
    pub source: &'static str,
}

/// What discovery looks at: the choices the user made and the environment. Built from the
/// process environment by [`Inputs::from_env`]; tests construct it directly.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// `--python`.
    pub cli: Option<PathBuf>,
    /// `REXTIO_PYTHON`.
    pub rextio_python: Option<OsString>,
    /// `[toolchain] python`, relative to the project root.
    pub config: Option<PathBuf>,
    /// The project root.
    pub root: PathBuf,
    /// `VIRTUAL_ENV`.
    pub virtual_env: Option<OsString>,
    /// `PATH`.
    pub path: Option<OsString>,
}

impl Inputs {
    /// The inputs of this process: `REXTIO_PYTHON`, `VIRTUAL_ENV` and `PATH` from its
    /// environment.
    pub fn from_env(cli: Option<&Path>, config: Option<&Path>, root: &Path) -> Self {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        Self {
            cli: cli.map(Path::to_path_buf),
            rextio_python: var("REXTIO_PYTHON"),
            config: config.map(Path::to_path_buf),
            root: root.to_owned(),
            virtual_env: var("VIRTUAL_ENV"),
            path: var("PATH"),
        }
    }

    /// The interpreter the user named, if any (the first of `--python`, `REXTIO_PYTHON`,
    /// `[toolchain] python`).
    pub fn named(&self) -> Option<Candidate> {
        if let Some(p) = &self.cli {
            return Some(Candidate {
                path: p.clone(),
                source: "--python",
            });
        }
        if let Some(p) = &self.rextio_python {
            return Some(Candidate {
                path: PathBuf::from(p),
                source: "REXTIO_PYTHON",
            });
        }
        self.config.as_ref().map(|p| Candidate {
            path: if p.is_absolute() {
                p.clone()
            } else {
                self.root.join(p)
            },
            source: "[toolchain] python in rextio.toml",
        })
    }

    /// The discovered candidates, in order, without duplicates: `$VIRTUAL_ENV/bin/python`,
    /// then the first `python3` and the first `python` on PATH.
    pub fn discovered(&self) -> Vec<Candidate> {
        let mut out: Vec<Candidate> = Vec::new();
        if let Some(v) = &self.virtual_env {
            out.push(Candidate {
                path: PathBuf::from(v).join("bin").join("python"),
                source: "$VIRTUAL_ENV",
            });
        }
        for (name, source) in [("python3", "python3 on PATH"), ("python", "python on PATH")] {
            if let Some(p) = self.on_path(name) {
                let same = |c: &Candidate| {
                    c.path == p
                        || matches!(
                            (std::fs::canonicalize(&c.path), std::fs::canonicalize(&p)),
                            (Ok(a), Ok(b)) if a == b
                        )
                };
                if !out.iter().any(same) {
                    out.push(Candidate { path: p, source });
                }
            }
        }
        out
    }

    /// The first executable file named `name` in a PATH directory.
    fn on_path(&self, name: &str) -> Option<PathBuf> {
        let path = self.path.as_ref()?;
        std::env::split_paths(path)
            .filter(|d| !d.as_os_str().is_empty())
            .map(|d| d.join(name))
            .find(|p| is_executable(p))
    }
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

/// Choose the interpreter: the named one if any (its failure is the error), else the first
/// discovered candidate that probes as a supported CPython.
pub fn discover(inputs: &Inputs) -> Result<Discovery, PythonError> {
    let script = probe_file().map_err(|reason| PythonError::NoneFound {
        tried: format!("cannot write the probe script: {reason}"),
    })?;
    discover_with(inputs, &script)
}

fn discover_with(inputs: &Inputs, script: &Path) -> Result<Discovery, PythonError> {
    if let Some(mut named) = inputs.named() {
        // A bare name (`--python python3.11`) is looked up on PATH, so the build knows the
        // interpreter's directory (cargo runs with it first on PATH).
        let bare = named.path.components().count() == 1 && !named.path.exists();
        if let Some(found) = bare.then(|| inputs.on_path(&named.path.to_string_lossy())) {
            named.path = found.unwrap_or(named.path);
        }
        let chosen = probe(&named, script).map_err(|reason| PythonError::NotRunnable {
            path: named.path.clone(),
            source_name: named.source.to_owned(),
            reason,
        })?;
        return Ok(Discovery {
            chosen,
            skipped: Vec::new(),
        });
    }
    let mut skipped = Vec::new();
    for c in inputs.discovered() {
        match probe(&c, script) {
            Ok(chosen) => return Ok(Discovery { chosen, skipped }),
            Err(reason) => skipped.push(Skipped {
                path: c.path,
                source: c.source.to_owned(),
                reason,
            }),
        }
    }
    let tried = if skipped.is_empty() {
        "no $VIRTUAL_ENV, and neither python3 nor python on PATH".to_owned()
    } else {
        skipped
            .iter()
            .map(Skipped::note)
            .collect::<Vec<_>>()
            .join("; ")
    };
    Err(PythonError::NoneFound { tried })
}

/// Writes the probe script once under the cache directory (content-addressed, so concurrent
/// builds and other rextio versions never see a partial or different file), falling back to
/// the system temporary directory when the cache is not writable.
pub fn probe_file() -> Result<PathBuf, String> {
    use sha2::{Digest as _, Sha256};
    let digest: String = Sha256::digest(PROBE_SCRIPT.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect();
    let name = format!("probe_python-{digest}.py");
    let mut last = String::new();
    for dir in [
        crate::paths::cache_root().join("probe"),
        std::env::temp_dir().join("rextio-probe"),
    ] {
        let path = dir.join(&name);
        if std::fs::read_to_string(&path).is_ok_and(|t| t == PROBE_SCRIPT) {
            return Ok(path);
        }
        let staged = dir.join(format!("{name}.{}.tmp", std::process::id()));
        let written = std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(&staged, PROBE_SCRIPT))
            .and_then(|()| std::fs::rename(&staged, &path));
        match written {
            Ok(()) => return Ok(path),
            Err(e) => {
                let _ = std::fs::remove_file(&staged);
                last = format!("{}: {e}", path.display());
            }
        }
    }
    Err(last)
}

/// Compiles each file with the interpreter (`compile(source, path, "exec")`: CPython's own parser
/// and symbol table, nothing executed), so that what CPython rejects at import (a duplicate
/// argument, `return` outside a function, a bad `nonlocal`) is known before anything is built.
/// `Ok(None)` when every file compiles; `Ok(Some(e))` names the first that does not;
/// `Err` when the interpreter could not be run.
pub fn compile_sources(python: &Path, files: &[PathBuf]) -> Result<Option<CompileError>, String> {
    const SCRIPT: &str = include_str!("scripts/compile_sources.py");
    if files.is_empty() {
        return Ok(None);
    }
    let mut cmd = Command::new(python);
    cmd.args(["-E", "-s", "-c", SCRIPT]).args(files);
    let (status, stdout, stderr) = run_isolated(&mut cmd, "compiling the sources")
        .map_err(|e| format!("{}: {e}", python.display()))?;
    let out = String::from_utf8_lossy(&stdout);
    match status.code() {
        Some(0) => Ok(None),
        Some(3) => {
            let mut parts = out.splitn(4, '\0');
            let path = PathBuf::from(parts.next().unwrap_or_default());
            let line = parts.next().and_then(|l| l.parse().ok()).unwrap_or(0);
            let column = parts.next().and_then(|c| c.parse().ok()).unwrap_or(0);
            let message = parts.next().unwrap_or("invalid syntax").to_owned();
            Ok(Some(CompileError {
                path,
                line,
                column,
                message,
            }))
        }
        _ => Err(format!(
            "compiling the sources with {} failed ({status}): {}",
            python.display(),
            last_line(&stderr)
        )),
    }
}

/// A source file CPython does not compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileError {
    /// The file, as passed to [`compile_sources`].
    pub path: PathBuf,
    /// 1-based line (0 when CPython gave none).
    pub line: u32,
    /// 1-based column (0 when CPython gave none).
    pub column: u32,
    /// CPython's message.
    pub message: String,
}

/// Runs an interpreter command without PYTHONHOME or standard input, drains stdout and stderr
/// (each on its own thread, so neither pipe can fill and block the child) and waits at most
/// [`PROBE_TIMEOUT`]: its exit status and both outputs, or why it could not run (`what` names
/// the run in the time-out message).
fn run_isolated(
    cmd: &mut Command,
    what: &str,
) -> Result<(std::process::ExitStatus, Vec<u8>, Vec<u8>), String> {
    let mut child = cmd
        .env_remove("PYTHONHOME")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run it: {e}"))?;
    fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut s);
            }
            s
        })
    }
    let out_reader = drain(child.stdout.take());
    let err_reader = drain(child.stderr.take());
    let status = match child.wait_timeout(PROBE_TIMEOUT) {
        Ok(Some(status)) => status,
        Ok(None) | Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "{what} did not finish within {} s",
                PROBE_TIMEOUT.as_secs()
            ));
        }
    };
    Ok((
        status,
        out_reader.join().unwrap_or_default(),
        err_reader.join().unwrap_or_default(),
    ))
}

/// The last non-blank line of an error output.
fn last_line(stderr: &[u8]) -> String {
    String::from_utf8_lossy(stderr)
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no error output")
        .trim()
        .to_owned()
}

/// Run the probe with one candidate; `Err` says why it cannot be used.
fn probe(c: &Candidate, script: &Path) -> Result<PythonInfo, String> {
    let mut cmd = Command::new(&c.path);
    cmd.arg("-E").arg("-s").arg(script);
    let (status, stdout, stderr) = run_isolated(&mut cmd, "the probe")?;
    if !status.success() {
        return Err(format!(
            "the probe failed ({status}): {}",
            last_line(&stderr)
        ));
    }
    let out: ProbeOutput = serde_json::from_slice(&stdout).map_err(|e| {
        format!(
            "the probe printed something else than its JSON ({e}): {}",
            String::from_utf8_lossy(&stdout).trim()
        )
    })?;
    info(c, out)
}

/// Check the probe's answer and turn it into [`PythonInfo`].
fn info(c: &Candidate, out: ProbeOutput) -> Result<PythonInfo, String> {
    let (major, minor, micro) = match out.version[..] {
        [major, minor, micro, ..] => (major, minor, micro),
        _ => return Err(format!("the probe reported version {:?}", out.version)),
    };
    let full_version = format!("{major}.{minor}.{micro}");
    if out.implementation != "CPython" {
        return Err(format!(
            "{} {full_version} is not CPython (rextio builds CPython extensions)",
            out.implementation
        ));
    }
    if (major, minor) < MIN_PYTHON {
        return Err(format!(
            "Python {full_version} is older than {}.{}",
            MIN_PYTHON.0, MIN_PYTHON.1
        ));
    }
    if out.pointer_width != 64 {
        return Err(format!(
            "a {}-bit interpreter (the backends need 64-bit)",
            out.pointer_width
        ));
    }
    let ext_suffix = out
        .ext_suffix
        .filter(|s| !s.is_empty())
        .ok_or_else(|| "sysconfig has no EXT_SUFFIX (not a usable CPython build)".to_owned())?;
    let python_tag = format!("cp{major}{minor}");
    // Only the flags that change the ABI stay in the tag (`t`: free-threaded; `d`: debug).
    let flags: String = out
        .abiflags
        .chars()
        .filter(|f| matches!(f, 't' | 'd'))
        .collect();
    Ok(PythonInfo {
        executable: c.path.clone(),
        source: c.source.to_owned(),
        sys_executable: out.sys_executable,
        prefix: out.prefix,
        base_prefix: out.base_prefix,
        implementation: out.implementation,
        version: format!("{major}.{minor}"),
        full_version,
        abi_tag: format!("{python_tag}{flags}"),
        python_tag,
        platform_tag: out.platform.replace(['-', '.'], "_"),
        ext_suffix,
        soabi: out.soabi,
    })
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    /// An executable shell script `dir/name` with `body`.
    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    /// A fake interpreter that answers the probe with the given JSON fields.
    fn fake(dir: &Path, name: &str, implementation: &str, version: &str) -> PathBuf {
        let json = format!(
            r#"{{"implementation": "{implementation}", "version": [{version}], "sys_executable": "/x/python", "prefix": "/x", "base_prefix": "/usr", "platform": "linux-x86_64", "ext_suffix": ".cpython-311-x86_64-linux-gnu.so", "soabi": "cpython-311-x86_64-linux-gnu", "abiflags": "", "pointer_width": 64}}"#
        );
        // The probe is a real file passed as the last argument.
        script(
            dir,
            name,
            &format!("test -f \"$3\" || exit 9\ngrep -q sysconfig \"$3\" || exit 8\necho '{json}'"),
        )
    }

    fn probe_script(dir: &Path) -> PathBuf {
        let p = dir.join("probe.py");
        std::fs::write(&p, PROBE_SCRIPT).unwrap();
        p
    }

    #[test]
    fn broken_and_old_candidates_are_skipped_with_a_note() {
        let tmp = tempfile::tempdir().unwrap();
        let venv = tmp.path().join("venv");
        script(
            &venv.join("bin"),
            "python",
            "echo 'boom: broken venv' >&2; exit 1",
        );
        let old = tmp.path().join("old");
        fake(&old, "python3", "CPython", "3, 8, 18");
        let good = tmp.path().join("good");
        fake(&good, "python3", "CPython", "3, 11, 7");
        fake(&good, "python", "CPython", "3, 11, 7");
        let inputs = Inputs {
            virtual_env: Some(venv.clone().into_os_string()),
            path: Some(std::env::join_paths([&old, &good]).unwrap()),
            ..Inputs::default()
        };
        let d = discover_with(&inputs, &probe_script(tmp.path())).unwrap();
        // python3 on PATH is the old one; python (the next name) is the first that works.
        assert_eq!(d.chosen.executable, good.join("python"));
        assert_eq!(d.chosen.source, "python on PATH");
        assert_eq!(d.chosen.full_version, "3.11.7");
        assert_eq!(d.chosen.python_tag, "cp311");
        assert_eq!(d.chosen.abi_tag, "cp311");
        assert_eq!(d.chosen.platform_tag, "linux_x86_64");
        assert_eq!(d.chosen.ext_suffix, ".cpython-311-x86_64-linux-gnu.so");
        assert_eq!(d.skipped.len(), 2, "{:?}", d.skipped);
        assert_eq!(d.skipped[0].path, venv.join("bin/python"));
        assert_eq!(d.skipped[0].source, "$VIRTUAL_ENV");
        assert!(
            d.skipped[0].reason.contains("boom: broken venv"),
            "{}",
            d.skipped[0].reason
        );
        assert!(
            d.skipped[1].reason.contains("3.8.18 is older than 3.10"),
            "{}",
            d.skipped[1].reason
        );
        let notes = d.notes().join("\n");
        assert!(
            notes.contains("skipped ") && notes.contains("($VIRTUAL_ENV)"),
            "{notes}"
        );
        assert!(d.summary().contains("CPython 3.11.7"), "{}", d.summary());
        assert!(
            d.summary().contains("from python on PATH"),
            "{}",
            d.summary()
        );
    }

    #[test]
    fn a_named_interpreter_is_never_replaced() {
        let tmp = tempfile::tempdir().unwrap();
        let broken = script(tmp.path(), "broken", "exit 1");
        let good = tmp.path().join("good");
        fake(&good, "python3", "CPython", "3, 11, 7");
        let inputs = Inputs {
            rextio_python: Some(broken.clone().into_os_string()),
            path: Some(good.clone().into_os_string()),
            ..Inputs::default()
        };
        let err = discover_with(&inputs, &probe_script(tmp.path())).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains(&broken.display().to_string()) && text.contains("REXTIO_PYTHON"),
            "{text}"
        );
        assert!(text.contains("the probe failed"), "{text}");

        // --python comes before REXTIO_PYTHON, which comes before [toolchain] python.
        let cli = fake(tmp.path(), "cli-python", "CPython", "3, 12, 1");
        let inputs = Inputs {
            cli: Some(cli.clone()),
            rextio_python: Some(broken.into_os_string()),
            config: Some(PathBuf::from("nowhere/python")),
            ..Inputs::default()
        };
        let d = discover_with(&inputs, &probe_script(tmp.path())).unwrap();
        assert_eq!(
            (d.chosen.executable, d.chosen.source.as_str()),
            (cli, "--python")
        );
        assert_eq!(d.chosen.abi_tag, "cp312");

        // A bare name is looked up on PATH.
        let inputs = Inputs {
            cli: Some(PathBuf::from("python3")),
            path: Some(good.clone().into_os_string()),
            ..Inputs::default()
        };
        let d = discover_with(&inputs, &probe_script(tmp.path())).unwrap();
        assert_eq!(d.chosen.executable, good.join("python3"));

        let inputs = Inputs {
            config: Some(PathBuf::from(".venv/bin/python")),
            root: PathBuf::from("/proj"),
            ..Inputs::default()
        };
        let named = inputs.named().unwrap();
        assert_eq!(named.path, Path::new("/proj/.venv/bin/python"));
        assert_eq!(named.source, "[toolchain] python in rextio.toml");
    }

    #[test]
    fn not_cpython_is_skipped_and_nothing_usable_is_an_error_listing_every_candidate() {
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path().join("bin");
        fake(&bin, "python3", "PyPy", "3, 11, 9");
        script(&bin, "python", "echo not json");
        let inputs = Inputs {
            path: Some(bin.clone().into_os_string()),
            ..Inputs::default()
        };
        let err = discover_with(&inputs, &probe_script(tmp.path())).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("PyPy 3.11.9 is not CPython"), "{text}");
        assert!(text.contains("something else than its JSON"), "{text}");
        assert!(text.contains("activate a virtual environment"), "{text}");

        let nothing = Inputs::default();
        let text = discover_with(&nothing, &probe_script(tmp.path()))
            .unwrap_err()
            .to_string();
        assert!(
            text.contains("neither python3 nor python on PATH"),
            "{text}"
        );
    }

    #[test]
    fn a_missing_candidate_is_skipped_and_duplicates_are_probed_once() {
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path().join("venv/bin");
        let py = fake(&bin, "python", "CPython", "3, 11, 7");
        std::os::unix::fs::symlink(&py, bin.join("python3")).unwrap();
        let inputs = Inputs {
            virtual_env: Some(tmp.path().join("venv").into_os_string()),
            path: Some(bin.clone().into_os_string()),
            ..Inputs::default()
        };
        // $VIRTUAL_ENV/bin/python and python3 -> python on PATH are one interpreter.
        assert_eq!(inputs.discovered().len(), 1, "{:?}", inputs.discovered());

        let inputs = Inputs {
            virtual_env: Some(tmp.path().join("gone").into_os_string()),
            path: Some(bin.into_os_string()),
            ..Inputs::default()
        };
        let d = discover_with(&inputs, &probe_script(tmp.path())).unwrap();
        assert_eq!(d.skipped.len(), 1);
        assert!(
            d.skipped[0].reason.contains("cannot run it"),
            "{:?}",
            d.skipped
        );
        assert_eq!(d.chosen.source, "python3 on PATH");
    }

    #[test]
    fn the_real_probe_runs_on_the_development_interpreter() {
        // The development interpreter is required (`cargo xtask setup` creates it).
        let python = std::env::var_os("REXTIO_PYTHON")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/python"));
        assert!(
            python.exists(),
            "Python environment missing at '{}': run `cargo xtask setup`",
            python.display()
        );
        let inputs = Inputs {
            cli: Some(python.clone()),
            ..Inputs::default()
        };
        let d = discover(&inputs).unwrap();
        assert_eq!(d.chosen.implementation, "CPython");
        assert_eq!(d.chosen.executable, python);
        assert!(d.chosen.ext_suffix.ends_with(".so"), "{:?}", d.chosen);
        assert!(
            d.chosen.ext_suffix.contains(&format!(
                "cpython-{}",
                d.chosen.python_tag.trim_start_matches("cp")
            )),
            "{:?}",
            d.chosen
        );
        assert!(
            d.chosen.platform_tag.starts_with("linux_"),
            "{:?}",
            d.chosen
        );
    }
}
