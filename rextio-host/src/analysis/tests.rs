//! The analysis and ownership passes on their own, with a small test plugin (`tp`): one vector
//! type, `a + b`, `tp.relu(v)` and `tp.stack(seq)` (a tuple of vectors) claimed, `tp.bad(v)`
//! rejected with a documented code.
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
            rule("tp/view", None),
            rule("tp/bad", Some("RXTP-TP-001")),
            rule("tp/decorator", None),
            rule("tp/shape", None),
            rule("tp/stack", None),
            rule("tp/neg", None),
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

/// A non-empty tuple of vectors.
fn is_vec_seq(o: &Operand) -> bool {
    matches!(&o.ty, Some(ValueType::Tuple(items)) if !items.is_empty()
        && items.iter().all(|t| matches!(t, ValueType::Plugin(k) if k.as_str() == VEC)))
}

impl Plugin for Tp {
    fn id(&self) -> &str {
        "tp"
    }
    fn api_version(&self) -> &str {
        "1.11.0"
    }
    fn module_support(&self) -> Option<rextio_plugin_api::ModuleSupport> {
        Some(rextio_plugin_api::ModuleSupport {
            bases: vec!["tp.Module".into()],
            sequential: vec!["tp.Seq".into()],
            lists: vec!["tp.List".into()],
            dicts: vec!["tp.Dict".into()],
            register_methods: vec![],
            stores: vec![],
            tensor_stores: vec![],
            module_stores: vec![],
            children_store: "_items".into(),
            call_check_fn: "tp_rt::call_check".into(),
            global_check_fn: "tp_rt::global_check".into(),
            admit_fn: "tp_rt::admit".into(),
            warn_categories: vec![],
            traced_checks: false,
            base_attrs: vec![("ready".into(), ValueType::Bool)],
            call_entry: None,
            stamp_fn: None,
        })
    }
    fn module_kind(&self, ctor: &rextio_plugin_api::ModuleCtor) -> rextio_plugin_api::ModuleAnswer {
        match ctor.target.as_str() {
            "tp.Bad" => rextio_plugin_api::ModuleAnswer::Rejected(Diagnostic::error(
                "RXTP-TP-002",
                "tp.Bad is not compiled with this argument",
            )),
            "tp.vec" => {
                rextio_plugin_api::ModuleAnswer::Tensor(ValueType::Plugin(TypeKey::new(VEC)))
            }
            _ => rextio_plugin_api::ModuleAnswer::NotCovered,
        }
    }
    fn native_decorator(&self, path: &str, _called: bool) -> Option<String> {
        (path == "tp.harmless").then(|| "tp/decorator".to_owned())
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
    fn fresh_result(&self, rule_id: &str) -> bool {
        ["tp/add", "tp/relu"].contains(&rule_id)
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
            // `v += w` writes into `v`, as the framework's in-place operators do.
            (SiteKind::BinOp, "+=", [a, b]) if is_vec(a) && is_vec(b) && a.private => {
                claimed("tp/add")
            }
            (SiteKind::BinOp, "+=", [_, _]) => ClaimOutcome::Rejected(Diagnostic::error(
                "RXTP-TP-001",
                "+= writes into a tensor that is not private",
            )),
            (SiteKind::Call, "tp.relu", [_]) if site.keywords.iter().any(|k| k.name == "mode") => {
                ClaimOutcome::Rejected(Diagnostic::error("RXTP-TP-001", "tp.relu takes no mode"))
            }
            (SiteKind::Call, "tp.relu", [a]) if is_vec(a) => claimed("tp/relu"),
            // `tp.relu_(v)` writes into `v`: claimed only on a private input.
            (SiteKind::Call, "tp.relu_", [a]) if is_vec(a) && a.private => claimed("tp/relu"),
            (SiteKind::Call, "tp.relu_", [_]) => ClaimOutcome::Rejected(Diagnostic::error(
                "RXTP-TP-001",
                "tp.relu_ writes into a tensor that is not private",
            )),
            // A view of its input: not fresh.
            (SiteKind::Call, "tp.view", [a]) if is_vec(a) => claimed("tp/view"),
            (SiteKind::Call, NEG_TARGET, [a]) if is_vec(a) => claimed("tp/neg"),
            (SiteKind::Call, "tp.stack", [s]) if is_vec_seq(s) => claimed("tp/stack"),
            (SiteKind::Call, "tp.stack", [])
                if site.keyword("seq").is_some_and(is_vec_seq) && site.keywords.len() == 1 =>
            {
                claimed("tp/stack")
            }
            (SiteKind::Attribute, "shape", _) => ClaimOutcome::Claimed {
                rule_id: "tp/shape".into(),
                result_type: ValueType::Tuple(vec![ValueType::Int, ValueType::Int]),
            },
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
    let enabled = ["tp".to_owned()];
    let index = index_project(std::slice::from_ref(&module), &registry, &enabled);
    let mut analyses = vec![analyse_module(&module, &registry, &enabled, &index)];
    propagate_routes(&mut analyses);
    analyses.remove(0)
}

fn analyse_many(files: &[(&str, &str)]) -> Vec<ModuleAnalysis> {
    let registry = Registry::builder().plugin(tp()).build().unwrap();
    let modules: Vec<crate::frontend::SourceModule> = files
        .iter()
        .map(|(name, src)| {
            let rel = format!("src/{}.py", name.replace('.', "/"));
            parse_module(name, rel.into(), (*src).to_owned()).unwrap()
        })
        .collect();
    let enabled = ["tp".to_owned()];
    let index = index_project(&modules, &registry, &enabled);
    let mut analyses: Vec<ModuleAnalysis> = modules
        .iter()
        .map(|m| analyse_module(m, &registry, &enabled, &index))
        .collect();
    propagate_routes(&mut analyses);
    analyses
}

fn route_of<'a>(analyses: &'a [ModuleAnalysis], q: &str) -> &'a FunctionAnalysis {
    analyses
        .iter()
        .flat_map(|m| &m.functions)
        .find(|f| f.qualname == q)
        .unwrap_or_else(|| panic!("no {q}"))
}

fn one(body: &str) -> FunctionAnalysis {
    let mut m = analyse(body);
    assert_eq!(m.functions.len(), 1);
    m.functions.remove(0)
}

/// Each claim's rule with its line and column, in claim order.
fn claim_positions(f: &FunctionAnalysis) -> Vec<(&str, u32, u32)> {
    f.claims
        .iter()
        .map(|c| (c.rule_id.as_str(), c.span.line, c.span.column))
        .collect()
}

fn codes(f: &FunctionAnalysis) -> Vec<&str> {
    f.diagnostics.iter().map(|d| d.code.as_str()).collect()
}

