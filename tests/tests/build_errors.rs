//! Build failures surface cargo's messages and the command; nothing half-built is reported ok.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rextio_host::{BuildOptions, Project, Registry};
use rextio_plugin_api::*;

/// A plugin with one rule that lowers to valid Rust (`brokenlib.ok(n)` = `n + 1`) and one
/// whose lowering parses but does not compile (`brokenlib.f(n)`).
struct Broken(Vec<RuleRecord>);

impl Broken {
    fn new() -> Self {
        let rule = |id: &str| RuleRecord {
            id: id.into(),
            scope: RuleScope::Call,
            pattern: id.into(),
            constraint: String::new(),
            outcome: RuleOutcome::Native,
            diagnostic_code: None,
            guidance: String::new(),
            stability: Stability::Experimental,
            verified: false,
        };
        Broken(vec![rule("broken/f"), rule("broken/ok")])
    }
}

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
        let rule = match site.target.as_str() {
            "brokenlib.f" => "broken/f",
            "brokenlib.ok" => "broken/ok",
            _ => return ClaimOutcome::NotCovered,
        };
        ClaimOutcome::Claimed {
            rule_id: rule.into(),
            result_type: ValueType::Int,
        }
    }
    fn lower(
        &self,
        site: &ClaimedSite,
        cx: &mut LoweringContext,
    ) -> Result<LoweredExpr, LowerError> {
        let [n] = cx.args.as_slice() else {
            return Err(LowerError::new(&site.rule_id, "one operand expected"));
        };
        let expr = if site.rule_id == "broken/ok" {
            format!("::rextio_plugin_api::runtime::int_add({}, 1)?", n.expr)
        } else {
            "this_function_does_not_exist_anywhere(1)".to_owned()
        };
        Ok(LoweredExpr {
            expr: expr.into(),
            uses: vec![],
        })
    }
    fn runtime_crate(&self) -> Option<CrateDependency> {
        None
    }
}

/// A project with one function the broken rule lowers (`g`) and one the good rule lowers (`h`).
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("rextio.toml"),
        "[plugins]\nenabled = [\"broken\"]\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(
        dir.path().join("src/brokenlib.py"),
        "def f(n):\n    return n * 3\n\n\ndef ok(n):\n    return n + 1\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("src/m.py"),
        "import brokenlib\n\n\ndef g(n: int) -> int:\n    return brokenlib.f(n)\n\n\ndef h(n: int) -> int:\n    return brokenlib.ok(n)\n",
    )
    .unwrap();
    dir
}

fn options(strict: bool) -> BuildOptions {
    BuildOptions {
        python: Some(rextio_tests::python()),
        strict,
        ..BuildOptions::default()
    }
}

fn registry() -> Registry {
    Registry::builder().plugin(Broken::new()).build().unwrap()
}

#[test]
fn code_that_does_not_compile_demotes_only_its_function() {
    let dir = project();
    let out = Project::open(dir.path())
        .unwrap()
        .build(&registry(), &options(false))
        .unwrap();
    let f = |q: &str| {
        out.report
            .modules
            .iter()
            .flat_map(|m| &m.functions)
            .find(|f| f.qualname == q)
            .unwrap()
            .clone()
    };
    let (g, h) = (f("m.g"), f("m.h"));
    assert_eq!(h.route, "native-plugin:broken");
    assert!(h.diagnostics.is_empty(), "{:?}", h.diagnostics);
    assert_eq!(g.route, "fallback-python");
    assert!(g.plugin_claims.is_empty());
    let codes: Vec<&str> = g.diagnostics.iter().map(|d| d.code.as_str()).collect();
    assert_eq!(codes, vec!["RXT017"]);
    let msg = &g.diagnostics[0].message;
    assert!(msg.contains("broken `broken/f`"), "{msg}");
    assert!(
        msg.contains("this_function_does_not_exist_anywhere"),
        "{msg}"
    );
    assert!(out.extension.is_some());

    // The native `h` and the fallback `g` both answer from Python.
    let run = std::process::Command::new(rextio_tests::python())
        .arg("-c")
        .arg("import m, types; print(m.g(2), m.h(2), isinstance(m.h, types.BuiltinFunctionType), isinstance(m.g, types.FunctionType))")
        .env("PYTHONPATH", &out.python_dir)
        .env("REXTIO_NATIVE_MODE", "native")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&run.stdout).trim(),
        "6 3 True True",
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

#[test]
fn strict_builds_report_cargo_messages_and_command() {
    let dir = project();
    let err = Project::open(dir.path())
        .unwrap()
        .build(&registry(), &options(true))
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
