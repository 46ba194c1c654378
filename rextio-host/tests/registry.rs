//! Registration: negotiation, validation, ordering, conflicts.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use proptest::prelude::*;
use rextio_host::registry::{RegistrationError, SiteResolution};
use rextio_host::{Project, Registry};
use rextio_plugin_api::*;

/// A configurable plugin that claims `+` on its own type and calls into `dummy.*`.
#[derive(Clone)]
struct Dummy {
    id: String,
    version: String,
    rules: Vec<RuleRecord>,
    codes: Vec<CodeDoc>,
    types: Vec<PluginType>,
    claims_torch_matmul: bool,
    /// Answer `dummy.*` sites outside the declared contract.
    misbehave: Option<Misbehaviour>,
}

/// How a plugin may break its contract.
#[derive(Clone, Copy)]
enum Misbehaviour {
    /// Claim with a rule id it never declared.
    UndeclaredRule,
    /// Claim with one of its fallback rules.
    FallbackRule,
    /// Reject with a code it never documented.
    UndocumentedCode,
}

fn rule(id: &str, code: Option<&str>) -> RuleRecord {
    RuleRecord {
        id: id.into(),
        scope: RuleScope::Call,
        pattern: "p".into(),
        constraint: "c".into(),
        outcome: if code.is_some() {
            RuleOutcome::Fallback
        } else {
            RuleOutcome::Native
        },
        diagnostic_code: code.map(Into::into),
        guidance: String::new(),
        stability: Stability::Experimental,
        verified: false,
    }
}

fn dummy(id: &str) -> Dummy {
    Dummy {
        id: id.into(),
        version: "1.7.0".into(),
        rules: vec![rule(&format!("{id}/call"), None)],
        codes: vec![],
        types: vec![PluginType {
            annotation: format!("{id}_types.Thing"),
            key: TypeKey::new(format!("{id}/thing")),
            rust_type: "i64".into(),
            extract_fn: "x".into(),
            wrap_fn: "y".into(),
            description: "thing".into(),
        }],
        claims_torch_matmul: false,
        misbehave: None,
    }
}

impl Plugin for Dummy {
    fn id(&self) -> &str {
        &self.id
    }
    fn api_version(&self) -> &str {
        &self.version
    }
    fn coverage(&self) -> Coverage {
        let mut packages = vec!["dummy".to_owned()];
        if self.claims_torch_matmul {
            packages.push("torch".into());
        }
        Coverage {
            packages,
            ..Coverage::default()
        }
    }
    fn rules(&self) -> &[RuleRecord] {
        &self.rules
    }
    fn diagnostic_codes(&self) -> &[CodeDoc] {
        &self.codes
    }
    fn type_vocabulary(&self) -> &[PluginType] {
        &self.types
    }
    fn claim(&self, site: &ClaimSite) -> ClaimOutcome {
        if site.target.starts_with("dummy.") {
            let claim = |rule: String| ClaimOutcome::Claimed {
                rule_id: rule,
                result_type: ValueType::Int,
            };
            return match self.misbehave {
                None => claim(format!("{}/call", self.id)),
                Some(Misbehaviour::UndeclaredRule) => claim(format!("{}/never-declared", self.id)),
                Some(Misbehaviour::FallbackRule) => claim(format!("{}/rejected", self.id)),
                Some(Misbehaviour::UndocumentedCode) => {
                    ClaimOutcome::Rejected(Diagnostic::error("RXTP-DUMMY-999", "no"))
                }
            };
        }
        if self.claims_torch_matmul && site.target == "torch.matmul" {
            let ty = site
                .args
                .first()
                .and_then(|a| a.ty.clone())
                .unwrap_or(ValueType::Int);
            return ClaimOutcome::Claimed {
                rule_id: format!("{}/call", self.id),
                result_type: ty,
            };
        }
        ClaimOutcome::NotCovered
    }
    fn lower(
        &self,
        site: &ClaimedSite,
        _cx: &mut LoweringContext,
    ) -> Result<LoweredExpr, LowerError> {
        Err(LowerError::new(&site.rule_id, "dummy"))
    }
    fn runtime_crate(&self) -> Option<CrateDependency> {
        None
    }
}

fn build(plugins: Vec<Dummy>) -> Result<Registry, RegistrationError> {
    plugins
        .into_iter()
        .fold(Registry::builder(), |b, p| b.plugin(p))
        .build()
}

