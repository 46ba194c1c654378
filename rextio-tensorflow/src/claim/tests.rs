//! Accepted and rejected forms, as data.

use super::claim;
use crate::types::{F32_CPU_1D, F32_CPU_2D, I64_CPU_1D};
pub(crate) use rextio_plugin_api::kit::testing::forms::{binop, call, kw};
use rextio_plugin_api::kit::testing::forms::{boolean, flt, int, method, none, string};
use rextio_plugin_api::kit::testing::mismatches;
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
fn torch2() -> Operand {
    Operand::plugin("rextio-torch/tensor-f32-cpu-2d")
}
fn unknown() -> Operand {
    Operand::unknown()
}
/// An attribute read such as `tf.int32` offered as the dotted name.
fn dotted(s: &str) -> Operand {
    string(s)
}
fn tf(name: &str, args: Vec<Operand>, keywords: Vec<Keyword>) -> ClaimSite {
    call(&format!("tensorflow.{name}"), args, keywords)
}

/// Every accepted form with its rule and result type; shared with the lowering tests.
pub(crate) fn accepted() -> Vec<(ClaimSite, &'static str)> {
    let nhwc = || kw("data_format", string("NHWC"));
    vec![
        // matmul
        (
            tf("matmul", vec![t2(), t2()], vec![]),
            "matmul-f32-cpu-2d -> f32-cpu-2d",
        ),
        (
            tf("linalg.matmul", vec![t2(), t2()], vec![]),
            "matmul-f32-cpu-2d -> f32-cpu-2d",
        ),
        // activations
        (
            tf("nn.relu", vec![t2()], vec![]),
            "relu-f32-cpu-2d -> f32-cpu-2d",
        ),
        (
            tf("nn.relu", vec![t1()], vec![]),
            "relu-f32-cpu-1d -> f32-cpu-1d",
        ),
        (
            tf("nn.sigmoid", vec![t2()], vec![]),
            "sigmoid-f32-cpu-2d -> f32-cpu-2d",
        ),
        (
            tf("nn.elu", vec![t2()], vec![]),
            "elu-f32-cpu-2d -> f32-cpu-2d",
        ),
        (
            tf("nn.elu", vec![t1()], vec![]),
            "elu-f32-cpu-1d -> f32-cpu-1d",
        ),
        (
            tf("nn.sigmoid", vec![t1()], vec![]),
            "sigmoid-f32-cpu-1d -> f32-cpu-1d",
        ),
        (
            tf("nn.tanh", vec![t2()], vec![]),
            "tanh-f32-cpu-2d -> f32-cpu-2d",
        ),
        (
            tf("nn.tanh", vec![t1()], vec![]),
            "tanh-f32-cpu-1d -> f32-cpu-1d",
        ),
        // math unary
        (tf("abs", vec![t2()], vec![]), "abs-f32-cpu -> f32-cpu-2d"),
        (
            tf("negative", vec![t1()], vec![]),
            "negative-f32-cpu -> f32-cpu-1d",
        ),
        (
            tf("square", vec![t2()], vec![]),
            "square-f32-cpu -> f32-cpu-2d",
        ),
        (tf("exp", vec![t1()], vec![]), "exp-f32-cpu -> f32-cpu-1d"),
        (
            tf("math.log", vec![t2()], vec![]),
            "log-f32-cpu -> f32-cpu-2d",
        ),
        (
            tf("math.sqrt", vec![t1()], vec![]),
            "sqrt-f32-cpu -> f32-cpu-1d",
        ),
        // `-x`, offered by the host as operator.neg(x)
        (
            call("operator.neg", vec![t2()], vec![]),
            "negative-f32-cpu -> f32-cpu-2d",
        ),
        (
            call("operator.neg", vec![t1()], vec![]),
            "negative-f32-cpu -> f32-cpu-1d",
        ),
        // their other spellings (one TensorFlow function each)
        (tf("sqrt", vec![t2()], vec![]), "sqrt-f32-cpu -> f32-cpu-2d"),
        (
            tf("math.abs", vec![t1()], vec![]),
            "abs-f32-cpu -> f32-cpu-1d",
        ),
        (
            tf("math.negative", vec![t2()], vec![]),
            "negative-f32-cpu -> f32-cpu-2d",
        ),
        (
            tf("math.square", vec![t1()], vec![]),
            "square-f32-cpu -> f32-cpu-1d",
        ),
        (
            tf("math.exp", vec![t2()], vec![]),
            "exp-f32-cpu -> f32-cpu-2d",
        ),
        // arithmetic calls, both spellings, the whole rank matrix
        (
            tf("add", vec![t2(), t2()], vec![]),
            "add-call-f32-cpu -> f32-cpu-2d",
        ),
        (
            tf("math.add", vec![t1(), t1()], vec![]),
            "add-call-f32-cpu -> f32-cpu-1d",
        ),
        (
            tf("add", vec![t2(), t1()], vec![]),
            "add-call-f32-cpu -> f32-cpu-2d",
        ),
        (
            tf("add", vec![t1(), t2()], vec![]),
            "add-call-f32-cpu -> f32-cpu-2d",
        ),
        (
            tf("multiply", vec![t2(), t1()], vec![]),
            "mul-call-f32-cpu -> f32-cpu-2d",
        ),
        (
            tf("math.multiply", vec![t1(), t1()], vec![]),
            "mul-call-f32-cpu -> f32-cpu-1d",
        ),
        (
            tf("subtract", vec![t1(), t2()], vec![]),
            "sub-call-f32-cpu -> f32-cpu-2d",
        ),
        (
            tf("math.subtract", vec![t2(), t2()], vec![]),
            "sub-call-f32-cpu -> f32-cpu-2d",
        ),
        (
            tf("divide", vec![t2(), t2()], vec![]),
            "div-call-f32-cpu -> f32-cpu-2d",
        ),
        (
            tf("math.divide", vec![t1(), t2()], vec![]),
            "div-call-f32-cpu -> f32-cpu-2d",
        ),
        // operators
        (binop("+", t2(), t1()), "add-binop-f32-cpu -> f32-cpu-2d"),
        (binop("+", t1(), t1()), "add-binop-f32-cpu -> f32-cpu-1d"),
        (binop("*", t2(), t2()), "mul-binop-f32-cpu -> f32-cpu-2d"),
        (binop("*", t1(), t2()), "mul-binop-f32-cpu -> f32-cpu-2d"),
        (binop("-", t2(), t1()), "sub-binop-f32-cpu -> f32-cpu-2d"),
        (binop("-", t1(), t1()), "sub-binop-f32-cpu -> f32-cpu-1d"),
        // `a op= b` rebinds `a` (TensorFlow tensors are immutable): the operator's rule, private
        // or not.
        (binop("+=", t2(), t1()), "add-binop-f32-cpu -> f32-cpu-2d"),
        (binop("-=", t1(), t1()), "sub-binop-f32-cpu -> f32-cpu-1d"),
        (binop("/", t1(), t2()), "div-binop-f32-cpu -> f32-cpu-2d"),
        (binop("/", t2(), t2()), "div-binop-f32-cpu -> f32-cpu-2d"),
        // maximum / minimum, same ranks only
        (
            tf("maximum", vec![t2(), t2()], vec![]),
            "maximum-call-f32-cpu -> f32-cpu-2d",
        ),
        (
            tf("maximum", vec![t1(), t1()], vec![]),
            "maximum-call-f32-cpu -> f32-cpu-1d",
        ),
        (
            tf("minimum", vec![t2(), t2()], vec![]),
            "minimum-call-f32-cpu -> f32-cpu-2d",
        ),
        (
            tf("minimum", vec![t1(), t1()], vec![]),
            "minimum-call-f32-cpu -> f32-cpu-1d",
        ),
        // reductions: axis positional or keyword, keepdims named
        (
            tf("reduce_mean", vec![t2()], vec![kw("axis", int(1))]),
            "reduce-mean-axis1-f32-cpu-2d -> f32-cpu-1d",
        ),
        (
            tf("reduce_mean", vec![t2(), int(1)], vec![]),
            "reduce-mean-axis1-f32-cpu-2d -> f32-cpu-1d",
        ),
        (
            tf(
                "math.reduce_mean",
                vec![t2()],
                vec![kw("axis", int(1)), kw("keepdims", boolean(false))],
            ),
            "reduce-mean-axis1-f32-cpu-2d -> f32-cpu-1d",
        ),
        (
            tf(
                "reduce_mean",
                vec![t2(), int(0)],
                vec![kw("keepdims", boolean(true))],
            ),
            "reduce-mean-literal-axis-f32-cpu-2d -> f32-cpu-2d",
        ),
        (
            tf(
                "reduce_mean",
                vec![t2()],
                vec![kw("keepdims", boolean(false)), kw("axis", int(0))],
            ),
            "reduce-mean-literal-axis-f32-cpu-2d -> f32-cpu-1d",
        ),
        (
            tf(
                "reduce_mean",
                vec![t2()],
                vec![kw("axis", int(1)), kw("keepdims", boolean(true))],
            ),
            "reduce-mean-literal-axis-f32-cpu-2d -> f32-cpu-2d",
        ),
        (
            tf(
                "reduce_sum",
                vec![t2()],
                vec![kw("axis", int(1)), kw("keepdims", boolean(false))],
            ),
            "reduce-sum-axis1-f32-cpu-2d -> f32-cpu-1d",
        ),
        (
            tf("reduce_sum", vec![t2(), int(0)], vec![]),
            "reduce-sum-literal-axis-f32-cpu-2d -> f32-cpu-1d",
        ),
        (
            tf(
                "math.reduce_sum",
                vec![t2(), int(1)],
                vec![kw("keepdims", boolean(true))],
            ),
            "reduce-sum-literal-axis-f32-cpu-2d -> f32-cpu-2d",
        ),
        (
            tf(
                "reduce_sum",
                vec![t2()],
                vec![kw("axis", int(0)), kw("keepdims", boolean(true))],
            ),
            "reduce-sum-literal-axis-f32-cpu-2d -> f32-cpu-2d",
        ),
        // softmax
        (
            tf("nn.softmax", vec![t1()], vec![]),
            "softmax-axis0-f32-cpu-1d -> f32-cpu-1d",
        ),
        (
            tf("nn.softmax", vec![t1()], vec![kw("axis", int(0))]),
            "softmax-axis0-f32-cpu-1d -> f32-cpu-1d",
        ),
        (
            tf("nn.softmax", vec![t1(), int(0)], vec![]),
            "softmax-axis0-f32-cpu-1d -> f32-cpu-1d",
        ),
        (
            tf("nn.softmax", vec![t2()], vec![kw("axis", int(1))]),
            "softmax-axis1-f32-cpu-2d -> f32-cpu-2d",
        ),
        (
            tf("nn.softmax", vec![t2(), int(1)], vec![]),
            "softmax-axis1-f32-cpu-2d -> f32-cpu-2d",
        ),
        // argmax
        (
            tf("argmax", vec![t2()], vec![kw("axis", int(1))]),
            "argmax-axis1-i64-cpu-2d -> i64-cpu-1d",
        ),
        (
            tf("argmax", vec![t2(), int(1)], vec![]),
            "argmax-axis1-i64-cpu-2d -> i64-cpu-1d",
        ),
        (
            tf("argmax", vec![t2(), int(0)], vec![]),
            "argmax-axis0-i64-cpu-2d -> i64-cpu-1d",
        ),
        (
            tf("argmax", vec![t2()], vec![kw("axis", int(0))]),
            "argmax-axis0-i64-cpu-2d -> i64-cpu-1d",
        ),
        // transpose, bias_add
        (
            tf("transpose", vec![t2()], vec![]),
            "transpose-f32-cpu-2d -> f32-cpu-2d",
        ),
        (
            tf("nn.bias_add", vec![t2(), t1()], vec![]),
            "bias-add-nhwc-f32-cpu-2d -> f32-cpu-2d",
        ),
        (
            tf("nn.bias_add", vec![t2(), t1()], vec![nhwc()]),
            "bias-add-nhwc-f32-cpu-2d -> f32-cpu-2d",
        ),
    ]
}

