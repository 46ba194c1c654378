//! Workspace automation for Rextio: `cargo xtask setup|demo|test|ci|certify [--cuda]|bench|dist`.
//!
//! Every command that needs Python runs `setup` first, so a fresh machine reaches a working
//! demo with one command. Child processes get their environment from [`env::venv_env`].

mod bench;
mod cuda;
mod dist;
mod env;
mod setup;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

/// Automation for the Rextio workspace.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Create `.venv/` (CPython 3.11) and install `requirements.txt` (idempotent).
    Setup,
    /// Set up, build `examples/scoring` (PyTorch) and `examples/tf_scoring` (TensorFlow)
    /// natively and run their parity/speed demos.
    Demo,
    /// Set up, then `cargo test --workspace` with the venv environment.
    Test {
        /// Extra arguments passed to `cargo test` (after `--`); with `-p PKG`, `--workspace`
        /// is left out.
        #[arg(last = true)]
        args: Vec<String>,
    },
    /// Set up, then certify every plugin with a certification kit on this host
    /// (`rextio certify`): evidence under `target/certify/` and the user's evidence dir.
    Certify {
        /// Instead, run the CUDA lanes for real on this GPU host (parity with eager on
        /// contiguous and non-contiguous inputs, no host/device transfers, CUDA graph replay
        /// for torch); evidence under `target/certify/cuda/` with `support_claim=false`. Fails
        /// with `no CUDA device: ...` on a host without an NVIDIA driver and device.
        #[arg(long)]
        cuda: bool,
    },
    /// `cargo fmt --check`, `cargo clippy -D warnings`, `test`, then `certify`.
    Ci {
        /// Extra arguments passed to `cargo test` (after `--`), as for `test`.
        #[arg(last = true)]
        args: Vec<String>,
    },
    /// Build the installable wheels into `target/dist/`: the `rextio` CLI (release binary in
    /// `rextio-<ver>.data/scripts/`, py3-none-<platform>) and each backend's marker-types
    /// package (py3-none-any). Install with `pip install target/dist/*.whl`.
    Dist,
    /// Build the benchmark projects and the floor lane, then time every lane (`bench/run.py`);
    /// table on stdout, JSON, markdown and SVG plot under `target/bench/`.
    Bench {
        /// Fewer rounds and shorter timed blocks (under a minute with warm caches).
        #[arg(long)]
        quick: bool,
        /// Torch intra-op threads for every lane.
        #[arg(long, default_value_t = 1)]
        threads: usize,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("xtask: error: {err}");
            for cause in err.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    let root = workspace_root()?;
    match cli.command {
        Cmd::Setup => setup::setup(&root),
        Cmd::Demo => demo(&root),
        Cmd::Test { args } => {
            setup::setup(&root)?;
            test(&root, &args)
        }
        Cmd::Ci { args } => ci(&root, &args),
        Cmd::Bench { quick, threads } => bench::bench(&root, quick, threads),
        Cmd::Dist => dist::dist(&root).map(|_| ()),
        Cmd::Certify { cuda: true } => cuda::certify_cuda(&root),
        Cmd::Certify { cuda: false } => {
            setup::setup(&root)?;
            certify(&root)
        }
    }
}

/// The workspace root: the parent of this crate's manifest directory.
fn workspace_root() -> Result<PathBuf> {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = manifest_dir.parent().with_context(|| {
        format!(
            "xtask manifest dir {} has no parent directory",
            manifest_dir.display()
        )
    })?;
    Ok(root.to_path_buf())
}

/// The cargo binary that launched us (falls back to `cargo` on PATH).
fn cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"))
}

/// `cargo run -p rextio-host --bin rextio --` in the venv environment; append the CLI arguments.
fn rextio_command(root: &Path) -> std::process::Command {
    let mut cmd = env::venv_command(root, cargo());
    cmd.args([
        "run",
        "--quiet",
        "-p",
        "rextio-host",
        "--bin",
        "rextio",
        "--",
    ]);
    cmd
}

fn demo(root: &Path) -> Result<()> {
    setup::setup(root)?;
    let python = env::venv_python(root);
    // One example per backend: PyTorch, then TensorFlow.
    for example in ["scoring", "tf_scoring"] {
        let dir = root.join("examples").join(example);
        eprintln!("xtask: building examples/{example} with `rextio build`");
        let mut build = rextio_command(root);
        build.arg("build").arg(format!("examples/{example}"));
        env::run(&mut build, "")?;

        eprintln!("xtask: running examples/{example}/demo.py (REXTIO_NATIVE_MODE=native)");
        let mut run_demo = env::venv_command(root, &python);
        run_demo
            .arg(dir.join("demo.py"))
            .env("REXTIO_NATIVE_MODE", "native")
            .env(
                "PYTHONPATH",
                dir.join(".rextio").join("build").join("python"),
            );
        env::run(&mut run_demo, "")?;
    }
    Ok(())
}

