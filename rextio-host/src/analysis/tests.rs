//! The analysis and ownership passes on their own, with a small test plugin (`tp`): one vector
//! type, `a + b` and `tp.relu(v)` claimed, `tp.bad(v)` rejected with a documented code.
#![allow(clippy::unwrap_used, clippy::panic)]

use super::*;
use crate::frontend::parse_module;
use crate::ownership::mark_moves;
use rextio_plugin_api::{
    ClaimOutcome, CodeDoc, Coverage, CrateDependency, LowerError, LoweredExpr, LoweringContext,
    Plugin, PluginType, RuleOutcome, RuleRecord, RuleScope, Stability, TypeKey,
};

struct Tp {
    rules: Vec<RuleRecord>,
    types: Vec<PluginType>,
}

const VEC: &str = "tp/vec";
const CODES: &[CodeDoc] = &[CodeDoc {
    code: "RXTP-TP-001",
    summary: "bad",
    explanation: "tp.bad is never lowered",
}];

fn tp() -> Tp {
    let rule = |id: &str, code: Option<&str>| RuleRecord {
        id: id.into(),
        scope: RuleScope::Call,
        pattern: id.into(),
        constraint: String::new(),
        outcome: if code.is_some() {
            RuleOutcome::Fallback
        } else {
            RuleOutcome::Native
        },
        diagnostic_code: code.map(Into::into),
        guidance: String::new(),
        stability: Stability::Experimental,
        verified: false,
    };
    Tp {
        rules: vec![
            rule("tp/add", None),
            rule("tp/relu", None),
            rule("tp/bad", Some("RXTP-TP-001")),
        ],
        types: vec![PluginType {
            annotation: "tp.Vec".into(),
            key: TypeKey::new(VEC),
            rust_type: "Vec<f32>".into(),
            extract_fn: "tp_rt::extract".into(),
            wrap_fn: "tp_rt::wrap".into(),
            description: "vector".into(),
        }],
    }
}

fn is_vec(o: &Operand) -> bool {
    matches!(&o.ty, Some(ValueType::Plugin(k)) if k.as_str() == VEC)
}

impl Plugin for Tp {
    fn id(&self) -> &str {
        "tp"
    }
    fn api_version(&self) -> &str {
        "1.7.0"
    }
    fn coverage(&self) -> Coverage {
        Coverage {
            packages: vec!["tp".into()],
            ..Coverage::default()
        }
    }
    fn rules(&self) -> &[RuleRecord] {
        &self.rules
    }
    fn diagnostic_codes(&self) -> &[CodeDoc] {
        CODES
    }
    fn type_vocabulary(&self) -> &[PluginType] {
        &self.types
    }
    fn claim(&self, site: &ClaimSite) -> ClaimOutcome {
        let vec = ValueType::Plugin(TypeKey::new(VEC));
        let claimed = |rule: &str| ClaimOutcome::Claimed {
            rule_id: rule.into(),
            result_type: vec.clone(),
        };
        match (site.kind, site.target.as_str(), site.args.as_slice()) {
            (SiteKind::BinOp, "+", [a, b]) if is_vec(a) && is_vec(b) => claimed("tp/add"),
            (SiteKind::Call, "tp.relu", [_]) if site.keywords.iter().any(|k| k.name == "mode") => {
                ClaimOutcome::Rejected(Diagnostic::error("RXTP-TP-001", "tp.relu takes no mode"))
            }
            (SiteKind::Call, "tp.relu", [a]) if is_vec(a) => claimed("tp/relu"),
            (SiteKind::Call, "tp.bad", _) => {
                ClaimOutcome::Rejected(Diagnostic::error("RXTP-TP-001", "tp.bad is not lowered"))
            }
            _ => ClaimOutcome::NotCovered,
        }
    }
    fn lower(
        &self,
        site: &ClaimedSite,
        _: &mut LoweringContext,
    ) -> Result<LoweredExpr, LowerError> {
        Err(LowerError::new(
            &site.rule_id,
            "not lowered in analysis tests",
        ))
    }
    fn runtime_crate(&self) -> Option<CrateDependency> {
        None
    }
}