#[test]
fn nested_sites_are_claimed_post_order_with_positions() {
    let f = one("def f(a: tp.Vec, b: tp.Vec) -> tp.Vec:\n    return tp.relu(a + b)\n");
    assert_eq!(f.route, Route::Native(vec!["tp".into()]));
    assert_eq!(
        claim_positions(&f),
        vec![("tp/add", 4, 20), ("tp/relu", 4, 12)]
    );
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
fn unary_minus_on_a_plugin_value_is_offered_as_operator_neg() {
    let f = one("def f(a: tp.Vec, b: tp.Vec) -> tp.Vec:\n    return -(a + b)\n");
    assert_eq!(f.route, Route::Native(vec!["tp".into()]));
    assert_eq!(
        claim_positions(&f),
        vec![("tp/add", 4, 14), ("tp/neg", 4, 12)]
    );
    // Other unary operators on plugin values, and `-` on a value no plugin negates, stay on
    // Python with the host's or the registry's reason.
    let f = one("def f(a: tp.Vec) -> tp.Vec:\n    return ~a\n");
    assert_eq!(f.route, Route::Fallback);
    assert_eq!(codes(&f), vec![codes::UNSUPPORTED_EXPRESSION]);
    assert!(
        f.diagnostics[0].message.contains("`~`"),
        "{:?}",
        f.diagnostics
    );
    let f = one("def f(a: tp.Vec) -> tp.Vec:\n    return -(a.shape)\n");
    assert_eq!(f.route, Route::Fallback);
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
            Stmt::ForRange { body, .. } | Stmt::ForEach { body, .. } => reads(body, out),
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

#[test]
fn module_constants_are_compile_time_values() {
    let f = one("SCALE: float = 0.5\nDEPTH = 2 * 3\nPAIR = (1, 2.5)\n\ndef f(a: tp.Vec, n: int) -> tp.Vec:\n    k = n * DEPTH + PAIR[0]\n    s = SCALE * PAIR[-1]\n    return a + a\n");
    assert_eq!(
        f.route,
        Route::Native(vec!["tp".into()]),
        "{:?}",
        f.diagnostics
    );
    let f = one("LIMIT = 3\nLIMIT = 4\n\ndef f(a: tp.Vec, n: int) -> tp.Vec:\n    k = n + LIMIT\n    return a + a\n");
    assert_eq!(codes(&f), vec![codes::UNBOUND_NAME]);
    assert!(
        f.diagnostics[0].message.contains("more than once"),
        "{:?}",
        f.diagnostics
    );
    let f = one("G = 1\n\ndef bump() -> int:\n    global G\n    G = 2\n    return G\n\n");
    assert_eq!(f.route, Route::Fallback);
}

#[test]
fn tuples_unpack_index_and_return() {
    let f = one("def f(a: tp.Vec, n: int) -> tuple[tp.Vec, int]:\n    rows, cols = a.shape\n    x, y = n, rows\n    x, y = y, x\n    return a + a, x * cols + a.shape[-1]\n");
    assert_eq!(
        f.route,
        Route::Native(vec!["tp".into()]),
        "{:?}",
        f.diagnostics
    );
    let ir = f.ir.unwrap();
    assert_eq!(
        ir.ret,
        ValueType::Tuple(vec![ValueType::Plugin(TypeKey::new(VEC)), ValueType::Int])
    );
    for bad in [
        "def f(a: tp.Vec) -> int:\n    x, y, z = a.shape\n    return x\n",
        "def f(a: tp.Vec) -> int:\n    return a.shape[2]\n",
        "def f(a: tp.Vec, i: int) -> int:\n    return a.shape[i]\n",
    ] {
        let f = one(bad);
        assert_eq!(f.route, Route::Fallback, "{bad}");
    }
}

#[test]
fn builtins_on_scalars_follow_python() {
    let f = one("import math\n\ndef f(a: tp.Vec, n: int, x: float) -> tp.Vec:\n    k = abs(n) + max(n, 3) + min(1, n)\n    y = math.sqrt(x) + math.exp(n) + math.log(abs(x)) + max(x, 0.5)\n    return a + a\n");
    assert_eq!(
        f.route,
        Route::Native(vec!["tp".into()]),
        "{:?}",
        f.diagnostics
    );
    // Mixed int/float min/max return whichever operand wins: the type depends on the values.
    let f =
        one("def f(a: tp.Vec, n: int, x: float) -> tp.Vec:\n    y = max(n, x)\n    return a + a\n");
    assert_eq!(codes(&f), vec![codes::SCALAR_OPERATION]);
    // A module that defines `max` itself shadows the builtin.
    let all = analyse_many(&[("m", "import tp\n\ndef max(a, b):\n    return a\n\ndef f(a: tp.Vec, n: int) -> tp.Vec:\n    y = max(n, 1)\n    return a + a\n")]);
    let f = route_of(&all, "m.f");
    assert_eq!(
        codes(f),
        vec![codes::CALLEE_NOT_NATIVE],
        "{:?}",
        f.diagnostics
    );
}

#[test]
fn decorators_need_a_plugin_that_proves_them_harmless() {
    let f = one("@tp.harmless()\ndef f(a: tp.Vec) -> tp.Vec:\n    return a + a\n");
    assert_eq!(
        f.route,
        Route::Native(vec!["tp".into()]),
        "{:?}",
        f.diagnostics
    );
    assert!(f.claims.iter().any(|c| c.rule_id == "tp/decorator"));
    let f = one("@tp.other\ndef f(a: tp.Vec) -> tp.Vec:\n    return a + a\n");
    assert_eq!(codes(&f), vec![codes::FUNCTION_KIND]);
    assert!(
        f.diagnostics[0].message.contains("@tp.other"),
        "{:?}",
        f.diagnostics
    );
}

#[test]
fn calls_between_project_functions_decide_routes_together() {
    let layers = "import tp\n\ndef block(a: tp.Vec, b: tp.Vec) -> tp.Vec:\n    return tp.relu(a + b)\n\ndef python_only(a: tp.Vec) -> tp.Vec:\n    return tp.bad(a)\n";
    let model = "import tp\nfrom .layers import block\nfrom pkg import layers as L\nimport pkg.layers\n\n\
def twice(a: tp.Vec) -> tp.Vec:\n    return block(block(a, a), b=a)\n\n\
def head(a: tp.Vec) -> tp.Vec:\n    return L.block(twice(a), pkg.layers.block(a, a))\n\n\
def uses_python(a: tp.Vec) -> tp.Vec:\n    return L.python_only(a)\n\n\
def caller_of_python(a: tp.Vec) -> tp.Vec:\n    return head(uses_python(a))\n\n\
def ping(a: tp.Vec, n: int) -> tp.Vec:\n    if n > 0:\n        return pong(a, n - 1)\n    return a\n\n\
def pong(a: tp.Vec, n: int) -> tp.Vec:\n    return ping(a, n)\n\n\
def wrong_type(a: tp.Vec, n: int) -> tp.Vec:\n    return block(a, n)\n";
    let all = analyse_many(&[("pkg.layers", layers), ("pkg.model", model)]);
    let native = Route::Native(vec!["tp".into()]);
    for q in ["pkg.layers.block", "pkg.model.twice", "pkg.model.head"] {
        assert_eq!(
            route_of(&all, q).route,
            native,
            "{q}: {:?}",
            route_of(&all, q).diagnostics
        );
    }
    let head = route_of(&all, "pkg.model.head");
    assert!(head.callees.contains("pkg.model.twice") && head.callees.contains("pkg.layers.block"));
    let expect = |q: &str, code: &str, needle: &str| {
        let f = route_of(&all, q);
        assert_eq!(f.route, Route::Fallback, "{q}");
        let d = f
            .diagnostics
            .iter()
            .find(|d| d.code == code)
            .unwrap_or_else(|| panic!("{q}: {:?}", f.diagnostics));
        assert!(d.message.contains(needle), "{q}: {}", d.message);
    };
    expect(
        "pkg.model.uses_python",
        codes::CALLEE_NOT_NATIVE,
        "pkg.layers.python_only",
    );
    expect(
        "pkg.model.uses_python",
        codes::CALLEE_NOT_NATIVE,
        "RXTP-TP-001",
    );
    // The fixed point reaches callers of callers.
    expect(
        "pkg.model.caller_of_python",
        codes::CALLEE_NOT_NATIVE,
        "pkg.model.uses_python",
    );
    expect("pkg.model.ping", codes::RECURSION, "recursive");
    expect("pkg.model.pong", codes::RECURSION, "recursive");
    expect(
        "pkg.model.wrong_type",
        codes::CALLEE_NOT_NATIVE,
        "annotated",
    );
}

#[test]
fn list_literals_are_tuple_operands_of_plugin_sites_only() {
    let vec = ValueType::Plugin(TypeKey::new(VEC));
    // Positional: offered as a tuple of its elements' types, nested sites included.
    let f = one("def f(a: tp.Vec, b: tp.Vec) -> tp.Vec:\n    return tp.stack([a, b + b])\n");
    assert_eq!(
        f.route,
        Route::Native(vec!["tp".into()]),
        "{:?}",
        f.diagnostics
    );
    let ir = f.ir.unwrap();
    let [Stmt::Return(e)] = ir.body.as_slice() else {
        panic!("{:?}", ir.body)
    };
    let ExprKind::Site { args, claimed, .. } = &e.kind else {
        panic!("{e:?}")
    };
    assert_eq!(claimed.rule_id, "tp/stack");
    assert_eq!(
        claimed.site.args[0],
        Operand::typed(ValueType::Tuple(vec![vec.clone(), vec.clone()]))
    );
    let ExprKind::Tuple(items) = &args[0].kind else {
        panic!("{:?}", args[0])
    };
    assert!(matches!(&items[0].kind, ExprKind::Local(n) if n == "a"));
    assert!(
        matches!(&items[1].kind, ExprKind::Site { claimed, .. } if claimed.rule_id == "tp/add")
    );
    // As a keyword, and the tuple spelling, and a tuple-typed local: the same operand.
    for body in [
        "    return tp.stack(seq=[a])\n",
        "    return tp.stack((a, b))\n",
        "    xs = (a, b)\n    return tp.stack(xs)\n",
    ] {
        let f = one(&format!("def f(a: tp.Vec, b: tp.Vec) -> tp.Vec:\n{body}"));
        assert_eq!(
            f.route,
            Route::Native(vec!["tp".into()]),
            "{body}: {:?}",
            f.diagnostics
        );
    }
    // The plugin decides about the elements: an empty list or non-vector elements are not its
    // form, so nobody claims them.
    for body in ["    return tp.stack([])\n", "    return tp.stack([a, 1])\n"] {
        let f = one(&format!("def f(a: tp.Vec, b: tp.Vec) -> tp.Vec:\n{body}"));
        assert_eq!(codes(&f), vec![codes::UNCLAIMED_SITE], "{body}");
    }
    // Anywhere else a list literal keeps RXT004: bound to a name, returned, nested in a list,
    // starred, an argument of a builtin or of a project function, a method receiver.
    for body in [
        "    xs = [a, b]\n    return tp.stack(xs)\n",
        "    return tp.stack([[a]])\n",
        "    return tp.stack([*(a, b)])\n",
        "    n = len([a])\n    return a\n",
        "    return g([a])\n",
        "    return [a, b].pop()\n",
    ] {
        let src = format!("def g(s: tp.Vec) -> tp.Vec:\n    return s\n\ndef f(a: tp.Vec, b: tp.Vec) -> tp.Vec:\n{body}");
        let m = analyse(&src);
        let f = m.functions.iter().find(|f| f.qualname == "m.f").unwrap();
        assert_eq!(f.route, Route::Fallback, "{body}");
        assert!(
            codes(f).iter().all(|c| *c == codes::UNSUPPORTED_EXPRESSION)
                && !f.diagnostics.is_empty(),
            "{body}: {:?}",
            f.diagnostics
        );
    }
    let f =
        one("def f(a: tp.Vec, b: tp.Vec) -> tp.Vec:\n    xs = [a, b]\n    return tp.stack(xs)\n");
    let d = &f.diagnostics[0];
    assert!(d.message.contains("list literal"), "{}", d.message);
    assert!(
        d.suggestion
            .as_deref()
            .is_some_and(|s| s.contains("xs = (a, b)")),
        "{d:?}"
    );
}

/// An annotation no plugin reads is answered with the marker types to write instead: those of
/// the plugin covering its package (a framework's own tensor class says nothing of dtype,
/// device or rank), else those of every enabled plugin.
#[test]
fn unread_annotations_are_answered_with_the_markers_to_use() {
    let helps = |body: &str| -> Vec<(String, String)> {
        one(body)
            .diagnostics
            .iter()
            .map(|d| (d.code.clone(), d.suggestion.clone().unwrap_or_default()))
            .collect()
    };
    let covered = "`tp.Tensor` does not say the dtype, device and rank the native code is built for: annotate it with a marker type imported at module level (tp: `from tp import Vec` (vector))";
    let other = "annotate it with int, float, bool or a marker type imported at module level (tp: `from tp import Vec` (vector))";
    assert_eq!(
        helps("def f(a: tp.Tensor, b: list) -> tp.Tensor:\n    return a\n"),
        [
            (codes::PARAM_ANNOTATION.to_owned(), covered.to_owned()),
            (codes::PARAM_ANNOTATION.to_owned(), other.to_owned()),
            (codes::RETURN_ANNOTATION.to_owned(), covered.to_owned()),
        ]
    );
}

#[test]
fn module_class_methods_read_their_state_from_self() {
    let a = analyse_many(&[(
        "m",
        "import tp\nimport tp as framework\nfrom tp import Module\n\n\
         class Scorer(framework.Module):\n    def __init__(self, scale: float, n: int):\n        super().__init__()\n\
         \x20       self.scale = scale\n        self.n = n\n        self.later = 1.0\n        self.later = 2.0\n\
         \x20       if n:\n            self.maybe = 1.0\n\n\
         \x20   def forward(self, x: tp.Vec) -> tp.Vec:\n        return tp.relu(x)\n\n\
         \x20   def twice(self, x: tp.Vec) -> tp.Vec:\n        return self.forward(x) + self.forward(x)\n\n\
         \x20   def scaled(self, x: tp.Vec) -> float:\n        return self.scale\n\n\
         \x20   def missing(self, x: tp.Vec) -> tp.Vec:\n        return self.nowhere\n\n\
         \x20   def rebound(self, x: tp.Vec) -> float:\n        return self.later\n\n\
         \x20   def branch(self, x: tp.Vec) -> float:\n        return self.maybe\n\n\
         \x20   def untyped(self, x):\n        return x\n\n\
         class Head(Scorer):\n    def forward(self, x: tp.Vec) -> tp.Vec:\n        return tp.relu(super().forward(x))\n\n\
         \x20   def again(self, x: tp.Vec) -> tp.Vec:\n        return self.twice(x)\n\n\
         \x20   def scale_(self, x: tp.Vec) -> float:\n        return self.scale\n\n\
         class Mixed(Scorer, Plain):\n    def forward(self, x: tp.Vec) -> tp.Vec:\n        return x\n\n\
         class Plain:\n    def forward(self, x: tp.Vec) -> tp.Vec:\n        return x\n",
    )]);
    let native = |q: &str| {
        let f = route_of(&a, q);
        assert_eq!(
            f.route,
            Route::Native(vec!["tp".into()]),
            "{q}: {:?}",
            f.diagnostics
        );
        f.ir.clone().unwrap()
    };
    // No state: the state parameter is an empty tuple.
    let fwd = native("m.Scorer.forward");
    assert_eq!(fwd.params[0].ty, ValueType::Tuple(vec![]));
    let m = fwd.method.unwrap();
    assert_eq!(
        (m.class_qualname.as_str(), m.plugin.as_str()),
        ("m.Scorer", "tp")
    );
    // Calling another method checks (once) that the instance's class dispatches it to the
    // compiled method, and reads the callee's state once.
    let twice = native("m.Scorer.twice");
    let reads = &twice.method.as_ref().unwrap().reads;
    let dispatch = |r: &crate::ir_module::ReadOp, n: &str, c: &str, af: Option<&str>| {
        matches!(r, crate::ir_module::ReadOp::Dispatch { obj: 0, name, class, after, .. }
            if name == n && class == c && after.as_deref() == af)
    };
    assert!(
        dispatch(&reads[0], "forward", "m.Scorer", None),
        "{reads:?}"
    );
    assert_eq!(
        reads
            .iter()
            .filter(|r| matches!(r, crate::ir_module::ReadOp::Dispatch { .. }))
            .count(),
        1
    );
    assert_eq!(
        reads
            .iter()
            .filter(|r| matches!(r, crate::ir_module::ReadOp::State { .. }))
            .count(),
        1
    );
    assert!(route_of(&a, "m.Scorer.twice")
        .callees
        .contains("m.Scorer.forward"));
    // Scalars from annotated `__init__` parameters are state slots of their type.
    // (It uses no plugin operation, RXT016, but its body stays available to native callers.)
    let scaled = route_of(&a, "m.Scorer.scaled").ir.clone().unwrap();
    assert_eq!(
        scaled.params[0].ty,
        ValueType::Tuple(vec![ValueType::Float])
    );
    // Attributes that are missing, assigned twice or only in a branch keep the method on Python,
    // naming the attribute.
    for (q, what) in [
        ("m.Scorer.missing", "self.nowhere"),
        ("m.Scorer.rebound", "self.later"),
        ("m.Scorer.branch", "self.maybe"),
    ] {
        let f = route_of(&a, q);
        assert_eq!(f.route, Route::Fallback, "{q}");
        let d = f
            .diagnostics
            .iter()
            .find(|d| d.code == codes::MODULE_ATTRIBUTE)
            .unwrap_or_else(|| panic!("{q}: {:?}", f.diagnostics));
        assert!(d.message.contains(what), "{}", d.message);
    }
    assert!(route_of(&a, "m.Scorer.untyped")
        .diagnostics
        .iter()
        .any(|d| d.code == codes::PARAM_ANNOTATION));
    // A class deriving from a project module class has its parent's attributes and methods:
    // `super().forward(x)` is the parent's forward (the instance's resolution past Head must
    // reach it), `self.twice(x)` the inherited one (the instance's must reach Scorer's).
    let head = native("m.Head.forward");
    let reads = &head.method.as_ref().unwrap().reads;
    assert!(
        reads.iter().any(|r| matches!(r, crate::ir_module::ReadOp::State { callee, .. } if callee == "m.Scorer.forward"))
            && reads.iter().any(|r| dispatch(r, "forward", "m.Scorer", Some("m.Head"))),
        "{reads:?}"
    );
    let again = route_of(&a, "m.Head.again").ir.clone().unwrap();
    let reads = &again.method.as_ref().unwrap().reads;
    assert!(
        reads.iter().any(|r| matches!(r, crate::ir_module::ReadOp::State { callee, .. } if callee == "m.Scorer.twice"))
            && reads.iter().any(|r| dispatch(r, "twice", "m.Scorer", None)),
        "{reads:?}"
    );
    let scale = route_of(&a, "m.Head.scale_").ir.clone().unwrap();
    assert_eq!(scale.params[0].ty, ValueType::Tuple(vec![ValueType::Float]));
    // More than one base is still reported, on Python.
    let mixed = route_of(&a, "m.Mixed.forward");
    assert_eq!(mixed.route, Route::Fallback);
    assert_eq!(mixed.diagnostics[0].code, codes::MODULE_CLASS);
    // `__init__` is not an entry point; a class that is not a module class is reported on
    // Python, as every method with a plugin's types is.
    assert!(a[0]
        .functions
        .iter()
        .all(|f| !f.qualname.ends_with("__init__")));
    let plain = route_of(&a, "m.Plain.forward");
    assert_eq!(plain.route, Route::Fallback);
    assert_eq!(plain.diagnostics[0].code, codes::MODULE_CLASS);
}

#[test]
fn refused_init_values_are_named_inside_their_containers() {
    let a = analyse_many(&[(
        "m",
        "import tp\n\n\
         class Net(tp.Module):\n    def __init__(self, w):\n        super().__init__()\n\
         \x20       self.odd = tp.Seq(tp.Odd())\n        self.bad = tp.Bad(1)\n\
         \x20       self.inner = tp.Seq(tp.Seq(tp.Bad()))\n        self.kw = tp.Seq(k=1)\n\
         \x20       self.num = tp.Seq(2)\n        self.star = tp.Seq(*[tp.Odd() for _ in range(w)])\n        self.w = w\n        self.expr = tp.vec() * 2\n\
         \x20       self.vals = 2 * 3.0 - 1\n        self.pow = tp.vec() ** 2\n\n\
         \x20   def odd_(self, x: tp.Vec) -> tp.Vec:\n        return self.odd(x)\n\n\
         \x20   def bad_(self, x: tp.Vec) -> tp.Vec:\n        return self.bad(x)\n\n\
         \x20   def inner_(self, x: tp.Vec) -> tp.Vec:\n        return self.inner(x)\n\n\
         \x20   def kw_(self, x: tp.Vec) -> tp.Vec:\n        return self.kw(x)\n\n\
         \x20   def num_(self, x: tp.Vec) -> tp.Vec:\n        return self.num(x)\n\n\
         \x20   def star_(self, x: tp.Vec) -> tp.Vec:\n        return self.star(x)\n\n\
         \x20   def w_(self, x: tp.Vec) -> tp.Vec:\n        return self.w\n\n\
         \x20   def expr_(self, x: tp.Vec) -> tp.Vec:\n        return self.expr\n\n\
         \x20   def vals_(self, x: tp.Vec) -> float:\n        return self.vals\n\n\
         \x20   def pow_(self, x: tp.Vec) -> tp.Vec:\n        return self.pow\n\n\
         \x20   def ready_(self, x: tp.Vec) -> bool:\n        return self.ready\n",
    )]);
    for (method, expected) in [
        ("odd_", "`self.odd` is not compiled: it is assigned `tp.Seq(...)`, which holds `tp.Odd(...)`, which is not a submodule or tensor `tp` reads"),
        ("bad_", "`self.bad` is not compiled: it is assigned `tp.Bad(...)`: tp.Bad is not compiled with this argument (RXTP-TP-002)"),
        ("inner_", "`self.inner` is not compiled: it is assigned `tp.Seq(...)`, which holds `tp.Seq(...)`, which holds `tp.Bad(...)`: tp.Bad is not compiled with this argument (RXTP-TP-002)"),
        ("kw_", "`self.kw` is not compiled: it is assigned `tp.Seq(...)`, which has keyword arguments"),
        ("num_", "`self.num` is not compiled: it is assigned `tp.Seq(...)`, which holds a value that is not a submodule"),
        ("star_", "`self.star` is not compiled: it is assigned `tp.Seq(...)`, which unpacks a comprehension whose length is not stated (`range(n)` of an int literal or of an `__init__` parameter's default, at most 64)"),
        ("w_", "`self.w` is not compiled: it is assigned a value whose type is not known from `__init__` (annotate the parameter it comes from as int, float or bool)"),
        // Arithmetic on a constructor call is offered to the plugin (`operator.mul`), shown
        // as written; `tp` does not read it.
        ("expr_", "`self.expr` is not compiled: it is assigned `tp.vec() * 2`, which is not a submodule or tensor `tp` reads"),
        ("pow_", "`self.pow` is not compiled: it is assigned an expression rextio does not read (it reads submodule constructors, tensor factory calls and scalars)"),
    ] {
        assert_refused(&a, method, expected);
    }
    // Arithmetic on numbers is a number: a float here (`2 * 3.0 - 1`), read live at each call.
    let vals = route_of(&a, "m.Net.vals_");
    assert!(
        vals.diagnostics
            .iter()
            .all(|d| d.code != codes::MODULE_ATTRIBUTE),
        "{:?}",
        vals.diagnostics
    );
    assert_eq!(
        vals.ir.as_ref().map(|ir| ir.params[0].ty.clone()),
        Some(ValueType::Tuple(vec![ValueType::Float]))
    );
    // Scales written as powers with a float, square roots and negations are numbers too;
    // `int ** int` (an int or a float, by the exponent's sign) is not read.
    let b = analyse_many(&[(
        "m",
        "import math\nimport tp\n\n\
         class Net(tp.Module):\n    def __init__(self, d: int):\n        super().__init__()\n\
         \x20       self.a = d ** 0.5\n        self.b = d ** -0.5\n        self.c = 1 / math.sqrt(d)\n\
         \x20       self.n = -d\n        self.i = d ** 2\n\n\
         \x20   def floats(self, x: tp.Vec) -> float:\n        return self.a + self.b + self.c\n\n\
         \x20   def neg(self, x: tp.Vec) -> int:\n        return self.n\n\n\
         \x20   def ints(self, x: tp.Vec) -> int:\n        return self.i\n",
    )]);
    for (method, tys) in [
        ("floats", vec![ValueType::Float; 3]),
        ("neg", vec![ValueType::Int]),
    ] {
        let f = route_of(&b, &format!("m.Net.{method}"));
        assert_eq!(
            f.ir.as_ref().map(|ir| ir.params[0].ty.clone()),
            Some(ValueType::Tuple(tys)),
            "{method}: {:?}",
            f.diagnostics
        );
    }
    let ints = route_of(&b, "m.Net.ints");
    assert_eq!(ints.route, Route::Fallback);
    assert!(ints
        .diagnostics
        .iter()
        .any(|d| d.code == codes::MODULE_ATTRIBUTE && d.message.contains("`self.i`")));
    // An attribute every instance of the base has (the plugin's `base_attrs`) is read the same
    // way, though `__init__` never assigns it.
    let ready = route_of(&a, "m.Net.ready_");
    assert!(
        ready
            .diagnostics
            .iter()
            .all(|d| d.code != codes::MODULE_ATTRIBUTE),
        "{:?}",
        ready.diagnostics
    );
    assert_eq!(
        ready.ir.as_ref().map(|ir| ir.params[0].ty.clone()),
        Some(ValueType::Tuple(vec![ValueType::Bool]))
    );
}

#[test]
fn expressions_that_are_not_lowered_are_named() {
    for (expr, expected) in [
        (
            "tp.relu([a for _ in range(2)][0])",
            "a comprehension is not lowered",
        ),
        ("tp.relu(lambda v: v)", "a lambda is not lowered"),
        (
            "a if n else a",
            "a conditional expression (`a if c else b`) is not lowered",
        ),
        ("tp.relu({1: a}[1])", "a dict or set display is not lowered"),
        ("tp.relu(f\"{n}\")", "an f-string is not lowered"),
    ] {
        let f = one(&format!(
            "def f(a: tp.Vec, n: int) -> tp.Vec:\n    return {expr}\n"
        ));
        assert_eq!(f.route, Route::Fallback, "{expr}");
        assert!(
            f.diagnostics.iter().any(|d| d.message == expected),
            "{expr}: {:?}",
            f.diagnostics
        );
    }
}

#[test]
fn sequentials_from_an_ordered_dict_are_read_by_their_names_and_order() {
    let a = analyse_many(&[(
        "m",
        "import collections\nfrom collections import OrderedDict\nimport tp\n\n\
         class Half(tp.Module):\n    def forward(self, x: tp.Vec) -> tp.Vec:\n        return x + x\n\n\
         class Net(tp.Module):\n    def __init__(self, name: str):\n        super().__init__()\n\
         \x20       self.s = tp.Seq(OrderedDict([(\"a\", Half()), (\"b\", Half())]))\n\
         \x20       self.k = tp.Seq(collections.OrderedDict(first=Half()))\n\
         \x20       self.dup = tp.Seq(OrderedDict([(\"a\", Half()), (\"a\", Half())]))\n\
         \x20       self.dot = tp.Seq(OrderedDict([(\"a.b\", Half())]))\n\
         \x20       self.var = tp.Seq(OrderedDict([(name, Half())]))\n\
         \x20       self.star = tp.Seq(OrderedDict(**{\"a\": Half()}))\n\n\
         \x20   def whole(self, x: tp.Vec) -> tp.Vec:\n        return self.s(x)\n\n\
         \x20   def named(self, x: tp.Vec) -> tp.Vec:\n        return self.s.b(x) + self.k[0](x) + self.s[-1](x)\n\n\
         \x20   def dup_(self, x: tp.Vec) -> tp.Vec:\n        return self.dup(x)\n\n\
         \x20   def dot_(self, x: tp.Vec) -> tp.Vec:\n        return self.dot(x)\n\n\
         \x20   def var_(self, x: tp.Vec) -> tp.Vec:\n        return self.var(x)\n\n\
         \x20   def star_(self, x: tp.Vec) -> tp.Vec:\n        return self.star(x)\n",
    )]);
    let counts = |method: &str| -> Vec<Vec<String>> {
        let f = route_of(&a, &format!("m.Net.{method}"));
        assert!(
            matches!(f.route, Route::Native(_)),
            "{method}: {:?}",
            f.diagnostics
        );
        let ir = f.ir.clone().unwrap();
        ir.method
            .as_ref()
            .unwrap()
            .reads
            .iter()
            .filter_map(|r| match r {
                crate::ir_module::ReadOp::Count { names, .. } => Some(names.clone()),
                _ => None,
            })
            .collect()
    };
    // The whole call visits both names in order, and the call checks that the live container
    // holds exactly those names in that order.
    assert_eq!(counts("whole"), [vec!["a".to_owned(), "b".to_owned()]]);
    // By name and by index from the start, no count is needed; from the end it is.
    assert_eq!(counts("named"), [vec!["a".to_owned(), "b".to_owned()]]);
    for (method, expected) in [
        ("dup_", "`self.dup` is not compiled: it is assigned `tp.Seq(...)`, which names two modules `a` (the mapping keeps one)"),
        ("dot_", "`self.dot` is not compiled: it is assigned `tp.Seq(...)`, which names a module `a.b`, which `add_module` refuses"),
        ("var_", "`self.var` is not compiled: it is assigned `tp.Seq(...)`, which gives its `OrderedDict` an element that is not a `(\"name\", module)` pair with a string literal name"),
        ("star_", "`self.star` is not compiled: it is assigned `tp.Seq(...)`, which unpacks a mapping into its `OrderedDict` (`**`)"),
    ] {
        assert_refused(&a, method, expected);
    }
}

#[test]
fn module_dicts_are_read_by_string_keys_and_attribute_names() {
    let a = analyse_many(&[(
        "m",
        "from collections import OrderedDict\nimport tp\n\n\
         class Half(tp.Module):\n    def forward(self, x: tp.Vec) -> tp.Vec:\n        return x + x\n\n\
         class Net(tp.Module):\n    def __init__(self, name: str):\n        super().__init__()\n\
         \x20       self.d = tp.Dict({\"cls\": Half(), \"reg\": tp.Seq(Half(), Half())})\n\
         \x20       self.o = tp.Dict(OrderedDict([(\"a\", Half())]))\n\
         \x20       self.var = tp.Dict({name: Half()})\n\
         \x20       self.dup = tp.Dict({\"a\": Half(), \"a\": Half()})\n\
         \x20       self.empty = tp.Dict({})\n\n\
         \x20   def keyed(self, x: tp.Vec) -> tp.Vec:\n        return self.d[\"cls\"](x) + self.d.reg(x) + self.o[\"a\"](x)\n\n\
         \x20   def called(self, x: tp.Vec) -> tp.Vec:\n        return self.d(x)\n\n\
         \x20   def missing(self, x: tp.Vec) -> tp.Vec:\n        return self.d[\"other\"](x)\n\n\
         \x20   def by_index(self, x: tp.Vec) -> tp.Vec:\n        return self.d[0](x)\n\n\
         \x20   def var_(self, x: tp.Vec) -> tp.Vec:\n        return self.var[\"a\"](x)\n\n\
         \x20   def dup_(self, x: tp.Vec) -> tp.Vec:\n        return self.dup[\"a\"](x)\n\n\
         \x20   def empty_(self, x: tp.Vec) -> tp.Vec:\n        return self.empty[\"a\"](x)\n",
    )]);
    let keyed = route_of(&a, "m.Net.keyed");
    assert!(
        matches!(keyed.route, Route::Native(_)),
        "{:?}",
        keyed.diagnostics
    );
    for (method, expected) in [
        ("called", "`self.d` is a module dict, which is not callable; call one of its modules, `self.d[\"name\"](x)`"),
        ("missing", "`self.d.other` is not one of the modules the dict holds (cls, reg); read an element by its name"),
        ("by_index", "`self.d[...]` reads a module dict by other than a string literal key"),
        ("var_", "`self.var` is not compiled: it is assigned `tp.Dict(...)`, which is given a dict whose keys are not all string literals (or that unpacks `**`)"),
        ("dup_", "`self.dup` is not compiled: it is assigned `tp.Dict(...)`, which names two modules `a` (the mapping keeps one)"),
        ("empty_", "`self.empty` is not compiled: it is assigned `tp.Dict(...)`, which is given an empty dict"),
    ] {
        assert_refused(&a, method, expected);
    }
}

#[test]
fn containers_built_from_lists_in_init_are_followed_through_appends_and_stated_loops() {
    let a = analyse_many(&[(
        "m",
        "import tp\n\n\
         class Half(tp.Module):\n    def forward(self, x: tp.Vec) -> tp.Vec:\n        return x + x\n\n\
         class Net(tp.Module):\n    def __init__(self, depth: int = 3, flag: bool = True):\n        super().__init__()\n\
         \x20       layers = [Half()]\n        for _ in range(depth):\n            layers += [Half(), Half()]\n\
         \x20       layers.append(Half())\n        self.s = tp.Seq(*layers)\n\
         \x20       blocks = [Half() for _ in range(depth)]\n        for _ in range(2):\n            blocks.append(Half())\n\
         \x20       self.l = tp.List(blocks)\n\
         \x20       odd = [Half()]\n        if flag:\n            odd.append(Half())\n        self.odd = tp.Seq(*odd)\n\
         \x20       self.none = tp.Seq(*missing)\n\
         \x20       alias = [Half()]\n        other = alias\n        other.append(Half())\n        self.al = tp.Seq(*alias)\n\
         \x20       brk = []\n        for _ in range(2):\n            brk.append(Half())\n            if flag:\n                break\n        self.brk = tp.Seq(*brk)\n\n\
         \x20   def whole(self, x: tp.Vec) -> tp.Vec:\n        return self.s(x)\n\n\
         \x20   def loop(self, x: tp.Vec) -> tp.Vec:\n        for b in self.l:\n            x = b(x)\n        return x\n\n\
         \x20   def odd_(self, x: tp.Vec) -> tp.Vec:\n        return self.odd(x)\n\n\
         \x20   def none_(self, x: tp.Vec) -> tp.Vec:\n        return self.none(x)\n\n\
         \x20   def al_(self, x: tp.Vec) -> tp.Vec:\n        return self.al(x)\n\n\
         \x20   def brk_(self, x: tp.Vec) -> tp.Vec:\n        return self.brk(x)\n",
    )]);
    let whole = route_of(&a, "m.Net.whole");
    assert!(
        matches!(whole.route, Route::Native(_)),
        "{:?}",
        whole.diagnostics
    );
    // One, then two per loop pass at the default depth 3, then one: eight elements, whose
    // count and names the call checks.
    let counts: Vec<usize> = whole
        .ir
        .as_ref()
        .unwrap()
        .method
        .as_ref()
        .unwrap()
        .reads
        .iter()
        .filter_map(|r| match r {
            crate::ir_module::ReadOp::Count { count, .. } => Some(*count),
            _ => None,
        })
        .collect();
    assert_eq!(counts, [8]);
    let looped = route_of(&a, "m.Net.loop");
    assert!(
        matches!(looped.route, Route::Native(_)),
        "{:?}",
        looped.diagnostics
    );
    for (method, expected) in [
        ("odd_", "`self.odd` is not compiled: it is assigned `tp.Seq(...)`, which unpacks `odd`, which is not followed: `odd` is changed by a statement rextio does not follow (rextio follows `name = [...]`, then `name.append(m)`, `name.extend([...])` and `name += [...]` at the top level of `__init__` or directly in a `for _ in range(n)` loop with `n` stated; a list comprehension over such a `range(n)` counts as a list display)"),
        ("none_", "`self.none` is not compiled: it is assigned `tp.Seq(...)`, which unpacks `missing`, which is not a list built in `__init__`"),
        // Reached under another name, or grown in a loop that may stop early: not followed.
        ("al_", "`self.al` is not compiled: it is assigned `tp.Seq(...)`, which unpacks `alias`, which is not followed: `alias` is changed by a statement rextio does not follow (rextio follows `name = [...]`, then `name.append(m)`, `name.extend([...])` and `name += [...]` at the top level of `__init__` or directly in a `for _ in range(n)` loop with `n` stated; a list comprehension over such a `range(n)` counts as a list display)"),
        ("brk_", "`self.brk` is not compiled: it is assigned `tp.Seq(...)`, which unpacks `brk`, which is not followed: `brk` is changed by a statement rextio does not follow (rextio follows `name = [...]`, then `name.append(m)`, `name.extend([...])` and `name += [...]` at the top level of `__init__` or directly in a `for _ in range(n)` loop with `n` stated; a list comprehension over such a `range(n)` counts as a list display)"),
    ] {
        assert_refused(&a, method, expected);
    }
}

/// A class attribute bound to an int, float or bool (a literal, or arithmetic on literals; in
/// the class body, the class's own or a parent's) is read at each call as Python finds it: the
/// instance's own value first, then the class's. Any other class attribute is named as one,
/// with what is read instead.
#[test]
fn class_attributes_are_read_or_named_as_such() {
    let a = analyse_many(&[(
        "m",
        "import tp\n\n\
         class Base(tp.Module):\n    LIMIT: int = 3\n\n\
         \x20   def __init__(self):\n        super().__init__()\n\n\
         class Net(Base):\n    SCALE = -0.5\n    OFF = 1.0\n    ON = True\n    NAME = 'x'\n    K = 1.0 / 8\n    M = [1]\n    A = B = 1\n\n\
         \x20   def __init__(self):\n        super().__init__()\n        self.OFF = 2.0\n\n\
         \x20   def own_(self, x: tp.Vec) -> tuple[tp.Vec, float]:\n        return x + x, self.SCALE\n\n\
         \x20   def inherited_(self, x: tp.Vec) -> tuple[tp.Vec, int]:\n        return x + x, self.LIMIT\n\n\
         \x20   def shadowed_(self, x: tp.Vec) -> tuple[tp.Vec, float]:\n        return x + x, self.OFF\n\n\
         \x20   def flag_(self, x: tp.Vec) -> tp.Vec:\n        if self.ON:\n            return x + x\n        return x\n\n\
         \x20   def name_(self, x: tp.Vec) -> float:\n        return self.NAME\n\n\
         \x20   def expr_(self, x: tp.Vec) -> tuple[tp.Vec, float]:\n        return x + x, self.K\n\n\
         \x20   def chained_(self, x: tp.Vec) -> int:\n        return self.A\n\n\
         \x20   def list_(self, x: tp.Vec) -> int:\n        return self.M\n\n\
         \x20   def missing_(self, x: tp.Vec) -> float:\n        return self.gone\n",
    )]);
    for (method, expected) in [
        ("name_", "`self.NAME` is a class attribute (bound in the body of `Net`) that is not an int, float or bool (a literal, a module constant or arithmetic on them); compiled methods read an int, float or bool there, or what `Net.__init__` assigns"),
        ("list_", "`self.M` is a class attribute (bound in the body of `Net`) that is not an int, float or bool (a literal, a module constant or arithmetic on them); compiled methods read an int, float or bool there, or what `Net.__init__` assigns"),
        ("chained_", "`self.A` is a class attribute (bound in the body of `Net`) that is bound together with other names; compiled methods read an int, float or bool there, or what `Net.__init__` assigns"),
        ("missing_", "`self.gone` is not assigned in `Net.__init__` (at its top level), so its value is not known"),
    ] {
        assert_refused(&a, method, expected);
    }
    // Read from the class (`on_class`), or from the instance where `__init__` assigns it.
    for (method, attr, on) in [
        ("own_", "SCALE", true),
        ("inherited_", "LIMIT", true),
        ("shadowed_", "OFF", false),
        ("flag_", "ON", true),
        ("expr_", "K", true),
    ] {
        let f = route_of(&a, &format!("m.Net.{method}"));
        assert_eq!(
            f.route,
            Route::Native(vec!["tp".into()]),
            "{method}: {:?}",
            f.diagnostics
        );
        let ir = f.ir.clone().unwrap();
        let found: Vec<bool> = ir
            .method
            .as_ref()
            .map_or(&[][..], |m| &m.reads[..])
            .iter()
            .filter_map(|r| match r {
                crate::ir_module::ReadOp::Value {
                    attr: a, on_class, ..
                } if a == attr => Some(*on_class),
                _ => None,
            })
            .collect();
        assert_eq!(found, [on], "{method}");
    }
}

/// `m.Net.<method>` stays on Python with exactly the one RXT023 message `expected`.
fn assert_refused(a: &[ModuleAnalysis], method: &str, expected: &str) {
    let f = route_of(a, &format!("m.Net.{method}"));
    assert_eq!(f.route, Route::Fallback, "{method}");
    let messages: Vec<&str> = f
        .diagnostics
        .iter()
        .filter(|d| d.code == codes::MODULE_ATTRIBUTE)
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(messages, [expected], "{method}");
}

/// Whether each form's in-place call is proven private (native) or not (Python, with the
/// plugin's reason).
#[test]
fn in_place_calls_are_lowered_only_on_private_operands() {
    let native = |body: &str| {
        let f = one(body);
        assert_eq!(
            f.route,
            Route::Native(vec!["tp".into()]),
            "{body}\n{:?}",
            f.diagnostics
        );
    };
    let python = |body: &str| {
        let f = one(body);
        assert_eq!(f.route, Route::Fallback, "{body}");
        assert_eq!(
            codes(&f),
            vec!["RXTP-TP-001"],
            "{body}\n{:?}",
            f.diagnostics
        );
    };
    let def = "def f(a: tp.Vec, b: tp.Vec) -> tp.Vec:\n";
    // A fresh site's result, directly.
    native(&format!("{def}    return tp.relu_(a + b)\n"));
    // A local bound to one and consumed by the statement that rebinds it or returns it.
    native(&format!(
        "{def}    h = a + b\n    h = tp.relu_(h)\n    return h\n"
    ));
    native(&format!("{def}    h = a + b\n    return tp.relu_(h)\n"));
    // Chains: the in-place result is fresh again.
    native(&format!(
        "{def}    h = a + b\n    h = tp.relu_(h)\n    h = tp.relu_(h)\n    return h + a\n"
    ));
    // A parameter belongs to the caller.
    python(&format!("{def}    return tp.relu_(a)\n"));
    python(&format!("{def}    a = tp.relu_(a)\n    return a\n"));
    // A view may share the input's memory.
    python(&format!("{def}    return tp.relu_(tp.view(a + b))\n"));
    // Read since its binding (an alias may exist), or read twice in the statement.
    python(&format!(
        "{def}    h = a + b\n    c = h\n    h = tp.relu_(h)\n    return h + c\n"
    ));
    python(&format!(
        "{def}    h = a + b\n    h = tp.relu_(h) + h\n    return h\n"
    ));
    python(&format!("{def}    h = a + b\n    return tp.relu_(h) + h\n"));
    // Not rebound: the old name still sees the written tensor.
    python(&format!(
        "{def}    h = a + b\n    y = tp.relu_(h)\n    return h + y\n"
    ));
    // Bound from another name, or across a block boundary.
    python(&format!(
        "{def}    c = a + b\n    h = c\n    h = tp.relu_(h)\n    return h\n"
    ));
    python(&format!(
        "{def}    h = a + b\n    if a.shape[0] > 1:\n        h = tp.relu_(h)\n    return h\n"
    ));
    python(&format!(
        "{def}    h = a + b\n    for _ in range(2):\n        h = tp.relu_(h)\n    return h\n"
    ));
    // A branch or loop that never mentions the name leaves it fresh; one that reads it may
    // alias it.
    native(&format!(
        "{def}    h = a + b\n    n = 0\n    if a.shape[0] > 1:\n        n = 1\n    h = tp.relu_(h)\n    return h\n"
    ));
    native(&format!(
        "{def}    h = a + b\n    for _ in range(2):\n        a = a + b\n    h += a\n    return h\n"
    ));
    python(&format!(
        "{def}    h = a + b\n    c = a\n    if a.shape[0] > 1:\n        c = h\n    h = tp.relu_(h)\n    return h + c\n"
    ));
    python(&format!(
        "{def}    h = a + b\n    n = 0\n    while n < a.shape[0]:\n        n = n + h.shape[0]\n    h += a\n    return h\n"
    ));
    // Inside one block, straight-line code is followed again.
    native(&format!(
        "{def}    h = a\n    for _ in range(2):\n        h = h + b\n        h = tp.relu_(h)\n    return h\n"
    ));
    // Augmented assignment to a tensor is the operator `+=`, its left operand private on the
    // same terms, and the result is fresh again.
    native(&format!("{def}    h = a + b\n    h += a\n    return h\n"));
    native(&format!(
        "{def}    h = a + b\n    h += a\n    h += b\n    return tp.relu_(h)\n"
    ));
    python(&format!("{def}    a += b\n    return a\n"));
    python(&format!(
        "{def}    h = a + b\n    c = h\n    h += a\n    return h + c\n"
    ));
    // The right-hand side reads the name: private only when it is a fresh result itself.
    python(&format!("{def}    h = a + b\n    h += h\n    return h\n"));
    native(&format!(
        "{def}    h = a + b\n    h += h + a\n    return h\n"
    ));
    python(&format!(
        "{def}    h = a + b\n    if a.shape[0] > 1:\n        h += a\n    return h\n"
    ));
}

/// The one diagnostic of `q`, a method kept on Python with RXT024.
fn class_refusal<'a>(a: &'a [ModuleAnalysis], q: &str) -> &'a Diagnostic {
    let f = route_of(a, q);
    assert_eq!(f.route, Route::Fallback, "{q}");
    assert_eq!(f.diagnostics.len(), 1, "{q}: {:?}", f.diagnostics);
    let d = &f.diagnostics[0];
    assert_eq!(d.code, codes::MODULE_CLASS, "{q}");
    d
}

