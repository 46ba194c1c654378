//! Accepted and rejected forms, as data.

use super::claim;
use crate::types::{F32_CPU_1D, F32_CPU_2D, I64_CPU_1D};
use rextio_plugin_api::{ClaimOutcome, ClaimSite, Keyword, Literal, Operand, SiteKind, ValueType};

pub(crate) fn t1() -> Operand {
    Operand::plugin(F32_CPU_1D)
}
pub(crate) fn t2() -> Operand {
    Operand::plugin(F32_CPU_2D)
}
fn l64() -> Operand {
    Operand::plugin(I64_CPU_1D)
}
fn int(v: i64) -> Operand {
    Operand::literal(Literal::Int(v))
}
fn flt(v: f64) -> Operand {
    Operand::literal(Literal::Float(v))
}
fn boolean(v: bool) -> Operand {
    Operand::literal(Literal::Bool(v))
}
fn none() -> Operand {
    Operand::literal(Literal::None)
}
fn string(s: &str) -> Operand {
    Operand::literal(Literal::Str(s.into()))
}
fn kw(name: &str, value: Operand) -> Keyword {
    Keyword {
        name: name.into(),
        value,
    }
}
pub(crate) fn call(target: &str, args: Vec<Operand>, keywords: Vec<Keyword>) -> ClaimSite {
    ClaimSite {
        kind: SiteKind::Call,
        target: target.into(),
        receiver: None,
        args,
        keywords,
    }
}
pub(crate) fn method(
    recv: Operand,
    name: &str,
    args: Vec<Operand>,
    keywords: Vec<Keyword>,
) -> ClaimSite {
    ClaimSite {
        kind: SiteKind::MethodCall,
        target: name.into(),
        receiver: Some(recv),
        args,
        keywords,
    }
}
pub(crate) fn binop(op: &str, a: Operand, b: Operand) -> ClaimSite {
    ClaimSite {
        kind: SiteKind::BinOp,
        target: op.into(),
        receiver: None,
        args: vec![a, b],
        keywords: vec![],
    }
}

fn outcome(site: &ClaimSite) -> String {
    match claim(site) {
        ClaimOutcome::Claimed {
            rule_id,
            result_type,
        } => {
            let ValueType::Plugin(k) = result_type else {
                panic!("non-tensor result")
            };
            let short = k.as_str().trim_start_matches("rextio-torch/tensor-");
            format!("{} -> {short}", rule_id.trim_start_matches("rextio-torch/"))
        }
        ClaimOutcome::Rejected(d) => format!("rejected {}", d.code),
        ClaimOutcome::NotCovered => "not-covered".into(),
    }
}