fn certify(root: &Path) -> Result<()> {
    // Each backend has two CPU paths (the fusion crate's kernels and its framework op by op)
    // chosen per call: its kit must pass on each of them, forced, before the default run
    // records the evidence.
    const PATHS: [(&str, &str); 2] = [
        ("rextio-torch", "REXTIO_TORCH_PATH"),
        ("rextio-tensorflow", "REXTIO_TF_PATH"),
    ];
    for (plugin, var) in PATHS {
        for path in ["fused", "per-op"] {
            eprintln!("xtask: rextio certify {plugin} with {var}={path}");
            let mut cmd = rextio_command(root);
            cmd.args(["certify", plugin, "--python"])
                .arg(env::venv_python(root))
                .arg("--out")
                .arg(root.join("target").join(format!("certify-{plugin}-{path}")))
                .env(var, path);
            env::run(&mut cmd, "")?;
        }
    }
    eprintln!("xtask: rextio certify (every plugin with a certification kit)");
    let mut cmd = rextio_command(root);
    cmd.args(["certify", "--python"])
        .arg(env::venv_python(root))
        .arg("--out")
        .arg(root.join("target").join("certify"));
    for (_, var) in PATHS {
        cmd.env_remove(var);
    }
    env::run(&mut cmd, "")
}

fn test(root: &Path, args: &[String]) -> Result<()> {
    let mut cmd = env::venv_command(root, cargo());
    cmd.arg("test");
    // `--workspace` would override a package selection passed through.
    let selects_package = args.iter().any(|a| {
        a == "-p" || a == "--package" || a.starts_with("-p") || a.starts_with("--package=")
    });
    if !selects_package {
        cmd.arg("--workspace");
    }
    cmd.args(args);
    let shown: Vec<_> = cmd.get_args().map(|a| a.to_string_lossy()).collect();
    eprintln!("xtask: cargo {}", shown.join(" "));
    env::run(&mut cmd, "")?;
    if !selects_package {
        // The scalar runtime of generated crates sits behind a feature the workspace build leaves
        // off; its unit tests (Python int semantics) run here, and the GIL test in a binary of
        // its own (it counts the process's Python threads).
        eprintln!("xtask: cargo test -p rextio-plugin-api --features runtime --lib --test gil");
        let mut rt = env::venv_command(root, cargo());
        rt.args([
            "test",
            "-p",
            "rextio-plugin-api",
            "--features",
            "runtime",
            "--lib",
            "--test",
            "gil",
        ]);
        env::run(&mut rt, "")?;
        // So does the torch runtime (libtorch ops on tensors made in the test), which links
        // libtorch and libpython: the test binary finds them through the venv.
        eprintln!("xtask: cargo test -p rextio-torch --features runtime --lib runtime::");
        let mut torch_rt = env::venv_command(root, cargo());
        torch_rt
            .args([
                "test",
                "-p",
                "rextio-torch",
                "--features",
                "runtime",
                "--lib",
                "runtime::",
            ])
            .env("LD_LIBRARY_PATH", env::runtime_library_path(root)?);
        env::run(&mut torch_rt, "")?;
    }
    Ok(())
}

fn ci(root: &Path, test_args: &[String]) -> Result<()> {
    eprintln!("xtask: cargo fmt --all -- --check");
    let mut fmt = Command::new(cargo());
    fmt.current_dir(root)
        .args(["fmt", "--all", "--", "--check"]);
    env::run(&mut fmt, "run `cargo fmt --all` to fix the formatting")?;
    // The benchmark floor crate is its own workspace (a cdylib built into the shared target dir).
    let mut fmt_floor = Command::new(cargo());
    fmt_floor.current_dir(root).args([
        "fmt",
        "--manifest-path",
        "bench/floor/Cargo.toml",
        "--",
        "--check",
    ]);
    env::run(
        &mut fmt_floor,
        "run `cargo fmt --manifest-path bench/floor/Cargo.toml`",
    )?;

    // Clippy compiles build scripts (torch-sys) that need the venv's Python and torch.
    setup::setup_with(root, setup::PipCache::Off)?;
    // --all-features includes the backends' `runtime` modules (libtorch through the venv).
    eprintln!("xtask: cargo clippy --workspace --all-targets --all-features -- -D warnings");
    let mut clippy = env::venv_command(root, cargo());
    clippy.args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--all-features",
        "--",
        "-D",
        "warnings",
    ]);
    env::run(&mut clippy, "")?;

    test(root, test_args)?;
    certify(root)
}