#[test]
fn accepted_forms() {
    let bad = mismatches(crate::PLUGIN_ID, claim, accepted());
    assert!(bad.is_empty(), "{bad:#?}");
}

/// The documented "rejected / not covered" lists and the static preconditions, as data.
fn rejected() -> Vec<(ClaimSite, &'static str)> {
    vec![
        // --- matmul ---
        (
            tf("matmul", vec![t1(), t2()], vec![]),
            "RXTP-TENSORFLOW-001",
        ),
        (
            tf("matmul", vec![t2(), t1()], vec![]),
            "RXTP-TENSORFLOW-001",
        ),
        (
            tf("matmul", vec![t1(), t1()], vec![]),
            "RXTP-TENSORFLOW-001",
        ),
        (
            tf(
                "matmul",
                vec![t2(), t2()],
                vec![kw("transpose_b", boolean(true))],
            ),
            "RXTP-TENSORFLOW-001",
        ),
        (
            tf(
                "matmul",
                vec![t2(), t2()],
                vec![kw("transpose_a", boolean(false))],
            ),
            "RXTP-TENSORFLOW-001",
        ),
        (
            tf(
                "linalg.matmul",
                vec![t2(), t2()],
                vec![kw("adjoint_a", boolean(true))],
            ),
            "RXTP-TENSORFLOW-001",
        ),
        (
            tf("matmul", vec![t2()], vec![kw("b", t2())]),
            "RXTP-TENSORFLOW-001",
        ),
        (
            tf("matmul", vec![t2(), t2(), boolean(true)], vec![]),
            "RXTP-TENSORFLOW-001",
        ),
        (
            tf("matmul", vec![t2(), l64()], vec![]),
            "RXTP-TENSORFLOW-001",
        ),
        (
            tf("matmul", vec![t2(), flt(2.0)], vec![]),
            "RXTP-TENSORFLOW-010",
        ),
        (
            tf("matmul", vec![t2(), torch2()], vec![]),
            "RXTP-TENSORFLOW-010",
        ),
        (
            tf(
                "matmul",
                vec![t2(), t2()],
                vec![kw("output_type", unknown())],
            ),
            "RXTP-TENSORFLOW-001",
        ),
        (binop("@", t2(), t2()), "RXTP-TENSORFLOW-010"),
        // --- activations: keywords, arity, types; the code follows the operand rank ---
        (
            tf("nn.relu", vec![t2()], vec![kw("name", string("r"))]),
            "RXTP-TENSORFLOW-002",
        ),
        (
            tf("nn.relu", vec![t1()], vec![kw("name", string("r"))]),
            "RXTP-TENSORFLOW-018",
        ),
        (
            tf("nn.relu", vec![], vec![kw("features", t2())]),
            "RXTP-TENSORFLOW-002",
        ),
        (
            tf("nn.relu", vec![t2(), t2()], vec![]),
            "RXTP-TENSORFLOW-002",
        ),
        (tf("nn.relu", vec![l64()], vec![]), "RXTP-TENSORFLOW-002"),
        (
            tf("nn.elu", vec![t2()], vec![kw("alpha", flt(0.5))]),
            "RXTP-TENSORFLOW-042",
        ),
        (
            tf("nn.elu", vec![t1(), t1()], vec![]),
            "RXTP-TENSORFLOW-043",
        ),
        (tf("nn.elu", vec![l64()], vec![]), "RXTP-TENSORFLOW-042"),
        (tf("nn.relu", vec![flt(1.0)], vec![]), "RXTP-TENSORFLOW-010"),
        (
            tf("nn.relu", vec![Operand::typed(ValueType::Float)], vec![]),
            "RXTP-TENSORFLOW-010",
        ),
        (
            tf("nn.sigmoid", vec![t2()], vec![kw("name", unknown())]),
            "RXTP-TENSORFLOW-005",
        ),
        (
            tf("nn.sigmoid", vec![t1(), t1()], vec![]),
            "RXTP-TENSORFLOW-019",
        ),
        (
            tf("nn.tanh", vec![t2()], vec![kw("name", string("t"))]),
            "RXTP-TENSORFLOW-009",
        ),
        (
            tf("nn.tanh", vec![t1()], vec![kw("name", string("t"))]),
            "RXTP-TENSORFLOW-020",
        ),
        (tf("nn.relu", vec![torch2()], vec![]), "RXTP-TENSORFLOW-010"),
        // --- math unary ---
        (
            tf("abs", vec![t2()], vec![kw("name", string("a"))]),
            "RXTP-TENSORFLOW-026",
        ),
        (
            tf("negative", vec![t2(), t2()], vec![]),
            "RXTP-TENSORFLOW-027",
        ),
        (
            tf("square", vec![], vec![kw("x", t2())]),
            "RXTP-TENSORFLOW-028",
        ),
        (tf("exp", vec![l64()], vec![]), "RXTP-TENSORFLOW-029"),
        (
            tf("math.log", vec![t1()], vec![kw("name", string("l"))]),
            "RXTP-TENSORFLOW-030",
        ),
        (tf("math.sqrt", vec![], vec![]), "RXTP-TENSORFLOW-031"),
        (tf("sqrt", vec![t2(), t2()], vec![]), "RXTP-TENSORFLOW-031"),
        (tf("math.abs", vec![], vec![]), "RXTP-TENSORFLOW-026"),
        (
            call("operator.neg", vec![l64()], vec![]),
            "RXTP-TENSORFLOW-027",
        ),
        (tf("exp", vec![int(1)], vec![]), "RXTP-TENSORFLOW-010"),
        // --- arithmetic ---
        (
            tf("add", vec![t2(), t2()], vec![kw("name", string("a"))]),
            "RXTP-TENSORFLOW-003",
        ),
        (
            tf("add", vec![t2()], vec![kw("y", t2())]),
            "RXTP-TENSORFLOW-003",
        ),
        (
            tf("add", vec![t2(), flt(1.0)], vec![]),
            "RXTP-TENSORFLOW-003",
        ),
        (tf("add", vec![l64(), l64()], vec![]), "RXTP-TENSORFLOW-003"),
        (binop("+", t2(), flt(1.0)), "RXTP-TENSORFLOW-006"),
        (binop("+", int(1), t1()), "RXTP-TENSORFLOW-006"),
        (
            binop("+", t2(), Operand::typed(ValueType::Float)),
            "RXTP-TENSORFLOW-006",
        ),
        (binop("+", l64(), l64()), "RXTP-TENSORFLOW-006"),
        (binop("+", t2(), string("a")), "RXTP-TENSORFLOW-010"),
        (binop("+", t2(), torch2()), "RXTP-TENSORFLOW-010"),
        (
            tf("multiply", vec![t2(), int(2)], vec![]),
            "RXTP-TENSORFLOW-013",
        ),
        (
            tf("math.multiply", vec![t2(), t2(), t2()], vec![]),
            "RXTP-TENSORFLOW-013",
        ),
        (binop("*", t1(), boolean(true)), "RXTP-TENSORFLOW-012"),
        (binop("*", t2(), l64()), "RXTP-TENSORFLOW-012"),
        (
            tf("subtract", vec![t2(), t2()], vec![kw("name", string("s"))]),
            "RXTP-TENSORFLOW-014",
        ),
        (binop("-", flt(1.0), t2()), "RXTP-TENSORFLOW-015"),
        (
            tf("divide", vec![t2(), t2()], vec![kw("name", string("d"))]),
            "RXTP-TENSORFLOW-016",
        ),
        (tf("math.divide", vec![t2()], vec![]), "RXTP-TENSORFLOW-016"),
        (binop("/", t2(), int(2)), "RXTP-TENSORFLOW-017"),
        (binop("/", l64(), t1()), "RXTP-TENSORFLOW-017"),
        (binop("%", t2(), t2()), "RXTP-TENSORFLOW-010"),
        (binop("//", t2(), t2()), "RXTP-TENSORFLOW-010"),
        (binop("**", t2(), int(2)), "RXTP-TENSORFLOW-010"),
        // --- maximum / minimum ---
        (
            tf("maximum", vec![t2(), t1()], vec![]),
            "RXTP-TENSORFLOW-032",
        ),
        (
            tf("minimum", vec![t1(), t2()], vec![]),
            "RXTP-TENSORFLOW-033",
        ),
        (
            tf("maximum", vec![t2(), flt(0.0)], vec![]),
            "RXTP-TENSORFLOW-032",
        ),
        (
            tf(
                "maximum",
                vec![t2(), Operand::typed(ValueType::Float)],
                vec![],
            ),
            "RXTP-TENSORFLOW-032",
        ),
        (
            tf("minimum", vec![t2(), t2()], vec![kw("name", string("m"))]),
            "RXTP-TENSORFLOW-033",
        ),
        (tf("minimum", vec![t2()], vec![]), "RXTP-TENSORFLOW-033"),
        (
            tf("maximum", vec![l64(), l64()], vec![]),
            "RXTP-TENSORFLOW-032",
        ),
        // --- reductions ---
        (tf("reduce_mean", vec![t2()], vec![]), "RXTP-TENSORFLOW-004"),
        (
            tf("reduce_mean", vec![t2(), int(0), boolean(true)], vec![]),
            "RXTP-TENSORFLOW-004",
        ),
        (
            tf(
                "reduce_mean",
                vec![t2(), Operand::typed(ValueType::Int)],
                vec![],
            ),
            "RXTP-TENSORFLOW-004",
        ),
        (
            tf("reduce_mean", vec![t2()], vec![kw("axis", unknown())]),
            "RXTP-TENSORFLOW-004",
        ),
        (
            tf("reduce_mean", vec![t2()], vec![kw("axis", boolean(true))]),
            "RXTP-TENSORFLOW-004",
        ),
        (
            tf("reduce_mean", vec![t2()], vec![kw("axis", none())]),
            "RXTP-TENSORFLOW-004",
        ),
        (
            tf("reduce_mean", vec![t2()], vec![kw("axis", int(-1))]),
            "RXTP-TENSORFLOW-004",
        ),
        (
            tf("reduce_mean", vec![t2(), int(1)], vec![kw("axis", int(1))]),
            "RXTP-TENSORFLOW-004",
        ),
        (
            tf(
                "reduce_mean",
                vec![t2()],
                vec![kw("axis", int(1)), kw("axis", int(1))],
            ),
            "RXTP-TENSORFLOW-004",
        ),
        (
            tf(
                "reduce_mean",
                vec![t2()],
                vec![
                    kw("axis", int(1)),
                    kw("keepdims", Operand::typed(ValueType::Bool)),
                ],
            ),
            "RXTP-TENSORFLOW-004",
        ),
        (
            tf(
                "reduce_mean",
                vec![t2()],
                vec![kw("axis", int(1)), kw("keepdims", int(1))],
            ),
            "RXTP-TENSORFLOW-004",
        ),
        (
            tf(
                "reduce_mean",
                vec![t2()],
                vec![kw("axis", int(1)), kw("name", string("m"))],
            ),
            "RXTP-TENSORFLOW-004",
        ),
        (
            tf(
                "reduce_mean",
                vec![],
                vec![kw("input_tensor", t2()), kw("axis", int(1))],
            ),
            "RXTP-TENSORFLOW-004",
        ),
        (
            tf("reduce_mean", vec![t1()], vec![kw("axis", int(1))]),
            "RXTP-TENSORFLOW-004",
        ),
        (
            tf("reduce_mean", vec![t1()], vec![kw("axis", int(0))]),
            "RXTP-TENSORFLOW-022",
        ),
        (
            tf(
                "reduce_mean",
                vec![l64()],
                vec![kw("axis", int(0)), kw("keepdims", boolean(true))],
            ),
            "RXTP-TENSORFLOW-022",
        ),
        (
            tf("reduce_sum", vec![t2()], vec![kw("axis", int(2))]),
            "RXTP-TENSORFLOW-011",
        ),
        (tf("reduce_sum", vec![t2()], vec![]), "RXTP-TENSORFLOW-011"),
        (
            tf(
                "math.reduce_sum",
                vec![t2(), int(1), boolean(false)],
                vec![],
            ),
            "RXTP-TENSORFLOW-011",
        ),
        (
            tf("reduce_sum", vec![t1()], vec![kw("axis", int(0))]),
            "RXTP-TENSORFLOW-023",
        ),
        (
            tf("reduce_sum", vec![flt(1.0)], vec![kw("axis", int(0))]),
            "RXTP-TENSORFLOW-010",
        ),
        // --- softmax ---
        (tf("nn.softmax", vec![t2()], vec![]), "RXTP-TENSORFLOW-007"),
        (
            tf("nn.softmax", vec![t2()], vec![kw("axis", int(0))]),
            "RXTP-TENSORFLOW-007",
        ),
        (
            tf("nn.softmax", vec![t2(), int(-1)], vec![]),
            "RXTP-TENSORFLOW-007",
        ),
        (
            tf(
                "nn.softmax",
                vec![t2()],
                vec![kw("axis", Operand::typed(ValueType::Int))],
            ),
            "RXTP-TENSORFLOW-007",
        ),
        (
            tf(
                "nn.softmax",
                vec![t2()],
                vec![kw("axis", int(1)), kw("name", string("s"))],
            ),
            "RXTP-TENSORFLOW-007",
        ),
        (
            tf("nn.softmax", vec![t2(), int(1)], vec![kw("axis", int(1))]),
            "RXTP-TENSORFLOW-007",
        ),
        (
            tf("nn.softmax", vec![t1()], vec![kw("axis", int(1))]),
            "RXTP-TENSORFLOW-025",
        ),
        (
            tf("nn.softmax", vec![t1(), int(-1)], vec![]),
            "RXTP-TENSORFLOW-025",
        ),
        (
            tf("nn.softmax", vec![t1()], vec![kw("axis", none())]),
            "RXTP-TENSORFLOW-025",
        ),
        (tf("nn.softmax", vec![l64()], vec![]), "RXTP-TENSORFLOW-007"),
        // --- argmax: output_type rejected whatever the host offers for `tf.int32` ---
        (
            tf(
                "argmax",
                vec![t2()],
                vec![kw("axis", int(1)), kw("output_type", unknown())],
            ),
            "RXTP-TENSORFLOW-008",
        ),
        (
            tf(
                "argmax",
                vec![t2()],
                vec![
                    kw("axis", int(1)),
                    kw("output_type", dotted("tensorflow.int32")),
                ],
            ),
            "RXTP-TENSORFLOW-008",
        ),
        (
            tf(
                "argmax",
                vec![t2()],
                vec![
                    kw("axis", int(1)),
                    kw("output_type", dotted("tensorflow.int64")),
                ],
            ),
            "RXTP-TENSORFLOW-008",
        ),
        (
            tf(
                "argmax",
                vec![t2()],
                vec![kw("output_type", unknown()), kw("axis", int(0))],
            ),
            "RXTP-TENSORFLOW-024",
        ),
        (
            tf(
                "argmax",
                vec![unknown()],
                vec![kw("axis", int(1)), kw("output_type", unknown())],
            ),
            "RXTP-TENSORFLOW-008",
        ),
        (
            tf("argmax", vec![t2(), int(1), unknown()], vec![]),
            "RXTP-TENSORFLOW-008",
        ),
        (tf("argmax", vec![t2()], vec![]), "RXTP-TENSORFLOW-008"),
        (
            tf("argmax", vec![t2()], vec![kw("axis", int(2))]),
            "RXTP-TENSORFLOW-008",
        ),
        (
            tf(
                "argmax",
                vec![t2()],
                vec![kw("axis", Operand::typed(ValueType::Int))],
            ),
            "RXTP-TENSORFLOW-008",
        ),
        (
            tf(
                "argmax",
                vec![t2()],
                vec![kw("axis", int(1)), kw("name", string("a"))],
            ),
            "RXTP-TENSORFLOW-008",
        ),
        (
            tf(
                "argmax",
                vec![t2()],
                vec![kw("axis", int(1)), kw("keepdims", boolean(true))],
            ),
            "RXTP-TENSORFLOW-008",
        ),
        (
            tf("argmax", vec![t1()], vec![kw("axis", int(0))]),
            "RXTP-TENSORFLOW-024",
        ),
        (
            tf("argmax", vec![l64(), int(1)], vec![]),
            "RXTP-TENSORFLOW-008",
        ),
        // --- transpose ---
        (
            tf("transpose", vec![t2()], vec![kw("perm", unknown())]),
            "RXTP-TENSORFLOW-039",
        ),
        (
            tf(
                "transpose",
                vec![t2()],
                vec![kw("conjugate", boolean(false))],
            ),
            "RXTP-TENSORFLOW-039",
        ),
        (
            tf("transpose", vec![t2()], vec![kw("name", string("t"))]),
            "RXTP-TENSORFLOW-039",
        ),
        (
            tf("transpose", vec![t2(), unknown()], vec![]),
            "RXTP-TENSORFLOW-039",
        ),
        (tf("transpose", vec![t1()], vec![]), "RXTP-TENSORFLOW-039"),
        (tf("transpose", vec![l64()], vec![]), "RXTP-TENSORFLOW-039"),
        // --- bias_add ---
        (
            tf(
                "nn.bias_add",
                vec![t2(), t1()],
                vec![kw("data_format", string("NCHW"))],
            ),
            "RXTP-TENSORFLOW-021",
        ),
        (
            tf(
                "nn.bias_add",
                vec![t2(), t1()],
                vec![kw("data_format", unknown())],
            ),
            "RXTP-TENSORFLOW-021",
        ),
        (
            tf(
                "nn.bias_add",
                vec![t2(), t1()],
                vec![kw("data_format", none())],
            ),
            "RXTP-TENSORFLOW-021",
        ),
        (
            tf(
                "nn.bias_add",
                vec![t2(), t1()],
                vec![kw("data_format", Operand::typed(ValueType::Str))],
            ),
            "RXTP-TENSORFLOW-021",
        ),
        (
            tf("nn.bias_add", vec![t2(), t1(), string("NHWC")], vec![]),
            "RXTP-TENSORFLOW-021",
        ),
        (
            tf(
                "nn.bias_add",
                vec![t2(), t1()],
                vec![kw("name", string("b"))],
            ),
            "RXTP-TENSORFLOW-021",
        ),
        (
            tf("nn.bias_add", vec![t2()], vec![kw("bias", t1())]),
            "RXTP-TENSORFLOW-021",
        ),
        (
            tf(
                "nn.bias_add",
                vec![],
                vec![kw("value", t2()), kw("bias", t1())],
            ),
            "RXTP-TENSORFLOW-021",
        ),
        (
            tf("nn.bias_add", vec![t1(), t2()], vec![]),
            "RXTP-TENSORFLOW-021",
        ),
        (
            tf("nn.bias_add", vec![t2(), t2()], vec![]),
            "RXTP-TENSORFLOW-021",
        ),
        (
            tf(
                "nn.bias_add",
                vec![t2(), t1()],
                vec![
                    kw("data_format", string("NHWC")),
                    kw("data_format", string("NHWC")),
                ],
            ),
            "RXTP-TENSORFLOW-021",
        ),
        // --- comparisons ---
        (
            ClaimSite {
                kind: SiteKind::Compare,
                target: "<".into(),
                receiver: None,
                args: vec![t1(), t1()],
                keywords: vec![],
            },
            "RXTP-TENSORFLOW-010",
        ),
        // --- not covered: unknown symbols, inferred aliases, receivers, untyped operands ---
        (tf("cos", vec![t2()], vec![]), "not-covered"),
        (tf("math.maximum", vec![t2(), t2()], vec![]), "not-covered"),
        (tf("math.minimum", vec![t1(), t1()], vec![]), "not-covered"),
        (tf("math.truediv", vec![t2(), t2()], vec![]), "not-covered"),
        (
            tf("raw_ops.MatMul", vec![], vec![kw("a", t2()), kw("b", t2())]),
            "not-covered",
        ),
        (tf("log", vec![t2()], vec![]), "not-covered"),
        (method(t2(), "numpy", vec![], vec![]), "not-covered"),
        (method(t2(), "__add__", vec![t2()], vec![]), "not-covered"),
        (tf("nn.relu", vec![unknown()], vec![]), "not-covered"),
        (tf("matmul", vec![unknown(), t2()], vec![]), "not-covered"),
        (binop("+", t2(), unknown()), "not-covered"),
        (
            binop(
                "+",
                Operand::typed(ValueType::Int),
                Operand::typed(ValueType::Int),
            ),
            "not-covered",
        ),
        (call("torch.relu", vec![t2()], vec![]), "not-covered"),
        (call("numpy.dot", vec![t2(), t2()], vec![]), "not-covered"),
        (call("tf.matmul", vec![t2(), t2()], vec![]), "not-covered"),
    ]
}

