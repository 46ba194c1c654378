//! `rextio-cuda-probe`: print the CUDA driver inventory of this host as one JSON document.
//!
//! It loads `libcuda.so.1` only from the reviewed absolute system paths (root-owned, no
//! group/world-writable file or ancestor), calls only the inventory entry points, and prints the
//! `rextio-cuda-probe/1` schema on standard output. It takes no arguments and reads no
//! environment. It exits 0 whenever it printed a report, whatever the report says.

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    if std::env::args_os().len() > 1 {
        let _ = writeln!(
            std::io::stderr(),
            "rextio-cuda-probe takes no arguments; it prints the rextio-cuda-probe/1 JSON report"
        );
        return ExitCode::from(2);
    }
    let report = rextio_device_cuda::probe::inventory::collect_reviewed();
    let json = match serde_json::to_string(&report) {
        Ok(json) => json,
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "rextio-cuda-probe: cannot serialise the report: {e}"
            );
            return ExitCode::from(1);
        }
    };
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{json}").and_then(|()| out.flush()).is_err() {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