fn analyse(body: &str) -> ModuleAnalysis {
    let registry = Registry::builder().plugin(tp()).build().unwrap();
    let src = format!("import tp\n\n{body}");
    let module = parse_module("m", "src/m.py".into(), src).unwrap();
    analyse_module(&module, &registry, &["tp".to_owned()])
}

fn one(body: &str) -> FunctionAnalysis {
    let mut m = analyse(body);
    assert_eq!(m.functions.len(), 1);
    m.functions.remove(0)
}

fn codes(f: &FunctionAnalysis) -> Vec<&str> {
    f.diagnostics.iter().map(|d| d.code.as_str()).collect()
}

#[test]
fn nested_sites_are_claimed_post_order_with_positions() {
    let f = one("def f(a: tp.Vec, b: tp.Vec) -> tp.Vec:\n    return tp.relu(a + b)\n");
    assert_eq!(f.route, Route::Native(vec!["tp".into()]));
    let claims: Vec<(&str, u32, u32)> = f
        .claims
        .iter()
        .map(|c| (c.rule_id.as_str(), c.span.line, c.span.column))
        .collect();
    assert_eq!(claims, vec![("tp/add", 4, 20), ("tp/relu", 4, 12)]);
    let ir = f.ir.unwrap();
    assert_eq!(ir.qualname, "m.f");
    assert_eq!(ir.params.len(), 2);
    let [Stmt::Return(e)] = ir.body.as_slice() else {
        panic!("{:?}", ir.body)
    };
    let ExprKind::Site { args, claimed, .. } = &e.kind else {
        panic!("{e:?}")
    };
    assert_eq!(claimed.rule_id, "tp/relu");
    assert!(matches!(&args[0].kind, ExprKind::Site { claimed, .. } if claimed.rule_id == "tp/add"));
}

#[test]
fn rejections_carry_the_plugin_code_at_the_site() {
    let f = one("def f(a: tp.Vec) -> tp.Vec:\n    return tp.bad(a)\n");
    assert_eq!(f.route, Route::Fallback);
    assert!(
        f.claims.is_empty(),
        "nothing is claimed for a fallback function"
    );
    assert_eq!(codes(&f), vec!["RXTP-TP-001"]);
    let span = f.diagnostics[0].span.unwrap();
    assert_eq!((span.line, span.column), (4, 12));
}

#[test]
fn keywords_naming_module_objects_reach_the_plugin_but_are_never_lowered() {
    // The plugin recognises the form and rejects it with its own code.
    let f = one("def f(a: tp.Vec) -> tp.Vec:\n    return tp.relu(a, mode=tp.FAST)\n");
    assert_eq!(codes(&f), vec!["RXTP-TP-001"]);
    // Nobody recognises it: the host says why.
    let f = one("def f(a: tp.Vec) -> tp.Vec:\n    return tp.relu(a, other=tp.FAST)\n");
    assert_eq!(codes(&f), vec![codes::UNSUPPORTED_EXPRESSION]);
    assert!(
        f.diagnostics[0].message.contains("other=tp.FAST"),
        "{:?}",
        f.diagnostics
    );
}

#[test]
fn flow_errors_keep_functions_on_python() {
    let cases = [
        // Read of a local assigned on one branch only.
        (
            "def f(a: tp.Vec, n: int) -> tp.Vec:\n    if n > 0:\n        h = a + a\n    return h\n",
            codes::UNBOUND_NAME,
        ),
        // A local re-bound with another type.
        (
            "def f(a: tp.Vec, n: int) -> tp.Vec:\n    h = n\n    h = a + a\n    return h\n",
            codes::TYPE_CHANGE,
        ),
        // A path that falls off the end.
        (
            "def f(a: tp.Vec, n: int) -> tp.Vec:\n    if n > 0:\n        return a + a\n",
            codes::RETURN_PATH,
        ),
        // An unannotated parameter.
        ("def f(a) -> tp.Vec:\n    return a + a\n", codes::PARAM_ANNOTATION),
        // A loop over something other than range().
        (
            "def f(a: tp.Vec, n: int) -> tp.Vec:\n    for i in [1, 2]:\n        a = a + a\n    return a\n",
            codes::NON_RANGE_FOR,
        ),
    ];
    for (src, code) in cases {
        let f = one(src);
        assert_eq!(f.route, Route::Fallback, "{src}");
        assert!(codes(&f).contains(&code), "{src}: {:?}", f.diagnostics);
    }
}

