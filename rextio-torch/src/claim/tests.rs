//! Accepted and rejected forms, as data.

use super::claim;
use crate::types::{F32_CPU_1D, F32_CPU_2D};
use rextio_plugin_api::{ClaimOutcome, ClaimSite, Keyword, Literal, Operand, SiteKind, ValueType};

fn t1() -> Operand {
    Operand::plugin(F32_CPU_1D)
}
fn t2() -> Operand {
    Operand::plugin(F32_CPU_2D)
}
fn kw(name: &str, value: Operand) -> Keyword {
    Keyword {
        name: name.into(),
        value,
    }
}
fn call(target: &str, args: Vec<Operand>, keywords: Vec<Keyword>) -> ClaimSite {
    ClaimSite {
        kind: SiteKind::Call,
        target: target.into(),
        receiver: None,
        args,
        keywords,
    }
}
fn method(recv: Operand, name: &str, args: Vec<Operand>, keywords: Vec<Keyword>) -> ClaimSite {
    ClaimSite {
        kind: SiteKind::MethodCall,
        target: name.into(),
        receiver: Some(recv),
        args,
        keywords,
    }
}
fn binop(op: &str, a: Operand, b: Operand) -> ClaimSite {
    ClaimSite {
        kind: SiteKind::BinOp,
        target: op.into(),
        receiver: None,
        args: vec![a, b],
        keywords: vec![],
    }
}

fn expect(site: &ClaimSite) -> String {
    match claim(site) {
        ClaimOutcome::Claimed {
            rule_id,
            result_type,
        } => {
            let ValueType::Plugin(k) = result_type else {
                panic!("non-tensor result")
            };
            format!("claimed {rule_id} -> {k}")
        }
        ClaimOutcome::Rejected(d) => format!("rejected {}", d.code),
        ClaimOutcome::NotCovered => "not-covered".into(),
    }
}

#[test]
fn accepted_forms() {
    let red = || {
        vec![
            kw("dim", Operand::literal(Literal::Int(1))),
            kw("keepdim", Operand::literal(Literal::Bool(false))),
        ]
    };
    let red_rev = || {
        vec![
            kw("keepdim", Operand::literal(Literal::Bool(false))),
            kw("dim", Operand::literal(Literal::Int(1))),
        ]
    };
    let table: Vec<(ClaimSite, &str)> = vec![
        (
            call("torch.nn.functional.linear", vec![t2(), t2(), t1()], vec![]),
            "functional-linear-f32-cpu-2d -> rextio-torch/tensor-f32-cpu-2d",
        ),
        (
            method(t1(), "relu", vec![], vec![]),
            "tensor-relu-f32-cpu-1d -> rextio-torch/tensor-f32-cpu-1d",
        ),
        (
            method(t2(), "relu", vec![], vec![]),
            "tensor-relu-f32-cpu-2d -> rextio-torch/tensor-f32-cpu-2d",
        ),
        (
            method(t2(), "sigmoid", vec![], vec![]),
            "tensor-sigmoid-f32-cpu-2d -> rextio-torch/tensor-f32-cpu-2d",
        ),
        (
            method(t1(), "tanh", vec![], vec![]),
            "tensor-tanh-f32-cpu-1d -> rextio-torch/tensor-f32-cpu-1d",
        ),
        (
            binop("@", t2(), t2()),
            "tensor-matmul-f32-cpu-2d -> rextio-torch/tensor-f32-cpu-2d",
        ),
        (
            call("torch.matmul", vec![t2(), t2()], vec![]),
            "tensor-matmul-call-f32-cpu-2d -> rextio-torch/tensor-f32-cpu-2d",
        ),
        (
            method(t2(), "matmul", vec![t2()], vec![]),
            "tensor-matmul-call-f32-cpu-2d -> rextio-torch/tensor-f32-cpu-2d",
        ),
        (
            binop("+", t1(), t1()),
            "tensor-add-f32-cpu-same-rank -> rextio-torch/tensor-f32-cpu-1d",
        ),
        (
            binop("+", t2(), t2()),
            "tensor-add-f32-cpu-same-rank -> rextio-torch/tensor-f32-cpu-2d",
        ),
        (
            binop("+", t2(), t1()),
            "tensor-add-f32-cpu-2d-1d-broadcast -> rextio-torch/tensor-f32-cpu-2d",
        ),
        (
            binop("+", t1(), t2()),
            "tensor-add-f32-cpu-2d-1d-broadcast -> rextio-torch/tensor-f32-cpu-2d",
        ),
        (
            method(t2(), "mean", vec![], red()),
            "tensor-mean-dim1-f32-cpu-2d -> rextio-torch/tensor-f32-cpu-1d",
        ),
        (
            method(t2(), "sum", vec![], red_rev()),
            "tensor-sum-dim1-f32-cpu-2d -> rextio-torch/tensor-f32-cpu-1d",
        ),
    ];
    for (site, want) in table {
        assert_eq!(
            expect(&site),
            format!("claimed rextio-torch/{want}"),
            "{site:?}"
        );
    }
}