#[test]
fn negotiation_matrix_at_registration() {
    for (version, ok) in [
        ("1.7.0", true),
        ("1.7.3", true),
        ("1.6.0", true),
        ("1.0.0", true),
        ("1.8.0", true),
        ("1.9.0", true),
        ("1.10.0", true),
        ("1.11.0", true),
        ("1.12.0", true),
        ("1.13.0", true),
        ("1.14.0", true),
        ("1.15.0", true),
        ("1.16.0", true),
        ("1.17.0", true),
        ("1.18.0", true),
        ("1.19.0", true),
        ("1.20.0", false),
        ("2.7.0", false),
        ("0.9.0", false),
        ("1.7", false),
        ("", false),
        ("x.y.z", false),
    ] {
        let mut p = dummy("p");
        p.version = version.into();
        let r = build(vec![p]);
        assert_eq!(
            r.is_ok(),
            ok,
            "{version}: {:?}",
            r.err().map(|e| e.to_string())
        );
    }
    let mut p = dummy("p");
    p.version = "1.20.0".into();
    let msg = build(vec![p]).err().unwrap().to_string();
    assert!(msg.contains("1.20.0") && msg.contains("1.19.0"), "{msg}");
}

#[test]
fn older_plugins_are_not_offered_newer_hooks() {
    let mut p = dummy("p");
    p.version = "1.6.0".into();
    let reg = build(vec![p]).unwrap();
    let n = &reg.plugin("p").unwrap().negotiated;
    assert!(n.device_requirements && !n.function_scope_guard);
}

#[test]
fn invalid_declarations_are_registration_errors() {
    let mut cases: Vec<(Vec<Dummy>, &str)> = Vec::new();
    cases.push((vec![dummy("")], "invalid"));
    cases.push((vec![dummy("Bad_Id")], "invalid"));
    cases.push((
        vec![dummy("a"), dummy("a")],
        "two plugins declare the id `a`",
    ));
    let mut p = dummy("a");
    p.rules.push(rule("b/other", None));
    cases.push((vec![p], "outside its namespace"));
    let mut p = dummy("a");
    p.codes = vec![
        CodeDoc {
            code: "RXTP-A-001",
            summary: "s",
            explanation: "e",
        },
        CodeDoc {
            code: "RXTP-A-001",
            summary: "s",
            explanation: "e",
        },
    ];
    cases.push((vec![p], "twice"));
    let mut p = dummy("a");
    p.codes = vec![CodeDoc {
        code: "RXT001",
        summary: "s",
        explanation: "e",
    }];
    cases.push((vec![p], "RXTP-<SEG>-NNN"));
    let mut p = dummy("a");
    p.rules.push(rule("a/fallback", Some("RXTP-A-002")));
    cases.push((vec![p], "not in its code table"));
    let mut p = dummy("a");
    p.types[0].key = TypeKey::new("b/thing");
    cases.push((vec![p], "outside its namespace"));
    let a = dummy("a");
    let mut b = dummy("b");
    b.types[0].annotation = a.types[0].annotation.clone();
    cases.push((vec![a, b], "is declared by both `a` and `b`"));
    for (plugins, needle) in cases {
        let err = build(plugins)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains(needle), "expected `{needle}` in `{err}`");
    }
}

#[test]
fn two_claims_for_one_site_is_a_conflict_naming_both() {
    let mut p = dummy("zz-other");
    p.claims_torch_matmul = true;
    let reg = Registry::builder()
        .with_default_plugins()
        .plugin(p)
        .build()
        .unwrap();
    let m = || Operand::plugin("rextio-torch/tensor-f32-cpu-2d");
    let site = ClaimSite {
        kind: SiteKind::Call,
        target: "torch.matmul".into(),
        receiver: None,
        args: vec![m(), m()],
        keywords: vec![],
    };
    let both = vec!["rextio-torch".to_owned(), "zz-other".to_owned()];
    let SiteResolution::Conflict(who) = reg.offer(&site, &both) else {
        panic!("expected a conflict")
    };
    let names: Vec<&str> = who.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(names, vec!["rextio-torch", "zz-other"]);
    // With only one of them enabled there is no conflict.
    let one = vec!["rextio-torch".to_owned()];
    assert!(
        matches!(reg.offer(&site, &one), SiteResolution::Claimed { plugin_id, .. } if plugin_id == "rextio-torch")
    );
    // A claim beats a rejection: torch rejects rank-1 x rank-1 matmul, the other plugin claims it.
    let mut site1 = site.clone();
    site1.args = vec![
        Operand::plugin("rextio-torch/tensor-f32-cpu-1d"),
        Operand::plugin("rextio-torch/tensor-f32-cpu-1d"),
    ];
    assert!(
        matches!(reg.offer(&site1, &both), SiteResolution::Claimed { plugin_id, .. } if plugin_id == "zz-other")
    );
    assert!(matches!(
        reg.offer(&site1, &one),
        SiteResolution::Rejected { .. }
    ));
}

