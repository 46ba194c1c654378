//! Every diagnostic code of rextio-tensorflow, in one table (rendered into docs/diagnostics.md).
//! Codes are never reused: `RXTP-TENSORFLOW-001` .. `-033` and `-039`; 034-038 are unassigned.

use rextio_plugin_api::CodeDoc;

/// MatMul form, keywords or ranks outside `tf.matmul(a, b)` on two rank-2 tensors.
pub const MATMUL: &str = "RXTP-TENSORFLOW-001";
/// Rank-2 `tf.nn.relu` outside its form.
pub const RELU_2D: &str = "RXTP-TENSORFLOW-002";
/// `tf.add` / `tf.math.add` outside its form.
pub const ADD_CALL: &str = "RXTP-TENSORFLOW-003";
/// `tf.reduce_mean` outside its form (and the axis-1 rule).
pub const MEAN: &str = "RXTP-TENSORFLOW-004";
/// Rank-2 `tf.nn.sigmoid` outside its form.
pub const SIGMOID_2D: &str = "RXTP-TENSORFLOW-005";
/// Binary `+` outside the rank matrix.
pub const ADD_BINOP: &str = "RXTP-TENSORFLOW-006";
/// Rank-2 `tf.nn.softmax` outside its form.
pub const SOFTMAX_2D: &str = "RXTP-TENSORFLOW-007";
/// `tf.argmax` outside its form (and the axis-1 rule).
pub const ARGMAX: &str = "RXTP-TENSORFLOW-008";
/// Rank-2 `tf.nn.tanh` outside its form.
pub const TANH_2D: &str = "RXTP-TENSORFLOW-009";
/// A covered TensorFlow site whose operand types or operator fall outside the surface.
pub const UNSUPPORTED: &str = "RXTP-TENSORFLOW-010";
/// `tf.reduce_sum` outside its form (and the axis-1 rule).
pub const SUM: &str = "RXTP-TENSORFLOW-011";
/// Binary `*` outside the rank matrix.
pub const MUL_BINOP: &str = "RXTP-TENSORFLOW-012";
/// `tf.multiply` / `tf.math.multiply` outside its form.
pub const MUL_CALL: &str = "RXTP-TENSORFLOW-013";
/// `tf.subtract` / `tf.math.subtract` outside its form.
pub const SUB_CALL: &str = "RXTP-TENSORFLOW-014";
/// Binary `-` outside the rank matrix.
pub const SUB_BINOP: &str = "RXTP-TENSORFLOW-015";
/// `tf.divide` / `tf.math.divide` outside its form.
pub const DIV_CALL: &str = "RXTP-TENSORFLOW-016";
/// Binary `/` outside the rank matrix.
pub const DIV_BINOP: &str = "RXTP-TENSORFLOW-017";
/// Rank-1 `tf.nn.relu` outside its form.
pub const RELU_1D: &str = "RXTP-TENSORFLOW-018";
/// Rank-1 `tf.nn.sigmoid` outside its form.
pub const SIGMOID_1D: &str = "RXTP-TENSORFLOW-019";
/// Rank-1 `tf.nn.tanh` outside its form.
pub const TANH_1D: &str = "RXTP-TENSORFLOW-020";
/// `tf.nn.bias_add` outside the NHWC rank-2/rank-1 form.
pub const BIAS_ADD: &str = "RXTP-TENSORFLOW-021";
/// `tf.reduce_mean` literal-axis form (axis 0 or keepdims) with wrong operands.
pub const MEAN_LITERAL_AXIS: &str = "RXTP-TENSORFLOW-022";
/// `tf.reduce_sum` literal-axis form (axis 0 or keepdims) with wrong operands.
pub const SUM_LITERAL_AXIS: &str = "RXTP-TENSORFLOW-023";
/// `tf.argmax(x, axis=0)` with wrong operands or options.
pub const ARGMAX_AXIS0: &str = "RXTP-TENSORFLOW-024";
/// Rank-1 `tf.nn.softmax` outside its form.
pub const SOFTMAX_1D: &str = "RXTP-TENSORFLOW-025";
/// `tf.abs` outside its form.
pub const ABS: &str = "RXTP-TENSORFLOW-026";
/// `tf.negative` outside its form.
pub const NEGATIVE: &str = "RXTP-TENSORFLOW-027";
/// `tf.square` outside its form.
pub const SQUARE: &str = "RXTP-TENSORFLOW-028";
/// `tf.exp` outside its form.
pub const EXP: &str = "RXTP-TENSORFLOW-029";
/// `tf.math.log` outside its form.
pub const LOG: &str = "RXTP-TENSORFLOW-030";
/// `tf.sqrt` / `tf.math.sqrt` outside its form.
pub const SQRT: &str = "RXTP-TENSORFLOW-031";
/// `tf.maximum` outside the same-rank form.
pub const MAXIMUM: &str = "RXTP-TENSORFLOW-032";
/// `tf.minimum` outside the same-rank form.
pub const MINIMUM: &str = "RXTP-TENSORFLOW-033";
/// `tf.transpose` outside the default-perm rank-2 form.
pub const TRANSPOSE: &str = "RXTP-TENSORFLOW-039";

