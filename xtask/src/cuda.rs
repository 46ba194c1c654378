//! `cargo xtask certify --cuda`: run the CUDA lanes for real on a GPU host.
//!
//! 1. Build the workspace's `rextio-cuda-probe` and run it through the provider's production
//!    runner (absolute path, empty environment, deadline, output cap). No driver or no device is
//!    an error that starts with `no CUDA device:`; nothing else runs.
//! 2. Set up the venv, then for each lane build its certification project with `rextio build`
//!    and a `[target]` selecting the real provider, the real probe and the device's SM (the
//!    host's preflight must be ready and the slice native).
//! 3. Run the lane's checker: parity with eager on contiguous and non-contiguous inputs, no
//!    host/device transfers (profiler), and for torch CUDA graph capture and replay on a
//!    non-default stream. Evidence is written to `target/certify/cuda/<lane>.json` with
//!    `support_claim=false` and `certification_ready=false`: it is engineering evidence from one
//!    host, not a support claim.

use anyhow::{bail, Context, Result};
use rextio_device_cuda::{ProbeReport, ProbeRunner, ProbeStatus, ProcessProbeRunner};
use std::path::{Path, PathBuf};

/// One lane: its plugin, capability and certification kit (`project/` + `check.py`).
struct Lane {
    name: &'static str,
    plugin: &'static str,
    capability: &'static str,
    kit: &'static str,
}

const LANES: [Lane; 2] = [
    Lane {
        name: "torch-cuda-e2",
        plugin: "rextio-torch",
        capability: "cuda-libtorch-linux-x86_64",
        kit: "rextio-torch/certify/cuda",
    },
    Lane {
        name: "tensorflow-cuda-e3",
        plugin: "rextio-tensorflow",
        capability: "cuda-tensorflow-tfe-linux-x86_64",
        kit: "rextio-tensorflow/certify/cuda",
    },
];

/// Where cargo puts this workspace's binaries.
fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
}

/// Build the probe and return its absolute path.
fn build_probe(root: &Path) -> Result<PathBuf> {
    eprintln!("xtask: building rextio-cuda-probe");
    let mut cmd = std::process::Command::new(crate::cargo());
    cmd.current_dir(root).args([
        "build",
        "--quiet",
        "-p",
        "rextio-device-cuda",
        "--bin",
        "rextio-cuda-probe",
    ]);
    crate::env::run(&mut cmd, "")?;
    let probe = target_dir(root).join("debug").join("rextio-cuda-probe");
    std::fs::canonicalize(&probe)
        .with_context(|| format!("the probe was not built at {}", probe.display()))
}

/// The device the lanes run on: ordinal 0 of a ready inventory, or `no CUDA device: ...`.
fn device0(report: &ProbeReport) -> Result<(String, String)> {
    if report.status != ProbeStatus::Ok {
        let detail = report
            .error
            .as_ref()
            .map(|e| format!(" ({} -> {:?})", e.entry_point, e.code))
            .unwrap_or_default();
        bail!(
            "no CUDA device: the driver probe reported `{}`{detail}; `cargo xtask certify --cuda` runs only on an NVIDIA GPU host with a driver >= 12.0",
            serde_json::to_value(report.status)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_else(|| format!("{:?}", report.status))
        );
    }
    let Some(d) = report.devices.iter().find(|d| d.ordinal == 0) else {
        bail!("no CUDA device: the driver is loaded but sees no device (is the GPU visible to this host or container?)");
    };
    let cc = d.compute_capability;
    Ok((d.name.clone(), format!("sm_{}{}", cc.major, cc.minor)))
}

