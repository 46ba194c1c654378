//! Accepted and rejected forms, as data.

use super::claim;
use crate::types::{BOOL_CPU_1D, BOOL_CPU_2D, F32_CPU_1D, F32_CPU_2D, I64_CPU_1D};
pub(crate) use rextio_plugin_api::kit::testing::forms::{
    attr, binop, boolean, call, compare, flt, int, kw, method, none, string,
};
use rextio_plugin_api::kit::testing::mismatches;
use rextio_plugin_api::{ClaimOutcome, ClaimSite, Literal, Operand, SiteKind, ValueType};

pub(crate) fn t1() -> Operand {
    Operand::plugin(F32_CPU_1D)
}
pub(crate) fn t2() -> Operand {
    Operand::plugin(F32_CPU_2D)
}
/// `o` as the host offers an operand it proved private.
fn private(o: Operand) -> Operand {
    Operand { private: true, ..o }
}
fn l64() -> Operand {
    Operand::plugin(I64_CPU_1D)
}
fn b1() -> Operand {
    Operand::plugin(BOOL_CPU_1D)
}
fn b2() -> Operand {
    Operand::plugin(BOOL_CPU_2D)
}
fn fparam() -> Operand {
    Operand::typed(ValueType::Float)
}
fn iparam() -> Operand {
    Operand::typed(ValueType::Int)
}
fn tuple_int() -> Operand {
    Operand::typed(ValueType::Tuple(vec![ValueType::Int]))
}
/// A list or tuple of operands of these types, as the host offers it.
fn seq(items: &[&str]) -> Operand {
    Operand::typed(ValueType::Tuple(
        items
            .iter()
            .map(|k| match *k {
                "int" => ValueType::Int,
                "float" => ValueType::Float,
                key => ValueType::Plugin(rextio_plugin_api::TypeKey::new(key)),
            })
            .collect(),
    ))
}

