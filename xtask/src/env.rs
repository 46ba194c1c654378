//! The environment child processes run with, and small process helpers.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

/// Never set: tch must see exactly the torch it was built for.
const BYPASS_VAR: &str = "LIBTORCH_BYPASS_VERSION_CHECK";

/// `ROOT/.venv`.
pub fn venv_dir(root: &Path) -> PathBuf {
    root.join(".venv")
}

/// `ROOT/.venv/bin/python`.
pub fn venv_python(root: &Path) -> PathBuf {
    venv_dir(root).join("bin").join("python")
}

/// Environment variables for every cargo/python child that needs the matched environment
/// (venv Python, torch from the venv's wheel, shared target dir for generated crates).
///
/// `LIBTORCH_BYPASS_VERSION_CHECK` is removed by [`venv_command`], never set.
pub fn venv_env(root: &Path) -> Vec<(String, String)> {
    let venv = venv_dir(root);
    let venv_bin = venv.join("bin");
    let python = venv_python(root);

    let mut path_entries = vec![venv_bin.clone()];
    if let Some(path) = std::env::var_os("PATH") {
        path_entries.extend(std::env::split_paths(&path).filter(|p| p != &venv_bin));
    }
    let path = std::env::join_paths(path_entries)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| venv_bin.to_string_lossy().into_owned());

    let target_dir = rextio_host::paths::target_dir(&venv)
        .to_string_lossy()
        .into_owned();

    let python = python.to_string_lossy().into_owned();
    vec![
        ("VIRTUAL_ENV".into(), venv.to_string_lossy().into_owned()),
        ("PATH".into(), path),
        ("PYO3_PYTHON".into(), python.clone()),
        ("REXTIO_PYTHON".into(), python),
        (
            "REXTIO_WORKSPACE".into(),
            root.to_string_lossy().into_owned(),
        ),
        ("LIBTORCH_USE_PYTORCH".into(), "1".into()),
        ("REXTIO_TARGET_DIR".into(), target_dir),
    ]
}

/// A command run in `root` with [`venv_env`] applied and the bypass variable removed.
pub fn venv_command(root: &Path, program: impl AsRef<OsStr>) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(root)
        .envs(venv_env(root))
        .env_remove(BYPASS_VAR)
        .env_remove("PYTHONHOME");
    cmd
}

/// Runs `cmd` with inherited stdio; errors (naming the full command line and the exit status)
/// if it cannot start or exits unsuccessfully. `hint` is appended to the failure message.
pub fn run(cmd: &mut Command, hint: &str) -> Result<()> {
    let line = command_line(cmd);
    let status = cmd
        .status()
        .with_context(|| format!("failed to start `{line}`"))?;
    if !status.success() {
        if hint.is_empty() {
            bail!("`{line}` failed ({status})");
        }
        bail!("`{line}` failed ({status}); {hint}");
    }
    Ok(())
}

/// `program arg1 arg2 ...` for messages.
fn command_line(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|part| part.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `LD_LIBRARY_PATH` for a test binary that links libtorch and libpython from the venv (the
/// torch runtime's unit tests): the venv torch's `lib` and the interpreter's `LIBDIR`, before
/// whatever the caller's environment had.
pub fn runtime_library_path(root: &Path) -> Result<String> {
    let script = "import os, sysconfig, torch\n\
                  print(os.path.join(os.path.dirname(torch.__file__), 'lib'))\n\
                  print(sysconfig.get_config_var('LIBDIR') or '')";
    let mut cmd = venv_command(root, venv_python(root));
    cmd.args(["-c", script]);
    let Some(out) = capture(&mut cmd) else {
        bail!("cannot locate libtorch in the venv (`cargo xtask setup` installs it)");
    };
    let mut dirs: Vec<PathBuf> = out
        .lines()
        .filter(|l| !l.is_empty())
        .map(PathBuf::from)
        .collect();
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH") {
        dirs.extend(std::env::split_paths(&old));
    }
    let joined = std::env::join_paths(dirs).context("a library directory holds a `:`")?;
    Ok(joined.to_string_lossy().into_owned())
}

/// Runs `cmd` capturing stdout; `None` if it cannot start or fails.
pub fn capture(cmd: &mut Command) -> Option<String> {
    let out = cmd.output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn venv_env_points_at_the_venv_and_never_bypasses() {
        let root = Path::new("/ws");
        let vars = venv_env(root);
        let get = |key: &str| {
            vars.iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
                .unwrap()
        };
        assert_eq!(get("VIRTUAL_ENV"), "/ws/.venv");
        assert_eq!(get("PYO3_PYTHON"), "/ws/.venv/bin/python");
        assert_eq!(get("REXTIO_PYTHON"), "/ws/.venv/bin/python");
        assert_eq!(get("LIBTORCH_USE_PYTORCH"), "1");
        assert!(get("PATH").starts_with("/ws/.venv/bin"));
        assert!(!get("REXTIO_TARGET_DIR").is_empty());
        assert!(vars.iter().all(|(k, _)| k != BYPASS_VAR));

        let cmd = venv_command(root, "true");
        assert!(cmd.get_envs().any(|(k, v)| k == BYPASS_VAR && v.is_none()));
    }
}
