//! Every diagnostic code of rextio-torch, in one table. Codes are never reused.

use rextio_plugin_api::CodeDoc;

/// `F.linear` called with the wrong number of operands or with keywords.
pub const LINEAR_FORM: &str = "RXTP-TORCH-001";
/// `F.linear` operands of the wrong ranks.
pub const LINEAR_RANKS: &str = "RXTP-TORCH-002";
/// An activation method called with arguments.
pub const ACTIVATION_ARGS: &str = "RXTP-TORCH-003";
/// Matmul operands of the wrong ranks.
pub const MATMUL_RANKS: &str = "RXTP-TORCH-005";
/// Matmul call with keywords or the wrong arity.
pub const MATMUL_FORM: &str = "RXTP-TORCH-006";
/// `+` with an unsupported rank pair.
pub const ADD_RANKS: &str = "RXTP-TORCH-007";
/// Reduction keywords that are not the literal `dim=1, keepdim=False`.
pub const REDUCTION_FORM: &str = "RXTP-TORCH-008";
/// Reduction on a receiver that is not rank 2.
pub const REDUCTION_RANK: &str = "RXTP-TORCH-009";
/// A covered torch site whose types or form fall outside the surface.
pub const UNSUPPORTED_SURFACE: &str = "RXTP-TORCH-010";

/// The code table printed by `rextio explain`.
pub const CODES: &[CodeDoc] = &[
    CodeDoc {
        code: LINEAR_FORM,
        summary: "torch.nn.functional.linear needs exactly three positional tensors",
        explanation: "The native linear rule accepts `F.linear(x, weight, bias)` with three positional \
float32 CPU tensors and no keywords. Other arities, keyword arguments and the method form are \
recognised but not lowered, so the function stays on Python.\n\nWrite `F.linear(x, weight, bias)` \
with all three operands positional.",
    },
    CodeDoc {
        code: LINEAR_RANKS,
        summary: "torch.nn.functional.linear operands have the wrong ranks",
        explanation: "Native linear needs `x` and `weight` annotated rank 2 (TensorF32Cpu2D) and `bias` \
rank 1 (TensorF32Cpu1D); it returns rank 2. Any other rank combination stays on Python.\n\n\
Annotate the operands with the matching marker types, or keep this call in Python.",
    },
    CodeDoc {
        code: ACTIVATION_ARGS,
        summary: "activation and reduction-free tensor methods take no arguments",
        explanation: "`.relu()`, `.sigmoid()` and `.tanh()` are lowered only in their zero-argument \
form. Calls with positional or keyword arguments are recognised but stay on Python.\n\nCall the \
method without arguments.",
    },
    CodeDoc {
        code: MATMUL_RANKS,
        summary: "matrix multiplication operands must both be rank 2",
        explanation: "`a @ b`, `torch.matmul(a, b)` and `a.matmul(b)` are lowered when both operands are \
rank-2 float32 CPU tensors. Rank-1 operands stay on Python.\n\nReshape in Python or annotate both \
operands as TensorF32Cpu2D.",
    },
    CodeDoc {
        code: MATMUL_FORM,
        summary: "matmul call with keywords or the wrong number of operands",
        explanation: "`torch.matmul(a, b)` takes exactly two positional tensors and `a.matmul(b)` exactly \
one; keywords such as `out=` are not lowered.\n\nDrop the keywords or keep the call in Python.",
    },
    CodeDoc {
        code: ADD_RANKS,
        summary: "`+` on tensors needs equal ranks or a rank-2/rank-1 bias broadcast",
        explanation: "Native `a + b` accepts rank 1 + rank 1, rank 2 + rank 2, and one rank-2 with one \
rank-1 operand in either order (trailing-dimension broadcast). Other combinations stay on Python.",
    },
    CodeDoc {
        code: REDUCTION_FORM,
        summary: "mean/sum need exactly the literal keywords dim=1, keepdim=False",
        explanation: "`.mean(dim=1, keepdim=False)` and `.sum(dim=1, keepdim=False)` are lowered with \
both keywords written as literals (in any order) and no positional arguments. Dynamic values, other \
dims, `keepdim=True`, positional arguments or extra keywords stay on Python.",
    },
    CodeDoc {
        code: REDUCTION_RANK,
        summary: "mean/sum receiver must be rank 2",
        explanation: "The native reductions reduce a rank-2 float32 CPU tensor over dim 1 to rank 1. \
Other receiver ranks stay on Python.",
    },
    CodeDoc {
        code: UNSUPPORTED_SURFACE,
        summary: "torch operation outside the native rextio-torch surface",
        explanation: "A torch site on annotated tensors was recognised, but its operator, method, \
operand types or options are outside the surface rextio-torch lowers (float32 CPU rank-1/rank-2 \
tensors; linear, relu/sigmoid/tanh, matmul, +, mean/sum over dim 1). Scalar operands, other \
elementwise operators, in-place methods and views all land here. The function keeps its Python \
body; `rextio capabilities` lists the exact surface.",
    },
];