#[test]
fn rejected_and_uncovered_forms() {
    let bad = mismatches(crate::PLUGIN_ID, claim, rejected());
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn rejections_carry_a_message_and_suggestion_naming_the_plugin() {
    for (site, _) in rejected() {
        if let ClaimOutcome::Rejected(d) = claim(&site) {
            assert!(
                d.message.starts_with("rextio-tensorflow: "),
                "{}",
                d.message
            );
            assert!(d.suggestion.as_deref().is_some_and(|s| !s.is_empty()));
            assert!(d.span.is_none(), "claims never depend on positions");
            assert!(
                crate::codes::CODES.iter().any(|c| c.code == d.code),
                "undocumented {}",
                d.code
            );
        }
    }
}

#[test]
fn output_type_attribute_message_is_specific() {
    let site = tf(
        "argmax",
        vec![t2()],
        vec![kw("axis", int(1)), kw("output_type", unknown())],
    );
    let ClaimOutcome::Rejected(d) = claim(&site) else {
        panic!()
    };
    assert!(d.message.contains("output_type"), "{}", d.message);
}

mod purity {
    use super::*;
    use proptest::prelude::*;

    fn operand() -> impl Strategy<Value = Operand> {
        prop_oneof![
            Just(t1()),
            Just(t2()),
            Just(l64()),
            Just(torch2()),
            Just(Operand::unknown()),
            Just(Operand::typed(ValueType::Int)),
            Just(Operand::typed(ValueType::Float)),
            any::<i64>().prop_map(|v| Operand::literal(Literal::Int(v))),
            (0i64..3).prop_map(|v| Operand::literal(Literal::Int(v))),
            any::<bool>().prop_map(|v| Operand::literal(Literal::Bool(v))),
            Just(none()),
            Just(string("NHWC")),
            Just(string("tensorflow.int32")),
        ]
    }

    proptest! {
        #[test]
        fn claim_is_a_pure_function_of_the_site_and_never_invents_types(
            kind in prop_oneof![Just(SiteKind::Call), Just(SiteKind::MethodCall), Just(SiteKind::BinOp), Just(SiteKind::Compare)],
            target in prop_oneof![
                Just("tensorflow.matmul"), Just("tensorflow.nn.relu"), Just("tensorflow.nn.softmax"),
                Just("tensorflow.argmax"), Just("tensorflow.reduce_sum"), Just("tensorflow.math.reduce_mean"),
                Just("tensorflow.add"), Just("tensorflow.maximum"), Just("tensorflow.transpose"),
                Just("tensorflow.nn.bias_add"), Just("tensorflow.math.log"), Just("+"), Just("@"), Just("/"),
            ],
            args in proptest::collection::vec(operand(), 0..4),
            kws in proptest::collection::vec((prop_oneof![Just("axis"), Just("keepdims"), Just("output_type"), Just("data_format"), Just("name")], operand()), 0..3),
        ) {
            let site = ClaimSite { kind, target: target.to_string(), receiver: None, args, keywords: kws.into_iter().map(|(n, v)| kw(n, v)).collect() };
            let first = claim(&site);
            prop_assert_eq!(&first, &claim(&site.clone()));
            match first {
                ClaimOutcome::Claimed { result_type, rule_id } => {
                    let ValueType::Plugin(k) = result_type else { panic!("scalar result") };
                    prop_assert!([F32_CPU_1D, F32_CPU_2D, I64_CPU_1D].contains(&k.as_str()));
                    prop_assert!(crate::rules::native_ids().contains(&rule_id));
                    // Everything claimed also lowers.
                    let claimed = rextio_plugin_api::ClaimedSite { site: site.clone(), plugin_id: crate::PLUGIN_ID.into(), rule_id, result_type: ValueType::Plugin(k) };
                    let mut cx = rextio_plugin_api::LoweringContext::new(
                        None,
                        (0..site.args.len()).map(|i| { let v = rextio_plugin_api::syntax::format_ident!("v{i}"); rextio_plugin_api::LoweredOperand::new(rextio_plugin_api::syntax::quote!(#v), false) }).collect(),
                        site.keywords.iter().map(|k| (k.name.clone(), rextio_plugin_api::LoweredOperand::new(rextio_plugin_api::syntax::quote!(k), false))).collect(),
                    );
                    // ... to one expression.
                    let lowered = crate::lower::lower(&claimed, &mut cx);
                    prop_assert!(lowered.is_ok_and(|e| e.expr.expr().is_ok()));
                }
                ClaimOutcome::Rejected(d) => {
                    prop_assert!(crate::codes::CODES.iter().any(|c| c.code == d.code));
                }
                ClaimOutcome::NotCovered => {}
            }
        }
    }
}

fn g1() -> Operand {
    Operand::plugin(crate::types::F32_GPU0_1D)
}
fn g2() -> Operand {
    Operand::plugin(crate::types::F32_GPU0_2D)
}

/// A tuple operand of the given tensors (a list written in the call).
fn gpu_tuple(items: &[Operand]) -> Operand {
    Operand::typed(rextio_plugin_api::ValueType::Tuple(
        items.iter().filter_map(|o| o.ty.clone()).collect(),
    ))
}

/// The CUDA lane: exactly its four forms (shared with the lowering tests).
pub(crate) fn cuda_accepted() -> Vec<(ClaimSite, &'static str)> {
    vec![
        (
            tf("matmul", vec![g2(), g2()], vec![]),
            "cuda-matmul-f32-gpu0-2d -> f32-gpu0-2d",
        ),
        (
            tf("nn.bias_add", vec![g2(), g1()], vec![]),
            "cuda-bias-add-nhwc-f32-gpu0-2d -> f32-gpu0-2d",
        ),
        (
            tf("nn.relu", vec![g2()], vec![]),
            "cuda-relu-f32-gpu0-2d -> f32-gpu0-2d",
        ),
        (
            tf("reduce_mean", vec![g2()], vec![kw("axis", int(1))]),
            "cuda-reduce-mean-axis1-f32-gpu0-2d -> f32-gpu0-1d",
        ),
    ]
}

#[test]
fn the_cuda_lane_claims_exactly_its_chain() {
    let bad = mismatches(crate::PLUGIN_ID, claim, cuda_accepted());
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn everything_else_on_gpu_is_rejected_never_claimed_as_cpu() {
    let table: Vec<(ClaimSite, &str)> = vec![
        (
            tf("linalg.matmul", vec![g2(), g2()], vec![]),
            "RXTP-TENSORFLOW-040",
        ),
        (
            tf("matmul", vec![g2(), g1()], vec![]),
            "RXTP-TENSORFLOW-040",
        ),
        (
            tf(
                "matmul",
                vec![g2(), g2()],
                vec![kw("transpose_b", boolean(true))],
            ),
            "RXTP-TENSORFLOW-040",
        ),
        (
            tf("nn.bias_add", vec![g1(), g2()], vec![]),
            "RXTP-TENSORFLOW-040",
        ),
        (
            tf(
                "nn.bias_add",
                vec![g2(), g1()],
                vec![kw("data_format", string("NHWC"))],
            ),
            "RXTP-TENSORFLOW-040",
        ),
        (tf("nn.relu", vec![g1()], vec![]), "RXTP-TENSORFLOW-040"),
        (tf("nn.sigmoid", vec![g2()], vec![]), "RXTP-TENSORFLOW-040"),
        (
            tf("reduce_mean", vec![g2(), int(1)], vec![]),
            "RXTP-TENSORFLOW-040",
        ),
        (
            tf("reduce_mean", vec![g2()], vec![kw("axis", int(0))]),
            "RXTP-TENSORFLOW-040",
        ),
        (
            tf(
                "reduce_mean",
                vec![g2()],
                vec![kw("axis", int(1)), kw("keepdims", boolean(false))],
            ),
            "RXTP-TENSORFLOW-040",
        ),
        (
            tf("math.reduce_mean", vec![g2()], vec![kw("axis", int(1))]),
            "RXTP-TENSORFLOW-040",
        ),
        (binop("+", g2(), g1()), "RXTP-TENSORFLOW-040"),
        (method(g2(), "numpy", vec![], vec![]), "RXTP-TENSORFLOW-040"),
        (tf("add", vec![g2(), g1()], vec![]), "RXTP-TENSORFLOW-040"),
        // CPU and GPU in one site
        (
            tf("matmul", vec![g2(), t2()], vec![]),
            "RXTP-TENSORFLOW-041",
        ),
        (
            tf("nn.bias_add", vec![t2(), g1()], vec![]),
            "RXTP-TENSORFLOW-041",
        ),
        (binop("+", t2(), g1()), "RXTP-TENSORFLOW-041"),
        // A GPU tensor inside a list or tuple operand is still a GPU site.
        (
            tf("concat", vec![gpu_tuple(&[g2(), g2()]), int(0)], vec![]),
            "RXTP-TENSORFLOW-040",
        ),
        (
            tf("concat", vec![gpu_tuple(&[g2(), t2()]), int(0)], vec![]),
            "RXTP-TENSORFLOW-041",
        ),
    ];
    let bad = mismatches(crate::PLUGIN_ID, claim, table);
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn the_backend_keeps_every_backend_invariant() {
    use rextio_plugin_api::kit::testing::{backend_invariants, Forms};
    let forms = Forms {
        platform_reasons: Some("tensorflow"),
        device_lane: Some((
            crate::types::F32_GPU0.ty(2).unwrap(),
            vec![crate::codes::CUDA_FORM, crate::codes::CUDA_DEVICE_MIX],
        )),
        ..Forms::tables(accepted(), cuda_accepted(), rejected())
    };
    assert!(forms.rejected.len() > 20, "the rejected table's coded rows");
    let violations = backend_invariants(&crate::TensorflowPlugin::new(), &forms);
    assert!(violations.is_empty(), "{violations:#?}");
}

#[test]
fn the_claim_table_has_no_overlap_and_an_overlapping_row_is_refused_naming_both_rows() {
    use rextio_plugin_api::routes::Route;
    if let Err(e) = super::TABLE.routes() {
        panic!("{e}");
    }
    let sqrt = Route::new(
        SiteKind::Call,
        "tensorflow.math.sqrt",
        "a second sqrt",
        super::unary::plan_math_site,
    );
    let err = super::TABLE
        .overlap_with(sqrt)
        .expect("a second sqrt overlaps");
    assert_eq!(err.first, "math unary table: tf.math.sqrt");
    assert_eq!(err.second, "a second sqrt");
    let sum = Route::new(
        SiteKind::Call,
        "tensorflow.reduce_sum",
        "another axis=1 sum",
        |s| super::reductions::plan(s, "sum", true),
    )
    .guarded(1, super::reductions::is_axis1_sum);
    let err = super::TABLE
        .overlap_with(sum)
        .expect("a second axis=1 sum overlaps");
    assert_eq!(err.first, "tf.reduce_sum(x, axis=1)");
    assert_eq!(err.second, "another axis=1 sum");
}

#[test]
fn coverage_symbols_are_the_call_targets_the_claim_table_reaches() {
    // Unique, and naming every accepted call form: `backend_invariants`.
    let symbols = super::symbols();
    for u in &crate::rules::MATH_UNARY {
        for t in u.targets {
            let s = format!("tensorflow.{t}");
            assert!(symbols.contains(&s), "{s} missing from {symbols:?}");
        }
    }
    for s in [
        "tensorflow.matmul",
        "tensorflow.nn.bias_add",
        "tensorflow.math.reduce_sum",
    ] {
        assert!(
            symbols.iter().any(|x| x == s),
            "{s} missing from {symbols:?}"
        );
    }
}

/// The CUDA lane's refusals keep their exact wording (they are stated once, in
/// `claim::cuda::LANE`).
#[test]
fn the_cuda_refusals_keep_their_messages() {
    let message = |site: &ClaimSite| match super::plan(site) {
        Err(ClaimOutcome::Rejected(d)) => (d.code, d.message),
        other => panic!("{site:?}: {other:?}"),
    };
    let (code, text) = message(&tf("nn.relu", vec![g1()], vec![]));
    assert_eq!(
        text,
        "rextio-tensorflow: `tensorflow.nn.relu` with a rank-1 float32 GPU:0 tensor is outside the build-only CUDA E3 lane (tf.matmul, tf.nn.bias_add, tf.nn.relu, tf.reduce_mean(axis=1) on GPU:0)"
    );
    assert_eq!(code, crate::codes::CUDA_FORM);
    assert_eq!(
        message(&tf("matmul", vec![g2(), t2()], vec![])),
        (
            crate::codes::CUDA_DEVICE_MIX.to_owned(),
            "rextio-tensorflow: this site mixes GPU:0 and CPU tensors; the CUDA E3 lane never copies between host and device".to_owned()
        )
    );
}

/// Diagnostics name operands as before the marker table described them.
#[test]
fn operands_are_named_from_the_marker_table() {
    let d = super::describe;
    assert_eq!(d(&t1()), "a rank-1 float32 tensor");
    assert_eq!(d(&t2()), "a rank-2 float32 tensor");
    assert_eq!(d(&l64()), "an int64 rank-1 tensor");
    assert_eq!(d(&g1()), "a rank-1 float32 GPU:0 tensor");
    assert_eq!(d(&g2()), "a rank-2 float32 GPU:0 tensor");
    assert_eq!(
        d(&Operand::plugin("rextio-torch/tensor-f32-cpu-2d")),
        "a `rextio-torch/tensor-f32-cpu-2d` value"
    );
    assert_eq!(d(&int(3)), "int literal 3");
}