/// A class deriving from one of the framework's classes other than its module base (a
/// container, or a class beside the base) is reported method by method with RXT024, and an
/// attribute assigned an instance of it says so (a class of anything else: below).
#[test]
fn subclasses_of_the_frameworks_other_classes_are_reported() {
    let a = analyse_many(&[(
        "m",
        "import tp\nimport other\n\n\
         class Block(tp.Seq):\n    def __init__(self):\n        super().__init__()\n\n\
         \x20   def extra(self, x: tp.Vec) -> tp.Vec:\n        return x + x\n\n\
         class Scaled(tp.Linear):\n    def forward(self, x: tp.Vec) -> tp.Vec:\n        return x + x\n\n\
         class Elsewhere(other.Thing):\n    def forward(self, x: tp.Vec) -> tp.Vec:\n        return x + x\n\n\
         class Net(tp.Module):\n    def __init__(self):\n        super().__init__()\n        self.block = Block()\n\n\
         \x20   def forward(self, x: tp.Vec) -> tp.Vec:\n        return self.block(x)\n",
    )]);
    for (q, base) in [
        ("m.Block.extra", "tp.Seq"),
        ("m.Scaled.forward", "tp.Linear"),
    ] {
        let d = class_refusal(&a, q);
        assert!(
            d.message.contains(&format!(
                "derives from the framework's `{base}`, not from `tp.Module`"
            )),
            "{}",
            d.message
        );
    }
    assert_refused(
        &a,
        "forward",
        "`self.block` is not compiled: it is assigned `Block(...)`, an instance of `Block`, which derives from the framework's `tp.Seq`: classes deriving from the framework's other classes are not read (derive `Block` from `tp.Module` and hold the `tp.Seq` as an attribute)",
    );
    assert_eq!(route_of(&a, "m.Elsewhere.forward").route, Route::Fallback);
}