#[test]
fn rejected_and_uncovered_forms() {
    let lit_i = |v| Operand::literal(Literal::Int(v));
    let lit_b = |v| Operand::literal(Literal::Bool(v));
    let table: Vec<(ClaimSite, &str)> = vec![
        // linear
        (
            call("torch.nn.functional.linear", vec![t1(), t2(), t1()], vec![]),
            "rejected RXTP-TORCH-002",
        ),
        (
            call("torch.nn.functional.linear", vec![t2(), t2()], vec![]),
            "rejected RXTP-TORCH-001",
        ),
        (
            call(
                "torch.nn.functional.linear",
                vec![t2(), t2()],
                vec![kw("bias", t1())],
            ),
            "rejected RXTP-TORCH-001",
        ),
        (
            call(
                "torch.nn.functional.linear",
                vec![t2(), t2(), Operand::unknown()],
                vec![],
            ),
            "rejected RXTP-TORCH-002",
        ),
        // activations
        (
            method(t2(), "relu", vec![lit_i(1)], vec![]),
            "rejected RXTP-TORCH-003",
        ),
        (
            method(Operand::typed(ValueType::Int), "relu", vec![], vec![]),
            "not-covered",
        ),
        (call("torch.relu", vec![t2()], vec![]), "not-covered"),
        (
            method(t2(), "relu_", vec![], vec![]),
            "rejected RXTP-TORCH-010",
        ),
        (
            method(t2(), "transpose", vec![lit_i(0), lit_i(1)], vec![]),
            "rejected RXTP-TORCH-010",
        ),
        // reductions
        (
            method(
                t2(),
                "mean",
                vec![],
                vec![kw("dim", lit_i(0)), kw("keepdim", lit_b(false))],
            ),
            "rejected RXTP-TORCH-008",
        ),
        (
            method(
                t2(),
                "mean",
                vec![],
                vec![kw("dim", lit_i(1)), kw("keepdim", lit_b(true))],
            ),
            "rejected RXTP-TORCH-008",
        ),
        (
            method(
                t2(),
                "mean",
                vec![],
                vec![
                    kw("dim", Operand::typed(ValueType::Int)),
                    kw("keepdim", lit_b(false)),
                ],
            ),
            "rejected RXTP-TORCH-008",
        ),
        (
            method(t2(), "sum", vec![lit_i(1)], vec![]),
            "rejected RXTP-TORCH-008",
        ),
        (
            method(t2(), "sum", vec![], vec![]),
            "rejected RXTP-TORCH-008",
        ),
        (
            method(
                t1(),
                "mean",
                vec![],
                vec![kw("dim", lit_i(1)), kw("keepdim", lit_b(false))],
            ),
            "rejected RXTP-TORCH-009",
        ),
        // matmul
        (binop("@", t1(), t2()), "rejected RXTP-TORCH-005"),
        (
            call("torch.matmul", vec![t2(), t1()], vec![]),
            "rejected RXTP-TORCH-005",
        ),
        (
            call("torch.matmul", vec![t2(), t2()], vec![kw("out", t2())]),
            "rejected RXTP-TORCH-006",
        ),
        (
            method(t2(), "matmul", vec![], vec![]),
            "rejected RXTP-TORCH-006",
        ),
        // elementwise
        (binop("*", t2(), t2()), "rejected RXTP-TORCH-010"),
        (binop("-", t1(), t1()), "rejected RXTP-TORCH-010"),
        (
            binop("+", t2(), Operand::literal(Literal::Float(1.0))),
            "rejected RXTP-TORCH-010",
        ),
        (
            binop(
                "+",
                Operand::typed(ValueType::Int),
                Operand::typed(ValueType::Int),
            ),
            "not-covered",
        ),
        // unrelated
        (
            call("torch.softmax", vec![t2()], vec![kw("dim", lit_i(-1))]),
            "not-covered",
        ),
        (call("numpy.dot", vec![t2(), t2()], vec![]), "not-covered"),
    ];
    for (site, want) in table {
        assert_eq!(expect(&site), want, "{site:?}");
    }
}

mod purity {
    use super::*;
    use proptest::prelude::*;

    fn operand() -> impl Strategy<Value = Operand> {
        prop_oneof![
            Just(t1()),
            Just(t2()),
            Just(Operand::unknown()),
            Just(Operand::typed(ValueType::Int)),
            any::<i64>().prop_map(|v| Operand::literal(Literal::Int(v))),
            any::<bool>().prop_map(|v| Operand::literal(Literal::Bool(v))),
        ]
    }

    proptest! {
        #[test]
        fn claim_is_a_pure_function_of_the_site(
            kind in prop_oneof![Just(SiteKind::Call), Just(SiteKind::MethodCall), Just(SiteKind::BinOp)],
            target in prop_oneof![Just("torch.nn.functional.linear"), Just("torch.matmul"), Just("relu"), Just("mean"), Just("+"), Just("@"), Just("*")],
            recv in proptest::option::of(operand()),
            args in proptest::collection::vec(operand(), 0..4),
            kws in proptest::collection::vec((prop_oneof![Just("dim"), Just("keepdim"), Just("out")], operand()), 0..3),
        ) {
            let site = ClaimSite {
                kind,
                target: target.to_string(),
                receiver: recv,
                args,
                keywords: kws.into_iter().map(|(n, v)| kw(n, v)).collect(),
            };
            let first = claim(&site);
            prop_assert_eq!(&first, &claim(&site.clone()));
            // A claim never produces a result type outside the vocabulary.
            if let ClaimOutcome::Claimed { result_type, .. } = first {
                let ValueType::Plugin(k) = result_type else { panic!("scalar result") };
                prop_assert!(k.as_str() == F32_CPU_1D || k.as_str() == F32_CPU_2D);
            }
        }
    }
}