#[test]
fn loops_and_branches_that_assign_on_every_path_stay_native() {
    let f = one(
        "def f(a: tp.Vec, n: int) -> tp.Vec:\n    h = a + a\n    for i in range(n):\n        if i % 2 == 0:\n            h = tp.relu(h)\n        else:\n            h = h + a\n    return h\n",
    );
    assert_eq!(
        f.route,
        Route::Native(vec!["tp".into()]),
        "{:?}",
        f.diagnostics
    );
    let ir = f.ir.unwrap();
    let locals: Vec<&str> = ir.locals.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(locals, vec!["h", "i"]);
}

#[test]
fn functions_without_plugin_operations_are_informational() {
    let f = one("def f(n: int) -> int:\n    return n + 1\n");
    assert_eq!(f.route, Route::Fallback);
    assert_eq!(codes(&f), vec![codes::NOTHING_TO_LOWER]);
    assert_eq!(f.diagnostics[0].severity, Severity::Info);
}

/// Collect, in evaluation order, the locals read by `Local` and by `Move`.
fn reads(body: &[Stmt], out: &mut Vec<(String, bool)>) {
    fn expr(e: &Expr, out: &mut Vec<(String, bool)>) {
        for c in e.children() {
            expr(c, out);
        }
        match &e.kind {
            ExprKind::Local(n) => out.push((n.clone(), false)),
            ExprKind::Move(n) => out.push((n.clone(), true)),
            _ => {}
        }
    }
    for s in body {
        match s {
            Stmt::Assign { value, .. } | Stmt::Return(value) => expr(value, out),
            Stmt::If { cond, then, orelse } => {
                expr(cond, out);
                reads(then, out);
                reads(orelse, out);
            }
            Stmt::While { cond, body } => {
                expr(cond, out);
                reads(body, out);
            }
            Stmt::ForRange { body, .. } => reads(body, out),
            Stmt::Break | Stmt::Continue => {}
        }
    }
}

fn moves(src: &str) -> Vec<(String, bool)> {
    let mut ir = one(src).ir.expect("native");
    mark_moves(&mut ir);
    let mut out = Vec::new();
    reads(&ir.body, &mut out);
    out
}

#[test]
fn last_uses_of_exclusive_locals_are_moves_and_parameters_never_are() {
    // `h` holds fresh site results only: its last use as a site operand is a move (a plain
    // `return h` needs none: Rust moves it anyway); `a` came from Python.
    assert_eq!(
        moves("def f(a: tp.Vec) -> tp.Vec:\n    h = a + a\n    h = tp.relu(h)\n    return h\n"),
        vec![
            ("a".into(), false),
            ("a".into(), false),
            ("h".into(), true),
            ("h".into(), false),
        ]
    );
    // `h` is copied into `g`: both names alias one value, so neither is moved.
    assert_eq!(
        moves("def f(a: tp.Vec) -> tp.Vec:\n    h = a + a\n    g = h\n    return tp.relu(h) + g\n"),
        vec![
            ("a".into(), false),
            ("a".into(), false),
            ("h".into(), false),
            ("h".into(), false),
            ("g".into(), false),
        ]
    );
    // Inside a loop `h` is live around the back edge: the read in `h + h` mentions it twice and
    // the loop reads it again, so only the final return moves it.
    assert_eq!(
        moves("def f(a: tp.Vec, n: int) -> tp.Vec:\n    h = a + a\n    for i in range(n):\n        h = h + h\n    return tp.relu(h)\n"),
        vec![
            ("a".into(), false),
            ("a".into(), false),
            ("h".into(), false),
            ("h".into(), false),
            ("h".into(), true),
        ]
    );
}