/// Every accepted form with its rule and result type; shared with the lowering tests.
pub(crate) fn accepted() -> Vec<(ClaimSite, &'static str)> {
    let f = |s: &str| format!("torch.nn.functional.{s}");
    vec![
        // linear
        (
            call(&f("linear"), vec![t2(), t2(), t1()], vec![]),
            "functional-linear-f32-cpu-2d -> f32-cpu-2d",
        ),
        (
            call(&f("linear"), vec![t2(), t2()], vec![]),
            "functional-linear-none-f32-cpu-2d -> f32-cpu-2d",
        ),
        (
            call(&f("linear"), vec![t2(), t2(), none()], vec![]),
            "functional-linear-none-f32-cpu-2d -> f32-cpu-2d",
        ),
        (
            call(&f("linear"), vec![t2(), t2()], vec![kw("bias", none())]),
            "functional-linear-none-f32-cpu-2d -> f32-cpu-2d",
        ),
        (
            call(&f("linear"), vec![t2(), t2()], vec![kw("bias", t1())]),
            "functional-linear-keywords-f32-cpu-2d -> f32-cpu-2d",
        ),
        (
            call(
                &f("linear"),
                vec![t2()],
                vec![kw("weight", t2()), kw("bias", t1())],
            ),
            "functional-linear-keywords-f32-cpu-2d -> f32-cpu-2d",
        ),
        // activations and unary math
        (
            method(t1(), "relu", vec![], vec![]),
            "tensor-relu-f32-cpu-1d -> f32-cpu-1d",
        ),
        (
            method(t2(), "sigmoid", vec![], vec![]),
            "tensor-sigmoid-f32-cpu-2d -> f32-cpu-2d",
        ),
        (
            method(t2(), "tanh", vec![], vec![]),
            "tensor-tanh-f32-cpu-2d -> f32-cpu-2d",
        ),
        (
            call("torch.relu", vec![t2()], vec![]),
            "function-relu-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call("torch.tanh", vec![t1()], vec![]),
            "function-tanh-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        (
            call(&f("relu"), vec![t1()], vec![]),
            "functional-relu-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        (
            call(&f("relu"), vec![t2()], vec![kw("inplace", boolean(false))]),
            "functional-relu-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call(&f("relu"), vec![t2(), boolean(false)], vec![]),
            "functional-relu-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call("torch.exp", vec![t2()], vec![]),
            "unary-exp-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            method(t1(), "sqrt", vec![], vec![]),
            "unary-sqrt-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        (
            method(t2(), "negative", vec![], vec![]),
            "unary-negative-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call("torch.square", vec![t1()], vec![]),
            "unary-square-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        (
            call(&f("gelu"), vec![t2()], vec![]),
            "functional-gelu-none-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call(
                &f("gelu"),
                vec![t1()],
                vec![kw("approximate", string("none"))],
            ),
            "functional-gelu-none-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        // matmul
        (
            binop("@", t2(), t2()),
            "tensor-matmul-f32-cpu-2d -> f32-cpu-2d",
        ),
        (
            binop("@", t2(), t1()),
            "tensor-matmul-f32-cpu-mixed-rank -> f32-cpu-1d",
        ),
        (
            binop("@", t1(), t2()),
            "tensor-matmul-f32-cpu-mixed-rank -> f32-cpu-1d",
        ),
        (
            call("torch.matmul", vec![t2(), t2()], vec![]),
            "tensor-matmul-call-f32-cpu-2d -> f32-cpu-2d",
        ),
        (
            call("torch.matmul", vec![t1(), t2()], vec![]),
            "tensor-matmul-call-f32-cpu-mixed-rank -> f32-cpu-1d",
        ),
        (
            method(t2(), "matmul", vec![t1()], vec![]),
            "tensor-matmul-call-f32-cpu-mixed-rank -> f32-cpu-1d",
        ),
        // elementwise
        (
            binop("+", t1(), t1()),
            "tensor-add-f32-cpu-same-rank -> f32-cpu-1d",
        ),
        (
            binop("+", t1(), t2()),
            "tensor-add-f32-cpu-2d-1d-broadcast -> f32-cpu-2d",
        ),
        (
            binop("-", t2(), t1()),
            "tensor-sub-f32-cpu-2d-1d-broadcast -> f32-cpu-2d",
        ),
        (
            binop("*", t2(), t2()),
            "tensor-mul-f32-cpu-same-rank -> f32-cpu-2d",
        ),
        (
            binop("/", t1(), t2()),
            "tensor-div-f32-cpu-2d-1d-broadcast -> f32-cpu-2d",
        ),
        (
            call("torch.sub", vec![t2(), t1()], vec![]),
            "function-sub-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call("torch.div", vec![t1(), t1()], vec![]),
            "function-div-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        // tensor-scalar, either side
        (
            binop("+", t2(), flt(1.5)),
            "tensor-add-scalar-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            binop("-", int(2), t1()),
            "tensor-sub-scalar-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        (
            binop("*", Operand::typed(ValueType::Float), t2()),
            "tensor-mul-scalar-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            binop("/", t2(), Operand::typed(ValueType::Int)),
            "tensor-div-scalar-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            binop("/", flt(1.0), t1()),
            "tensor-div-scalar-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        // reductions
        (
            method(
                t2(),
                "mean",
                vec![],
                vec![kw("dim", int(1)), kw("keepdim", boolean(false))],
            ),
            "tensor-mean-dim1-f32-cpu-2d -> f32-cpu-1d",
        ),
        (
            method(
                t2(),
                "sum",
                vec![],
                vec![kw("keepdim", boolean(false)), kw("dim", int(1))],
            ),
            "tensor-sum-dim1-f32-cpu-2d -> f32-cpu-1d",
        ),
        (
            method(t2(), "mean", vec![int(0)], vec![]),
            "mean-static-dim-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        (
            method(
                t2(),
                "sum",
                vec![int(1)],
                vec![kw("keepdim", boolean(true))],
            ),
            "sum-static-dim-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call(
                "torch.sum",
                vec![t2(), int(0)],
                vec![kw("keepdim", boolean(true))],
            ),
            "sum-static-dim-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call(
                "torch.mean",
                vec![t1()],
                vec![kw("dim", int(0)), kw("keepdim", boolean(true))],
            ),
            "mean-static-dim-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        // classification
        (
            method(t2(), "softmax", vec![], vec![kw("dim", int(1))]),
            "tensor-softmax-dim1-f32-cpu-2d -> f32-cpu-2d",
        ),
        (
            method(t2(), "softmax", vec![int(0)], vec![]),
            "softmax-static-dim-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call("torch.softmax", vec![t1(), int(0)], vec![]),
            "softmax-static-dim-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        (
            call(
                &f("softmax"),
                vec![t2()],
                vec![kw("dim", int(1)), kw("dtype", none())],
            ),
            "functional-softmax-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            method(t2(), "argmax", vec![], vec![kw("dim", int(1))]),
            "tensor-argmax-dim1-i64-cpu-2d -> i64-cpu-1d",
        ),
        (
            call("torch.argmax", vec![t2(), int(0)], vec![]),
            "argmax-static-dim-i64-cpu-rank1 -> i64-cpu-1d",
        ),
        (
            method(
                t1(),
                "argmax",
                vec![],
                vec![kw("dim", int(0)), kw("keepdim", boolean(true))],
            ),
            "argmax-static-dim-i64-cpu-rank1 -> i64-cpu-1d",
        ),
    ]
}

#[test]
fn accepted_forms() {
    for (site, want) in accepted() {
        assert_eq!(outcome(&site), want, "{site:?}");
    }
}

#[test]
fn rejected_and_uncovered_forms() {
    let f = |s: &str| format!("torch.nn.functional.{s}");
    let table: Vec<(ClaimSite, &str)> = vec![
        // linear
        (
            call(&f("linear"), vec![t1(), t2(), t1()], vec![]),
            "RXTP-TORCH-002",
        ),
        (
            call(&f("linear"), vec![t2(), t2(), t2()], vec![]),
            "RXTP-TORCH-002",
        ),
        (call(&f("linear"), vec![t2()], vec![]), "RXTP-TORCH-001"),
        (
            call(&f("linear"), vec![t2(), t2(), t1()], vec![kw("bias", t1())]),
            "RXTP-TORCH-001",
        ),
        (
            call(&f("linear"), vec![t2(), t2(), t1(), t1()], vec![]),
            "RXTP-TORCH-001",
        ),
        (
            call(&f("linear"), vec![t2(), t2()], vec![kw("out", t2())]),
            "RXTP-TORCH-001",
        ),
        (
            call(&f("linear"), vec![t2(), t2(), Operand::unknown()], vec![]),
            "RXTP-TORCH-002",
        ),
        // activations / unary
        (method(t2(), "relu", vec![int(1)], vec![]), "RXTP-TORCH-003"),
        (
            call("torch.relu", vec![t2()], vec![kw("out", t2())]),
            "RXTP-TORCH-003",
        ),
        (
            call(&f("relu"), vec![t2()], vec![kw("inplace", boolean(true))]),
            "RXTP-TORCH-004",
        ),
        (
            call(
                &f("relu"),
                vec![t2()],
                vec![kw("inplace", Operand::typed(ValueType::Bool))],
            ),
            "RXTP-TORCH-004",
        ),
        (method(l64(), "relu", vec![], vec![]), "RXTP-TORCH-015"),
        (call("torch.exp", vec![flt(1.0)], vec![]), "RXTP-TORCH-010"),
        (method(t2(), "relu_", vec![], vec![]), "RXTP-TORCH-010"),
        (
            method(t2(), "transpose", vec![int(0), int(1)], vec![]),
            "RXTP-TORCH-010",
        ),
        (method(t2(), "gelu", vec![], vec![]), "RXTP-TORCH-010"),
        (call("torch.absolute", vec![t2()], vec![]), "not-covered"),
        (
            call("torch.subtract", vec![t2(), t2()], vec![]),
            "not-covered",
        ),
        // gelu
        (
            call(
                &f("gelu"),
                vec![t2()],
                vec![kw("approximate", string("tanh"))],
            ),
            "RXTP-TORCH-011",
        ),
        (
            call(
                &f("gelu"),
                vec![t2()],
                vec![kw("approximate", Operand::typed(ValueType::Str))],
            ),
            "RXTP-TORCH-011",
        ),
        (
            call(&f("gelu"), vec![t2(), string("none")], vec![]),
            "RXTP-TORCH-011",
        ),
        // matmul
        (binop("@", t1(), t1()), "RXTP-TORCH-005"),
        (binop("@", t2(), flt(2.0)), "RXTP-TORCH-005"),
        (
            call("torch.matmul", vec![t2(), t2()], vec![kw("out", t2())]),
            "RXTP-TORCH-006",
        ),
        (method(t2(), "matmul", vec![], vec![]), "RXTP-TORCH-006"),
        // elementwise
        (binop("+", l64(), l64()), "RXTP-TORCH-015"),
        (binop("*", t2(), l64()), "RXTP-TORCH-015"),
        (binop("+", l64(), int(1)), "RXTP-TORCH-015"),
        (binop("+", t2(), boolean(true)), "RXTP-TORCH-016"),
        (binop("+", t2(), string("a")), "RXTP-TORCH-016"),
        (binop("+", t2(), Operand::unknown()), "RXTP-TORCH-016"),
        (binop("%", t2(), t2()), "RXTP-TORCH-010"),
        (binop("**", t2(), int(2)), "RXTP-TORCH-010"),
        (
            call("torch.add", vec![t2(), t2()], vec![kw("alpha", int(2))]),
            "RXTP-TORCH-012",
        ),
        (
            call(
                "torch.div",
                vec![t2(), t2()],
                vec![kw("rounding_mode", string("trunc"))],
            ),
            "RXTP-TORCH-012",
        ),
        (
            call("torch.mul", vec![t2(), flt(2.0)], vec![]),
            "RXTP-TORCH-012",
        ),
        (method(t2(), "add", vec![t2()], vec![]), "RXTP-TORCH-010"),
        (
            binop(
                "+",
                Operand::typed(ValueType::Int),
                Operand::typed(ValueType::Int),
            ),
            "not-covered",
        ),
        // reductions
        (method(t2(), "mean", vec![], vec![]), "RXTP-TORCH-008"),
        (
            method(t2(), "mean", vec![int(0), boolean(true)], vec![]),
            "RXTP-TORCH-008",
        ),
        (
            method(t2(), "sum", vec![int(0)], vec![kw("dim", int(1))]),
            "RXTP-TORCH-008",
        ),
        (
            method(
                t2(),
                "mean",
                vec![],
                vec![kw("dim", Operand::typed(ValueType::Int))],
            ),
            "RXTP-TORCH-008",
        ),
        (
            method(
                t2(),
                "mean",
                vec![],
                vec![
                    kw("dim", int(1)),
                    kw("keepdim", Operand::typed(ValueType::Bool)),
                ],
            ),
            "RXTP-TORCH-008",
        ),
        (
            method(
                t2(),
                "mean",
                vec![],
                vec![kw("dim", int(1)), kw("dtype", none())],
            ),
            "RXTP-TORCH-008",
        ),
        (
            method(t2(), "mean", vec![boolean(true)], vec![]),
            "RXTP-TORCH-008",
        ),
        (
            method(t1(), "mean", vec![], vec![kw("dim", int(0))]),
            "RXTP-TORCH-009",
        ),
        (method(t2(), "sum", vec![int(2)], vec![]), "RXTP-TORCH-009"),
        (method(t2(), "sum", vec![int(-1)], vec![]), "RXTP-TORCH-009"),
        (call("torch.sum", vec![t2()], vec![]), "RXTP-TORCH-008"),
        // softmax / argmax
        (method(t2(), "softmax", vec![], vec![]), "RXTP-TORCH-013"),
        (
            call(
                "torch.softmax",
                vec![t2(), int(1)],
                vec![kw("dtype", none())],
            ),
            "RXTP-TORCH-013",
        ),
        (call(&f("softmax"), vec![t2()], vec![]), "RXTP-TORCH-013"),
        (
            call(&f("softmax"), vec![t2(), int(1), int(3)], vec![]),
            "RXTP-TORCH-013",
        ),
        (
            method(t1(), "softmax", vec![int(1)], vec![]),
            "RXTP-TORCH-013",
        ),
        (
            method(
                t2(),
                "softmax",
                vec![],
                vec![kw("dim", Operand::typed(ValueType::Int))],
            ),
            "RXTP-TORCH-013",
        ),
        (
            method(
                t2(),
                "argmax",
                vec![],
                vec![kw("dim", int(1)), kw("keepdim", boolean(true))],
            ),
            "RXTP-TORCH-014",
        ),
        (
            method(t1(), "argmax", vec![], vec![kw("dim", int(0))]),
            "RXTP-TORCH-014",
        ),
        (method(t2(), "argmax", vec![], vec![]), "RXTP-TORCH-014"),
        (
            method(t2(), "argmax", vec![int(1), boolean(false)], vec![]),
            "RXTP-TORCH-014",
        ),
        (
            method(l64(), "argmax", vec![], vec![kw("dim", int(0))]),
            "RXTP-TORCH-015",
        ),
        // unrelated
        (call("numpy.dot", vec![t2(), t2()], vec![]), "not-covered"),
        (
            ClaimSite {
                kind: SiteKind::Compare,
                target: "<".into(),
                receiver: None,
                args: vec![t1(), t1()],
                keywords: vec![],
            },
            "RXTP-TORCH-010",
        ),
    ];
    for (site, want) in table {
        let got = outcome(&site);
        let want = if want.starts_with("RXTP") {
            format!("rejected {want}")
        } else {
            want.to_owned()
        };
        assert_eq!(got, want, "{site:?}");
    }
}

mod purity {
    use super::*;
    use proptest::prelude::*;

    fn operand() -> impl Strategy<Value = Operand> {
        prop_oneof![
            Just(t1()),
            Just(t2()),
            Just(l64()),
            Just(Operand::unknown()),
            Just(Operand::typed(ValueType::Int)),
            Just(Operand::typed(ValueType::Float)),
            any::<i64>().prop_map(|v| Operand::literal(Literal::Int(v))),
            any::<bool>().prop_map(|v| Operand::literal(Literal::Bool(v))),
            Just(none()),
        ]
    }

    proptest! {
        #[test]
        fn claim_is_a_pure_function_of_the_site_and_never_invents_types(
            kind in prop_oneof![Just(SiteKind::Call), Just(SiteKind::MethodCall), Just(SiteKind::BinOp)],
            target in prop_oneof![
                Just("torch.nn.functional.linear"), Just("torch.matmul"), Just("torch.softmax"), Just("torch.argmax"),
                Just("torch.sum"), Just("relu"), Just("mean"), Just("argmax"), Just("softmax"), Just("+"), Just("@"), Just("/"),
            ],
            recv in proptest::option::of(operand()),
            args in proptest::collection::vec(operand(), 0..4),
            kws in proptest::collection::vec((prop_oneof![Just("dim"), Just("keepdim"), Just("bias"), Just("out")], operand()), 0..3),
        ) {
            let site = ClaimSite { kind, target: target.to_string(), receiver: recv, args, keywords: kws.into_iter().map(|(n, v)| kw(n, v)).collect() };
            let first = claim(&site);
            prop_assert_eq!(&first, &claim(&site.clone()));
            if let ClaimOutcome::Claimed { result_type, .. } = first {
                let ValueType::Plugin(k) = result_type else { panic!("scalar result") };
                prop_assert!([F32_CPU_1D, F32_CPU_2D, I64_CPU_1D].contains(&k.as_str()));
            }
        }
    }
}
