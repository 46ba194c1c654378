//! Every diagnostic code of rextio-torch, in one table. Codes are never reused.

use rextio_plugin_api::CodeDoc;

/// `F.linear` called with operands that do not bind to (input, weight, bias).
pub const LINEAR_FORM: &str = "RXTP-TORCH-001";
/// `F.linear` operands of the wrong ranks.
pub const LINEAR_RANKS: &str = "RXTP-TORCH-002";
/// An activation or unary method/function called with extra arguments.
pub const UNARY_ARGS: &str = "RXTP-TORCH-003";
/// An in-place request (`inplace=True`) or a non-literal option that may be one.
pub const IN_PLACE: &str = "RXTP-TORCH-004";
/// Matmul operands of unsupported ranks.
pub const MATMUL_RANKS: &str = "RXTP-TORCH-005";
/// Matmul call with keywords or the wrong arity.
pub const MATMUL_FORM: &str = "RXTP-TORCH-006";
/// Elementwise arithmetic with an unsupported rank pair.
pub const ELEMENTWISE_RANKS: &str = "RXTP-TORCH-007";
/// Reduction form outside the static contract.
pub const REDUCTION_FORM: &str = "RXTP-TORCH-008";
/// Reduction whose result would have an unregistered rank.
pub const REDUCTION_RANK: &str = "RXTP-TORCH-009";
/// A covered torch site whose types or form fall outside the surface.
pub const UNSUPPORTED_SURFACE: &str = "RXTP-TORCH-010";
/// GELU with an approximation other than the literal "none".
pub const GELU_APPROXIMATE: &str = "RXTP-TORCH-011";
/// Functional arithmetic with semantic-changing options or non-tensor operands.
pub const FUNCTIONAL_OPTIONS: &str = "RXTP-TORCH-012";
/// Softmax form outside the static contract.
pub const SOFTMAX_FORM: &str = "RXTP-TORCH-013";
/// Argmax form outside the static contract, or an unavailable int64 result rank.
pub const ARGMAX_FORM: &str = "RXTP-TORCH-014";
/// Arithmetic on int64 classification results.
pub const INT64_ARITHMETIC: &str = "RXTP-TORCH-015";
/// A scalar operand of an unsupported type.
pub const SCALAR_OPERAND: &str = "RXTP-TORCH-016";

