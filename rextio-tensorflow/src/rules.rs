//! Rule records: the documented surface (`rextio capabilities`, docs/diagnostics.md). Rule ids
//! are `rextio-tensorflow/...`; every native rule names the code its rejected forms carry.

use crate::codes;
use crate::entry::Rt;
use rextio_plugin_api::{RuleRecord, RuleScope, Stability};

/// `tf.matmul(a, b)` / `tf.linalg.matmul(a, b)`, rank 2 x 2.
pub const MATMUL: &str = "rextio-tensorflow/matmul-f32-cpu-2d";
/// `tf.reduce_mean(x, axis=1)` (keepdims omitted or False).
pub const MEAN_AXIS1: &str = "rextio-tensorflow/reduce-mean-axis1-f32-cpu-2d";
/// `tf.reduce_mean` with literal axis 0, or keepdims=True.
pub const MEAN_LITERAL_AXIS: &str = "rextio-tensorflow/reduce-mean-literal-axis-f32-cpu-2d";
/// `tf.reduce_sum(x, axis=1)` (keepdims omitted or False).
pub const SUM_AXIS1: &str = "rextio-tensorflow/reduce-sum-axis1-f32-cpu-2d";
/// `tf.reduce_sum` with literal axis 0, or keepdims=True.
pub const SUM_LITERAL_AXIS: &str = "rextio-tensorflow/reduce-sum-literal-axis-f32-cpu-2d";
/// Rank-1 `tf.nn.softmax(x[, axis=0])`.
pub const SOFTMAX_AXIS0_1D: &str = "rextio-tensorflow/softmax-axis0-f32-cpu-1d";
/// Rank-2 `tf.nn.softmax(x, axis=1)`.
pub const SOFTMAX_AXIS1_2D: &str = "rextio-tensorflow/softmax-axis1-f32-cpu-2d";
/// `tf.argmax(x, axis=0)` to int64 rank 1.
pub const ARGMAX_AXIS0: &str = "rextio-tensorflow/argmax-axis0-i64-cpu-2d";
/// `tf.argmax(x, axis=1)` to int64 rank 1.
pub const ARGMAX_AXIS1: &str = "rextio-tensorflow/argmax-axis1-i64-cpu-2d";
/// Default `tf.transpose(x)` on rank 2.
pub const TRANSPOSE: &str = "rextio-tensorflow/transpose-f32-cpu-2d";
/// `tf.nn.bias_add(value, bias[, data_format="NHWC"])`.
pub const BIAS_ADD: &str = "rextio-tensorflow/bias-add-nhwc-f32-cpu-2d";
/// The fallback lane for covered sites outside the surface.
pub const UNSUPPORTED: &str = "rextio-tensorflow/unsupported-tensor-surface";
/// CUDA lane: `tf.matmul(a, b)` on rank-2 `GPU:0` tensors.
pub const CUDA_MATMUL: &str = "rextio-tensorflow/cuda-matmul-f32-gpu0-2d";
/// CUDA lane: `tf.nn.bias_add(h, b)` (NHWC) on `GPU:0`.
pub const CUDA_BIAS_ADD: &str = "rextio-tensorflow/cuda-bias-add-nhwc-f32-gpu0-2d";
/// CUDA lane: `tf.nn.relu(h)` on a rank-2 `GPU:0` tensor.
pub const CUDA_RELU: &str = "rextio-tensorflow/cuda-relu-f32-gpu0-2d";
/// CUDA lane: `tf.reduce_mean(h, axis=1)` on a rank-2 `GPU:0` tensor.
pub const CUDA_REDUCE_MEAN_AXIS1: &str = "rextio-tensorflow/cuda-reduce-mean-axis1-f32-gpu0-2d";
/// The CUDA lane's rules, in chain order.
pub const CUDA_RULES: &[&str] = &[
    CUDA_MATMUL,
    CUDA_BIAS_ADD,
    CUDA_RELU,
    CUDA_REDUCE_MEAN_AXIS1,
];
/// Fallback record of GPU/CPU mixing.
pub const CUDA_DEVICE_MIX: &str = "rextio-tensorflow/cuda-device-mix";

/// One activation: name, runtime entry, TFE op, codes for rank 1 and rank 2.
pub struct Activation {
    /// `relu`, `sigmoid`, `tanh`, `elu` (`tensorflow.nn.<name>`).
    pub name: &'static str,
    /// Its runtime entry.
    pub rt: Rt,
    /// The TFE op.
    pub tfe_op: &'static str,
    /// Diagnostic code when the operand is rank 1.
    pub code_1d: &'static str,
    /// Diagnostic code otherwise.
    pub code_2d: &'static str,
}

