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

/// `clamp` / `clamp_min` / `clamp_max` outside the scalar-bound contract.
pub const CLAMP_FORM: &str = "RXTP-TORCH-017";
/// `F.layer_norm` outside the last-dim contract.
pub const LAYER_NORM_FORM: &str = "RXTP-TORCH-018";
/// `t()`, `.T`, `transpose`, `unsqueeze` outside the static-dim contract.
pub const VIEW_FORM: &str = "RXTP-TORCH-019";
/// `squeeze`: its result rank depends on a runtime size.
pub const SQUEEZE_RANK: &str = "RXTP-TORCH-020";
/// A tensor comparison with operands outside the float32 surface.
pub const COMPARE_FORM: &str = "RXTP-TORCH-021";
/// `torch.where` outside the bool-condition contract.
pub const WHERE_FORM: &str = "RXTP-TORCH-022";
/// `zeros_like` / `ones_like` / `full_like` with options or a bad fill value.
pub const LIKE_FORM: &str = "RXTP-TORCH-023";
/// `F.silu` / `F.leaky_relu` / `F.elu` / `F.softplus` / `F.hardtanh` / `F.relu6` with parameters
/// outside the lowered set.
pub const ACTIVATION_PARAMS: &str = "RXTP-TORCH-024";
/// `t.max(dim)` outside the (values, indices) contract.
pub const MAX_DIM_FORM: &str = "RXTP-TORCH-025";
/// Shape queries (`size`, `dim`, `numel`, `ndim`, `shape`, `len`) outside the static contract.
pub const SHAPE_QUERY_FORM: &str = "RXTP-TORCH-026";

/// A site with `cuda:0` tensors outside the exact build-only CUDA lane.
pub const CUDA_FORM: &str = "RXTP-TORCH-027";
/// A site mixing `cuda:0` and CPU tensors (the slice never transfers between host and device).
pub const CUDA_DEVICE_MIX: &str = "RXTP-TORCH-028";