/// The code table printed by `rextio explain`.
pub const CODES: &[CodeDoc] = &[
    CodeDoc {
        code: LINEAR_FORM,
        summary: "torch.nn.functional.linear arguments do not bind to (input, weight, bias)",
        explanation: "Native linear accepts `F.linear(x, w, b)`, `F.linear(x, w)`, `F.linear(x, w, None)`, \
`F.linear(x, w, bias=None)` and tensor keywords such as `F.linear(x, w, bias=b)`. Extra operands, \
unknown keywords, duplicated arguments or a missing weight are recognised but not lowered, so the \
function stays on Python.",
    },
    CodeDoc {
        code: LINEAR_RANKS,
        summary: "torch.nn.functional.linear operands have the wrong ranks",
        explanation: "Native linear needs `input` and `weight` annotated rank 2 (TensorF32Cpu2D) and a bias, \
when present, of rank 1 (TensorF32Cpu1D); it returns rank 2. Other ranks, dtypes or unresolved \
operands stay on Python.",
    },
    CodeDoc {
        code: UNARY_ARGS,
        summary: "activation or unary math with extra arguments",
        explanation: "Methods `.relu() .sigmoid() .tanh() .abs() .neg() .negative() .square() .exp() .log() \
.sqrt()` are lowered without arguments, and the functions `torch.relu(t)`, `torch.exp(t)`, ... with \
exactly one positional tensor and no keywords (`out=` is not lowered).",
    },
    CodeDoc {
        code: IN_PLACE,
        summary: "in-place operation requested",
        explanation: "`F.relu(t, inplace=True)` writes into its input, and a non-literal `inplace` might. \
Native code never mutates values that came from Python, so only an omitted or literal \
`inplace=False` is lowered.",
    },
    CodeDoc {
        code: MATMUL_RANKS,
        summary: "matrix multiplication operands have unsupported ranks",
        explanation: "`a @ b`, `torch.matmul(a, b)` and `a.matmul(b)` are lowered for rank 2 x 2 (result rank \
2) and rank 2 x 1 or 1 x 2 (result rank 1). Rank 1 x 1 would produce a rank-0 tensor, which has \
no registered type, so it stays on Python.",
    },
    CodeDoc {
        code: MATMUL_FORM,
        summary: "matmul call with keywords or the wrong number of operands",
        explanation: "`torch.matmul(a, b)` takes exactly two positional tensors and `a.matmul(b)` exactly \
one; keywords such as `out=` are not lowered.",
    },
    CodeDoc {
        code: ELEMENTWISE_RANKS,
        summary: "elementwise arithmetic needs equal ranks or a rank-2/rank-1 broadcast",
        explanation: "`+ - * /` and `torch.add/sub/mul/div(a, b)` accept rank 1/1, 2/2, 2/1 and 1/2 float32 \
tensors (trailing-dimension broadcast for mixed ranks; the result is rank 2).",
    },
    CodeDoc {
        code: REDUCTION_FORM,
        summary: "mean/sum outside the static reduction contract",
        explanation: "`t.mean(dim)`, `t.sum(dim)`, `torch.mean(t, dim)` and `torch.sum(t, dim)` are lowered \
with `dim` a literal 0 or 1 given once (positionally or as `dim=`) and `keepdim` omitted or a named \
bool literal. Whole-tensor reductions, dynamic or duplicate dims, positional keepdim, and `dtype=`/\
`out=` stay on Python.",
    },
    CodeDoc {
        code: REDUCTION_RANK,
        summary: "reduction result would have an unregistered rank",
        explanation: "Reducing a rank-1 tensor without `keepdim=True` yields rank 0, and dims outside the \
receiver's rank do not exist; neither is lowered.",
    },
    CodeDoc {
        code: UNSUPPORTED_SURFACE,
        summary: "torch operation outside the native rextio-torch surface",
        explanation: "A torch site on annotated tensors was recognised, but its operator, method, operand \
types or options are outside the surface rextio-torch lowers. In-place methods (`relu_`), views \
(`transpose`, `view`, `reshape`), method arithmetic (`.add`), `%`, `//`, `**` and tensor \
comparisons land here. The function keeps its Python body; `rextio capabilities` lists the exact \
surface.",
    },
    CodeDoc {
        code: GELU_APPROXIMATE,
        summary: "GELU approximation other than \"none\"",
        explanation: "Only exact GELU is lowered: `F.gelu(t)` or `F.gelu(t, approximate=\"none\")` with a \
string literal. `approximate=\"tanh\"`, dynamic or positional values, and `.gelu()` stay on Python.",
    },
    CodeDoc {
        code: FUNCTIONAL_OPTIONS,
        summary: "functional arithmetic with options or non-tensor operands",
        explanation: "`torch.add/sub/mul/div(a, b)` are lowered for two positional tensors only. Options that \
change the meaning (`alpha=`, `rounding_mode=`, `out=`) and scalar operands keep the call on \
Python; use the operators (`a + 2.0`) for scalars.",
    },
    CodeDoc {
        code: SOFTMAX_FORM,
        summary: "softmax outside the static contract",
        explanation: "`t.softmax(dim)`, `torch.softmax(t, dim)` and `F.softmax(t, dim)` are lowered with a \
literal `dim` given once (rank 1: 0; rank 2: 0 or 1). `F.softmax` also accepts a literal \
`dtype=None`. Implicit dims, dtype changes and other options stay on Python.",
    },
    CodeDoc {
        code: ARGMAX_FORM,
        summary: "argmax outside the static contract",
        explanation: "`t.argmax(dim)` and `torch.argmax(t, dim)` are lowered when the int64 result is rank 1: \
rank-2 input with dim 0/1 and keepdim False, or rank-1 input with dim 0 and keepdim=True. \
Whole-tensor argmax (rank 0) and rank-2 keepdim=True (int64 rank 2) have no registered type.",
    },
    CodeDoc {
        code: INT64_ARITHMETIC,
        summary: "arithmetic on int64 classification results",
        explanation: "TensorI64Cpu1D values (argmax results) can be returned but not used in arithmetic or \
activations natively; elementwise arithmetic is float32 only.",
    },
    CodeDoc {
        code: SCALAR_OPERAND,
        summary: "scalar operand of an unsupported type",
        explanation: "Tensor-scalar `+ - * /` accepts Python int and float operands (literals or int/float \
parameters) on either side; the float32 tensor stays float32, as in eager. bool, str and None \
operands stay on Python.",
    },
];