/// A class rextio does not read at all (a plain class, a subclass of another library's class
/// or of a project class that is not a module class) is reported for each method whose
/// signature names a plugin's type, with RXT024 saying why; its other methods are not.
#[test]
fn classes_rextio_does_not_read_are_reported_for_their_typed_methods() {
    let a = analyse_many(&[(
        "m",
        "import tp\nimport other\n\n\
         class Plain:\n    def run(self, x: tp.Vec) -> tp.Vec:\n        return x + x\n\n\
         \x20   def size(self, n: int) -> int:\n        return n\n\n\
         class Lit(other.LightningModule):\n    def __init__(self, w: tp.Vec):\n        super().__init__()\n\n\
         \x20   def forward(self, x: tp.Vec) -> tp.Vec:\n        return x + x\n\n\
         class Deeper(Plain):\n    def run(self, x: tp.Vec) -> tp.Vec:\n        return x\n\n\
         class Config:\n    def scale(self) -> float:\n        return 2.0\n",
    )]);
    for (q, what) in [
        ("m.Plain.run", "`Plain` is not a module class (it does not derive from `tp.Module`)"),
        ("m.Lit.forward", "`Lit` derives from `other.LightningModule`, which rextio does not read (only classes deriving from `tp.Module`, directly or through the project's module classes, are)"),
        ("m.Deeper.run", "`Deeper` derives from `Plain`, which rextio does not read"),
    ] {
        let d = class_refusal(&a, q);
        assert!(d.message.starts_with(what), "{q}: {}", d.message);
        assert!(d.message.ends_with("runs as Python"), "{q}: {}", d.message);
    }
    let names: Vec<&str> = a[0].functions.iter().map(|f| f.qualname.as_str()).collect();
    assert_eq!(names, ["m.Plain.run", "m.Lit.forward", "m.Deeper.run"]);
}

/// A module class with a base beside the module base (a mixin): an attribute it does not
/// assign nor define is named as possibly the mixin's.
#[test]
fn an_attribute_a_mixin_may_define_names_the_mixin() {
    let a = analyse_many(&[(
        "m",
        "import tp\n\n\
         class Mix:\n    pass\n\n\
         class Net(Mix, tp.Module):\n    def __init__(self):\n        super().__init__()\n\n\
         \x20   def forward(self, x: tp.Vec) -> tp.Vec:\n        return self.helper(x)\n",
    )]);
    assert_refused(
        &a,
        "forward",
        "`self.helper` is neither assigned in `Net.__init__` (at its top level) nor a method of `Net`; it may come from `Mix`, a base rextio does not read, so its value is not known",
    );
}