/// A site with `GPU:0` tensors outside the exact build-only CUDA lane.
pub const CUDA_FORM: &str = "RXTP-TENSORFLOW-040";
/// A site mixing `GPU:0` and CPU tensors (the lane never copies between host and device).
pub const CUDA_DEVICE_MIX: &str = "RXTP-TENSORFLOW-041";
/// Rank-2 `tf.nn.elu` outside its form.
pub const ELU_2D: &str = "RXTP-TENSORFLOW-042";
/// Rank-1 `tf.nn.elu` outside its form.
pub const ELU_1D: &str = "RXTP-TENSORFLOW-043";

/// The code table printed by `rextio explain`.
pub const CODES: &[CodeDoc] = &[
    CodeDoc {
        code: MATMUL,
        summary: "tf.matmul outside the rank-2 x rank-2, positional-only form",
        explanation: "Native MatMul accepts exactly `tf.matmul(a, b)` or `tf.linalg.matmul(a, b)` with two \
positional float32 CPU rank-2 tensors (TensorF32Cpu2D) and no keywords; the result is rank 2. \
`transpose_a=`, `transpose_b=`, `adjoint_*=`, `a_is_sparse=`, `output_type=` and `name=` are \
rejected, as are rank-1 or rank-3+ operands (no matrix-vector or batched products) and int64 \
operands. Inner-dimension compatibility is not proven statically: a mismatch raises the MatMul \
error from TensorFlow at run time. Write `tf.matmul(a, b)` with both operands annotated \
TensorF32Cpu2D, or keep the function in Python.",
    },
    CodeDoc {
        code: RELU_2D,
        summary: "rank-2 tf.nn.relu outside the one-positional-tensor form",
        explanation: "`tf.nn.relu(x)` is lowered with exactly one positional float32 CPU tensor and no \
keywords (`features=` or `name=` keep it on Python). This code is used when the operand is not a \
rank-1 float32 tensor (rank 1 has RXTP-TENSORFLOW-018), including int64 classification results, \
which are not operation inputs.",
    },
    CodeDoc {
        code: ADD_CALL,
        summary: "tf.add / tf.math.add outside the two-positional-tensor form",
        explanation: "`tf.add(a, b)` and `tf.math.add(a, b)` lower to TFE AddV2 for two positional float32 \
CPU tensors in the rank matrix rank-2/rank-2, rank-1/rank-1, rank-2/rank-1 and rank-1/rank-2 \
(the result has the larger rank; concrete broadcast compatibility is checked by TensorFlow at \
run time). Keywords (`name=`), scalar operands, int64 operands and other ranks stay on Python.",
    },
    CodeDoc {
        code: MEAN,
        summary: "tf.reduce_mean outside the literal-axis rank-2 form",
        explanation: "`tf.reduce_mean(x, axis)` / `tf.math.reduce_mean` are lowered for one float32 CPU \
rank-2 tensor with `axis` a literal int 0 or 1, given once (second positional or `axis=`), and \
`keepdims` omitted or a *named* bool literal. Whole-tensor means (no axis), dynamic or \
non-literal axes, axes other than 0/1, lists of axes, `axis` given twice, positional keepdims \
(`tf.reduce_mean(x, 0, True)`), non-literal keepdims and `name=` are rejected. This is also the \
code of the axis-1 rule `tf.reduce_mean(x, axis=1)`.",
    },
    CodeDoc {
        code: SIGMOID_2D,
        summary: "rank-2 tf.nn.sigmoid outside the one-positional-tensor form",
        explanation: "`tf.nn.sigmoid(x)` is lowered with exactly one positional float32 CPU tensor and no \
keywords. This code covers every rejection whose operand is not a rank-1 float32 tensor (rank 1 \
has RXTP-TENSORFLOW-019).",
    },
    CodeDoc {
        code: ADD_BINOP,
        summary: "binary + outside the tensor rank matrix",
        explanation: "`a + b` on TensorFlow tensors lowers to TFE AddV2 when both operands are float32 CPU \
tensors in the rank matrix 2/2, 1/1, 2/1 or 1/2. A Python scalar operand (`x + 1.0`), an int64 \
classification result or other types keep the function on Python.",
    },
    CodeDoc {
        code: SOFTMAX_2D,
        summary: "rank-2 tf.nn.softmax without an explicit literal axis=1",
        explanation: "Raw TFE Softmax normalises the last axis only, and the plugin never synthesises a \
transpose. For a rank-2 tensor, `tf.nn.softmax(x, axis=1)` (or `tf.nn.softmax(x, 1)`) is \
lowered; the default axis, `axis=0`, `axis=-1`, dynamic axes and `name=` are rejected.",
    },
    CodeDoc {
        code: ARGMAX,
        summary: "tf.argmax outside the literal-axis, default-int64 form",
        explanation: "`tf.argmax(x, axis)` is lowered for one float32 CPU rank-2 tensor with `axis` a \
literal 0 or 1 (positional or `axis=`), returning TensorFlow's default int64 rank-1 result \
(TensorI64Cpu1D). A missing or dynamic axis, `output_type=` (any value, including \
`output_type=tf.int32` or `tf.int64`), `name=` and other ranks are rejected. This is also the \
code of the axis-1 rule.",
    },
    CodeDoc {
        code: TANH_2D,
        summary: "rank-2 tf.nn.tanh outside the one-positional-tensor form",
        explanation: "`tf.nn.tanh(x)` is lowered with exactly one positional float32 CPU tensor and no \
keywords. This code covers every rejection whose operand is not a rank-1 float32 tensor (rank 1 \
has RXTP-TENSORFLOW-020).",
    },
    CodeDoc {
        code: UNSUPPORTED,
        summary: "TensorFlow site outside the float32 CPU rank-1/2 surface",
        explanation: "A TensorFlow site was recognised, but an operand is outside the plugin's type \
vocabulary (a Python scalar or literal where a tensor is expected, a tensor of another backend, \
a value whose type is not a rextio_tensorflow.types marker) or the operator is not lowered \
(`@` — use tf.matmul —, `%`, `//`, `**`, comparisons). Annotate tensors with \
rextio_tensorflow.types.TensorF32Cpu1D / TensorF32Cpu2D, or keep the function in Python. This is \
the code of the fallback rule `rextio-tensorflow/unsupported-tensor-surface`.",
    },
    CodeDoc {
        code: SUM,
        summary: "tf.reduce_sum outside the literal-axis rank-2 form",
        explanation: "`tf.reduce_sum(x, axis)` / `tf.math.reduce_sum` follow the same contract as \
reduce_mean: one float32 CPU rank-2 tensor, a literal int axis 0 or 1 given once, and \
`keepdims` omitted or a named bool literal. Whole-tensor sums, dynamic or out-of-range axes, \
positional keepdims and extra keywords are rejected. This is also the code of the axis-1 rule.",
    },
    CodeDoc {
        code: MUL_BINOP,
        summary: "binary * outside the tensor rank matrix",
        explanation: "`a * b` lowers to TFE Mul for two float32 CPU tensors in the rank matrix 2/2, 1/1, \
2/1, 1/2. Scalar operands and int64 tensors are excluded.",
    },
    CodeDoc {
        code: MUL_CALL,
        summary: "tf.multiply outside the two-positional-tensor form",
        explanation: "`tf.multiply(a, b)` / `tf.math.multiply(a, b)` take exactly two positional float32 \
CPU tensors in the rank matrix and no keywords. Aliases such as `tf.math.multiply_no_nan` are \
not covered.",
    },
    CodeDoc {
        code: SUB_CALL,
        summary: "tf.subtract outside the two-positional-tensor form",
        explanation: "`tf.subtract(a, b)` / `tf.math.subtract(a, b)` take exactly two positional float32 \
CPU tensors in the rank matrix and no keywords; TFE Sub keeps the operand order.",
    },
    CodeDoc {
        code: SUB_BINOP,
        summary: "binary - outside the tensor rank matrix",
        explanation: "`a - b` lowers to TFE Sub for two float32 CPU tensors in the rank matrix 2/2, 1/1, \
2/1, 1/2. Scalar operands and int64 tensors are excluded.",
    },
    CodeDoc {
        code: DIV_CALL,
        summary: "tf.divide outside the two-positional-tensor form",
        explanation: "`tf.divide(a, b)` / `tf.math.divide(a, b)` lower to TFE RealDiv for two positional \
float32 CPU tensors in the rank matrix and no keywords. `tf.math.truediv`, `tf.math.floordiv` \
and `tf.math.divide_no_nan` are not covered.",
    },
    CodeDoc {
        code: DIV_BINOP,
        summary: "binary / outside the tensor rank matrix",
        explanation: "`a / b` lowers to TFE RealDiv for two float32 CPU tensors in the rank matrix 2/2, \
1/1, 2/1, 1/2, with TensorFlow's IEEE division (x/0 is inf or NaN, no exception). Scalar operands \
and int64 tensors are excluded.",
    },
    CodeDoc {
        code: RELU_1D,
        summary: "rank-1 tf.nn.relu outside the one-positional-tensor form",
        explanation: "`tf.nn.relu(x)` on a TensorF32Cpu1D operand is lowered with exactly one positional \
tensor and no keywords.",
    },
    CodeDoc {
        code: SIGMOID_1D,
        summary: "rank-1 tf.nn.sigmoid outside the one-positional-tensor form",
        explanation: "`tf.nn.sigmoid(x)` on a TensorF32Cpu1D operand is lowered with exactly one \
positional tensor and no keywords.",
    },
    CodeDoc {
        code: TANH_1D,
        summary: "rank-1 tf.nn.tanh outside the one-positional-tensor form",
        explanation: "`tf.nn.tanh(x)` on a TensorF32Cpu1D operand is lowered with exactly one positional \
tensor and no keywords.",
    },
    CodeDoc {
        code: BIAS_ADD,
        summary: "tf.nn.bias_add outside the NHWC rank-2 value + rank-1 bias form",
        explanation: "`tf.nn.bias_add(value, bias)` and `tf.nn.bias_add(value, bias, data_format=\"NHWC\")` \
lower to TFE BiasAdd with a float32 CPU rank-2 value and rank-1 bias, both positional and in \
that order. `data_format=\"NCHW\"`, a dynamic, `None` or positional data_format, `name=`, \
keyword tensor operands (`value=`, `bias=`) and other rank orders are rejected. The bias length \
must match the last dimension; TensorFlow checks that at run time.",
    },
    CodeDoc {
        code: MEAN_LITERAL_AXIS,
        summary: "tf.reduce_mean literal-axis form on an operand outside float32 rank 2",
        explanation: "The literal-axis reduce_mean rule (axis 0, or keepdims=True) needs one float32 CPU \
rank-2 tensor; the result is rank 1, or rank 2 with keepdims=True. Rank-1 operands (which would \
reduce to rank 0) and int64 operands are rejected.",
    },
    CodeDoc {
        code: SUM_LITERAL_AXIS,
        summary: "tf.reduce_sum literal-axis form on an operand outside float32 rank 2",
        explanation: "The literal-axis reduce_sum rule (axis 0, or keepdims=True) needs one float32 CPU \
rank-2 tensor; the result is rank 1, or rank 2 with keepdims=True.",
    },
    CodeDoc {
        code: ARGMAX_AXIS0,
        summary: "tf.argmax(x, axis=0) outside the float32 rank-2 default-int64 form",
        explanation: "`tf.argmax(x, axis=0)` / `tf.argmax(x, 0)` are lowered for a float32 CPU rank-2 \
tensor and return the default int64 rank-1 result. `output_type=`, `name=` and other ranks are \
rejected.",
    },
    CodeDoc {
        code: SOFTMAX_1D,
        summary: "rank-1 tf.nn.softmax with an axis other than omitted or literal 0",
        explanation: "A rank-1 tensor's only axis is 0: `tf.nn.softmax(x)`, `tf.nn.softmax(x, axis=0)` and \
`tf.nn.softmax(x, 0)` are lowered. `axis=1` (which TensorFlow rejects), `axis=-1`, dynamic axes \
and `name=` stay on Python.",
    },
    CodeDoc {
        code: ABS,
        summary: "tf.abs outside the one-positional-tensor form",
        explanation: "`tf.abs(x)` is lowered for exactly one positional float32 CPU rank-1 or rank-2 \
tensor and no keywords. `tf.math.abs` is not an inferred alias (not covered).",
    },
    CodeDoc {
        code: NEGATIVE,
        summary: "tf.negative outside the one-positional-tensor form",
        explanation: "`tf.negative(x)` is lowered for exactly one positional float32 CPU rank-1 or rank-2 \
tensor and no keywords (TFE Neg). Unary minus `-x` is not a claim site.",
    },
    CodeDoc {
        code: SQUARE,
        summary: "tf.square outside the one-positional-tensor form",
        explanation: "`tf.square(x)` is lowered for exactly one positional float32 CPU rank-1 or rank-2 \
tensor and no keywords.",
    },
    CodeDoc {
        code: EXP,
        summary: "tf.exp outside the one-positional-tensor form",
        explanation: "`tf.exp(x)` is lowered for exactly one positional float32 CPU rank-1 or rank-2 \
tensor and no keywords; overflow gives inf as in eager TensorFlow.",
    },
    CodeDoc {
        code: LOG,
        summary: "tf.math.log outside the one-positional-tensor form",
        explanation: "`tf.math.log(x)` is lowered for exactly one positional float32 CPU rank-1 or rank-2 \
tensor and no keywords; log of 0 is -inf and of negatives NaN, as in eager TensorFlow.",
    },
    CodeDoc {
        code: SQRT,
        summary: "tf.sqrt outside the one-positional-tensor form",
        explanation: "`tf.sqrt(x)` (or `tf.math.sqrt(x)`, the same function) is lowered for exactly one positional float32 CPU rank-1 or rank-2 \
tensor and no keywords; sqrt of negatives is NaN and sqrt(-0.0) is -0.0, as in eager TensorFlow.",
    },
    CodeDoc {
        code: MAXIMUM,
        summary: "tf.maximum outside the two-positional same-rank tensor form",
        explanation: "Top-level `tf.maximum(a, b)` lowers to TFE Maximum for two positional float32 CPU \
tensors of equal rank (1/1 or 2/2); TensorFlow's same-rank broadcasting applies at run time. \
Mixed ranks, scalar or literal operands and keywords are rejected; `tf.math.maximum` is not \
covered.",
    },
    CodeDoc {
        code: MINIMUM,
        summary: "tf.minimum outside the two-positional same-rank tensor form",
        explanation: "Top-level `tf.minimum(a, b)` lowers to TFE Minimum for two positional float32 CPU \
tensors of equal rank (1/1 or 2/2). Mixed ranks, scalar or literal operands and keywords are \
rejected; `tf.math.minimum` is not covered.",
    },
    CodeDoc {
        code: TRANSPOSE,
        summary: "tf.transpose outside the default-perm rank-2 form",
        explanation: "`tf.transpose(x)` is lowered for exactly one positional float32 CPU rank-2 tensor with \
the default permutation [1, 0]. `perm=`, `conjugate=`, `name=`, extra positional arguments, \
rank-1 and int64 operands are rejected.",
    },
    CodeDoc {
        code: CUDA_FORM,
        summary: "GPU:0 tensor site outside the build-only CUDA E3 lane",
        explanation: "The CUDA E3 lane (TensorF32Gpu0_2D / TensorF32Gpu0_1D, float32 EagerTensors already on \
the eager context's GPU:0) lowers exactly four forms: `tf.matmul(a, b)` on rank 2 x rank 2, \
`tf.nn.bias_add(h, b)` with a rank-2 value and rank-1 bias (positional, no data_format), \
`tf.nn.relu(h)` on rank 2 and `tf.reduce_mean(h, axis=1)` on rank 2 (keyword literal axis, no \
keepdims). Every other form on GPU tensors stays on Python: other spellings (`tf.linalg.matmul`, \
`tf.math.reduce_mean`, `+`), other ranks, axes and keywords, and every other op. Lowering also \
needs the `rextio-device-cuda` authorisation of `cuda-tensorflow-tfe-linux-x86_64` (see RXT019).",
    },
    CodeDoc {
        code: CUDA_DEVICE_MIX,
        summary: "GPU:0 and CPU tensors mixed in one site",
        explanation: "The CUDA E3 lane never copies between host and device: every tensor operand of a GPU \
site must be a TensorF32Gpu0 type. A site combining a GPU:0 operand with a CPU tensor type \
stays on Python; place the data on GPU:0 in Python and annotate the native function with GPU \
types only.",
    },
    CodeDoc {
        code: ELU_2D,
        summary: "rank-2 tf.nn.elu outside the one-positional-tensor form",
        explanation: "`tf.nn.elu(x)` is lowered with exactly one positional float32 CPU tensor and no \
keywords (`features=` or `name=` keep it on Python). This code covers every rejection whose \
operand is not a rank-1 float32 tensor (rank 1 has RXTP-TENSORFLOW-043).",
    },
    CodeDoc {
        code: ELU_1D,
        summary: "rank-1 tf.nn.elu outside the one-positional-tensor form",
        explanation: "`tf.nn.elu(x)` on a TensorF32Cpu1D operand is lowered with exactly one positional \
tensor and no keywords.",
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use rextio_plugin_api::is_plugin_code;

    #[test]
    fn codes_are_well_formed_unique_and_explained() {
        let mut seen = std::collections::BTreeSet::new();
        for c in CODES {
            assert!(is_plugin_code(c.code), "{}", c.code);
            assert!(c.code.starts_with("RXTP-TENSORFLOW-"), "{}", c.code);
            assert!(seen.insert(c.code), "duplicate {}", c.code);
            assert!(
                !c.summary.is_empty() && c.explanation.len() > 80,
                "{}",
                c.code
            );
        }
        assert_eq!(CODES.len(), 38);
    }
}