/// The activations of `tensorflow.nn`.
pub const ACTIVATIONS: [Activation; 4] = [
    Activation {
        name: "relu",
        rt: Rt::Relu,
        tfe_op: "Relu",
        code_1d: codes::RELU_1D,
        code_2d: codes::RELU_2D,
    },
    Activation {
        name: "sigmoid",
        rt: Rt::Sigmoid,
        tfe_op: "Sigmoid",
        code_1d: codes::SIGMOID_1D,
        code_2d: codes::SIGMOID_2D,
    },
    Activation {
        name: "tanh",
        rt: Rt::Tanh,
        tfe_op: "Tanh",
        code_1d: codes::TANH_1D,
        code_2d: codes::TANH_2D,
    },
    Activation {
        name: "elu",
        rt: Rt::Elu,
        tfe_op: "Elu",
        code_1d: codes::ELU_1D,
        code_2d: codes::ELU_2D,
    },
];

/// One math unary: targets (after `tensorflow.`), runtime function and rule name, TFE op, code.
pub struct MathUnary {
    /// Targets after `tensorflow.`: every public spelling TensorFlow 2.21 binds to the one
    /// function (`tf.sqrt is tf.math.sqrt`), the top-level one first.
    pub targets: &'static [&'static str],
    /// Rule stem (`abs`, `log`, ...).
    pub name: &'static str,
    /// Its runtime entry.
    pub rt: Rt,
    /// The TFE op.
    pub tfe_op: &'static str,
    /// Diagnostic code.
    pub code: &'static str,
}

/// The math unary surface: exact targets, each row's spellings being one TensorFlow function
/// (`tf.math.log` has no top-level spelling in TensorFlow 2).
pub const MATH_UNARY: [MathUnary; 6] = [
    MathUnary {
        targets: &["abs", "math.abs"],
        name: "abs",
        rt: Rt::Abs,
        tfe_op: "Abs",
        code: codes::ABS,
    },
    MathUnary {
        targets: &["negative", "math.negative"],
        name: "negative",
        rt: Rt::Negative,
        tfe_op: "Neg",
        code: codes::NEGATIVE,
    },
    MathUnary {
        targets: &["square", "math.square"],
        name: "square",
        rt: Rt::Square,
        tfe_op: "Square",
        code: codes::SQUARE,
    },
    MathUnary {
        targets: &["exp", "math.exp"],
        name: "exp",
        rt: Rt::Exp,
        tfe_op: "Exp",
        code: codes::EXP,
    },
    MathUnary {
        targets: &["math.log"],
        name: "log",
        rt: Rt::Log,
        tfe_op: "Log",
        code: codes::LOG,
    },
    MathUnary {
        targets: &["sqrt", "math.sqrt"],
        name: "sqrt",
        rt: Rt::Sqrt,
        tfe_op: "Sqrt",
        code: codes::SQRT,
    },
];

/// The [`MATH_UNARY`] row `-x` plans as (an EagerTensor's `__neg__` is `tf.math.negative`).
pub const NEG_OPERATOR_ROW: &str = "negative";