#[test]
fn conflicts_keep_the_function_on_python_with_rxt013() {
    let mut p = dummy("zz-other");
    p.claims_torch_matmul = true;
    p.types[0].annotation = "zz.Thing".into();
    let reg = Registry::builder()
        .with_default_plugins()
        .plugin(p)
        .build()
        .unwrap();
    let src = "import zz\nimport torch\nfrom rextio_torch.types import TensorF32Cpu2D as M\n\ndef f(x: M, t: zz.Thing) -> M:\n    return torch.matmul(x, x)\n";
    let dir = support::project(&[("m.py", src)]);
    std::fs::write(
        dir.path().join("rextio.toml"),
        "[plugins]\nenabled = [\"rextio-torch\", \"zz-other\"]\n",
    )
    .unwrap();
    let out = Project::open(dir.path()).unwrap().check(&reg).unwrap();
    let f = &out.report.modules[0].functions[0];
    assert_eq!(f.route, "fallback-python");
    assert_eq!(f.diagnostics[0].code, "RXT013");
    assert!(
        f.diagnostics[0].message.contains("rextio-torch")
            && f.diagnostics[0].message.contains("zz-other")
    );
}

#[test]
fn answers_outside_the_declared_contract_are_plugin_errors() {
    let site = ClaimSite {
        kind: SiteKind::Call,
        target: "dummy.f".into(),
        receiver: None,
        args: vec![Operand::typed(ValueType::Int)],
        keywords: vec![],
    };
    let enabled = vec!["p".to_owned()];
    for (how, needle) in [
        (Misbehaviour::UndeclaredRule, "rule `p/never-declared`"),
        (Misbehaviour::FallbackRule, "rule `p/rejected`"),
        (Misbehaviour::UndocumentedCode, "code `RXTP-DUMMY-999`"),
    ] {
        let mut p = dummy("p");
        p.rules.push(rule("p/rejected", Some("RXTP-DUMMY-001")));
        p.codes.push(CodeDoc {
            code: "RXTP-DUMMY-001",
            summary: "s",
            explanation: "e",
        });
        p.misbehave = Some(how);
        let reg = build(vec![p]).unwrap();
        let SiteResolution::ContractViolation { plugin_id, message } = reg.offer(&site, &enabled)
        else {
            panic!("expected a contract violation for {needle}")
        };
        assert_eq!(plugin_id, "p");
        assert!(message.contains(needle), "{message}");

        // `rextio check` stops with an error naming the plugin.
        let dir = support::project(&[(
            "m.py",
            "import dummy

def f(n: int) -> int:
    return dummy.f(n)
",
        )]);
        std::fs::write(
            dir.path().join("rextio.toml"),
            "[plugins]\nenabled = [\"p\"]\n",
        )
        .unwrap();
        let err = Project::open(dir.path())
            .unwrap()
            .check(&reg)
            .err()
            .expect("check must fail")
            .to_string();
        assert!(err.contains("plugin `p`") && err.contains(needle), "{err}");
    }
    // The well-behaved plugin's claim of the same site is used.
    let reg = build(vec![dummy("p")]).unwrap();
    assert!(matches!(
        reg.offer(&site, &enabled),
        SiteResolution::Claimed { rule_id, .. } if rule_id == "p/call"
    ));
}

proptest! {
    #[test]
    fn any_registration_order_yields_the_same_order(perm in Just((0..6usize).collect::<Vec<_>>()).prop_shuffle()) {
        let ids = ["alpha", "beta-x", "gamma", "delta", "eps1", "zeta"];
        let plugins: Vec<Dummy> = perm.iter().map(|&i| dummy(ids[i])).collect();
        let reg = build(plugins).unwrap();
        let got: Vec<&str> = reg.plugins().iter().map(|r| r.plugin.id()).collect();
        let mut want = ids.to_vec();
        want.sort();
        prop_assert_eq!(got, want);
    }
}
