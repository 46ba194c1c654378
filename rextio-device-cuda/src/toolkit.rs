//! Optional validation of an explicitly configured CUDA toolkit root (raw-driver lanes only).
//!
//! The toolkit's `version.json` (shipped by CUDA 11.1 and newer) must name the toolkit
//! (`cuda.version`) and its runtime (`cuda_cudart.version`) at one identical `MAJOR.MINOR`, at or
//! above the effective toolkit floor. Nothing is searched: only `toolkit_root/version.json`.

use crate::capability::ToolkitVersion;
use crate::reason::{ReasonCode, Refusal};
use std::io::Read;
use std::path::Path;

/// The most bytes of `version.json` read.
const MAX_VERSION_JSON_BYTES: u64 = 1024 * 1024;

fn major_minor(full: &str) -> Option<ToolkitVersion> {
    let mut parts = full.split('.');
    let major = parts.next()?;
    let minor = parts.next()?;
    if parts.any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    ToolkitVersion::parse_major_minor(&format!("{major}.{minor}"))
}

/// Validate `root` against `floor`; returns the toolkit version.
pub fn validate_toolkit(root: &Path, floor: ToolkitVersion) -> Result<ToolkitVersion, Refusal> {
    if !root.is_absolute() {
        return Err(Refusal::new(
            ReasonCode::ToolkitRootNotAbsolute,
            "toolkit_root is not an absolute path",
        ));
    }
    if !root.is_dir() {
        return Err(Refusal::new(
            ReasonCode::ToolkitRootMissing,
            "toolkit_root does not exist or is not a directory",
        ));
    }
    let unreadable = |why: String| {
        Refusal::new(
            ReasonCode::ToolkitVersionUnreadable,
            format!("toolkit_root/version.json {why}; a CUDA 12 toolkit ships it"),
        )
    };
    let mut text = String::new();
    std::fs::File::open(root.join("version.json"))
        .and_then(|f| f.take(MAX_VERSION_JSON_BYTES).read_to_string(&mut text))
        .map_err(|e| unreadable(format!("cannot be read ({})", e.kind())))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| unreadable(format!("is not JSON ({e})")))?;
    let field = |component: &str| {
        json.get(component)
            .and_then(|c| c.get("version"))
            .and_then(serde_json::Value::as_str)
            .and_then(major_minor)
            .ok_or_else(|| unreadable(format!("has no valid {component}.version")))
    };
    let toolkit = field("cuda")?;
    let runtime = field("cuda_cudart")?;
    if toolkit != runtime {
        return Err(Refusal::new(
            ReasonCode::ToolkitVersionInconsistent,
            format!("the toolkit reports {toolkit} but its runtime (cudart) reports {runtime}; they must name one identical version"),
        ));
    }
    if toolkit < floor {
        return Err(Refusal::new(
            ReasonCode::ToolkitBelowFloor,
            format!("the toolkit is CUDA {toolkit}, below the effective minimum {floor}; install a newer toolkit or point toolkit_root at one"),
        ));
    }
    Ok(toolkit)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FLOOR: ToolkitVersion = ToolkitVersion {
        major: 12,
        minor: 0,
    };

    fn root_with(json: Option<&str>) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        if let Some(json) = json {
            std::fs::write(dir.path().join("version.json"), json).unwrap();
        }
        dir
    }

    #[test]
    fn a_cuda_12_toolkit_is_accepted() {
        let dir = root_with(Some(
            r#"{"cuda":{"name":"CUDA SDK","version":"12.8.1"},"cuda_cudart":{"name":"CUDA Runtime (cudart)","version":"12.8.90"}}"#,
        ));
        assert_eq!(
            validate_toolkit(dir.path(), FLOOR).unwrap(),
            ToolkitVersion {
                major: 12,
                minor: 8
            }
        );
    }

    #[test]
    fn toolkit_refusals_have_stable_reason_codes() {
        let v = |cuda: &str, rt: &str| {
            format!(r#"{{"cuda":{{"version":"{cuda}"}},"cuda_cudart":{{"version":"{rt}"}}}}"#)
        };
        let table: Vec<(Option<String>, ToolkitVersion, ReasonCode)> = vec![
            (None, FLOOR, ReasonCode::ToolkitVersionUnreadable),
            (
                Some("not json".into()),
                FLOOR,
                ReasonCode::ToolkitVersionUnreadable,
            ),
            (
                Some(r#"{"cuda":{"version":"12.8.1"}}"#.into()),
                FLOOR,
                ReasonCode::ToolkitVersionUnreadable,
            ),
            (
                Some(v("twelve", "12.8.90")),
                FLOOR,
                ReasonCode::ToolkitVersionUnreadable,
            ),
            (
                Some(v("12.8.1", "12.6.77")),
                FLOOR,
                ReasonCode::ToolkitVersionInconsistent,
            ),
            (
                Some(v("11.8.0", "11.8.89")),
                FLOOR,
                ReasonCode::ToolkitBelowFloor,
            ),
            (
                Some(v("12.2.0", "12.2.140")),
                ToolkitVersion {
                    major: 12,
                    minor: 4,
                },
                ReasonCode::ToolkitBelowFloor,
            ),
        ];
        for (i, (json, floor, expected)) in table.into_iter().enumerate() {
            let dir = root_with(json.as_deref());
            let err = validate_toolkit(dir.path(), floor).unwrap_err();
            assert_eq!(err.reason, expected, "row {i}: {err}");
            assert!(
                !err.message.contains(&*dir.path().to_string_lossy()),
                "no paths in messages"
            );
        }
        let dir = root_with(None);
        let err = validate_toolkit(&dir.path().join("missing"), FLOOR).unwrap_err();
        assert_eq!(err.reason, ReasonCode::ToolkitRootMissing);
        let err = validate_toolkit(Path::new("relative"), FLOOR).unwrap_err();
        assert_eq!(err.reason, ReasonCode::ToolkitRootNotAbsolute);
    }
}
