//! Running the probe: absolute path, trust checks, empty environment, deadline, output cap.

use super::{parse_probe_output, ProbeReport};
use crate::reason::{ReasonCode, Refusal};
use crate::trust::{check_trusted_file, TrustError, TrustPolicy};
use std::fmt;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use wait_timeout::ChildExt;

/// Where a probe report came from; recorded in ready observations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProbeProvenance {
    /// A probe subprocess ran on this host.
    Process,
    /// A fixed report stood in for the probe (tests, CI without a GPU): no host evidence.
    Synthetic,
}

/// Something that yields a validated probe report for a configured probe executable.
pub trait ProbeRunner: Send + Sync + fmt::Debug {
    /// Run (or stand in for) the probe at `executable`.
    fn run(&self, executable: &Path) -> Result<ProbeReport, Refusal>;
    /// Whether reports come from a real subprocess or stand in for one.
    fn provenance(&self) -> ProbeProvenance;
}

/// Resource limits of one probe run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeLimits {
    /// Wall-clock deadline; the probe's process group is killed when it passes.
    pub timeout: Duration,
    /// Most bytes of standard output accepted.
    pub max_output_bytes: usize,
}

impl Default for ProbeLimits {
    fn default() -> Self {
        ProbeLimits {
            timeout: Duration::from_secs(20),
            max_output_bytes: 64 * 1024,
        }
    }
}

/// Runs the probe as a subprocess under a [`TrustPolicy`] and [`ProbeLimits`].
///
/// The executable must be absolute and pass the trust checks; its canonical path is executed
/// with an empty environment, `/` as working directory, no standard input, standard error
/// discarded, in its own process group (so a deadline kills its children too).
#[derive(Debug, Clone)]
pub struct ProcessProbeRunner {
    policy: TrustPolicy,
    limits: ProbeLimits,
}

impl Default for ProcessProbeRunner {
    fn default() -> Self {
        ProcessProbeRunner::production()
    }
}

impl ProcessProbeRunner {
    /// The production runner: [`TrustPolicy::probe_executable`] and default limits.
    pub fn production() -> ProcessProbeRunner {
        ProcessProbeRunner::new(TrustPolicy::probe_executable(), ProbeLimits::default())
    }

    /// A runner with an explicit policy and limits (tests use a temp-dir policy).
    pub fn new(policy: TrustPolicy, limits: ProbeLimits) -> ProcessProbeRunner {
        ProcessProbeRunner { policy, limits }
    }

    /// The trust policy in force.
    pub fn policy(&self) -> &TrustPolicy {
        &self.policy
    }

    /// The limits in force.
    pub fn limits(&self) -> ProbeLimits {
        self.limits
    }
}

/// Map a trust failure of `probe_executable` to its refusal; the message never names the path.
pub fn probe_trust_refusal(err: &TrustError) -> Refusal {
    let (code, what) = match err {
        TrustError::NotAbsolute => (
            ReasonCode::ProbeNotAbsolute,
            "probe_executable is not an absolute path; give the probe's absolute path (PATH is never searched)".to_owned(),
        ),
        TrustError::Missing => (
            ReasonCode::ProbeMissing,
            "probe_executable does not exist; build it (cargo build -p rextio-device-cuda --bin rextio-cuda-probe) and give its absolute path".to_owned(),
        ),
        TrustError::NotFile => (
            ReasonCode::ProbeNotFile,
            "probe_executable is not a regular file".to_owned(),
        ),
        TrustError::NotExecutable => (
            ReasonCode::ProbeNotExecutable,
            "probe_executable has no execute permission".to_owned(),
        ),
        TrustError::Writable { .. } | TrustError::OutsideRoots => (
            ReasonCode::ProbeUntrustedPermissions,
            format!("probe_executable is not trusted: {err}; remove group/world write permission (chmod go-w) or install the probe elsewhere"),
        ),
        TrustError::Owner { .. } => (
            ReasonCode::ProbeUntrustedOwner,
            format!("probe_executable is not trusted: {err}; it and its directories must belong to root or to the user running rextio"),
        ),
        TrustError::Io(kind) => (
            ReasonCode::ProbeInspectFailed,
            format!("probe_executable cannot be inspected: {kind}"),
        ),
        TrustError::Unsupported => (
            ReasonCode::ProbePlatformUnsupported,
            "the probe runner has no file-trust checks on this platform".to_owned(),
        ),
    };
    Refusal::new(code, what)
}