fn outcome(site: &ClaimSite) -> String {
    rextio_plugin_api::kit::testing::forms::outcome(crate::PLUGIN_ID, claim(site))
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
        // In place on a tensor the host proved private: the same op.
        (
            call(
                &f("relu"),
                vec![private(t2())],
                vec![kw("inplace", boolean(true))],
            ),
            "functional-relu-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call(&f("relu"), vec![private(t1()), boolean(true)], vec![]),
            "functional-relu-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        (
            call(
                &f("silu"),
                vec![private(t2())],
                vec![kw("inplace", boolean(true))],
            ),
            "functional-silu-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call(
                &f("leaky_relu"),
                vec![private(t2()), flt(0.2)],
                vec![kw("inplace", boolean(true))],
            ),
            "functional-leaky-relu-slope-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call(
                &f("elu"),
                vec![private(t2())],
                vec![kw("alpha", flt(0.5)), kw("inplace", boolean(true))],
            ),
            "functional-elu-alpha-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call(
                &f("hardtanh"),
                vec![private(t2()), flt(0.0), flt(6.0)],
                vec![kw("inplace", boolean(true))],
            ),
            "functional-hardtanh-f32-cpu-rank1-2 -> f32-cpu-2d",
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
            method(t2(), "erf", vec![], vec![]),
            "unary-erf-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call("torch.erf", vec![t1()], vec![]),
            "unary-erf-f32-cpu-rank1-2 -> f32-cpu-1d",
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
        (
            call(
                &f("gelu"),
                vec![t2()],
                vec![kw("approximate", string("tanh"))],
            ),
            "functional-gelu-tanh-f32-cpu-rank1-2 -> f32-cpu-2d",
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
        // `h op= v` on a tensor nothing else refers to: the operator's rules.
        (
            binop("+=", private(t2()), t2()),
            "tensor-add-f32-cpu-same-rank -> f32-cpu-2d",
        ),
        (
            binop("-=", private(t2()), t1()),
            "tensor-sub-f32-cpu-2d-1d-broadcast -> f32-cpu-2d",
        ),
        (
            binop("*=", private(t1()), flt(0.5)),
            "tensor-mul-scalar-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        (
            binop("/=", private(t2()), t2()),
            "tensor-div-f32-cpu-same-rank -> f32-cpu-2d",
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
        // every remaining activation, unary and elementwise rule once more
        (
            method(t2(), "relu", vec![], vec![]),
            "tensor-relu-f32-cpu-2d -> f32-cpu-2d",
        ),
        (
            method(t1(), "sigmoid", vec![], vec![]),
            "tensor-sigmoid-f32-cpu-1d -> f32-cpu-1d",
        ),
        (
            call("torch.sigmoid", vec![t2()], vec![]),
            "function-sigmoid-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            method(t1(), "tanh", vec![], vec![]),
            "tensor-tanh-f32-cpu-1d -> f32-cpu-1d",
        ),
        (
            method(t2(), "abs", vec![], vec![]),
            "unary-abs-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call("torch.neg", vec![t1()], vec![]),
            "unary-neg-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        // `-t`, offered by the host as operator.neg(t)
        (
            call("operator.neg", vec![t2()], vec![]),
            "unary-neg-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call("operator.neg", vec![t1()], vec![]),
            "unary-neg-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        (
            method(t2(), "log", vec![], vec![]),
            "unary-log-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call("torch.add", vec![t2(), t1()], vec![]),
            "function-add-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            binop("-", t2(), t2()),
            "tensor-sub-f32-cpu-same-rank -> f32-cpu-2d",
        ),
        (
            binop("*", t1(), t2()),
            "tensor-mul-f32-cpu-2d-1d-broadcast -> f32-cpu-2d",
        ),
        (
            call("torch.mul", vec![t1(), t1()], vec![]),
            "function-mul-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        (
            binop("/", t2(), t2()),
            "tensor-div-f32-cpu-same-rank -> f32-cpu-2d",
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
        // negative and keyword dims, normalised statically
        (
            method(t2(), "mean", vec![], vec![kw("dim", int(-1))]),
            "mean-static-dim-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        (
            method(
                t2(),
                "sum",
                vec![int(-2)],
                vec![kw("keepdim", boolean(true))],
            ),
            "sum-static-dim-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call("torch.softmax", vec![t2()], vec![kw("dim", int(-1))]),
            "softmax-static-dim-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call(&f("softmax"), vec![t1(), int(-1)], vec![]),
            "functional-softmax-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        (
            call("torch.argmax", vec![t2()], vec![kw("dim", int(-1))]),
            "argmax-static-dim-i64-cpu-rank1 -> i64-cpu-1d",
        ),
        (
            method(
                t1(),
                "argmax",
                vec![int(-1)],
                vec![kw("keepdim", boolean(true))],
            ),
            "argmax-static-dim-i64-cpu-rank1 -> i64-cpu-1d",
        ),
        // amax / amin / max(dim)
        (
            method(t2(), "amax", vec![int(-1)], vec![]),
            "amax-static-dim-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        (
            call(
                "torch.amin",
                vec![t2(), int(0)],
                vec![kw("keepdim", boolean(true))],
            ),
            "amin-static-dim-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            method(t2(), "max", vec![], vec![kw("dim", int(1))]),
            "max-dim-values-indices-f32-i64-cpu-rank1 -> tuple[f32-cpu-1d, i64-cpu-1d]",
        ),
        (
            call("torch.max", vec![t2(), int(-1)], vec![]),
            "max-dim-values-indices-f32-i64-cpu-rank1 -> tuple[f32-cpu-1d, i64-cpu-1d]",
        ),
        (
            method(
                t1(),
                "max",
                vec![int(0)],
                vec![kw("keepdim", boolean(true))],
            ),
            "max-dim-values-indices-f32-i64-cpu-rank1 -> tuple[f32-cpu-1d, i64-cpu-1d]",
        ),
        // log_softmax
        (
            method(t2(), "log_softmax", vec![], vec![kw("dim", int(-1))]),
            "log-softmax-static-dim-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call(
                &f("log_softmax"),
                vec![t1(), int(0)],
                vec![kw("dtype", none())],
            ),
            "log-softmax-static-dim-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        (
            call("torch.log_softmax", vec![t2(), int(1)], vec![]),
            "log-softmax-static-dim-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        // parameterised activations
        (
            call(&f("silu"), vec![t2()], vec![]),
            "functional-silu-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call(&f("silu"), vec![t1()], vec![kw("inplace", boolean(false))]),
            "functional-silu-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        (
            call(&f("leaky_relu"), vec![t2()], vec![]),
            "functional-leaky-relu-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call(&f("leaky_relu"), vec![t2(), flt(0.01)], vec![]),
            "functional-leaky-relu-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call(&f("leaky_relu"), vec![t1(), flt(0.2)], vec![]),
            "functional-leaky-relu-slope-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        (
            call(
                &f("leaky_relu"),
                vec![t2()],
                vec![kw("negative_slope", fparam())],
            ),
            "functional-leaky-relu-slope-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call(&f("elu"), vec![t2()], vec![]),
            "functional-elu-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call(&f("elu"), vec![t1()], vec![kw("alpha", flt(1.0))]),
            "functional-elu-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        (
            call(&f("softplus"), vec![t2()], vec![]),
            "functional-softplus-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call(
                &f("softplus"),
                vec![t2()],
                vec![kw("beta", int(1)), kw("threshold", flt(20.0))],
            ),
            "functional-softplus-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call(&f("elu"), vec![t2(), flt(0.5)], vec![]),
            "functional-elu-alpha-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call(&f("elu"), vec![t1()], vec![kw("alpha", fparam())]),
            "functional-elu-alpha-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        (
            call(&f("softplus"), vec![t2()], vec![kw("beta", flt(2.0))]),
            "functional-softplus-params-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call(&f("softplus"), vec![t2(), int(1), int(10)], vec![]),
            "functional-softplus-params-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call(&f("hardtanh"), vec![t2()], vec![]),
            "functional-hardtanh-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        // dropout: defaults, literal and value `p`, literal and value `training`.
        (
            call(&f("dropout"), vec![t2()], vec![]),
            "functional-dropout-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call(
                &f("dropout"),
                vec![t1(), flt(0.1)],
                vec![
                    kw("training", Operand::typed(ValueType::Bool)),
                    kw("inplace", boolean(false)),
                ],
            ),
            "functional-dropout-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        (
            call(&f("dropout"), vec![t2(), fparam(), boolean(false)], vec![]),
            "functional-dropout-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call(&f("dropout"), vec![t2()], vec![kw("p", int(1))]),
            "functional-dropout-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call(&f("hardtanh"), vec![t1(), flt(-2.5), int(3)], vec![]),
            "functional-hardtanh-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        (
            call(
                &f("hardtanh"),
                vec![t2()],
                vec![kw("max_val", flt(0.0)), kw("inplace", boolean(false))],
            ),
            "functional-hardtanh-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call(&f("relu6"), vec![t1()], vec![]),
            "functional-relu6-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        (
            call(&f("relu6"), vec![t2(), boolean(false)], vec![]),
            "functional-relu6-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        // layer_norm over the last dim
        (
            call(
                &f("layer_norm"),
                vec![t2(), tuple_int(), t1(), t1()],
                vec![kw("eps", flt(1e-5))],
            ),
            "functional-layer-norm-last-dim-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call(&f("layer_norm"), vec![t2(), tuple_int()], vec![]),
            "functional-layer-norm-last-dim-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        // batch_norm in eval mode
        (
            call(&f("batch_norm"), vec![t2(), t1(), t1()], vec![]),
            "functional-batch-norm-eval-f32-cpu-2d -> f32-cpu-2d",
        ),
        (
            call(
                &f("batch_norm"),
                vec![t2(), t1(), t1(), t1(), none()],
                vec![kw("training", boolean(false)), kw("eps", flt(1e-3))],
            ),
            "functional-batch-norm-eval-f32-cpu-2d -> f32-cpu-2d",
        ),
        (
            call(
                &f("layer_norm"),
                vec![t1()],
                vec![
                    kw("normalized_shape", tuple_int()),
                    kw("weight", none()),
                    kw("bias", t1()),
                    kw("eps", fparam()),
                ],
            ),
            "functional-layer-norm-last-dim-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        // clamp family
        (
            call(
                "torch.clamp",
                vec![t2()],
                vec![kw("min", flt(0.0)), kw("max", int(6))],
            ),
            "clamp-scalar-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call("torch.clamp", vec![t1(), fparam(), fparam()], vec![]),
            "clamp-scalar-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        (
            method(t2(), "clamp", vec![], vec![kw("max", flt(1.0))]),
            "clamp-scalar-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            method(t2(), "clamp", vec![none(), iparam()], vec![]),
            "clamp-scalar-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call("torch.clip", vec![t2(), flt(-1.0)], vec![]),
            "clamp-scalar-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call("torch.clamp_min", vec![t2(), flt(0.0)], vec![]),
            "clamp-min-scalar-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            method(t1(), "clamp_max", vec![iparam()], vec![]),
            "clamp-max-scalar-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        // maximum / minimum
        (
            call("torch.maximum", vec![t2(), t1()], vec![]),
            "function-maximum-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            method(t1(), "minimum", vec![t1()], vec![]),
            "function-minimum-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        // *_like
        (
            call("torch.zeros_like", vec![t2()], vec![]),
            "zeros-like-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call("torch.ones_like", vec![t1()], vec![]),
            "ones-like-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        (
            call("torch.full_like", vec![t2(), fparam()], vec![]),
            "full-like-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        // comparisons
        (
            compare(">", t2(), t2()),
            "compare-gt-same-rank-f32-cpu-bool -> bool-cpu-2d",
        ),
        (
            compare("<=", t1(), t2()),
            "compare-le-2d-1d-broadcast-f32-cpu-bool -> bool-cpu-2d",
        ),
        (
            compare("==", t1(), iparam()),
            "compare-eq-scalar-f32-cpu-bool -> bool-cpu-1d",
        ),
        (
            compare("<", flt(0.5), t2()),
            "compare-lt-scalar-f32-cpu-bool -> bool-cpu-2d",
        ),
        (
            compare("!=", t2(), flt(0.0)),
            "compare-ne-scalar-f32-cpu-bool -> bool-cpu-2d",
        ),
        (
            compare(">=", int(1), t1()),
            "compare-ge-scalar-f32-cpu-bool -> bool-cpu-1d",
        ),
        // every remaining comparison rule once more
        (
            compare(">", t2(), t1()),
            "compare-gt-2d-1d-broadcast-f32-cpu-bool -> bool-cpu-2d",
        ),
        (
            compare(">", t1(), flt(0.0)),
            "compare-gt-scalar-f32-cpu-bool -> bool-cpu-1d",
        ),
        (
            compare("<", t1(), t1()),
            "compare-lt-same-rank-f32-cpu-bool -> bool-cpu-1d",
        ),
        (
            compare("<", t2(), t1()),
            "compare-lt-2d-1d-broadcast-f32-cpu-bool -> bool-cpu-2d",
        ),
        (
            compare(">=", t2(), t2()),
            "compare-ge-same-rank-f32-cpu-bool -> bool-cpu-2d",
        ),
        (
            compare(">=", t1(), t2()),
            "compare-ge-2d-1d-broadcast-f32-cpu-bool -> bool-cpu-2d",
        ),
        (
            compare("<=", t2(), t2()),
            "compare-le-same-rank-f32-cpu-bool -> bool-cpu-2d",
        ),
        (
            compare("<=", t2(), int(3)),
            "compare-le-scalar-f32-cpu-bool -> bool-cpu-2d",
        ),
        (
            compare("==", t2(), t2()),
            "compare-eq-same-rank-f32-cpu-bool -> bool-cpu-2d",
        ),
        (
            compare("==", t2(), t1()),
            "compare-eq-2d-1d-broadcast-f32-cpu-bool -> bool-cpu-2d",
        ),
        (
            compare("!=", t1(), t1()),
            "compare-ne-same-rank-f32-cpu-bool -> bool-cpu-1d",
        ),
        (
            compare("!=", t1(), t2()),
            "compare-ne-2d-1d-broadcast-f32-cpu-bool -> bool-cpu-2d",
        ),
        // where
        (
            call("torch.where", vec![b2(), t2(), t1()], vec![]),
            "where-bool-tensors-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call("torch.where", vec![b1(), t1(), flt(0.0)], vec![]),
            "where-bool-tensor-scalar-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        (
            call("torch.where", vec![b1(), int(0), t2()], vec![]),
            "where-bool-tensor-scalar-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call("torch.where", vec![b2(), flt(1.0), int(0)], vec![]),
            "where-bool-scalars-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        // views, materialised
        (
            method(t2(), "t", vec![], vec![]),
            "tensor-t-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call("torch.t", vec![t1()], vec![]),
            "tensor-t-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        (
            attr(t2(), "T"),
            "tensor-attribute-t-f32-cpu-2d -> f32-cpu-2d",
        ),
        (
            method(t2(), "transpose", vec![int(0), int(1)], vec![]),
            "tensor-transpose-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            method(t2(), "transpose", vec![int(-1), int(-2)], vec![]),
            "tensor-transpose-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call(
                "torch.transpose",
                vec![t2()],
                vec![kw("dim0", int(1)), kw("dim1", int(0))],
            ),
            "tensor-transpose-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            method(t1(), "unsqueeze", vec![int(0)], vec![]),
            "tensor-unsqueeze-f32-cpu-1d-to-2d -> f32-cpu-2d",
        ),
        (
            method(t1(), "unsqueeze", vec![], vec![kw("dim", int(-1))]),
            "tensor-unsqueeze-f32-cpu-1d-to-2d -> f32-cpu-2d",
        ),
        (
            call("torch.unsqueeze", vec![t1(), int(1)], vec![]),
            "tensor-unsqueeze-f32-cpu-1d-to-2d -> f32-cpu-2d",
        ),
        (
            method(t2(), "flatten", vec![], vec![]),
            "tensor-flatten-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        (
            method(t2(), "flatten", vec![int(1)], vec![]),
            "tensor-flatten-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call("torch.flatten", vec![t2()], vec![kw("start_dim", int(-1))]),
            "tensor-flatten-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            call("torch.flatten", vec![t2(), int(0), int(0)], vec![]),
            "tensor-flatten-f32-cpu-rank1-2 -> f32-cpu-2d",
        ),
        (
            method(t1(), "flatten", vec![], vec![kw("end_dim", int(0))]),
            "tensor-flatten-f32-cpu-rank1-2 -> f32-cpu-1d",
        ),
        // shape queries as exact ints
        (
            method(t2(), "size", vec![int(-1)], vec![]),
            "tensor-size-dim-int -> int",
        ),
        (
            method(b1(), "size", vec![], vec![kw("dim", int(0))]),
            "tensor-size-dim-int -> int",
        ),
        (
            method(t2(), "size", vec![], vec![]),
            "tensor-size-tuple-int -> tuple[int, int]",
        ),
        (
            method(l64(), "dim", vec![], vec![]),
            "tensor-dim-int -> int",
        ),
        (
            method(t2(), "ndimension", vec![], vec![]),
            "tensor-dim-int -> int",
        ),
        (
            method(t1(), "numel", vec![], vec![]),
            "tensor-numel-int -> int",
        ),
        (attr(t2(), "ndim"), "tensor-attribute-ndim-int -> int"),
        (
            attr(t2(), "shape"),
            "tensor-attribute-shape-tuple-int -> tuple[int, int]",
        ),
        (
            attr(t1(), "shape"),
            "tensor-attribute-shape-tuple-int -> tuple[int]",
        ),
        (
            call("builtins.len", vec![t2()], vec![]),
            "builtin-len-tensor-int -> int",
        ),
        (
            call("builtins.len", vec![b1()], vec![]),
            "builtin-len-tensor-int -> int",
        ),
        // cat / concat of rank-2 tensors
        (
            call("torch.cat", vec![seq(&[F32_CPU_2D, F32_CPU_2D])], vec![]),
            "cat-static-dim-f32-cpu-2d -> f32-cpu-2d",
        ),
        (
            call("torch.cat", vec![seq(&[F32_CPU_2D]), int(1)], vec![]),
            "cat-static-dim-f32-cpu-2d -> f32-cpu-2d",
        ),
        (
            call(
                "torch.cat",
                vec![seq(&[F32_CPU_2D, F32_CPU_2D, F32_CPU_2D])],
                vec![kw("dim", int(-1))],
            ),
            "cat-static-dim-f32-cpu-2d -> f32-cpu-2d",
        ),
        (
            call(
                "torch.concat",
                vec![],
                vec![kw("tensors", seq(&[F32_CPU_2D; 16])), kw("dim", int(-2))],
            ),
            "cat-static-dim-f32-cpu-2d -> f32-cpu-2d",
        ),
    ]
}

#[test]
fn accepted_forms() {
    let bad = mismatches(crate::PLUGIN_ID, claim, accepted());
    assert!(bad.is_empty(), "{bad:#?}");
}

/// The documented "rejected / not covered" forms, with the code or outcome each gets.
fn rejected() -> Vec<(ClaimSite, &'static str)> {
    let f = |s: &str| format!("torch.nn.functional.{s}");
    vec![
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
        // dropout: p out of [0, 1] (eager raises), an int parameter, a non-bool training,
        // in place (even on a private input).
        (
            call(&f("dropout"), vec![t2(), flt(1.5)], vec![]),
            "RXTP-TORCH-024",
        ),
        (
            call(&f("dropout"), vec![t2(), iparam()], vec![]),
            "RXTP-TORCH-024",
        ),
        (
            call(&f("dropout"), vec![t2()], vec![kw("training", int(1))]),
            "RXTP-TORCH-024",
        ),
        (
            call(
                &f("dropout"),
                vec![private(t2())],
                vec![kw("inplace", boolean(true))],
            ),
            "RXTP-TORCH-004",
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
        // Private or not, a non-literal `inplace` is refused.
        (
            call(
                &f("relu"),
                vec![private(t2())],
                vec![kw("inplace", Operand::typed(ValueType::Bool))],
            ),
            "RXTP-TORCH-004",
        ),
        // In place needs the input private, not another operand.
        (
            call(
                &f("hardtanh"),
                vec![t2(), flt(0.0), flt(6.0)],
                vec![kw("inplace", private(boolean(true)))],
            ),
            "RXTP-TORCH-004",
        ),
        // `h op= v` writes `h` in eager: only a tensor the function made that nothing else
        // refers to, never grown to another rank, and only the arithmetic operators.
        (binop("+=", t2(), t2()), "RXTP-TORCH-004"),
        (binop("*=", t2(), flt(2.0)), "RXTP-TORCH-004"),
        (binop("+=", private(t1()), t2()), "RXTP-TORCH-007"),
        (binop("@=", private(t2()), t2()), "RXTP-TORCH-010"),
        (binop("**=", private(t2()), flt(2.0)), "RXTP-TORCH-010"),
        (method(l64(), "relu", vec![], vec![]), "RXTP-TORCH-015"),
        (call("torch.exp", vec![flt(1.0)], vec![]), "RXTP-TORCH-010"),
        (call("operator.neg", vec![l64()], vec![]), "RXTP-TORCH-015"),
        (
            call("torch.erf", vec![t2(), t2()], vec![]),
            "RXTP-TORCH-003",
        ),
        (method(t2(), "erf", vec![int(1)], vec![]), "RXTP-TORCH-003"),
        (method(l64(), "erf", vec![], vec![]), "RXTP-TORCH-015"),
        (method(t2(), "relu_", vec![], vec![]), "RXTP-TORCH-010"),
        (
            method(t2(), "view", vec![int(16)], vec![]),
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
                vec![kw("approximate", string("sigmoid"))],
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
        (method(t2(), "sum", vec![int(-3)], vec![]), "RXTP-TORCH-009"),
        (
            method(
                t1(),
                "mean",
                vec![int(1)],
                vec![kw("keepdim", boolean(true))],
            ),
            "RXTP-TORCH-009",
        ),
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
        // negative dims out of range
        (
            method(t2(), "softmax", vec![int(-3)], vec![]),
            "RXTP-TORCH-013",
        ),
        (
            method(
                t1(),
                "argmax",
                vec![int(-2)],
                vec![kw("keepdim", boolean(true))],
            ),
            "RXTP-TORCH-014",
        ),
        // amax / max(dim)
        (method(t2(), "amax", vec![], vec![]), "RXTP-TORCH-008"),
        (method(t2(), "amin", vec![int(2)], vec![]), "RXTP-TORCH-009"),
        (method(t2(), "max", vec![], vec![]), "RXTP-TORCH-025"),
        (method(t2(), "max", vec![t2()], vec![]), "RXTP-TORCH-025"),
        (
            call("torch.max", vec![t2(), t2()], vec![]),
            "RXTP-TORCH-025",
        ),
        (
            method(
                t2(),
                "max",
                vec![int(1)],
                vec![kw("keepdim", boolean(true))],
            ),
            "RXTP-TORCH-025",
        ),
        (method(t1(), "max", vec![int(0)], vec![]), "RXTP-TORCH-025"),
        (method(t2(), "max", vec![int(2)], vec![]), "RXTP-TORCH-025"),
        (
            method(t2(), "max", vec![iparam()], vec![]),
            "RXTP-TORCH-025",
        ),
        // log_softmax
        (
            method(t2(), "log_softmax", vec![], vec![]),
            "RXTP-TORCH-013",
        ),
        (
            call(&f("log_softmax"), vec![t2(), int(2)], vec![]),
            "RXTP-TORCH-013",
        ),
        // parameterised activations
        (
            call(&f("silu"), vec![t2()], vec![kw("inplace", boolean(true))]),
            "RXTP-TORCH-004",
        ),
        (
            call(&f("leaky_relu"), vec![t2(), boolean(true)], vec![]),
            "RXTP-TORCH-024",
        ),
        (
            call(
                &f("leaky_relu"),
                vec![t2(), flt(0.1), boolean(true)],
                vec![],
            ),
            "RXTP-TORCH-004",
        ),
        // Parameters in int parameters, or int literals past 2^24 (where float and int
        // conversions could round apart), stay on Python.
        (
            call(&f("elu"), vec![t2(), iparam()], vec![]),
            "RXTP-TORCH-024",
        ),
        (
            call(&f("elu"), vec![t2()], vec![kw("alpha", int(1 << 25))]),
            "RXTP-TORCH-024",
        ),
        (
            call(&f("softplus"), vec![t2()], vec![kw("beta", iparam())]),
            "RXTP-TORCH-024",
        ),
        (
            call(&f("silu"), vec![], vec![kw("input", t2())]),
            "RXTP-TORCH-024",
        ),
        (call(&f("silu"), vec![l64()], vec![]), "RXTP-TORCH-015"),
        // hardtanh: bounds must be number literals in order (eager raises on min_val > max_val)
        (
            call(&f("hardtanh"), vec![t2(), fparam()], vec![]),
            "RXTP-TORCH-024",
        ),
        (
            call(&f("hardtanh"), vec![t2()], vec![kw("min_val", flt(2.0))]),
            "RXTP-TORCH-024",
        ),
        (
            call(&f("hardtanh"), vec![t2(), int(1), int(0)], vec![]),
            "RXTP-TORCH-024",
        ),
        (
            call(&f("hardtanh"), vec![t2(), boolean(false)], vec![]),
            "RXTP-TORCH-024",
        ),
        (
            call(&f("hardtanh"), vec![t2(), int(1 << 40)], vec![]),
            "RXTP-TORCH-024",
        ),
        (
            call(&f("relu6"), vec![t2()], vec![kw("inplace", boolean(true))]),
            "RXTP-TORCH-004",
        ),
        (
            call(
                &f("hardtanh"),
                vec![t2(), flt(-1.0), flt(1.0), boolean(true)],
                vec![],
            ),
            "RXTP-TORCH-004",
        ),
        (call(&f("relu6"), vec![l64()], vec![]), "RXTP-TORCH-015"),
        // layer_norm
        (
            call(&f("layer_norm"), vec![t2(), int(4)], vec![]),
            "RXTP-TORCH-018",
        ),
        (
            call(
                &f("layer_norm"),
                vec![
                    t2(),
                    Operand::typed(ValueType::Tuple(vec![ValueType::Int, ValueType::Int])),
                ],
                vec![],
            ),
            "RXTP-TORCH-018",
        ),
        (
            call(&f("layer_norm"), vec![t2(), tuple_int(), t2()], vec![]),
            "RXTP-TORCH-018",
        ),
        (
            call(
                &f("layer_norm"),
                vec![t2(), tuple_int()],
                vec![kw("eps", int(0))],
            ),
            "RXTP-TORCH-018",
        ),
        (call(&f("layer_norm"), vec![t2()], vec![]), "RXTP-TORCH-018"),
        // batch_norm: training updates the statistics; rank 1; missing statistics
        (
            call(
                &f("batch_norm"),
                vec![t2(), t1(), t1()],
                vec![kw("training", boolean(true))],
            ),
            "RXTP-TORCH-032",
        ),
        (
            call(
                &f("batch_norm"),
                vec![t2(), t1(), t1()],
                vec![kw("training", Operand::typed(ValueType::Bool))],
            ),
            "RXTP-TORCH-032",
        ),
        (
            call(&f("batch_norm"), vec![t1(), t1(), t1()], vec![]),
            "RXTP-TORCH-032",
        ),
        (
            call(&f("batch_norm"), vec![t2(), none(), none()], vec![]),
            "RXTP-TORCH-032",
        ),
        (
            call(&f("layer_norm"), vec![b2(), tuple_int()], vec![]),
            "RXTP-TORCH-010",
        ),
        // clamp
        (call("torch.clamp", vec![t2()], vec![]), "RXTP-TORCH-017"),
        (
            call("torch.clamp", vec![t2(), none(), none()], vec![]),
            "RXTP-TORCH-017",
        ),
        (
            call("torch.clamp", vec![t2(), t2()], vec![]),
            "RXTP-TORCH-017",
        ),
        (
            method(t2(), "clamp", vec![boolean(true)], vec![]),
            "RXTP-TORCH-017",
        ),
        (
            method(t2(), "clamp", vec![], vec![kw("out", t2())]),
            "RXTP-TORCH-017",
        ),
        (
            call("torch.clamp_min", vec![t2()], vec![kw("max", flt(1.0))]),
            "RXTP-TORCH-017",
        ),
        (
            method(t2(), "clamp_", vec![flt(0.0)], vec![]),
            "RXTP-TORCH-010",
        ),
        // maximum / minimum
        (
            call("torch.maximum", vec![t2(), flt(0.0)], vec![]),
            "RXTP-TORCH-012",
        ),
        (
            call("torch.minimum", vec![t2(), t2()], vec![kw("out", t2())]),
            "RXTP-TORCH-012",
        ),
        (
            call("torch.maximum", vec![t2(), l64()], vec![]),
            "RXTP-TORCH-015",
        ),
        (
            call("torch.maximum", vec![t2(), b2()], vec![]),
            "RXTP-TORCH-007",
        ),
        // *_like
        (
            call("torch.zeros_like", vec![t2()], vec![kw("dtype", none())]),
            "RXTP-TORCH-023",
        ),
        (
            call("torch.full_like", vec![t2()], vec![]),
            "RXTP-TORCH-023",
        ),
        (
            call("torch.full_like", vec![t2(), boolean(true)], vec![]),
            "RXTP-TORCH-023",
        ),
        (
            call("torch.ones_like", vec![l64()], vec![]),
            "RXTP-TORCH-015",
        ),
        // comparisons
        (compare("<", l64(), l64()), "RXTP-TORCH-021"),
        (compare(">", t2(), boolean(true)), "RXTP-TORCH-021"),
        (compare("==", b1(), b1()), "RXTP-TORCH-021"),
        (compare("<", t2(), Operand::unknown()), "RXTP-TORCH-021"),
        (compare("is", t2(), none()), "RXTP-TORCH-021"),
        (compare("<", iparam(), iparam()), "not-covered"),
        // where
        (call("torch.where", vec![b2()], vec![]), "RXTP-TORCH-022"),
        (
            call("torch.where", vec![t2(), t2(), t2()], vec![]),
            "RXTP-TORCH-022",
        ),
        (
            call("torch.where", vec![b2(), int(1), int(0)], vec![]),
            "RXTP-TORCH-022",
        ),
        (
            call("torch.where", vec![b2(), l64(), t2()], vec![]),
            "RXTP-TORCH-022",
        ),
        (
            call("torch.where", vec![b2(), t2(), t2()], vec![kw("out", t2())]),
            "RXTP-TORCH-022",
        ),
        // views
        (attr(t1(), "T"), "RXTP-TORCH-019"),
        (
            method(t2(), "transpose", vec![int(0), int(2)], vec![]),
            "RXTP-TORCH-019",
        ),
        (
            method(t2(), "transpose", vec![int(0)], vec![]),
            "RXTP-TORCH-019",
        ),
        (
            method(t2(), "transpose", vec![iparam(), int(1)], vec![]),
            "RXTP-TORCH-019",
        ),
        (
            method(t2(), "unsqueeze", vec![int(0)], vec![]),
            "RXTP-TORCH-019",
        ),
        (
            method(t1(), "unsqueeze", vec![int(2)], vec![]),
            "RXTP-TORCH-019",
        ),
        (method(t2(), "t", vec![int(0)], vec![]), "RXTP-TORCH-019"),
        (
            method(t2(), "flatten", vec![int(1), int(0)], vec![]),
            "RXTP-TORCH-019",
        ),
        (
            method(t2(), "flatten", vec![int(2)], vec![]),
            "RXTP-TORCH-019",
        ),
        (
            method(t2(), "flatten", vec![iparam()], vec![]),
            "RXTP-TORCH-019",
        ),
        (
            method(t1(), "flatten", vec![int(1)], vec![]),
            "RXTP-TORCH-019",
        ),
        (
            method(t2(), "squeeze", vec![int(0)], vec![]),
            "RXTP-TORCH-020",
        ),
        (method(t2(), "squeeze", vec![], vec![]), "RXTP-TORCH-020"),
        (
            call("torch.squeeze", vec![t1(), int(0)], vec![]),
            "RXTP-TORCH-020",
        ),
        (attr(t2(), "dtype"), "RXTP-TORCH-010"),
        (attr(Operand::typed(ValueType::Int), "real"), "not-covered"),
        // shape queries
        (method(t2(), "size", vec![int(2)], vec![]), "RXTP-TORCH-026"),
        (
            method(t2(), "size", vec![iparam()], vec![]),
            "RXTP-TORCH-026",
        ),
        (
            method(t2(), "size", vec![int(0), int(1)], vec![]),
            "RXTP-TORCH-026",
        ),
        (method(t2(), "dim", vec![int(0)], vec![]), "RXTP-TORCH-026"),
        (
            method(t2(), "numel", vec![], vec![kw("x", int(0))]),
            "RXTP-TORCH-026",
        ),
        (call("builtins.len", vec![iparam()], vec![]), "not-covered"),
        // cat: the sequence
        (call("torch.cat", vec![t2()], vec![]), "RXTP-TORCH-029"),
        (
            call("torch.cat", vec![Operand::unknown()], vec![]),
            "RXTP-TORCH-029",
        ),
        (call("torch.cat", vec![seq(&[])], vec![]), "RXTP-TORCH-029"),
        (
            call("torch.cat", vec![seq(&[F32_CPU_2D, F32_CPU_1D])], vec![]),
            "RXTP-TORCH-029",
        ),
        (
            call("torch.cat", vec![seq(&[F32_CPU_1D, F32_CPU_1D])], vec![]),
            "RXTP-TORCH-029",
        ),
        (
            call("torch.cat", vec![seq(&[F32_CPU_2D, BOOL_CPU_2D])], vec![]),
            "RXTP-TORCH-029",
        ),
        (
            call("torch.cat", vec![seq(&[I64_CPU_1D])], vec![]),
            "RXTP-TORCH-029",
        ),
        (
            call("torch.cat", vec![seq(&[F32_CPU_2D, "float"])], vec![]),
            "RXTP-TORCH-029",
        ),
        (
            call("torch.cat", vec![tuple_int()], vec![]),
            "RXTP-TORCH-029",
        ),
        (
            call("torch.cat", vec![seq(&[F32_CPU_2D; 17])], vec![]),
            "RXTP-TORCH-029",
        ),
        (
            call(
                "torch.cat",
                vec![Operand::typed(ValueType::Tuple(vec![ValueType::Tuple(
                    vec![ValueType::Plugin(rextio_plugin_api::TypeKey::new(
                        F32_CPU_2D,
                    ))],
                )]))],
                vec![],
            ),
            "RXTP-TORCH-029",
        ),
        // cat: dim and keywords
        (
            call("torch.cat", vec![seq(&[F32_CPU_2D; 2]), int(2)], vec![]),
            "RXTP-TORCH-030",
        ),
        (
            call(
                "torch.cat",
                vec![seq(&[F32_CPU_2D; 2])],
                vec![kw("dim", int(-3))],
            ),
            "RXTP-TORCH-030",
        ),
        (
            call("torch.cat", vec![seq(&[F32_CPU_2D; 2]), iparam()], vec![]),
            "RXTP-TORCH-030",
        ),
        (
            call(
                "torch.cat",
                vec![seq(&[F32_CPU_2D; 2])],
                vec![kw("dim", string("rows"))],
            ),
            "RXTP-TORCH-030",
        ),
        (
            call(
                "torch.cat",
                vec![seq(&[F32_CPU_2D; 2]), int(0)],
                vec![kw("dim", int(0))],
            ),
            "RXTP-TORCH-030",
        ),
        (
            call(
                "torch.cat",
                vec![seq(&[F32_CPU_2D; 2])],
                vec![kw("out", t2())],
            ),
            "RXTP-TORCH-030",
        ),
        (
            call(
                "torch.cat",
                vec![seq(&[F32_CPU_2D; 2]), int(0), t2()],
                vec![],
            ),
            "RXTP-TORCH-030",
        ),
        (call("torch.cat", vec![], vec![]), "RXTP-TORCH-030"),
        (
            call("torch.concat", vec![], vec![kw("dim", int(0))]),
            "RXTP-TORCH-030",
        ),
        (
            call("torch.concatenate", vec![seq(&[F32_CPU_2D])], vec![]),
            "not-covered",
        ),
        // layer_norm takes a one-element list as the host offers it (a tuple type).
        (
            call(
                "torch.nn.functional.layer_norm",
                vec![t2(), seq(&["int", "int"])],
                vec![],
            ),
            "RXTP-TORCH-018",
        ),
        (
            call("builtins.len", vec![t2(), t2()], vec![]),
            "not-covered",
        ),
    ]
}

#[test]
fn rejected_and_uncovered_forms() {
    let bad = mismatches(crate::PLUGIN_ID, claim, rejected());
    assert!(bad.is_empty(), "{bad:#?}");
}

mod purity {
    use super::*;
    use proptest::prelude::*;

    fn operand() -> impl Strategy<Value = Operand> {
        prop_oneof![
            Just(t1()),
            Just(t2()),
            Just(l64()),
            Just(b1()),
            Just(b2()),
            Just(tuple_int()),
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
            kind in prop_oneof![Just(SiteKind::Call), Just(SiteKind::MethodCall), Just(SiteKind::BinOp), Just(SiteKind::Compare), Just(SiteKind::Attribute)],
            target in prop_oneof![
                Just("torch.nn.functional.linear"), Just("torch.matmul"), Just("torch.softmax"), Just("torch.argmax"),
                Just("torch.sum"), Just("relu"), Just("mean"), Just("argmax"), Just("softmax"), Just("+"), Just("@"), Just("/"),
                Just("torch.where"), Just("torch.clamp"), Just("clamp"), Just("torch.nn.functional.layer_norm"), Just("max"),
                Just("transpose"), Just("unsqueeze"), Just("size"), Just("shape"), Just("T"), Just("builtins.len"), Just("<"), Just("=="),
                Just("torch.nn.functional.leaky_relu"), Just("torch.full_like"), Just("amax"),
            ],
            recv in proptest::option::of(operand()),
            args in proptest::collection::vec(operand(), 0..4),
            kws in proptest::collection::vec((prop_oneof![Just("dim"), Just("keepdim"), Just("bias"), Just("out")], operand()), 0..3),
        ) {
            let site = ClaimSite { kind, target: target.to_string(), receiver: recv, args, keywords: kws.into_iter().map(|(n, v)| kw(n, v)).collect() };
            let first = claim(&site);
            prop_assert_eq!(&first, &claim(&site.clone()));
            if let ClaimOutcome::Claimed { result_type, .. } = first {
                let known = |t: &ValueType| match t {
                    ValueType::Plugin(k) => [F32_CPU_1D, F32_CPU_2D, I64_CPU_1D, BOOL_CPU_1D, BOOL_CPU_2D].contains(&k.as_str()),
                    ValueType::Int => true,
                    _ => false,
                };
                let ok = match &result_type {
                    ValueType::Tuple(items) => !items.is_empty() && items.iter().all(known),
                    other => known(other),
                };
                prop_assert!(ok, "{result_type:?}");
            }
        }
    }
}

fn c1() -> Operand {
    Operand::plugin(crate::types::F32_CUDA0_1D)
}
fn c2() -> Operand {
    Operand::plugin(crate::types::F32_CUDA0_2D)
}

/// The CUDA lane: exactly its four forms (shared with the lowering tests).
pub(crate) fn cuda_accepted() -> Vec<(ClaimSite, &'static str)> {
    vec![
        (
            binop("@", c2(), c2()),
            "cuda0-tensor-matmul-f32-2d -> f32-cuda0-2d",
        ),
        (
            binop("+", c2(), c1()),
            "cuda0-tensor-add-bias-f32-2d-1d -> f32-cuda0-2d",
        ),
        (
            method(c2(), "relu", vec![], vec![]),
            "cuda0-tensor-relu-f32-2d -> f32-cuda0-2d",
        ),
        (
            method(c2(), "mean", vec![], vec![kw("dim", int(1))]),
            "cuda0-tensor-mean-dim1-f32-2d -> f32-cuda0-1d",
        ),
    ]
}

#[test]
fn the_cuda_slice_claims_exactly_its_chain() {
    let bad = mismatches(crate::PLUGIN_ID, claim, cuda_accepted());
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn everything_else_on_cuda_is_rejected_never_claimed_as_cpu() {
    let f = |s: &str| format!("torch.nn.functional.{s}");
    let table: Vec<(ClaimSite, &str)> = vec![
        // reverse and same-rank addition, scalars, other operators
        (binop("+", c1(), c2()), "RXTP-TORCH-027"),
        (binop("+", c2(), c2()), "RXTP-TORCH-027"),
        (binop("+", c1(), c1()), "RXTP-TORCH-027"),
        (binop("+", c2(), flt(1.0)), "RXTP-TORCH-027"),
        (binop("-", c2(), c1()), "RXTP-TORCH-027"),
        (binop("*", c2(), c2()), "RXTP-TORCH-027"),
        // mixed-rank matmul
        (binop("@", c2(), c1()), "RXTP-TORCH-027"),
        (binop("@", c1(), c2()), "RXTP-TORCH-027"),
        // functional spellings
        (
            call("torch.matmul", vec![c2(), c2()], vec![]),
            "RXTP-TORCH-027",
        ),
        (call(&f("relu"), vec![c2()], vec![]), "RXTP-TORCH-027"),
        (call("torch.relu", vec![c2()], vec![]), "RXTP-TORCH-027"),
        (
            call("torch.mean", vec![c2()], vec![kw("dim", int(1))]),
            "RXTP-TORCH-027",
        ),
        (
            call(&f("linear"), vec![c2(), c2(), c1()], vec![]),
            "RXTP-TORCH-027",
        ),
        // method forms outside the slice
        (method(c1(), "relu", vec![], vec![]), "RXTP-TORCH-027"),
        (method(c2(), "relu", vec![int(1)], vec![]), "RXTP-TORCH-027"),
        (method(c2(), "mean", vec![int(1)], vec![]), "RXTP-TORCH-027"),
        (
            method(c2(), "mean", vec![], vec![kw("dim", int(0))]),
            "RXTP-TORCH-027",
        ),
        (
            method(c2(), "mean", vec![], vec![kw("dim", int(-1))]),
            "RXTP-TORCH-027",
        ),
        (
            method(
                c2(),
                "mean",
                vec![],
                vec![kw("dim", int(1)), kw("keepdim", boolean(false))],
            ),
            "RXTP-TORCH-027",
        ),
        (method(c2(), "mean", vec![], vec![]), "RXTP-TORCH-027"),
        (method(c2(), "sigmoid", vec![], vec![]), "RXTP-TORCH-027"),
        (method(c2(), "cpu", vec![], vec![]), "RXTP-TORCH-027"),
        (
            method(c2(), "to", vec![string("cpu")], vec![]),
            "RXTP-TORCH-027",
        ),
        (method(c2(), "size", vec![], vec![]), "RXTP-TORCH-027"),
        (attr(c2(), "shape"), "RXTP-TORCH-027"),
        (call("builtins.len", vec![c2()], vec![]), "RXTP-TORCH-027"),
        (compare(">", c2(), flt(0.0)), "RXTP-TORCH-027"),
        // CPU and CUDA in one site: never a transfer
        (binop("@", c2(), t2()), "RXTP-TORCH-028"),
        (binop("+", c2(), t1()), "RXTP-TORCH-028"),
        (binop("+", t2(), c1()), "RXTP-TORCH-028"),
        (method(t2(), "matmul", vec![c2()], vec![]), "RXTP-TORCH-028"),
        // a list or tuple of cuda:0 tensors is looked into: never a CPU rule
        (
            call(
                "torch.cat",
                vec![seq(&[crate::types::F32_CUDA0_2D; 2])],
                vec![],
            ),
            "RXTP-TORCH-027",
        ),
        (
            call(
                "torch.cat",
                vec![seq(&[crate::types::F32_CUDA0_2D, F32_CPU_2D])],
                vec![],
            ),
            "RXTP-TORCH-028",
        ),
    ];
    let bad = mismatches(crate::PLUGIN_ID, claim, table);
    assert!(bad.is_empty(), "{bad:#?}");
    // `.cuda()` / `.to()` on a CPU tensor (a transfer) stays unclaimed too.
    assert!(outcome(&method(t2(), "cuda", vec![], vec![])).starts_with("rejected "));
}

#[test]
fn the_backend_keeps_every_backend_invariant() {
    use rextio_plugin_api::kit::testing::{backend_invariants, Forms};
    let forms = Forms {
        decorators: vec![("torch.no_grad", true), ("torch.inference_mode", false)],
        platform_reasons: Some("torch"),
        device_lane: Some((
            crate::types::F32_CUDA0.ty(2).unwrap(),
            vec![crate::codes::CUDA_FORM, crate::codes::CUDA_DEVICE_MIX],
        )),
        ..Forms::tables(accepted(), cuda_accepted(), rejected())
    };
    assert!(forms.rejected.len() > 20, "the rejected table's coded rows");
    let violations = backend_invariants(&crate::TorchPlugin::new(), &forms);
    assert!(violations.is_empty(), "{violations:#?}");
}

#[test]
fn the_claim_table_has_no_overlap_and_an_overlapping_row_is_refused_naming_both_rows() {
    use rextio_plugin_api::routes::Route;
    if let Err(e) = super::TABLE.routes() {
        panic!("{e}");
    }
    // A second row for a target the unary table already answers.
    let sqrt = Route::new(
        SiteKind::Call,
        "torch.sqrt",
        "a second sqrt",
        super::activations::plan_function,
    );
    let err = super::TABLE
        .overlap_with(sqrt)
        .expect("a second sqrt overlaps");
    assert_eq!(err.first, "unary table: torch.sqrt");
    assert_eq!(err.second, "a second sqrt");
    assert!(
        err.to_string().contains("`torch.sqrt` at priority 0"),
        "{err}"
    );
    // A second specific mean form at the priority of the first.
    let mean = Route::new(
        SiteKind::MethodCall,
        "mean",
        "another dim=1 mean",
        super::reductions::plan_dim1,
    );
    let err = super::TABLE
        .overlap_with(mean.guarded(1, super::reductions::is_dim1_form))
        .expect("a second dim=1 mean overlaps");
    assert_eq!(err.first, "reduction table: .mean(dim=1, keepdim=False)");
    assert_eq!(err.second, "another dim=1 mean");
}

#[test]
fn coverage_symbols_are_what_the_claim_table_reaches() {
    // Unique, and naming every accepted call form: `backend_invariants`.
    let symbols = super::symbols();
    for u in crate::rules::UNARY_OPS {
        for s in [
            format!("torch.{}", u.name),
            format!("torch.Tensor.{}", u.name),
        ] {
            assert!(symbols.contains(&s), "{s} missing from {symbols:?}");
        }
    }
    for s in [
        "torch.nn.functional.linear",
        "builtins.len",
        "torch.Tensor.T",
        "torch.Tensor.__lt__",
        "torch.Tensor.mean",
    ] {
        assert!(
            symbols.iter().any(|x| x == s),
            "{s} missing from {symbols:?}"
        );
    }
    // Every symbol is a torch name, `len` or unary minus.
    assert!(symbols.iter().any(|s| s == rextio_plugin_api::NEG_TARGET));
    assert!(symbols.iter().all(|s| s.starts_with("torch.")
        || s == "builtins.len"
        || s == rextio_plugin_api::NEG_TARGET));
}

#[test]
fn every_reduction_row_is_claimed_in_each_spelling_with_its_rules() {
    let accepted = |site: ClaimSite, rule: &str, what: &str| match claim(&site) {
        ClaimOutcome::Claimed { rule_id, .. } => assert_eq!(rule_id, rule, "{what}"),
        other => panic!("{what}: {other:?}"),
    };
    for r in crate::rules::REDUCTIONS {
        let n = r.name;
        accepted(
            method(t2(), n, vec![int(0)], vec![]),
            r.rule,
            &format!("t.{n}(0)"),
        );
        accepted(
            method(
                t1(),
                n,
                vec![],
                vec![kw("dim", int(-1)), kw("keepdim", boolean(true))],
            ),
            r.rule,
            &format!("t.{n}(dim=-1, keepdim=True) on rank 1"),
        );
        accepted(
            call(&format!("torch.{n}"), vec![t2(), int(1)], vec![]),
            r.rule,
            &format!("torch.{n}(t, 1)"),
        );
        // The exact dim=1 form keeps its older rule where the row has one.
        accepted(
            method(
                t2(),
                n,
                vec![],
                vec![kw("dim", int(1)), kw("keepdim", boolean(false))],
            ),
            r.dim1_rule.unwrap_or(r.rule),
            &format!("t.{n}(dim=1, keepdim=False)"),
        );
        // Every rule of the row is documented.
        let records = crate::rules::records();
        for id in std::iter::once(r.rule).chain(r.dim1_rule) {
            assert!(records.iter().any(|rec| rec.id == id), "{id} has no record");
        }
        // And the row's runtime entry finds the row back (the fused decision reads it there).
        assert_eq!(crate::rules::ReductionOp::of_entry(r.entry), Some(r));
    }
}

#[test]
fn every_classification_row_is_claimed_in_each_spelling_with_its_rules() {
    use crate::rules::FunctionalForm;
    let claimed = |site: ClaimSite, what: &str| match claim(&site) {
        ClaimOutcome::Claimed { rule_id, .. } => rule_id,
        other => panic!("{what}: {other:?}"),
    };
    let records = crate::rules::records();
    for r in crate::rules::CLASSIFICATION {
        let n = r.name;
        // Argmax of a rank-2 tensor over dim 0; the others keep the rank.
        let positional = claimed(method(t2(), n, vec![int(0)], vec![]), &format!("t.{n}(0)"));
        assert_eq!(positional, r.general.id, "t.{n}(0)");
        let function = claimed(
            call(&format!("torch.{n}"), vec![t2(), int(-1)], vec![]),
            &format!("torch.{n}(t, -1)"),
        );
        assert_eq!(function, r.general.id, "torch.{n}(t, -1)");
        let dim1 = claimed(
            method(t2(), n, vec![], vec![kw("dim", int(1))]),
            &format!("t.{n}(dim=1)"),
        );
        assert_eq!(dim1, r.dim1.map_or(r.general.id, |d| d.id), "t.{n}(dim=1)");
        let functional = claim(&call(
            &format!("torch.nn.functional.{n}"),
            vec![t2(), int(1)],
            vec![],
        ));
        match (r.functional, functional) {
            (FunctionalForm::Unclaimed, ClaimOutcome::NotCovered) => {}
            (FunctionalForm::General, ClaimOutcome::Claimed { rule_id, .. }) => {
                assert_eq!(rule_id, r.general.id, "F.{n}");
            }
            (FunctionalForm::Own(doc), ClaimOutcome::Claimed { rule_id, .. }) => {
                assert_eq!(rule_id, doc.id, "F.{n}");
            }
            (form, got) => panic!("F.{n}: {form:?} but {got:?}"),
        }
        for doc in r.docs() {
            assert!(
                records.iter().any(|rec| rec.id == doc.id),
                "{} has no record",
                doc.id
            );
        }
    }
}

#[test]
fn every_comparison_row_mirrors_to_a_row_that_mirrors_back() {
    use crate::rules::CompareOp;
    for c in crate::rules::COMPARISONS {
        let m = CompareOp::of(c.mirrored).unwrap_or_else(|| panic!("{}: no mirror", c.op));
        assert_eq!(
            m.mirrored, c.op,
            "{} mirrors to {} and back to {}",
            c.op, m.op, m.mirrored
        );
        // `s op t` is planned as `t mirrored s` through the mirror's scalar entry.
        let site = ClaimSite {
            kind: SiteKind::Compare,
            target: c.op.into(),
            receiver: None,
            args: vec![flt(0.5), t2()],
            keywords: vec![],
        };
        let plan = super::plan(&site).unwrap_or_else(|e| panic!("0.5 {} t: {e:?}", c.op));
        match plan.op {
            super::Op::Call { f, .. } => assert_eq!(f, m.scalar, "0.5 {} t", c.op),
            other => panic!("0.5 {} t: {other:?}", c.op),
        }
    }
}

#[test]
fn every_layout_row_is_claimed_in_both_spellings_or_refused_with_its_code() {
    use crate::rules::Layout;
    let records = crate::rules::records();
    for r in crate::rules::LAYOUT {
        let n = r.name;
        // Literal dims for the row's parameters after `input`, on the rank it takes.
        let (recv, dims) = match r.op {
            Layout::Unsqueeze | Layout::Squeeze => (t1(), vec![int(0)]),
            Layout::T => (t2(), vec![]),
            Layout::Transpose => (t2(), vec![int(0), int(1)]),
            Layout::Flatten => (t2(), vec![int(0), int(1)]),
        };
        let mut args = vec![recv.clone()];
        args.extend(dims.clone());
        let sites = [
            method(recv, n, dims, vec![]),
            call(&format!("torch.{n}"), args, vec![]),
        ];
        for site in sites {
            match (r.rule, claim(&site)) {
                (Some(doc), ClaimOutcome::Claimed { rule_id, .. }) => {
                    assert_eq!(rule_id, doc.id, "{n}: {site:?}");
                    assert!(
                        records.iter().any(|rec| rec.id == doc.id),
                        "{} has no record",
                        doc.id
                    );
                }
                (None, ClaimOutcome::Rejected(d)) => {
                    assert_eq!(d.code, crate::codes::SQUEEZE_RANK, "{n}");
                }
                (rule, got) => panic!("{n}: rule {rule:?} but {got:?} for {site:?}"),
            }
        }
    }
}

#[test]
fn every_query_row_is_claimed_by_each_of_its_spellings() {
    use crate::rules::QuerySite;
    let records = crate::rules::records();
    for q in crate::rules::QUERIES {
        assert!(
            records.iter().any(|rec| rec.id == q.doc.id),
            "{} has no record",
            q.doc.id
        );
        for &s in q.sites {
            // `t.size(1)` for the dim form of size; every other spelling takes no argument.
            let site = match s {
                QuerySite::Method("size") if q.doc.id == crate::rules::SIZE_DIM => {
                    method(t2(), "size", vec![int(1)], vec![])
                }
                QuerySite::Method(m) => method(t2(), m, vec![], vec![]),
                QuerySite::Attribute(a) => ClaimSite {
                    kind: SiteKind::Attribute,
                    target: a.into(),
                    receiver: Some(t2()),
                    args: vec![],
                    keywords: vec![],
                },
                QuerySite::Call(c) => call(c, vec![t2()], vec![]),
            };
            match claim(&site) {
                ClaimOutcome::Claimed { rule_id, .. } => {
                    assert_eq!(rule_id, q.doc.id, "{s:?}");
                }
                other => panic!("{s:?}: {other:?}"),
            }
        }
    }
}

#[test]
fn every_elementwise_table_row_is_claimed_in_its_spellings_with_a_documented_rule() {
    let records = crate::rules::records();
    let claimed = |site: ClaimSite| match claim(&site) {
        ClaimOutcome::Claimed { rule_id, .. } => {
            assert!(
                records.iter().any(|rec| rec.id == rule_id),
                "{rule_id} has no record"
            );
            rule_id
        }
        other => panic!("{site:?}: {other:?}"),
    };
    for c in crate::rules::CLAMPS {
        let n = c.name;
        // The row's first bound, as a keyword; every clamp op takes it alone.
        let bound = c.bounds.params()[0];
        let sites = [
            method(t2(), n, vec![], vec![kw(bound, flt(0.5))]),
            call(&format!("torch.{n}"), vec![t1()], vec![kw(bound, int(1))]),
        ];
        for site in sites {
            assert_eq!(claimed(site), c.rule, "{n}");
        }
    }
    for p in crate::rules::PAIRWISE {
        let n = p.name;
        let rule = crate::rules::function_elementwise(n);
        assert_eq!(claimed(method(t2(), n, vec![t1()], vec![])), rule);
        assert_eq!(
            claimed(call(&format!("torch.{n}"), vec![t1(), t1()], vec![])),
            rule
        );
        let plan = super::plan(&method(t2(), n, vec![t2()], vec![])).unwrap();
        assert!(
            matches!(plan.op, super::Op::Call { f, .. } if f == p.f),
            "{n}"
        );
    }
    for f in crate::rules::FILLS {
        let n = f.name;
        let mut args = vec![t2()];
        if f.takes_value {
            args.push(flt(2.0));
        }
        assert_eq!(
            claimed(call(&format!("torch.{n}"), args, vec![])),
            crate::rules::like(n)
        );
        // The value is the row's to take: one too many or too few is refused with its code.
        let mut wrong = vec![t2()];
        if !f.takes_value {
            wrong.push(flt(2.0));
        }
        match claim(&call(&format!("torch.{n}"), wrong, vec![])) {
            ClaimOutcome::Rejected(d) => assert_eq!(d.code, crate::codes::LIKE_FORM, "{n}"),
            other => panic!("{n}: {other:?}"),
        }
    }
}

#[test]
fn every_arithmetic_row_runs_its_entries_for_each_operand_order() {
    let entry = |site: &ClaimSite| match super::plan(site) {
        Ok(plan) => match plan.op {
            super::Op::Binary { f, .. } | super::Op::Scalar { f, .. } => f,
            other => panic!("{site:?}: {other:?}"),
        },
        Err(e) => panic!("{site:?}: {e:?}"),
    };
    let records = crate::rules::records();
    for a in crate::rules::ARITHMETIC {
        let binop = |x: Operand, y: Operand| ClaimSite {
            kind: SiteKind::BinOp,
            target: a.op.into(),
            receiver: None,
            args: vec![x, y],
            keywords: vec![],
        };
        assert_eq!(entry(&binop(t2(), t1())), a.tensors, "t {} t", a.op);
        assert_eq!(
            entry(&binop(t2(), flt(2.0))),
            a.tensor_scalar,
            "t {} s",
            a.op
        );
        assert_eq!(entry(&binop(int(2), t1())), a.scalar_tensor, "s {} t", a.op);
        let function = call(&format!("torch.{}", a.name), vec![t1(), t1()], vec![]);
        assert_eq!(entry(&function), a.tensors, "torch.{}", a.name);
        for id in [
            crate::rules::elementwise(a.name, false),
            crate::rules::elementwise(a.name, true),
            crate::rules::function_elementwise(a.name),
            crate::rules::scalar_elementwise(a.name),
        ] {
            assert!(records.iter().any(|r| r.id == id), "{id} has no record");
        }
    }
}

#[test]
fn every_functional_row_is_claimed_with_its_first_rule_and_every_rule_is_documented() {
    let records = crate::rules::records();
    for f in crate::rules::FUNCTIONAL {
        // The plain form `F.<name>(t)` takes the row's first rule.
        let site = call(
            &format!("torch.nn.functional.{}", f.name),
            vec![t2()],
            vec![],
        );
        match claim(&site) {
            ClaimOutcome::Claimed { rule_id, .. } => {
                assert_eq!(rule_id, f.docs[0].id, "F.{}", f.name)
            }
            other => panic!("F.{}: {other:?}", f.name),
        }
        for d in f.docs {
            assert!(
                records.iter().any(|r| r.id == d.id),
                "{} has no record",
                d.id
            );
        }
    }
    // Each rule id is documented once.
    let mut ids: Vec<&str> = records.iter().map(|r| r.id.as_str()).collect();
    let n = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), n, "a rule is documented twice");
}

/// The CUDA slice's refusals keep their exact wording (they are stated once, in
/// `claim::cuda::LANE`).
#[test]
fn the_cuda_refusals_keep_their_messages() {
    let message = |site: &ClaimSite| match super::plan(site) {
        Err(ClaimOutcome::Rejected(d)) => (d.code, d.message),
        other => panic!("{site:?}: {other:?}"),
    };
    assert_eq!(
        message(&binop("-", c2(), c1())),
        (
            "RXTP-TORCH-027".to_owned(),
            "operator `-` on cuda:0 tensors is outside the build-only CUDA E2 slice (a @ b, h + bias, h.relu(), h.mean(dim=1) on cuda:0)".to_owned()
        )
    );
    assert_eq!(
        message(&binop("+", c2(), t1())),
        (
            "RXTP-TORCH-028".to_owned(),
            "this site mixes cuda:0 and CPU tensors; the CUDA E2 slice never transfers between host and device".to_owned()
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
    assert_eq!(d(&b1()), "a rank-1 bool tensor");
    assert_eq!(d(&b2()), "a rank-2 bool tensor");
    assert_eq!(d(&Operand::plugin("mathx/number")), "mathx/number");
    assert_eq!(d(&int(3)), "int literal 3");
}