/// One elementwise arithmetic op: operator, call targets, runtime name, TFE op, codes.
pub struct Arith {
    /// The Python operator.
    pub op: &'static str,
    /// Call targets after `tensorflow.`.
    pub targets: [&'static str; 2],
    /// Rule stem (`add`, `mul`, `sub`, `div`).
    pub name: &'static str,
    /// Its runtime entry.
    pub rt: Rt,
    /// The TFE op.
    pub tfe_op: &'static str,
    /// Code of the call form.
    pub call_code: &'static str,
    /// Code of the operator form.
    pub binop_code: &'static str,
}

/// `+ * - /` and their functional spellings.
pub const ARITH: [Arith; 4] = [
    Arith {
        op: "+",
        targets: ["add", "math.add"],
        name: "add",
        rt: Rt::Add,
        tfe_op: "AddV2",
        call_code: codes::ADD_CALL,
        binop_code: codes::ADD_BINOP,
    },
    Arith {
        op: "*",
        targets: ["multiply", "math.multiply"],
        name: "mul",
        rt: Rt::Mul,
        tfe_op: "Mul",
        call_code: codes::MUL_CALL,
        binop_code: codes::MUL_BINOP,
    },
    Arith {
        op: "-",
        targets: ["subtract", "math.subtract"],
        name: "sub",
        rt: Rt::Sub,
        tfe_op: "Sub",
        call_code: codes::SUB_CALL,
        binop_code: codes::SUB_BINOP,
    },
    Arith {
        op: "/",
        targets: ["divide", "math.divide"],
        name: "div",
        rt: Rt::Div,
        tfe_op: "RealDiv",
        call_code: codes::DIV_CALL,
        binop_code: codes::DIV_BINOP,
    },
];

/// `tf.maximum` / `tf.minimum`: (target and rule stem, runtime entry, TFE op, code).
pub const EXTREMA: [(&str, Rt, &str, &str); 2] = [
    ("maximum", Rt::Maximum, "Maximum", codes::MAXIMUM),
    ("minimum", Rt::Minimum, "Minimum", codes::MINIMUM),
];

/// Activation rule of `rank`.
pub fn activation(name: &str, rank: u8) -> String {
    format!("rextio-tensorflow/{name}-f32-cpu-{rank}d")
}

/// Math unary rule.
pub fn math_unary(name: &str) -> String {
    format!("rextio-tensorflow/{name}-f32-cpu")
}

/// Elementwise arithmetic rule, call or operator form.
pub fn arith(name: &str, binop: bool) -> String {
    let form = if binop { "binop" } else { "call" };
    format!("rextio-tensorflow/{name}-{form}-f32-cpu")
}

/// `tf.maximum` / `tf.minimum` rule.
pub fn extremum(name: &str) -> String {
    format!("rextio-tensorflow/{name}-call-f32-cpu")
}

fn native(
    id: impl Into<String>,
    scope: RuleScope,
    pattern: &str,
    constraint: &str,
    code: &str,
    guidance: &str,
) -> RuleRecord {
    RuleRecord::native(id, scope, pattern, constraint)
        .with_code(code, guidance)
        .with_stability(Stability::Experimental)
}

const PAIRS: &str = "float32 CPU tensors of ranks 2/2, 1/1, 2/1 or 1/2 (trailing broadcast; result has the larger rank; concrete broadcast compatibility is checked by TensorFlow at run time)";

/// Every rule.
pub fn records() -> Vec<RuleRecord> {
    use RuleScope::{BinOp, Call};
    let mut out = vec![native(
        MATMUL,
        Call,
        "tf.matmul(a, b) / tf.linalg.matmul(a, b)",
        "two positional float32 CPU rank-2 tensors, no keywords; result rank 2 (TFE MatMul; inner dimensions checked at run time)",
        codes::MATMUL,
        "annotate both operands TensorF32Cpu2D and drop transpose_*/adjoint_* keywords",
    )];
    for a in &ACTIVATIONS {
        for (rank, code) in [(1u8, a.code_1d), (2, a.code_2d)] {
            out.push(native(
                activation(a.name, rank),
                Call,
                &format!("tf.nn.{}(x)", a.name),
                &format!(
                    "one positional float32 CPU rank-{rank} tensor, no keywords; result rank {rank} (TFE {})",
                    a.tfe_op
                ),
                code,
                &format!("call tf.nn.{}(x) with one positional annotated tensor", a.name),
            ));
        }
    }
    for u in &MATH_UNARY {
        let mut forms: Vec<String> = u.targets.iter().map(|t| format!("tf.{t}(x)")).collect();
        if u.name == NEG_OPERATOR_ROW {
            forms.push("-x".into());
        }
        out.push(native(
            math_unary(u.name),
            Call,
            &forms.join(" / "),
            &format!(
                "exactly one positional float32 CPU rank-1 or rank-2 tensor, no keywords; result same rank (TFE {})",
                u.tfe_op
            ),
            u.code,
            &format!("call tf.{}(x) with one positional annotated tensor", u.targets[0]),
        ));
    }
    for a in &ARITH {
        out.push(native(
            arith(a.name, false),
            Call,
            &format!("tf.{}(a, b) / tf.{}(a, b)", a.targets[0], a.targets[1]),
            &format!(
                "exactly two positional {PAIRS}; no keywords (TFE {})",
                a.tfe_op
            ),
            a.call_code,
            &format!("call tf.{}(a, b) with two annotated tensors", a.targets[0]),
        ));
        out.push(native(
            arith(a.name, true),
            BinOp,
            &format!("a {0} b / a {0}= b", a.op),
            &format!(
                "two {PAIRS}; scalar operands excluded (TFE {}); `a {}= b` rebinds `a` (tensors are immutable)",
                a.tfe_op, a.op
            ),
            a.binop_code,
            &format!("write a {} b with two annotated tensors", a.op),
        ));
    }
    for (name, _, op, code) in EXTREMA {
        out.push(native(
            extremum(name),
            Call,
            &format!("tf.{name}(a, b)"),
            &format!("exactly two positional float32 CPU tensors of equal rank (1/1 or 2/2), no keywords; result same rank; same-rank broadcasting checked at run time (TFE {op})"),
            code,
            &format!("call top-level tf.{name}(a, b) with two tensors of the same rank"),
        ));
    }
    for (id, code, name, op) in [
        (MEAN_AXIS1, codes::MEAN, "reduce_mean", "Mean"),
        (SUM_AXIS1, codes::SUM, "reduce_sum", "Sum"),
    ] {
        out.push(native(
            id,
            Call,
            &format!("tf.{name}(x, axis=1) / tf.{name}(x, 1) / tf.math.{name}"),
            &format!("one float32 CPU rank-2 tensor, literal axis 1 given once, keepdims omitted or named False; result rank 1 (TFE {op})"),
            code,
            &format!("write tf.{name}(x, axis=1)"),
        ));
    }
    for (id, code, name, op) in [
        (
            MEAN_LITERAL_AXIS,
            codes::MEAN_LITERAL_AXIS,
            "reduce_mean",
            "Mean",
        ),
        (
            SUM_LITERAL_AXIS,
            codes::SUM_LITERAL_AXIS,
            "reduce_sum",
            "Sum",
        ),
    ] {
        out.push(native(
            id,
            Call,
            &format!("tf.{name}(x, axis=0|1[, keepdims=b]) / tf.math.{name}"),
            &format!("one float32 CPU rank-2 tensor, literal int axis 0 or 1 (positional or keyword, once), keepdims omitted or a named bool literal; result rank 1, or 2 with keepdims=True (TFE {op})"),
            code,
            &format!("write tf.{name}(x, axis=0, keepdims=True); keep keepdims named"),
        ));
    }
    out.push(native(
        SOFTMAX_AXIS0_1D,
        Call,
        "tf.nn.softmax(x) / tf.nn.softmax(x, axis=0)",
        "one float32 CPU rank-1 tensor, axis omitted or literal 0 (positional or keyword); result rank 1 (TFE Softmax, last axis)",
        codes::SOFTMAX_1D,
        "omit axis or write axis=0 for a TensorF32Cpu1D operand",
    ));
    out.push(native(
        SOFTMAX_AXIS1_2D,
        Call,
        "tf.nn.softmax(x, axis=1)",
        "one float32 CPU rank-2 tensor, explicit literal axis 1 (positional or keyword); result rank 2 (TFE Softmax, last axis; no synthesized transpose)",
        codes::SOFTMAX_2D,
        "write tf.nn.softmax(x, axis=1) for a TensorF32Cpu2D operand",
    ));
    for (id, axis, code) in [
        (ARGMAX_AXIS0, 0, codes::ARGMAX_AXIS0),
        (ARGMAX_AXIS1, 1, codes::ARGMAX),
    ] {
        out.push(native(
            id,
            Call,
            &format!("tf.argmax(x, axis={axis}) / tf.argmax(x, {axis})"),
            &format!("one float32 CPU rank-2 tensor, literal axis {axis}, no other keywords (default output type); result int64 rank 1 (TFE ArgMax)"),
            code,
            &format!("write tf.argmax(x, axis={axis}) and omit output_type"),
        ));
    }
    out.push(native(
        TRANSPOSE,
        Call,
        "tf.transpose(x)",
        "exactly one positional float32 CPU rank-2 tensor, default perm [1, 0], no keywords; result rank 2 (TFE Transpose)",
        codes::TRANSPOSE,
        "write tf.transpose(x) without perm/conjugate/name",
    ));
    out.push(native(
        BIAS_ADD,
        Call,
        "tf.nn.bias_add(value, bias[, data_format=\"NHWC\"])",
        "positional float32 CPU rank-2 value then rank-1 bias; data_format omitted or named literal \"NHWC\"; result rank 2 (TFE BiasAdd)",
        codes::BIAS_ADD,
        "write tf.nn.bias_add(x, b) with x TensorF32Cpu2D and b TensorF32Cpu1D",
    ));
    out.extend(cuda_records());
    out.push(RuleRecord::fallback(
        UNSUPPORTED,
        RuleScope::Type,
        "covered TensorFlow sites outside the surface",
        "operand types outside the float32 CPU rank-1/2 vocabulary, operators other than + - * /, comparisons",
        codes::UNSUPPORTED,
        "keep the function in Python or rewrite it with the native forms listed by `rextio capabilities`",
    ));
    out
}

/// The build-only CUDA lane: lowered only with the exact `cuda-tensorflow-tfe-linux-x86_64`
/// authorisation of `rextio-device-cuda`.
fn cuda_records() -> Vec<RuleRecord> {
    const WHERE: &str = "float32 EagerTensors already on GPU:0 (TensorF32Gpu0_*); needs the \
rextio-device-cuda authorisation of cuda-tensorflow-tfe-linux-x86_64; no host/device copy; \
inference only";
    const GUIDANCE: &str = "write the lane exactly: tf.matmul(x, w), tf.nn.bias_add(h, b), \
tf.nn.relu(h), tf.reduce_mean(h, axis=1) with TensorF32Gpu0_* annotations";
    let mut out: Vec<RuleRecord> = [
        (CUDA_MATMUL, "tf.matmul(a, b)", "two positional rank-2 tensors, no keywords; result rank 2 (TFE MatMul)"),
        (CUDA_BIAS_ADD, "tf.nn.bias_add(h, b)", "positional rank-2 value then rank-1 bias, no keywords; result rank 2 (TFE BiasAdd, NHWC)"),
        (CUDA_RELU, "tf.nn.relu(h)", "one positional rank-2 tensor, no keywords; result rank 2 (TFE Relu)"),
        (CUDA_REDUCE_MEAN_AXIS1, "tf.reduce_mean(h, axis=1)", "one positional rank-2 tensor and exactly the keyword literal axis=1; result rank 1 (TFE Mean)"),
    ]
    .into_iter()
    .map(|(id, pattern, constraint)| {
        native(
            id,
            RuleScope::Call,
            pattern,
            &format!("{constraint}; {WHERE}"),
            codes::CUDA_FORM,
            GUIDANCE,
        )
    })
    .collect();
    out.push(RuleRecord::fallback(
        CUDA_DEVICE_MIX,
        RuleScope::Type,
        "GPU:0 and CPU tensors in one site",
        "every tensor operand of a GPU:0 site must be a TensorF32Gpu0 type",
        codes::CUDA_DEVICE_MIX,
        "place the data on GPU:0 in Python and annotate the native function with GPU types only",
    ));
    out
}

/// Native rule ids, in table order.
pub fn native_ids() -> Vec<String> {
    rextio_plugin_api::kit::native_ids(&records())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_published_rule_ids_are_all_declared() {
        let ids = native_ids();
        let want = [
            "matmul-f32-cpu-2d",
            "relu-f32-cpu-1d",
            "relu-f32-cpu-2d",
            "sigmoid-f32-cpu-1d",
            "sigmoid-f32-cpu-2d",
            "tanh-f32-cpu-1d",
            "tanh-f32-cpu-2d",
            "elu-f32-cpu-1d",
            "elu-f32-cpu-2d",
            "abs-f32-cpu",
            "negative-f32-cpu",
            "square-f32-cpu",
            "exp-f32-cpu",
            "log-f32-cpu",
            "sqrt-f32-cpu",
            "add-call-f32-cpu",
            "add-binop-f32-cpu",
            "mul-call-f32-cpu",
            "mul-binop-f32-cpu",
            "sub-call-f32-cpu",
            "sub-binop-f32-cpu",
            "div-call-f32-cpu",
            "div-binop-f32-cpu",
            "maximum-call-f32-cpu",
            "minimum-call-f32-cpu",
            "reduce-mean-axis1-f32-cpu-2d",
            "reduce-sum-axis1-f32-cpu-2d",
            "reduce-mean-literal-axis-f32-cpu-2d",
            "reduce-sum-literal-axis-f32-cpu-2d",
            "softmax-axis0-f32-cpu-1d",
            "softmax-axis1-f32-cpu-2d",
            "argmax-axis0-i64-cpu-2d",
            "argmax-axis1-i64-cpu-2d",
            "transpose-f32-cpu-2d",
            "bias-add-nhwc-f32-cpu-2d",
        ];
        assert_eq!(ids.len(), want.len() + CUDA_RULES.len());
        for id in CUDA_RULES {
            assert!(ids.contains(&(*id).to_owned()), "missing {id}");
        }
        for w in want {
            assert!(
                ids.contains(&format!("rextio-tensorflow/{w}")),
                "missing {w}"
            );
        }
    }
}