fn spawn(command: &mut Command) -> std::io::Result<std::process::Child> {
    // A freshly written executable can be briefly "busy" while another thread of this process
    // forks with the writer's descriptor still open; retry that race a few times.
    let mut attempts = 0;
    loop {
        match command.spawn() {
            #[cfg(unix)]
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && attempts < 10 => {
                attempts += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

#[cfg(unix)]
fn kill_group(child: &mut std::process::Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill has no memory-safety preconditions. The child is its own process-group
        // leader and not yet reaped (or its group still has members), so `-pid` names only it.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
}

#[cfg(not(unix))]
fn kill_group(child: &mut std::process::Child) {
    let _ = child.kill();
}

impl ProbeRunner for ProcessProbeRunner {
    fn run(&self, executable: &Path) -> Result<ProbeReport, Refusal> {
        let canonical =
            check_trusted_file(executable, &self.policy).map_err(|e| probe_trust_refusal(&e))?;
        let mut command = Command::new(&canonical);
        command
            .env_clear()
            .current_dir("/")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            command.process_group(0);
        }
        let started = Instant::now();
        let mut child = spawn(&mut command).map_err(|e| {
            Refusal::new(
                ReasonCode::ProbeSpawnFailed,
                format!("the probe could not be started: {}", e.kind()),
            )
        })?;
        let Some(mut stdout) = child.stdout.take() else {
            kill_group(&mut child);
            let _ = child.wait();
            return Err(Refusal::new(
                ReasonCode::ProbeSpawnFailed,
                "the probe's standard output could not be captured",
            ));
        };
        let cap = self.limits.max_output_bytes;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            // Read one byte past the cap to detect a flood, then drop the pipe so the probe
            // gets EPIPE instead of blocking.
            let limit = u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1);
            let result = (&mut stdout).take(limit).read_to_end(&mut buf);
            drop(stdout);
            let _ = tx.send(result.map(|_| buf));
        });
        let timeout_refusal = || {
            Refusal::new(
                ReasonCode::ProbeTimeout,
                format!(
                    "the probe did not finish within {} ms and was killed",
                    self.limits.timeout.as_millis()
                ),
            )
        };
        let status = match child.wait_timeout(self.limits.timeout) {
            Ok(Some(status)) => status,
            Ok(None) => {
                kill_group(&mut child);
                let _ = child.wait();
                return Err(timeout_refusal());
            }
            Err(e) => {
                kill_group(&mut child);
                let _ = child.wait();
                return Err(Refusal::new(
                    ReasonCode::ProbeSpawnFailed,
                    format!("waiting for the probe failed: {}", e.kind()),
                ));
            }
        };
        // The probe exited; a descendant may still hold its output open. Wait for the output
        // only until the same deadline, then kill whatever is left of the group.
        let remaining = self
            .limits
            .timeout
            .saturating_sub(started.elapsed())
            .max(Duration::from_millis(100));
        let output = match rx.recv_timeout(remaining) {
            Ok(Ok(output)) => output,
            Ok(Err(e)) => {
                return Err(Refusal::new(
                    ReasonCode::ProbeSpawnFailed,
                    format!("reading the probe's output failed: {}", e.kind()),
                ))
            }
            Err(_) => {
                kill_group(&mut child);
                return Err(timeout_refusal());
            }
        };
        if output.len() > cap {
            return Err(Refusal::new(
                ReasonCode::ProbeOutputTooLarge,
                format!("the probe wrote more than {cap} bytes of output"),
            ));
        }
        if !status.success() {
            let how = match status.code() {
                Some(code) => format!("exit status {code}"),
                None => "a signal".to_owned(),
            };
            return Err(Refusal::new(
                ReasonCode::ProbeExitFailure,
                format!("the probe failed with {how}"),
            ));
        }
        parse_probe_output(&output)
    }

    fn provenance(&self) -> ProbeProvenance {
        ProbeProvenance::Process
    }
}

/// A stand-in probe that returns a fixed report: for tests and for CI without a GPU.
///
/// It is a programmatic/manual-test boundary, not production provenance: the provider records
/// `probe: "synthetic"` in its ready observations when one is used. The report is validated exactly
/// like a real probe's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntheticProbe {
    report: ProbeReport,
}

impl SyntheticProbe {
    /// A stand-in for this report.
    pub fn new(report: ProbeReport) -> SyntheticProbe {
        SyntheticProbe { report }
    }

    /// A stand-in for a report given as probe output (JSON); validated on each run.
    pub fn from_json(json: &str) -> Result<SyntheticProbe, Refusal> {
        parse_probe_output(json.as_bytes()).map(SyntheticProbe::new)
    }
}

impl ProbeRunner for SyntheticProbe {
    fn run(&self, _executable: &Path) -> Result<ProbeReport, Refusal> {
        self.report.validate().map_err(|e| {
            Refusal::new(
                ReasonCode::ProbeSchemaMismatch,
                format!("the synthetic probe report is invalid: {e}"),
            )
        })?;
        Ok(self.report.clone())
    }

    fn provenance(&self) -> ProbeProvenance {
        ProbeProvenance::Synthetic
    }
}
