//! Build failures surface cargo's messages and the command; nothing half-built is reported ok.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rextio_host::{BuildOptions, Project, Registry};
use rextio_plugin_api::*;

/// A plugin whose lowering emits Rust that does not compile.
struct Broken(Vec<RuleRecord>);

impl Plugin for Broken {
    fn id(&self) -> &str {
        "broken"
    }
    fn api_version(&self) -> &str {
        "1.7.0"
    }
    fn coverage(&self) -> Coverage {
        Coverage {
            packages: vec!["brokenlib".into()],
            ..Coverage::default()
        }
    }
    fn rules(&self) -> &[RuleRecord] {
        &self.0
    }
    fn diagnostic_codes(&self) -> &[CodeDoc] {
        &[]
    }
    fn type_vocabulary(&self) -> &[PluginType] {
        &[]
    }
    fn claim(&self, site: &ClaimSite) -> ClaimOutcome {
        if site.target == "brokenlib.f" {
            return ClaimOutcome::Claimed {
                rule_id: "broken/f".into(),
                result_type: ValueType::Int,
            };
        }
        ClaimOutcome::NotCovered
    }
    fn lower(
        &self,
        _site: &ClaimedSite,
        _cx: &mut LoweringContext,
    ) -> Result<LoweredExpr, LowerError> {
        Ok(LoweredExpr {
            expr: "this_function_does_not_exist_anywhere(1)".into(),
            uses: vec![],
        })
    }
    fn runtime_crate(&self) -> Option<CrateDependency> {
        None
    }
}

#[test]
fn a_failing_cargo_build_reports_messages_and_command() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("rextio.toml"),
        "[plugins]\nenabled = [\"broken\"]\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(
        dir.path().join("src/m.py"),
        "import brokenlib\n\ndef g(n: int) -> int:\n    return brokenlib.f(n)\n",
    )
    .unwrap();
    let registry = Registry::builder().plugin(Broken(vec![])).build().unwrap();
    let options = BuildOptions {
        python: Some(rextio_tests::python()),
        ..BuildOptions::default()
    };
    let err = Project::open(dir.path())
        .unwrap()
        .build(&registry, &options)
        .err()
        .expect("the build must fail")
        .to_string();
    assert!(err.contains("cargo failed"), "{err}");
    assert!(
        err.contains("--manifest-path") && err.contains("Cargo.toml"),
        "{err}"
    );
    assert!(
        err.contains("this_function_does_not_exist_anywhere"),
        "cargo's message is shown: {err}"
    );
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join(".rextio/reports/build.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(report["cargo"]["status"], "failed");
    assert!(report["artifacts"]["extension"].is_null());
}