/// Copy a kit's project into `dest`, with `[target]` for the lane appended to rextio.toml.
fn stage_project(kit: &Path, dest: &Path, lane: &Lane, probe: &Path, sm: &str) -> Result<()> {
    fn copy(from: &Path, to: &Path) -> Result<()> {
        std::fs::create_dir_all(to)?;
        for entry in std::fs::read_dir(from)? {
            let entry = entry?;
            let name = entry.file_name();
            if name == ".rextio" || name == "__pycache__" {
                continue;
            }
            let (src, dst) = (entry.path(), to.join(&name));
            if src.is_dir() {
                copy(&src, &dst)?;
            } else {
                std::fs::copy(&src, &dst)?;
            }
        }
        Ok(())
    }
    if dest.exists() {
        std::fs::remove_dir_all(dest)?;
    }
    copy(&kit.join("project"), dest)?;
    let toml = dest.join("rextio.toml");
    let mut text = std::fs::read_to_string(&toml)?;
    text.push_str(&format!(
        "\n[target]\ndevice_provider = \"rextio-device-cuda\"\ndevice_capability = \"{}\"\n\n[target.device_options]\nprobe_executable = \"{}\"\ndevice_ordinal = \"0\"\nsm = \"{sm}\"\n",
        lane.capability,
        probe.display()
    ));
    std::fs::write(&toml, text)?;
    Ok(())
}

/// `cargo xtask certify --cuda`.
pub fn certify_cuda(root: &Path) -> Result<()> {
    let probe = build_probe(root)?;
    let report = ProcessProbeRunner::production()
        .run(&probe)
        .map_err(|r| anyhow::anyhow!("no CUDA device: the driver probe could not run: {r}"))?;
    let (device, sm) = device0(&report)?;
    eprintln!("xtask: CUDA device 0 is {device} ({sm})");
    crate::setup::setup(root)?;
    let out = root.join("target").join("certify").join("cuda");
    std::fs::create_dir_all(&out)?;
    let python = crate::env::venv_python(root);
    // Every lane's checker imports the host's checker library (`rextio_certify.CudaLane`).
    let library = rextio_host::certify::checker_library(&out.join("checker-lib"))?;
    let mut failures = Vec::new();
    for lane in &LANES {
        eprintln!("xtask: CUDA lane {} ({})", lane.name, lane.capability);
        let kit = root.join(lane.kit);
        let project = out.join(lane.name).join("project");
        stage_project(&kit, &project, lane, &probe, &sm)?;
        let mut build = crate::rextio_command(root);
        build.arg("build").arg(&project).arg("--strict");
        if let Err(e) = crate::env::run(&mut build, "") {
            failures.push(format!("{}: build failed: {e}", lane.name));
            continue;
        }
        let mut check = crate::env::venv_command(root, &python);
        check
            .arg(kit.join("check.py"))
            .arg("--project")
            .arg(&project)
            .arg("--evidence")
            .arg(out.join(format!("{}.json", lane.name)))
            .arg("--plugin")
            .arg(lane.plugin)
            .arg("--device-name")
            .arg(&device)
            .arg("--sm")
            .arg(&sm)
            .env("REXTIO_NATIVE_MODE", "native")
            .env(
                "PYTHONPATH",
                std::env::join_paths([
                    project.join(".rextio").join("build").join("python"),
                    library.clone(),
                ])?,
            );
        if let Err(e) = crate::env::run(&mut check, "") {
            failures.push(format!("{}: {e}", lane.name));
        }
    }
    if !failures.is_empty() {
        bail!("CUDA certification failed: {}", failures.join("; "));
    }
    eprintln!(
        "xtask: CUDA evidence in {} (support_claim=false, certification_ready=false)",
        out.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_driver_or_no_device_fails_with_no_cuda_device() {
        let e = device0(&ProbeReport::with_status(ProbeStatus::DriverMissing)).unwrap_err();
        assert!(e.to_string().starts_with("no CUDA device: "), "{e}");
        assert!(e.to_string().contains("driver-missing"), "{e}");
        let e = device0(&ProbeReport::ok(12080, &[])).unwrap_err();
        assert!(e.to_string().starts_with("no CUDA device: "), "{e}");
        let (name, sm) = device0(&ProbeReport::ok(12080, &[("H100", 9, 0)])).unwrap();
        assert_eq!((name.as_str(), sm.as_str()), ("H100", "sm_90"));
    }

    #[test]
    fn every_lane_has_a_kit() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        for lane in &LANES {
            let kit = root.join(lane.kit);
            assert!(kit.join("check.py").is_file(), "{}", lane.name);
            assert!(
                kit.join("project").join("rextio.toml").is_file(),
                "{}",
                lane.name
            );
        }
    }
}