/// `torch.cat` / `torch.concat` of something other than a list or tuple of rank-2 float32 tensors.
pub const CAT_SEQUENCE: &str = "RXTP-TORCH-029";
/// `torch.cat` / `torch.concat` with a dim or keywords outside the static contract.
pub const CAT_FORM: &str = "RXTP-TORCH-030";
/// A `torch.nn` submodule or tensor attribute assigned in a module class's `__init__` in a form
/// a compiled method does not call or read.
pub const MODULE_FORM: &str = "RXTP-TORCH-031";
/// `F.batch_norm` outside the eval-mode contract.
pub const BATCH_NORM_FORM: &str = "RXTP-TORCH-032";

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
        explanation: "The activations and unary math ops (`relu`, `sigmoid`, `tanh`, `abs`, `exp`, `sqrt`, \
`erf`, ...; `rextio capabilities` lists every one) are lowered as methods without arguments \
(`t.exp()`) and as functions with exactly one positional tensor and no keywords (`torch.exp(t)`; \
`out=` is not lowered).",
    },
    CodeDoc {
        code: IN_PLACE,
        summary: "in-place operation requested",
        explanation: "`F.relu(t, inplace=True)` (and `nn.ReLU(inplace=True)`, and the other \
activations taking `inplace`) writes into its input. Native code never mutates values that came \
from Python, so an in-place form is lowered only where the write cannot be seen: when the input \
is a tensor the function made itself (the result of an op that always returns a new tensor, \
such as `F.linear`, `+` or `F.layer_norm`) that nothing else refers to. That holds for a call's \
result passed directly (`F.relu(self.fc(x), inplace=True)`, a Sequential's `Linear` then \
`ReLU(inplace=True)`), and for a local bound to such a result and read nowhere since, in the \
statement that rebinds it (`h = self.fc(x)` then `h = self.relu(h)`) or returns it. It does not \
hold for a parameter, an attribute, a name read twice or copied, a view (`t.T`, `flatten`) or \
a name an `if` or loop since its binding mentions: those calls stay on Python, as does a non-literal \
`inplace`. Where the in-place form is lowered it computes the same values as the out-of-place \
one. The same holds for augmented assignment to a tensor (`out += identity`, `h *= 0.5`, with \
`+= -= *= /=`), which updates the tensor in place in eager: it is lowered on a local holding such \
a tensor (`out = self.fc(x)` then `out += identity`), and the result keeps the local's \
shape (a broadcast that would grow it raises eager's error); on anything else write \
`h = h + v`.",
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
(and `amax`/`amin` likewise) with `dim` an int literal in range given once (positionally or as \
`dim=`; negative dims count from the end and are normalised statically) and `keepdim` omitted or a named \
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
(`view`, `reshape`), method arithmetic (`.add`), `%`, `//`, `**` and operations on bool tensors \
other than `torch.where` land here. The function keeps its Python body; `rextio capabilities` lists the exact \
surface.",
    },
    CodeDoc {
        code: GELU_APPROXIMATE,
        summary: "GELU approximation other than \"none\"",
        explanation: "Exact GELU is lowered: `F.gelu(t)` or `F.gelu(t, approximate=\"none\")` with a \
string literal; so is its tanh form, `F.gelu(t, approximate=\"tanh\")`, which runs eager's own kernel \
(one libtorch call; it is not fused). Other or dynamic values, a positional `approximate`, and \
`.gelu()` stay on Python. \
Native exact GELU answers as eager does on the host it runs on, special values included: eager calls \
oneDNN for a contiguous float32 tensor of more than one element unless the program turned it off \
(`torch.backends.mkldnn.enabled = False`), and oneDNN's answers for `gelu(-0)`, for the zeros of \
`x < -5.6` and for `gelu(+inf)` depend on the instruction set it runs (AVX-512: `-0`, `-0`, NaN; AVX2 or \
`ONEDNN_MAX_CPU_ISA=AVX2`: `+0`, `+0`, `+inf`; torch's own kernel: `-0`, `-0`, `+inf`). The runtime \
makes libtorch's decision on every call and measures each path's answers once per process through \
libtorch; where they fall outside what its kernels reproduce, the call runs libtorch's own GELU.",
    },
    CodeDoc {
        code: FUNCTIONAL_OPTIONS,
        summary: "functional arithmetic with options or non-tensor operands",
        explanation: "`torch.add/sub/mul/div(a, b)` and `torch.maximum/minimum(a, b)` (or \
`a.maximum(b)`) are lowered for two positional tensors only. Options that \
change the meaning (`alpha=`, `rounding_mode=`, `out=`) and scalar operands keep the call on \
Python; use the operators (`a + 2.0`) for scalars.",
    },
    CodeDoc {
        code: SOFTMAX_FORM,
        summary: "softmax outside the static contract",
        explanation: "`t.softmax(dim)`, `torch.softmax(t, dim)` and `F.softmax(t, dim)` are lowered with a \
literal `dim` given once (rank 1: 0 or -1; rank 2: 0, 1, -1 or -2; normalised statically), and \
`log_softmax` in the same three spellings. `F.softmax` / `F.log_softmax` also accept a literal \
`dtype=None`. Implicit dims, dtype changes and other options stay on Python.",
    },
    CodeDoc {
        code: ARGMAX_FORM,
        summary: "argmax outside the static contract",
        explanation: "`t.argmax(dim)` and `torch.argmax(t, dim)` are lowered when the int64 result is rank 1: \
rank-2 input with dim 0/1 (or -2/-1) and keepdim False, or rank-1 input with dim 0 (or -1) and \
keepdim=True. \
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
    CodeDoc {
        code: CLAMP_FORM,
        summary: "clamp outside the scalar-bound contract",
        explanation: "`torch.clamp(t, min, max)`, `torch.clip`, `t.clamp(...)` and `t.clip(...)` are lowered \
with scalar bounds: each of `min` and `max` (positional or keyword) a Python int or float, literal \
or parameter, or a literal `None`, and at least one of them given and not `None` (eager raises \
otherwise). `torch.clamp_min(t, m)` / `t.clamp_min(m)` and `clamp_max` take exactly one scalar. \
Tensor bounds, bool bounds, `out=` and in-place `clamp_` stay on Python. The float32 tensor stays \
float32, as in eager; `clamp(min > max)` sets every element to `max`, as in eager.",
    },
    CodeDoc {
        code: LAYER_NORM_FORM,
        summary: "layer_norm outside the last-dim contract",
        explanation: "`F.layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5)` is lowered for \
a rank-1 or rank-2 float32 input normalised over its last dim only: `normalized_shape` must be a \
one-element tuple of int (`(n,)`, `(x.shape[-1],)`, a `tuple[int]` value) or a one-element list \
written in the call (`[n]`); its value is checked by libtorch at run time exactly as eager checks \
it (a wrong `n` raises the same RuntimeError). A plain int, or a sequence of two or more ints \
(normalising several dims), is not lowered: a multi-dim normalised shape needs a rank the surface \
does not prove. `weight` and `bias` must be rank-1 float32 tensors or `None`; `eps` a float \
literal or float parameter.",
    },
    CodeDoc {
        code: VIEW_FORM,
        summary: "transpose / t / T / unsqueeze / flatten outside the static-dim contract",
        explanation: "`t.t()`, `torch.t(t)` (rank 1 or 2), `t.T` (rank 2 only: on other ranks eager warns \
that it is deprecated), `t.transpose(d0, d1)` / `torch.transpose(t, d0, d1)` with two int literal \
dims in range (negative dims normalised against the static rank), and `t.unsqueeze(d)` / \
`torch.unsqueeze(t, d)` of a rank-1 tensor with a literal `d` in [-2, 2), and `t.flatten(s, e)` / \
`torch.flatten(t, s, e)` of a rank-1 or rank-2 tensor with literal dims in range and `s <= e` \
(defaults 0 and -1) are lowered. Dims that are not int literals, out of range, or results of \
rank 3 are not. Native results are fresh \
tensors with the same values, dtype and shape as eager's view, not views: a native function never \
returns memory aliasing its inputs, because later native operations may write owned temporaries \
in place.",
    },
    CodeDoc {
        code: SQUEEZE_RANK,
        summary: "squeeze: the result rank depends on a runtime size",
        explanation: "`t.squeeze(d)` removes dim `d` only when its size is 1; otherwise eager returns the \
tensor unchanged, with its rank. Rextio types carry the rank statically, so a rank-2 -> rank-1 \
claim would be wrong whenever the size is not 1, and raising at run time in that case would \
differ from eager. `squeeze` is therefore never lowered; index the tensor or use `mean`/`sum` \
over a size-1 dim with `keepdim=False`, whose rank is static.",
    },
    CodeDoc {
        code: COMPARE_FORM,
        summary: "tensor comparison outside the float32 surface",
        explanation: "`a < b`, `<=`, `>`, `>=`, `==`, `!=` are lowered between two float32 tensors of ranks \
1/1, 2/2, 2/1 or 1/2 (broadcast), or a float32 tensor and a Python int or float (literal or \
parameter) on either side. The result is a bool tensor (TensorBoolCpu1D / TensorBoolCpu2D) of the \
larger rank. Chained comparisons, bool/int64 tensor operands, and `is` / `in` stay on Python; \
using the bool result as an `if` condition is tensor-data-dependent control flow and stays on \
Python.",
    },
    CodeDoc {
        code: WHERE_FORM,
        summary: "torch.where outside the bool-condition contract",
        explanation: "`torch.where(cond, a, b)` is lowered with three positional operands: `cond` a bool \
tensor (rank 1 or 2, a comparison result or a TensorBoolCpu parameter), `a` and `b` each a \
float32 tensor of rank 1 or 2 or a Python int or float. The result is float32 of the largest \
rank, as in eager's type promotion (a float32 tensor with a Python scalar stays float32; two \
float scalars give float32). Two int scalars would give int64 rank 1/2 values the surface does \
not type, one-argument `torch.where(cond)` returns indices, and keywords stay on Python.",
    },
    CodeDoc {
        code: LIKE_FORM,
        summary: "zeros_like / ones_like / full_like with options",
        explanation: "`torch.zeros_like(t)`, `torch.ones_like(t)` and `torch.full_like(t, value)` are lowered \
for a float32 rank-1/2 tensor with no keywords (`dtype=`, `device=`, `layout=`, \
`requires_grad=`, `memory_format=` change what is created) and, for `full_like`, a Python int or \
float fill value (literal or parameter). The result is a fresh float32 tensor of the same shape.",
    },
    CodeDoc {
        code: ACTIVATION_PARAMS,
        summary: "parameterised activation outside the lowered parameters",
        explanation: "`F.silu(t[, inplace=False])`, `F.leaky_relu(t[, negative_slope][, inplace=False])` with \
`negative_slope` an int/float literal or parameter (default 0.01), `F.elu(t[, alpha=1.0][, \
inplace=False])` and `F.softplus(t[, beta=1][, threshold=20])` with their parameters float \
literals or float parameters, or int literals within 2^24 (the defaults run the fused kernels; \
other values run eager's kernel through one libtorch call), `F.hardtanh(t[, min_val=-1.0][, \
max_val=1.0][, inplace=False])` with bounds that are int or float literals and `min_val <= \
max_val` (eager raises otherwise), and `F.relu6(t[, inplace=False])` are lowered. `alpha`, \
`beta` or `threshold` held in int parameters or other values stay on Python; `inplace=True` is \
lowered only on a tensor the function made itself that nothing else refers to (see RXTP-TORCH-004).",
    },
    CodeDoc {
        code: MAX_DIM_FORM,
        summary: "t.max(dim) outside the (values, indices) contract",
        explanation: "`t.max(dim[, keepdim=b])` and `torch.max(t, dim[, keepdim=b])` are lowered with a literal \
dim (negative allowed) when both results have registered types: rank-2 input with keepdim False \
(float32 rank-1 values, int64 rank-1 indices) or rank-1 input with keepdim=True. The value is a \
`(values, indices)` tuple; natively it is a plain Python tuple rather than \
`torch.return_types.max`, so unpack it (`values, indices = t.max(1)`) or index it. `t.max()` \
(rank 0) and `t.max(other)` (elementwise; use `torch.maximum`) stay on Python.",
    },
    CodeDoc {
        code: SHAPE_QUERY_FORM,
        summary: "shape query outside the static contract",
        explanation: "`t.size()` and `t.shape` (a tuple of ints of the static rank), `t.size(d)` / \
`t.size(dim=d)` with an int literal `d` in range (negative allowed), `t.dim()`, `t.ndimension()`, \
`t.ndim`, `t.numel()` and `len(t)` are lowered to exact Python ints read from the tensor at run \
time. Dynamic dims, out-of-range dims and extra arguments stay on Python.",
    },
    CodeDoc {
        code: CUDA_FORM,
        summary: "cuda:0 tensor site outside the build-only CUDA E2 slice",
        explanation: "The CUDA E2 slice (TensorF32Cuda0_2D / TensorF32Cuda0_1D, float32 tensors already \
resident on cuda:0) lowers exactly four forms: `a @ b` with both rank 2, `h + bias` with a rank-2 \
left and a rank-1 right operand, `h.relu()` on rank 2 and `h.mean(dim=1)` on rank 2 (result rank \
1). Everything else on CUDA tensors stays on Python: functional spellings (`torch.matmul`, \
`F.relu`, `torch.mean`), reverse or same-rank addition, mixed-rank matmul, other dims or keywords, \
positional dims, scalars, comparisons, shape queries and every other method. Lowering also needs \
the `rextio-device-cuda` authorisation of `cuda-libtorch-linux-x86_64` (see RXT019).",
    },
    CodeDoc {
        code: CUDA_DEVICE_MIX,
        summary: "cuda:0 and CPU tensors mixed in one site",
        explanation: "The CUDA E2 slice never moves data between host and device: every operand of a CUDA \
site must be a cuda:0 tensor type. A site combining a TensorF32Cuda0 operand with a CPU tensor \
type stays on Python; move the data in Python (`.cuda()` / `.to()` are not lowered) and annotate \
the native function with CUDA types only.",
    },
    CodeDoc {
        code: CAT_SEQUENCE,
        summary: "torch.cat of something other than a list or tuple of rank-2 float32 tensors",
        explanation: "`torch.cat(tensors[, dim])` and its alias `torch.concat` are lowered when `tensors` is a \
list or tuple of 1 to 16 TensorF32Cpu2D values whose length the source fixes: a list or tuple \
written in the call (`torch.cat([a, b])`, `torch.cat((a, b @ w), 1)`) or a tuple-typed local \
(`xs = (a, b)`). A list bound to a name first (`xs = [a, b]; torch.cat(xs)`) is not: the host \
lowers a list literal only as a direct argument of a call (RXT004), because a list can be \
mutated or grow. An empty sequence (eager raises), a single tensor instead of a sequence, rank-1, \
int64 or bool elements (eager raises on mixed ranks and promotes mixed dtypes), Python numbers, \
and more than 16 elements stay on Python; a sequence of cuda:0 tensors is outside the CUDA slice \
(RXTP-TORCH-027).",
    },
    CodeDoc {
        code: CAT_FORM,
        summary: "torch.cat with a dim or keywords outside the static contract",
        explanation: "The dim of `torch.cat` / `torch.concat` must be omitted (0) or an int literal in range for \
rank 2 (0, 1, -1 or -2; negative dims are normalised statically), given once, positionally or as \
`dim=`. A dim held in a variable, out of range (eager raises IndexError), or a string (named) \
dim, and \
keywords other than `tensors=` and `dim=` (`out=` writes into a caller's tensor) stay on Python. \
Sizes of the other dim are checked by libtorch at run time exactly as eager checks them: a \
mismatch raises the same RuntimeError. The result is a fresh tensor that never aliases an input.",
    },
    CodeDoc {
        code: BATCH_NORM_FORM,
        summary: "batch_norm outside the eval-mode contract",
        explanation: "`F.batch_norm(x, running_mean, running_var, weight=None, bias=None, training=False, \
momentum=0.1, eps=1e-5)` is lowered in eval mode only: `x` a rank-2 float32 tensor `(N, C)`, the running \
statistics rank-1 float32 tensors (their length is checked by libtorch at run time, as eager checks it), \
`weight` and `bias` rank-1 tensors or None, `training` omitted or the literal False, `momentum` and `eps` \
floats. It runs eager's own kernel (one libtorch call), which reads the running statistics and never \
updates them. `training=True` (or a value that may be true) updates the running statistics in place and \
normalises by the batch, and stays on Python, as do rank-1 inputs and missing running statistics.",
    },
    CodeDoc {
        code: MODULE_FORM,
        summary: "a torch.nn submodule or tensor attribute in a form compiled methods do not use",
        explanation: "A compiled method of an `nn.Module` class calls the submodules its `__init__` assigns \
when they are one of: `nn.Linear(in, out[, bias=True|False])`, `nn.LayerNorm(n[, eps][, \
elementwise_affine=True|False][, bias=True|False])` over the last dim, `nn.ReLU()`, `nn.SiLU()` \
(with `inplace=True` the call is `F.relu(x, inplace=True)` / `F.silu(x, inplace=True)`, lowered where \
its input is private, see RXTP-TORCH-004; likewise for `nn.LeakyReLU`, `nn.ELU`, `nn.Hardtanh` and \
`nn.ReLU6`), `nn.GELU()` (exact, or `approximate=\"tanh\"`), `nn.Tanh()`, `nn.Sigmoid()`, `nn.LeakyReLU`, \
`nn.ELU`, `nn.Softplus`, `nn.Identity()`, `nn.Dropout(p[, inplace])` (the identity in eval mode; in training \
mode the original method runs), `nn.BatchNorm1d(n[, eps][, momentum][, affine=True|False])` with running \
statistics (in eval mode it normalises by them; in training mode, which updates them, the original \
method runs), `nn.Softmax(dim=<int literal>)`, `nn.LogSoftmax(dim=<int \
literal>)` and `nn.Flatten([start_dim][, end_dim])` with int literal dims (on rank-1 and rank-2 \
inputs, as `torch.flatten`). Boolean options must be literals (which computation runs depends on them); a device \
or dtype argument is not float32 CPU. Tensor attributes are read when their rank is known from the \
constructing call: `nn.Parameter(torch.zeros(d))`, `torch.randn(a, b)`, `torch.ones`, `torch.rand`, \
`torch.empty`, `torch.full((a, b), v)` with a float `v`, `torch.eye(n[, m])`, \
`torch.linspace(start, end, steps)` and `torch.arange` with a float argument (of ints it makes an \
int64 tensor), each also with `+`, `-`, `*` or `/` and a Python int or \
float (`torch.randn(d) * 0.02 + 1.0`, which keeps the factory's float32 dtype and rank; arithmetic \
between two tensors is not read), also as `register_buffer(name, ...)` and `register_parameter(name, ...)` values, float32 rank 1 \
or 2. Nothing read from `__init__` is trusted at run time: each call reads the live weights and \
options, checks each submodule's exact class and every condition taken from a literal (a \
`Softmax` whose `dim` was changed later runs the original), and runs the original method when \
anything differs. Methods using an attribute assigned in another form stay on Python.",
    },
];
