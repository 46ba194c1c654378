//! Rule records: the documented surface (`rextio capabilities` lists them; the codes are in
//! docs/diagnostics.md). Rule ids are `rextio-torch/...` and never change once published.

use crate::codes;
use rextio_plugin_api::{RuleRecord, RuleScope, Stability};

/// CUDA lane: `a @ b`, both rank 2 on `cuda:0`.
pub const CUDA_MATMUL: &str = "rextio-torch/cuda0-tensor-matmul-f32-2d";
/// CUDA lane: `h + bias`, rank 2 + rank 1 on `cuda:0`.
pub const CUDA_ADD_BIAS: &str = "rextio-torch/cuda0-tensor-add-bias-f32-2d-1d";
/// CUDA lane: `h.relu()`, rank 2 on `cuda:0`.
pub const CUDA_RELU: &str = "rextio-torch/cuda0-tensor-relu-f32-2d";
/// CUDA lane: `h.mean(dim=1)`, rank 2 -> rank 1 on `cuda:0`.
pub const CUDA_MEAN_DIM1: &str = "rextio-torch/cuda0-tensor-mean-dim1-f32-2d";
/// The CUDA lane's rules, in chain order.
pub const CUDA_RULES: &[&str] = &[CUDA_MATMUL, CUDA_ADD_BIAS, CUDA_RELU, CUDA_MEAN_DIM1];

/// `F.linear(x, w, b)`, three positional tensors.
pub const LINEAR: &str = "rextio-torch/functional-linear-f32-cpu-2d";
/// `F.linear(x, w)`, `(x, w, None)`, `(x, w, bias=None)`.
pub const LINEAR_NONE: &str = "rextio-torch/functional-linear-none-f32-cpu-2d";
/// `F.linear` with tensor-valued keywords.
pub const LINEAR_KEYWORDS: &str = "rextio-torch/functional-linear-keywords-f32-cpu-2d";
/// `F.relu(t)` with omitted or literal `inplace=False`.
pub const F_RELU: &str = "rextio-torch/functional-relu-f32-cpu-rank1-2";
/// Exact GELU.
pub const GELU: &str = "rextio-torch/functional-gelu-none-f32-cpu-rank1-2";
/// Eval-mode batch normalisation of a rank-2 input over its dim 1 (per-op: eager's kernel).
pub const BATCH_NORM: &str = "rextio-torch/functional-batch-norm-eval-f32-cpu-2d";
/// GELU's tanh approximation (per-op: eager's kernel).
pub const GELU_TANH: &str = "rextio-torch/functional-gelu-tanh-f32-cpu-rank1-2";
/// `a @ b`, 2 x 2.
pub const MATMUL_BINOP: &str = "rextio-torch/tensor-matmul-f32-cpu-2d";
/// `a @ b`, 2 x 1 or 1 x 2.
pub const MATMUL_BINOP_MIXED: &str = "rextio-torch/tensor-matmul-f32-cpu-mixed-rank";
/// `torch.matmul(a, b)` / `a.matmul(b)`, 2 x 2.
pub const MATMUL_CALL: &str = "rextio-torch/tensor-matmul-call-f32-cpu-2d";
/// `torch.matmul(a, b)` / `a.matmul(b)`, mixed ranks.
pub const MATMUL_CALL_MIXED: &str = "rextio-torch/tensor-matmul-call-f32-cpu-mixed-rank";
/// `.mean(dim=1, keepdim=False)` on rank 2 (the dim=1 form).
pub const MEAN_DIM1: &str = "rextio-torch/tensor-mean-dim1-f32-cpu-2d";
/// `.sum(dim=1, keepdim=False)` on rank 2 (the dim=1 form).
pub const SUM_DIM1: &str = "rextio-torch/tensor-sum-dim1-f32-cpu-2d";
/// Static-dim mean, method or function.
pub const MEAN_STATIC: &str = "rextio-torch/mean-static-dim-f32-cpu-rank1-2";
/// Static-dim sum, method or function.
pub const SUM_STATIC: &str = "rextio-torch/sum-static-dim-f32-cpu-rank1-2";
/// `t.softmax(dim=1)` on rank 2.
pub const SOFTMAX_DIM1: &str = "rextio-torch/tensor-softmax-dim1-f32-cpu-2d";
/// Static-dim softmax, method or `torch.softmax`.
pub const SOFTMAX_STATIC: &str = "rextio-torch/softmax-static-dim-f32-cpu-rank1-2";
/// `F.softmax`.
pub const F_SOFTMAX: &str = "rextio-torch/functional-softmax-f32-cpu-rank1-2";
/// `t.argmax(dim=1)` on rank 2.
pub const ARGMAX_DIM1: &str = "rextio-torch/tensor-argmax-dim1-i64-cpu-2d";
/// Static-dim argmax with a rank-1 int64 result.
pub const ARGMAX_STATIC: &str = "rextio-torch/argmax-static-dim-i64-cpu-rank1";
/// Static-dim amax.
pub const AMAX_STATIC: &str = "rextio-torch/amax-static-dim-f32-cpu-rank1-2";
/// Static-dim amin.
pub const AMIN_STATIC: &str = "rextio-torch/amin-static-dim-f32-cpu-rank1-2";
/// `t.max(dim)` -> `(values, indices)`.
pub const MAX_DIM: &str = "rextio-torch/max-dim-values-indices-f32-i64-cpu-rank1";
/// Static-dim log_softmax, every spelling.
pub const LOG_SOFTMAX: &str = "rextio-torch/log-softmax-static-dim-f32-cpu-rank1-2";
/// `F.silu`.
pub const SILU: &str = "rextio-torch/functional-silu-f32-cpu-rank1-2";
/// `F.leaky_relu` with the default slope.
pub const LEAKY_RELU: &str = "rextio-torch/functional-leaky-relu-f32-cpu-rank1-2";
/// `F.leaky_relu` with a given slope.
pub const LEAKY_RELU_SLOPE: &str = "rextio-torch/functional-leaky-relu-slope-f32-cpu-rank1-2";
/// `F.elu` with `alpha=1.0`.
pub const ELU: &str = "rextio-torch/functional-elu-f32-cpu-rank1-2";
/// `F.softplus` with the default beta and threshold.
pub const SOFTPLUS: &str = "rextio-torch/functional-softplus-f32-cpu-rank1-2";
/// `F.elu` with another `alpha` (per-op: eager's kernel).
pub const ELU_ALPHA: &str = "rextio-torch/functional-elu-alpha-f32-cpu-rank1-2";
/// `F.softplus` with other `beta` / `threshold` (per-op: eager's kernel).
pub const SOFTPLUS_PARAMS: &str = "rextio-torch/functional-softplus-params-f32-cpu-rank1-2";
/// `F.hardtanh` with literal bounds (eager's `clamp`).
pub const HARDTANH: &str = "rextio-torch/functional-hardtanh-f32-cpu-rank1-2";
/// `F.relu6` (eager's `hardtanh(t, 0, 6)`).
pub const RELU6: &str = "rextio-torch/functional-relu6-f32-cpu-rank1-2";
/// `F.dropout` through eager's own kernel (`at::dropout`, the same generator).
pub const DROPOUT: &str = "rextio-torch/functional-dropout-f32-cpu-rank1-2";
/// `F.layer_norm` over the last dim.
pub const LAYER_NORM: &str = "rextio-torch/functional-layer-norm-last-dim-f32-cpu-rank1-2";
/// `t.transpose(d0, d1)` / `torch.transpose(t, d0, d1)`.
pub const TRANSPOSE: &str = "rextio-torch/tensor-transpose-f32-cpu-rank1-2";
/// `t.t()` / `torch.t(t)`.
pub const T_METHOD: &str = "rextio-torch/tensor-t-f32-cpu-rank1-2";
/// `t.T`.
pub const T_ATTR: &str = "rextio-torch/tensor-attribute-t-f32-cpu-2d";
/// `t.unsqueeze(d)` rank 1 -> 2.
pub const UNSQUEEZE: &str = "rextio-torch/tensor-unsqueeze-f32-cpu-1d-to-2d";
/// `t.flatten(s, e)` / `torch.flatten(t, s, e)` on rank 1 or 2.
pub const FLATTEN: &str = "rextio-torch/tensor-flatten-f32-cpu-rank1-2";
/// `t.size(d)`.
pub const SIZE_DIM: &str = "rextio-torch/tensor-size-dim-int";
/// `t.size()`.
pub const SIZE_TUPLE: &str = "rextio-torch/tensor-size-tuple-int";
/// `t.shape`.
pub const SHAPE_ATTR: &str = "rextio-torch/tensor-attribute-shape-tuple-int";
/// `t.dim()` / `t.ndimension()`.
pub const DIM: &str = "rextio-torch/tensor-dim-int";
/// `t.ndim`.
pub const NDIM_ATTR: &str = "rextio-torch/tensor-attribute-ndim-int";
/// `t.numel()`.
pub const NUMEL: &str = "rextio-torch/tensor-numel-int";
/// `len(t)`.
pub const LEN: &str = "rextio-torch/builtin-len-tensor-int";
/// `torch.cat(seq[, dim])` / `torch.concat(...)` of rank-2 tensors.
pub const CAT: &str = "rextio-torch/cat-static-dim-f32-cpu-2d";
/// The fallback lane for covered sites outside the surface.
pub const UNSUPPORTED: &str = "rextio-torch/unsupported-tensor-surface";

/// Where a unary op's rule ids come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryFamily {
    /// An activation: one rule per receiver rank for `t.name()`
    /// ([`activation_method`]) and one for `torch.name(t)` ([`activation_function`]).
    Activation,
    /// Unary math: one rule for `torch.name(t)` and `t.name()` alike ([`unary`]).
    Math,
}

/// One unary elementwise op: claimed as `t.name()` and `torch.name(t)` on a float32 CPU
/// tensor of rank 1 or 2, lowered to [`Unary`]'s runtime (`runtime::unary`, or
/// `runtime::unary_owned` on an owned temporary), fused as `fused` when the kernels have it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnaryOp {
    /// The op.
    pub op: Unary,
    /// Its Rust variant name (generated code names `rules::Unary::<variant>`).
    pub variant: &'static str,
    /// The method and `torch.` function name.
    pub name: &'static str,
    /// Its rule ids' family.
    pub family: UnaryFamily,
    /// The fused kernel with torch's float32 semantics, specials included.
    pub fused: Option<rextio_fusion::UnaryF>,
}

macro_rules! unary_ops {
    ($($(#[$doc:meta])* $variant:ident => $name:literal, $family:ident, $fused:expr;)*) => {
        /// A unary op of [`UNARY_OPS`] (the runtime matches on it exhaustively).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Unary {
            $($(#[$doc])* $variant,)*
        }

        impl Unary {
            /// Its row of [`UNARY_OPS`].
            pub const fn row(self) -> &'static UnaryOp {
                match self {
                    $(Unary::$variant => &UnaryOp {
                        op: Unary::$variant,
                        variant: stringify!($variant),
                        name: $name,
                        family: UnaryFamily::$family,
                        fused: $fused,
                    },)*
                }
            }
        }

        /// The unary elementwise table: one row per op, in documentation order.
        pub const UNARY_OPS: &[UnaryOp] = &[$(*Unary::$variant.row(),)*];
    };
}

unary_ops! {
    /// `t.relu()` / `torch.relu(t)`.
    Relu => "relu", Activation, Some(rextio_fusion::UnaryF::Relu);
    /// `t.sigmoid()` / `torch.sigmoid(t)`.
    Sigmoid => "sigmoid", Activation, Some(rextio_fusion::UnaryF::Sigmoid);
    /// `t.tanh()` / `torch.tanh(t)`.
    Tanh => "tanh", Activation, Some(rextio_fusion::UnaryF::Tanh);
    /// `t.abs()` / `torch.abs(t)`.
    Abs => "abs", Math, Some(rextio_fusion::UnaryF::Abs);
    /// `t.neg()` / `torch.neg(t)`.
    Neg => "neg", Math, Some(rextio_fusion::UnaryF::Neg);
    /// `t.negative()` / `torch.negative(t)`.
    Negative => "negative", Math, Some(rextio_fusion::UnaryF::Neg);
    /// `t.square()` / `torch.square(t)`.
    Square => "square", Math, Some(rextio_fusion::UnaryF::Square);
    /// `t.exp()` / `torch.exp(t)`.
    Exp => "exp", Math, Some(rextio_fusion::UnaryF::Exp);
    /// `t.log()` / `torch.log(t)`.
    Log => "log", Math, Some(rextio_fusion::UnaryF::Log);
    /// `t.sqrt()` / `torch.sqrt(t)`.
    Sqrt => "sqrt", Math, Some(rextio_fusion::UnaryF::Sqrt);
    /// `t.erf()` / `torch.erf(t)`.
    Erf => "erf", Math, Some(rextio_fusion::UnaryF::Erf);
}

/// One static-dim reduction of a float32 CPU tensor of rank 1 or 2: claimed as
/// `t.name(dim[, keepdim=b])` and `torch.name(t, dim[, keepdim=b])` (dim an int literal in
/// range, negative normalised; keepdim omitted or a named bool literal; rank 1 needs
/// `keepdim=True`), lowered to `entry(t, dim, keepdim)`, fused as `fused` when the kernels have
/// it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReductionOp {
    /// The method and `torch.` function name.
    pub name: &'static str,
    /// The rule of every accepted form but the one below.
    pub rule: &'static str,
    /// The older rule that `t.name(dim=1, keepdim=False)` written exactly so on a rank-2
    /// receiver keeps (its claim row is tried before the general one).
    pub dim1_rule: Option<&'static str>,
    /// The runtime entry.
    pub entry: crate::entry::Rt,
    /// The fused reduction with torch's float32 semantics, specials included.
    pub fused: Option<rextio_fusion::ReduceF>,
}

/// The static-dim reduction table, in documentation order.
pub const REDUCTIONS: &[ReductionOp] = &[
    ReductionOp {
        name: "mean",
        rule: MEAN_STATIC,
        dim1_rule: Some(MEAN_DIM1),
        entry: crate::entry::Rt::MeanDim,
        fused: Some(rextio_fusion::ReduceF::Mean),
    },
    ReductionOp {
        name: "sum",
        rule: SUM_STATIC,
        dim1_rule: Some(SUM_DIM1),
        entry: crate::entry::Rt::SumDim,
        fused: Some(rextio_fusion::ReduceF::Sum),
    },
    ReductionOp {
        name: "amax",
        rule: AMAX_STATIC,
        dim1_rule: None,
        entry: crate::entry::Rt::AmaxDim,
        fused: Some(rextio_fusion::ReduceF::Amax),
    },
    ReductionOp {
        name: "amin",
        rule: AMIN_STATIC,
        dim1_rule: None,
        entry: crate::entry::Rt::AminDim,
        fused: Some(rextio_fusion::ReduceF::Amin),
    },
];

impl ReductionOp {
    /// The row named `name` (method or `torch.` function name).
    pub fn named(name: &str) -> Option<&'static ReductionOp> {
        REDUCTIONS.iter().find(|r| r.name == name)
    }

    /// The row whose runtime entry is `f`.
    pub fn of_entry(f: crate::entry::Rt) -> Option<&'static ReductionOp> {
        REDUCTIONS.iter().find(|r| r.entry == f)
    }
}

/// What `rextio capabilities` lists for one rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleDoc {
    /// The rule id.
    pub id: &'static str,
    /// Its site kind.
    pub scope: RuleScope,
    /// The Python form.
    pub pattern: &'static str,
    /// The static constraint.
    pub constraint: &'static str,
}

impl RuleDoc {
    /// Its record.
    pub fn record(&self) -> RuleRecord {
        native(self.id, self.scope, self.pattern, self.constraint)
    }
}

/// What an op of the classification table computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Classify {
    /// Softmax over a static dim (the fused softmax when the kernels take the region).
    Softmax,
    /// Log-softmax over a static dim (`runtime::log_softmax`).
    LogSoftmax,
    /// Argmax over a static dim, an int64 rank-1 result.
    Argmax,
}

/// How `torch.nn.functional.<name>(t, dim[, dtype=None])` is claimed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FunctionalForm {
    /// Not at all (no such function, or not lowered).
    Unclaimed,
    /// By the row's general rule.
    General,
    /// By its own rule.
    Own(RuleDoc),
}

/// One op of the classification head over a static dim of a float32 CPU tensor of rank 1 or 2:
/// claimed as `t.name(dim)`, `torch.name(t, dim)` and, per `functional`, `F.name(t, dim)`; the
/// dim an int literal in range given once (negative normalised).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassifyOp {
    /// What it computes.
    pub op: Classify,
    /// The method and `torch.` function name.
    pub name: &'static str,
    /// The rule of the method and `torch.` spellings.
    pub general: RuleDoc,
    /// The older rule `t.name(dim=1)` keeps on a rank-2 receiver (dim given as a keyword).
    pub dim1: Option<RuleDoc>,
    /// The functional spelling.
    pub functional: FunctionalForm,
}

/// The classification table, in documentation order.
pub const CLASSIFICATION: &[ClassifyOp] = &[
    ClassifyOp {
        op: Classify::Softmax,
        name: "softmax",
        general: RuleDoc {
            id: SOFTMAX_STATIC,
            scope: RuleScope::Call,
            pattern: "t.softmax(dim) / torch.softmax(t, dim)",
            constraint: "dim int literal in range once (negative normalised); rank 1 or 2; result same rank",
        },
        dim1: Some(RuleDoc {
            id: SOFTMAX_DIM1,
            scope: RuleScope::Method,
            pattern: "t.softmax(dim=1)",
            constraint: "receiver rank 2; result rank 2",
        }),
        functional: FunctionalForm::Own(RuleDoc {
            id: F_SOFTMAX,
            scope: RuleScope::Call,
            pattern: "torch.nn.functional.softmax(t, dim[, dtype=None])",
            constraint: "dim int literal in range once (negative normalised); dtype omitted or literal None; rank 1 or 2",
        }),
    },
    ClassifyOp {
        op: Classify::LogSoftmax,
        name: "log_softmax",
        general: RuleDoc {
            id: LOG_SOFTMAX,
            scope: RuleScope::Call,
            pattern: "t.log_softmax(dim) / torch.log_softmax(t, dim) / torch.nn.functional.log_softmax(t, dim[, dtype=None])",
            constraint: "dim int literal in range once (negative normalised); rank 1 or 2; result same rank",
        },
        dim1: None,
        functional: FunctionalForm::General,
    },
    ClassifyOp {
        op: Classify::Argmax,
        name: "argmax",
        general: RuleDoc {
            id: ARGMAX_STATIC,
            scope: RuleScope::Call,
            pattern: "t.argmax(dim[, keepdim=b]) / torch.argmax(t, dim[, keepdim=b])",
            constraint: "rank 2: dim 0/1/-1/-2, keepdim False; rank 1: dim 0/-1, keepdim=True; result int64 rank 1",
        },
        dim1: Some(RuleDoc {
            id: ARGMAX_DIM1,
            scope: RuleScope::Method,
            pattern: "t.argmax(dim=1[, keepdim=False])",
            constraint: "receiver rank 2; result int64 rank 1",
        }),
        functional: FunctionalForm::Unclaimed,
    },
];

impl ClassifyOp {
    /// The row named `name` (method or `torch.` function name).
    pub fn named(name: &str) -> Option<&'static ClassifyOp> {
        CLASSIFICATION.iter().find(|r| r.name == name)
    }

    /// Every rule of the row, documented: the dim=1 form's, the general, the functional's own.
    pub fn docs(&self) -> impl Iterator<Item = &RuleDoc> {
        let own = match &self.functional {
            FunctionalForm::Own(doc) => Some(doc),
            _ => None,
        };
        self.dim1
            .iter()
            .chain(std::iter::once(&self.general))
            .chain(own)
    }
}

/// What a layout op of [`LAYOUT`] computes (always into fresh memory, never a view).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `t.t()`: rank 2 transposed, rank 1 copied.
    T,
    /// `t.transpose(d0, d1)`.
    Transpose,
    /// `t.unsqueeze(d)`: rank 1 to rank 2.
    Unsqueeze,
    /// `t.squeeze(...)`: recognised and refused (its result rank depends on run-time sizes).
    Squeeze,
    /// `t.flatten(start_dim, end_dim)`.
    Flatten,
}

/// One layout op of a float32 CPU tensor, claimed as `t.name(...)` and `torch.name(t, ...)`
/// with int literal dims (negative normalised).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayoutOp {
    /// What it computes.
    pub op: Layout,
    /// The method and `torch.` function name.
    pub name: &'static str,
    /// The parameters of `torch.<name>`, in order; the method form drops the first (`input`).
    pub params: &'static [&'static str],
    /// Its rule, documented; `None` for a form recognised only to be refused.
    pub rule: Option<RuleDoc>,
}

/// The layout table, in documentation order.
pub const LAYOUT: &[LayoutOp] = &[
    LayoutOp {
        op: Layout::Transpose,
        name: "transpose",
        params: &["input", "dim0", "dim1"],
        rule: Some(RuleDoc {
            id: TRANSPOSE,
            scope: RuleScope::Method,
            pattern: "t.transpose(d0, d1) / torch.transpose(t, d0, d1)",
            constraint: "int literal dims in range (negative normalised); rank 1 or 2; result a fresh tensor, same rank",
        }),
    },
    LayoutOp {
        op: Layout::T,
        name: "t",
        params: &["input"],
        rule: Some(RuleDoc {
            id: T_METHOD,
            scope: RuleScope::Method,
            pattern: "t.t() / torch.t(t)",
            constraint: "rank 1 or 2; result a fresh tensor, same rank",
        }),
    },
    LayoutOp {
        op: Layout::Unsqueeze,
        name: "unsqueeze",
        params: &["input", "dim"],
        rule: Some(RuleDoc {
            id: UNSQUEEZE,
            scope: RuleScope::Method,
            pattern: "t.unsqueeze(d) / torch.unsqueeze(t, d)",
            constraint: "rank 1; d an int literal in [-2, 2); result a fresh rank-2 tensor",
        }),
    },
    LayoutOp {
        op: Layout::Squeeze,
        name: "squeeze",
        params: &["input", "dim"],
        rule: None,
    },
    LayoutOp {
        op: Layout::Flatten,
        name: "flatten",
        params: &["input", "start_dim", "end_dim"],
        rule: Some(RuleDoc {
            id: FLATTEN,
            scope: RuleScope::Method,
            pattern: "t.flatten([start_dim][, end_dim]) / torch.flatten(t[, start_dim][, end_dim])",
            constraint: "rank 1 or 2; int literal dims in range, start_dim <= end_dim (defaults 0, -1); \
                         result a fresh tensor (rank 1 when both dims of a rank-2 tensor are flattened)",
        }),
    },
];

impl LayoutOp {
    /// The row named `name` (method or `torch.` function name).
    pub fn named(name: &str) -> Option<&'static LayoutOp> {
        LAYOUT.iter().find(|r| r.name == name)
    }
}

/// How a shape query is written: the site kind and its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuerySite {
    /// `t.<name>(...)`.
    Method(&'static str),
    /// `t.<name>`.
    Attribute(&'static str),
    /// A call of a builtin (`builtins.len`).
    Call(&'static str),
}

/// What a shape query of [`QUERIES`] answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Query {
    /// The size of one static dim (`t.size(d)`).
    SizeDim,
    /// Every size, as a tuple (`t.size()`).
    SizeTuple,
    /// Every size, as a tuple (`t.shape`).
    Shape,
    /// The rank (`t.dim()`).
    Dim,
    /// The rank (`t.ndim`).
    Ndim,
    /// The number of elements.
    Numel,
    /// The size of dim 0 (`len(t)`).
    Len,
}

impl QuerySite {
    /// The site kind and target of this spelling.
    pub fn route(self) -> (rextio_plugin_api::SiteKind, &'static str) {
        use rextio_plugin_api::SiteKind;
        match self {
            QuerySite::Method(m) => (SiteKind::MethodCall, m),
            QuerySite::Attribute(a) => (SiteKind::Attribute, a),
            QuerySite::Call(c) => (SiteKind::Call, c),
        }
    }

    /// Whether `site` is written this way.
    pub fn spells(self, site: &rextio_plugin_api::ClaimSite) -> bool {
        let (kind, target) = self.route();
        site.kind == kind && site.target == target
    }
}

/// One shape query of any rextio-torch tensor, an exact int or tuple of ints read from the
/// tensor's static rank and run-time sizes: the spellings that claim it and its documented rule.
/// Rows may share a spelling (`t.size()` and `t.size(d)`); the planner of that spelling picks
/// the row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueryOp {
    /// What it answers.
    pub query: Query,
    /// Its spellings.
    pub sites: &'static [QuerySite],
    /// Its rule, documented.
    pub doc: RuleDoc,
}

/// The shape-query table, in documentation order.
pub const QUERIES: &[QueryOp] = &[
    QueryOp {
        query: Query::SizeDim,
        sites: &[QuerySite::Method("size")],
        doc: RuleDoc {
            id: SIZE_DIM,
            scope: RuleScope::Method,
            pattern: "t.size(d) / t.size(dim=d)",
            constraint: "any rextio-torch tensor; d an int literal in range (negative normalised); result int",
        },
    },
    QueryOp {
        query: Query::SizeTuple,
        sites: &[QuerySite::Method("size")],
        doc: RuleDoc {
            id: SIZE_TUPLE,
            scope: RuleScope::Method,
            pattern: "t.size()",
            constraint: "any rextio-torch tensor; result tuple of int of the static rank",
        },
    },
    QueryOp {
        query: Query::Shape,
        sites: &[QuerySite::Attribute("shape")],
        doc: RuleDoc {
            id: SHAPE_ATTR,
            scope: RuleScope::Method,
            pattern: "t.shape",
            constraint: "attribute read; any rextio-torch tensor; result tuple of int of the static rank",
        },
    },
    QueryOp {
        query: Query::Dim,
        sites: &[QuerySite::Method("dim"), QuerySite::Method("ndimension")],
        doc: RuleDoc {
            id: DIM,
            scope: RuleScope::Method,
            pattern: "t.dim() / t.ndimension()",
            constraint: "any rextio-torch tensor; no arguments; result int",
        },
    },
    QueryOp {
        query: Query::Ndim,
        sites: &[QuerySite::Attribute("ndim")],
        doc: RuleDoc {
            id: NDIM_ATTR,
            scope: RuleScope::Method,
            pattern: "t.ndim",
            constraint: "attribute read; any rextio-torch tensor; result int",
        },
    },
    QueryOp {
        query: Query::Numel,
        sites: &[QuerySite::Method("numel")],
        doc: RuleDoc {
            id: NUMEL,
            scope: RuleScope::Method,
            pattern: "t.numel()",
            constraint: "any rextio-torch tensor; no arguments; result int",
        },
    },
    QueryOp {
        query: Query::Len,
        sites: &[QuerySite::Call("builtins.len")],
        doc: RuleDoc {
            id: LEN,
            scope: RuleScope::Call,
            pattern: "len(t)",
            constraint: "any rextio-torch tensor (rank >= 1); result int, the size of dim 0",
        },
    },
];

impl Unary {
    /// The op named `name` (method or `torch.` function name).
    pub fn named(name: &str) -> Option<Unary> {
        UNARY_OPS.iter().find(|r| r.name == name).map(|r| r.op)
    }
}

impl UnaryOp {
    /// The rule of `t.name()` on a rank-`rank` receiver (`method`) or of `torch.name(t)`.
    pub fn rule(&self, rank: u8, method: bool) -> String {
        match (self.family, method) {
            (UnaryFamily::Activation, true) => activation_method(self.name, rank),
            (UnaryFamily::Activation, false) => activation_function(self.name),
            (UnaryFamily::Math, _) => unary(self.name),
        }
    }
}

/// The rows of one family.
fn unary_family(family: UnaryFamily) -> impl Iterator<Item = &'static UnaryOp> {
    UNARY_OPS.iter().filter(move |r| r.family == family)
}

/// One elementwise arithmetic op of float32 tensors: the operator `a <op> b` (tensor pairs and
/// a tensor with a Python number either side) and the function `torch.<name>(a, b)` (tensor
/// pairs only). Its rules are [`elementwise`], [`function_elementwise`] and
/// [`scalar_elementwise`] of `name`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArithOp {
    /// The Python operator.
    pub op: &'static str,
    /// The `torch.` function name.
    pub name: &'static str,
    /// The runtime entry of two tensors.
    pub tensors: crate::entry::Rt,
    /// The runtime entry of `t <op> s`.
    pub tensor_scalar: crate::entry::Rt,
    /// The runtime entry of `s <op> t`, called with the tensor first (eager's reflected
    /// operator: `s - t` is `rsub`, `s / t` is `reciprocal(t) * s`).
    pub scalar_tensor: crate::entry::Rt,
}

impl ArithOp {
    /// The row of Python operator `op`.
    pub fn of(op: &str) -> Option<&'static ArithOp> {
        ARITHMETIC.iter().find(|a| a.op == op)
    }

    /// The row of `torch.<name>`.
    pub fn named(name: &str) -> Option<&'static ArithOp> {
        ARITHMETIC.iter().find(|a| a.name == name)
    }
}

/// The arithmetic table.
pub const ARITHMETIC: &[ArithOp] = {
    use crate::entry::Rt;
    const fn row(
        op: &'static str,
        name: &'static str,
        tensors: Rt,
        tensor_scalar: Rt,
        scalar_tensor: Rt,
    ) -> ArithOp {
        ArithOp {
            op,
            name,
            tensors,
            tensor_scalar,
            scalar_tensor,
        }
    }
    &[
        row("+", "add", Rt::Add, Rt::AddScalar, Rt::AddScalar),
        row("-", "sub", Rt::Sub, Rt::SubScalar, Rt::RsubScalar),
        row("*", "mul", Rt::Mul, Rt::MulScalar, Rt::MulScalar),
        row("/", "div", Rt::Div, Rt::DivScalar, Rt::RdivScalar),
    ]
};

/// `t.relu()` etc. on a receiver of `rank`.
pub fn activation_method(name: &str, rank: u8) -> String {
    format!("rextio-torch/tensor-{name}-f32-cpu-{rank}d")
}

/// `torch.relu(t)` etc.
pub fn activation_function(name: &str) -> String {
    format!("rextio-torch/function-{name}-f32-cpu-rank1-2")
}

/// Unary math, function or method.
pub fn unary(name: &str) -> String {
    format!("rextio-torch/unary-{name}-f32-cpu-rank1-2")
}

/// Tensor-tensor operator.
pub fn elementwise(name: &str, broadcast: bool) -> String {
    let shape = if broadcast {
        "2d-1d-broadcast"
    } else {
        "same-rank"
    };
    format!("rextio-torch/tensor-{name}-f32-cpu-{shape}")
}

/// `torch.add(a, b)` etc.
pub fn function_elementwise(name: &str) -> String {
    format!("rextio-torch/function-{name}-f32-cpu-rank1-2")
}

/// Tensor-scalar operator, either side.
pub fn scalar_elementwise(name: &str) -> String {
    format!("rextio-torch/tensor-{name}-scalar-f32-cpu-rank1-2")
}

/// One tensor comparison, `a <op> b` with a bool result: two float32 tensors (same rank, or
/// rank 2 against rank 1 either way) through `tensor`, or a tensor and a Python number either
/// side through `scalar` (`s op t` is eager's `t mirrored s`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompareOp {
    /// The Python operator.
    pub op: &'static str,
    /// Its name in rule ids and dunder methods (`gt`, `__gt__`).
    pub name: &'static str,
    /// The runtime entry for two tensors.
    pub tensor: crate::entry::Rt,
    /// The runtime entry for a tensor and a number.
    pub scalar: crate::entry::Rt,
    /// The operator with its sides swapped.
    pub mirrored: &'static str,
}

/// The comparison table, in documentation order.
pub const COMPARISONS: &[CompareOp] = {
    use crate::entry::Rt;
    const fn row(
        op: &'static str,
        name: &'static str,
        tensor: Rt,
        scalar: Rt,
        mirrored: &'static str,
    ) -> CompareOp {
        CompareOp {
            op,
            name,
            tensor,
            scalar,
            mirrored,
        }
    }
    &[
        row(">", "gt", Rt::Gt, Rt::GtScalar, "<"),
        row("<", "lt", Rt::Lt, Rt::LtScalar, ">"),
        row(">=", "ge", Rt::Ge, Rt::GeScalar, "<="),
        row("<=", "le", Rt::Le, Rt::LeScalar, ">="),
        row("==", "eq", Rt::Eq, Rt::EqScalar, "=="),
        row("!=", "ne", Rt::Ne, Rt::NeScalar, "!="),
    ]
};

impl CompareOp {
    /// The row of Python operator `op`.
    pub fn of(op: &str) -> Option<&'static CompareOp> {
        COMPARISONS.iter().find(|c| c.op == op)
    }
}

/// A comparison of `shape` (`same-rank`, `2d-1d-broadcast`, `scalar`), bool result.
pub fn compare(name: &str, shape: &str) -> String {
    format!("rextio-torch/compare-{name}-{shape}-f32-cpu-bool")
}

/// `torch.where` with branches of `kind` (`tensors`, `tensor-scalar`, `scalars`).
pub fn where_rule(kind: &str) -> String {
    format!("rextio-torch/where-bool-{kind}-f32-cpu-rank1-2")
}

/// Which scalar bounds a clamp op of [`CLAMPS`] takes (each may be given, `None` or absent,
/// and at least one must be a number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bounds {
    /// `min` and `max`.
    MinMax,
    /// `min` only.
    Min,
    /// `max` only.
    Max,
}

impl Bounds {
    /// The bound parameters, in order.
    pub fn params(self) -> &'static [&'static str] {
        match self {
            Bounds::MinMax => &["min", "max"],
            Bounds::Min => &["min"],
            Bounds::Max => &["max"],
        }
    }
}

/// One clamp op with scalar bounds, claimed as `torch.<name>(t, ...)` and `t.<name>(...)` on a
/// float32 tensor of rank 1 or 2. Which runtime entry runs depends on the bounds given, not on
/// the name (`torch.clamp(t, max=1)` runs `clamp_max`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClampOp {
    /// The function and method name.
    pub name: &'static str,
    /// Its bound parameters.
    pub bounds: Bounds,
    /// Its rule (`clip`, eager's alias of `clamp`, shares `clamp`'s).
    pub rule: &'static str,
}

impl ClampOp {
    /// The row named `name`.
    pub fn named(name: &str) -> Option<&'static ClampOp> {
        CLAMPS.iter().find(|c| c.name == name)
    }
}

/// The clamp table, in documentation order.
pub const CLAMPS: &[ClampOp] = &[
    ClampOp {
        name: "clamp",
        bounds: Bounds::MinMax,
        rule: "rextio-torch/clamp-scalar-f32-cpu-rank1-2",
    },
    ClampOp {
        name: "clip",
        bounds: Bounds::MinMax,
        rule: "rextio-torch/clamp-scalar-f32-cpu-rank1-2",
    },
    ClampOp {
        name: "clamp_min",
        bounds: Bounds::Min,
        rule: "rextio-torch/clamp-min-scalar-f32-cpu-rank1-2",
    },
    ClampOp {
        name: "clamp_max",
        bounds: Bounds::Max,
        rule: "rextio-torch/clamp-max-scalar-f32-cpu-rank1-2",
    },
];

/// One elementwise function of two float32 tensors, claimed as `torch.<name>(a, b)` and
/// `a.<name>(b)` (ranks 1/1, 2/2, 2/1, 1/2); its rule is [`function_elementwise`]`(name)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PairwiseOp {
    /// The function and method name.
    pub name: &'static str,
    /// Its runtime entry.
    pub f: crate::entry::Rt,
}

impl PairwiseOp {
    /// The row named `name`.
    pub fn named(name: &str) -> Option<&'static PairwiseOp> {
        PAIRWISE.iter().find(|p| p.name == name)
    }
}

/// The pairwise table.
pub const PAIRWISE: &[PairwiseOp] = &[
    PairwiseOp {
        name: "maximum",
        f: crate::entry::Rt::Maximum,
    },
    PairwiseOp {
        name: "minimum",
        f: crate::entry::Rt::Minimum,
    },
];

/// One `torch.<name>(t[, value])` that makes a float32 tensor of `t`'s shape; its rule is
/// [`like`]`(name)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FillOp {
    /// The function name.
    pub name: &'static str,
    /// Its runtime entry.
    pub f: crate::entry::Rt,
    /// Whether it takes a fill value (a Python number) after the tensor.
    pub takes_value: bool,
    /// The documented form.
    pub pattern: &'static str,
}

impl FillOp {
    /// The row named `name`.
    pub fn named(name: &str) -> Option<&'static FillOp> {
        FILLS.iter().find(|f| f.name == name)
    }
}

/// The fill table.
pub const FILLS: &[FillOp] = &[
    FillOp {
        name: "zeros_like",
        f: crate::entry::Rt::ZerosLike,
        takes_value: false,
        pattern: "torch.zeros_like(t)",
    },
    FillOp {
        name: "ones_like",
        f: crate::entry::Rt::OnesLike,
        takes_value: false,
        pattern: "torch.ones_like(t)",
    },
    FillOp {
        name: "full_like",
        f: crate::entry::Rt::FullLike,
        takes_value: true,
        pattern: "torch.full_like(t, value)",
    },
];

/// `zeros_like` / `ones_like` / `full_like`.
pub fn like(name: &str) -> String {
    format!("rextio-torch/{}-f32-cpu-rank1-2", name.replace('_', "-"))
}

/// What a functional activation of [`FUNCTIONAL`] is (its planner reads its parameters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Functional {
    /// `F.relu(t[, inplace=False])`.
    Relu,
    /// Exact `F.gelu(t[, approximate="none"])`.
    Gelu,
    /// `F.silu(t[, inplace=False])`.
    Silu,
    /// `F.leaky_relu(t[, negative_slope][, inplace=False])`.
    LeakyRelu,
    /// `F.elu(t[, alpha=1.0][, inplace=False])`.
    Elu,
    /// `F.softplus(t[, beta=1][, threshold=20])`.
    Softplus,
    /// `F.hardtanh(t[, min_val=-1.0][, max_val=1.0][, inplace=False])`.
    Hardtanh,
    /// `F.relu6(t[, inplace=False])`.
    Relu6,
    /// `F.dropout(t[, p=0.5][, training=True][, inplace=False])`.
    Dropout,
}

/// One activation claimed as `torch.nn.functional.<name>(t, ...)` on a float32 tensor of rank 1
/// or 2, with the rules its forms take, documented.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FunctionalOp {
    /// What it is.
    pub op: Functional,
    /// The `torch.nn.functional` name.
    pub name: &'static str,
    /// Its rules.
    pub docs: &'static [RuleDoc],
}

impl FunctionalOp {
    /// The row named `name`.
    pub fn named(name: &str) -> Option<&'static FunctionalOp> {
        FUNCTIONAL.iter().find(|f| f.name == name)
    }
}

/// The functional-activation table.
pub const FUNCTIONAL: &[FunctionalOp] = {
    const fn doc(id: &'static str, pattern: &'static str, constraint: &'static str) -> RuleDoc {
        RuleDoc {
            id,
            scope: RuleScope::Call,
            pattern,
            constraint,
        }
    }
    &[
        FunctionalOp {
            op: Functional::Relu,
            name: "relu",
            docs: &[doc(
                F_RELU,
                "torch.nn.functional.relu(t[, inplace=False])",
                "one positional tensor; inplace omitted or literal False; rank 1 or 2",
            )],
        },
        FunctionalOp {
            op: Functional::Gelu,
            name: "gelu",
            docs: &[
                doc(
                    GELU,
                    "torch.nn.functional.gelu(t[, approximate=\"none\"])",
                    "one positional tensor; approximate omitted or literal \"none\"; rank 1 or 2",
                ),
                doc(
                    GELU_TANH,
                    "torch.nn.functional.gelu(t, approximate=\"tanh\")",
                    "one positional tensor; approximate the literal \"tanh\" by keyword; rank 1 or 2",
                ),
            ],
        },
        FunctionalOp {
            op: Functional::Silu,
            name: "silu",
            docs: &[doc(
                SILU,
                "torch.nn.functional.silu(t[, inplace=False])",
                "one positional tensor; rank 1 or 2; result same rank",
            )],
        },
        FunctionalOp {
            op: Functional::LeakyRelu,
            name: "leaky_relu",
            docs: &[
                doc(
                    LEAKY_RELU,
                    "torch.nn.functional.leaky_relu(t[, 0.01][, inplace=False])",
                    "negative_slope omitted or the literal 0.01; rank 1 or 2",
                ),
                doc(
                    LEAKY_RELU_SLOPE,
                    "torch.nn.functional.leaky_relu(t, negative_slope[, inplace=False])",
                    "negative_slope a Python int or float, literal or parameter; rank 1 or 2",
                ),
            ],
        },
        FunctionalOp {
            op: Functional::Elu,
            name: "elu",
            docs: &[
                doc(
                    ELU,
                    "torch.nn.functional.elu(t[, alpha=1.0][, inplace=False])",
                    "alpha omitted or the literal 1.0; rank 1 or 2",
                ),
                doc(
                    ELU_ALPHA,
                    "torch.nn.functional.elu(t, alpha[, inplace=False])",
                    "alpha a float literal or parameter, or an int literal within 2^24; rank 1 or 2",
                ),
            ],
        },
        FunctionalOp {
            op: Functional::Softplus,
            name: "softplus",
            docs: &[
                doc(
                    SOFTPLUS,
                    "torch.nn.functional.softplus(t[, beta=1][, threshold=20])",
                    "beta and threshold omitted or the literal defaults; rank 1 or 2",
                ),
                doc(
                    SOFTPLUS_PARAMS,
                    "torch.nn.functional.softplus(t, beta[, threshold])",
                    "beta and threshold float literals or parameters, or int literals within 2^24 (an omitted one its default); rank 1 or 2",
                ),
            ],
        },
        FunctionalOp {
            op: Functional::Hardtanh,
            name: "hardtanh",
            docs: &[doc(
                HARDTANH,
                "torch.nn.functional.hardtanh(t[, min_val=-1.0][, max_val=1.0][, inplace=False])",
                "min_val and max_val omitted or int/float literals with min_val <= max_val; rank 1 or 2",
            )],
        },
        FunctionalOp {
            op: Functional::Relu6,
            name: "relu6",
            docs: &[doc(
                RELU6,
                "torch.nn.functional.relu6(t[, inplace=False])",
                "one positional tensor; inplace omitted or literal False; rank 1 or 2",
            )],
        },
        FunctionalOp {
            op: Functional::Dropout,
            name: "dropout",
            docs: &[doc(
                DROPOUT,
                "torch.nn.functional.dropout(t[, p=0.5][, training=True][, inplace=False])",
                "p a float literal in [0, 1] or a float parameter (checked at run time as eager checks it), or an int literal 0 or 1; training a bool literal or a bool value (`self.training`); inplace omitted, literal False, or literal True on a tensor this function made and nothing else refers to; rank 1 or 2; runs eager's own kernel, which draws from torch's default generator as eager does",
            )],
        },
    ]
};

fn native(id: impl Into<String>, scope: RuleScope, pattern: &str, constraint: &str) -> RuleRecord {
    RuleRecord::native(id, scope, pattern, constraint)
}

/// Every rule.
pub fn records() -> Vec<RuleRecord> {
    use RuleScope::{BinOp, Call, Method};
    let mut out = vec![
        native(
            LINEAR,
            Call,
            "torch.nn.functional.linear(x, w, b)",
            "three positional tensors; x, w rank 2, b rank 1; result rank 2",
        ),
        native(
            LINEAR_NONE,
            Call,
            "torch.nn.functional.linear(x, w[, None | bias=None])",
            "x, w positional rank 2; no bias; result rank 2",
        ),
        native(
            LINEAR_KEYWORDS,
            Call,
            "torch.nn.functional.linear(x, weight=w, bias=b)",
            "tensor keywords input/weight/bias; ranks 2, 2, 1; result rank 2",
        ),
    ];
    for name in unary_family(UnaryFamily::Activation).map(|r| r.name) {
        for rank in [1u8, 2] {
            out.push(native(
                activation_method(name, rank),
                Method,
                &format!("t.{name}()"),
                &format!("zero arguments; receiver rank {rank}; result rank {rank}"),
            ));
        }
        out.push(native(
            activation_function(name),
            Call,
            &format!("torch.{name}(t)"),
            "one positional tensor, no keywords; rank 1 or 2; result same rank",
        ));
    }
    for name in unary_family(UnaryFamily::Math).map(|r| r.name) {
        out.push(native(
            unary(name),
            Call,
            &format!("torch.{name}(t) / t.{name}()"),
            "one tensor, no other arguments; rank 1 or 2; result same rank",
        ));
    }
    out.push(native(
        MATMUL_BINOP,
        BinOp,
        "a @ b",
        "rank 2 x 2; result rank 2",
    ));
    out.push(native(
        MATMUL_BINOP_MIXED,
        BinOp,
        "a @ b",
        "rank 2 x 1 or 1 x 2; result rank 1",
    ));
    out.push(native(
        MATMUL_CALL,
        Call,
        "torch.matmul(a, b) / a.matmul(b)",
        "rank 2 x 2, positional only; result rank 2",
    ));
    out.push(native(
        MATMUL_CALL_MIXED,
        Call,
        "torch.matmul(a, b) / a.matmul(b)",
        "rank 2 x 1 or 1 x 2, positional only; result rank 1",
    ));
    for &ArithOp { op, name, .. } in ARITHMETIC {
        out.push(native(
            elementwise(name, false),
            BinOp,
            &format!("a {op} b / a {op}= b"),
            &format!("both rank 1 or both rank 2; result same rank; `a {op}= b` only on a local holding \
             a tensor the function made that nothing else refers to, whose shape the result keeps \
             (eager's in-place error otherwise)"),
        ));
        out.push(native(
            elementwise(name, true),
            BinOp,
            &format!("a {op} b / a {op}= b"),
            &format!("one rank 2, one rank 1, either order; result rank 2; `a {op}= b` only with `a` of \
             rank 2 holding a tensor the function made that nothing else refers to"),
        ));
        out.push(native(
            function_elementwise(name),
            Call,
            &format!("torch.{name}(a, b)"),
            "two positional tensors, no options; ranks 1/1, 2/2, 2/1, 1/2",
        ));
        out.push(native(
            scalar_elementwise(name),
            BinOp,
            &format!("t {op} s / s {op} t / t {op}= s"),
            "float32 tensor rank 1 or 2 with a Python int or float (literal or parameter); result float32, same rank",
        ));
    }
    for r in REDUCTIONS {
        let name = r.name;
        if let Some(id) = r.dim1_rule {
            out.push(native(
                id,
                Method,
                &format!("t.{name}(dim=1, keepdim=False)"),
                "literal keywords; receiver rank 2; result rank 1",
            ));
        }
        out.push(native(
            r.rule,
            Call,
            &format!("t.{name}(dim[, keepdim=b]) / torch.{name}(t, dim[, keepdim=b])"),
            "dim int literal in range once (negative normalised); keepdim omitted or named bool; rank 2 -> 1 or 2; rank 1 needs keepdim=True",
        ));
    }
    for r in CLASSIFICATION {
        out.extend(r.docs().map(RuleDoc::record));
    }
    out.extend(extended_records());
    out.extend(cuda_records());
    out.push(
        RuleRecord::fallback(
            UNSUPPORTED,
            RuleScope::Type,
            "covered torch sites outside the surface",
            "types, ranks, operators or options outside the native surface",
            codes::UNSUPPORTED_SURFACE,
            "keep the function in Python or rewrite it with the native forms listed by `rextio capabilities`",
        )
        .with_stability(Stability::Stable),
    );
    out
}

/// Whether native rule `id`'s eager result is always a new tensor that shares no memory with
/// an operand (`Plugin::fresh_result`): its family is one of [`FRESH_FAMILIES`].
pub fn fresh_result(id: &str) -> bool {
    id.strip_prefix("rextio-torch/")
        .is_some_and(|name| FRESH_FAMILIES.iter().any(|f| name.starts_with(f)))
}

/// The rule families whose eager result is always a new float32 tensor that shares no memory
/// with an operand: arithmetic, math, activations, products,
/// reductions, normalisations, `clamp`, `where`, `cat` and the `*_like` fills all allocate
/// their result. Left out, so never fresh: the layout ops (`transpose`, `t`, `.T`,
/// `unsqueeze`, `flatten` may return their input or a view of it), the queries (ints and
/// tuples), comparisons and `argmax` (not float32), `max(dim)` (a tuple), the CUDA lane and
/// the decorators. A new rule is fresh only when its family is named here
/// (`fresh_results_are_pinned` lists the native rules that are not).
const FRESH_FAMILIES: &[&str] = &[
    "functional-linear",
    "tensor-relu-",
    "function-relu-",
    "tensor-sigmoid-",
    "function-sigmoid-",
    "tensor-tanh-",
    "function-tanh-",
    "unary-",
    "tensor-matmul",
    "tensor-add-",
    "function-add-",
    "tensor-sub-",
    "function-sub-",
    "tensor-mul-",
    "function-mul-",
    "tensor-div-",
    "function-div-",
    "tensor-mean-",
    "mean-static-",
    "tensor-sum-",
    "sum-static-",
    "amax-static-",
    "amin-static-",
    "tensor-softmax-",
    "softmax-static-",
    "functional-softmax-",
    "log-softmax-",
    "functional-relu-",
    "functional-gelu-",
    "functional-silu-",
    "functional-leaky-relu-",
    "functional-elu-",
    "functional-softplus-",
    "functional-hardtanh-",
    "functional-relu6-",
    "functional-layer-norm-",
    "functional-batch-norm-",
    "clamp-",
    "function-maximum-",
    "function-minimum-",
    "zeros-like-",
    "ones-like-",
    "full-like-",
    "where-",
    "cat-static-",
];

/// The build-only CUDA lane: lowered only with the exact `cuda-libtorch-linux-x86_64`
/// authorisation of `rextio-device-cuda`; experimental until real-GPU evidence exists.
fn cuda_records() -> Vec<RuleRecord> {
    use RuleScope::{BinOp, Method};
    const WHERE: &str = "float32 tensors already on cuda:0 (TensorF32Cuda0_*); needs the \
rextio-device-cuda authorisation of cuda-libtorch-linux-x86_64; no host/device transfer";
    [
        (
            CUDA_MATMUL,
            BinOp,
            "a @ b",
            "a, b rank 2; result rank 2 on cuda:0",
        ),
        (
            CUDA_ADD_BIAS,
            BinOp,
            "h + bias",
            "h rank 2 (left), bias rank 1 (right); result rank 2 on cuda:0",
        ),
        (
            CUDA_RELU,
            Method,
            "h.relu()",
            "h rank 2; no arguments; result rank 2 on cuda:0",
        ),
        (
            CUDA_MEAN_DIM1,
            Method,
            "h.mean(dim=1)",
            "h rank 2; exactly the keyword dim=1; result rank 1 on cuda:0",
        ),
    ]
    .into_iter()
    .map(|(id, scope, pattern, constraint)| {
        native(id, scope, pattern, &format!("{constraint}; {WHERE}"))
            .with_stability(Stability::Experimental)
    })
    .collect()
}

/// Rules of the extended surface (comparisons, where, clamp, shapes, ...).
fn extended_records() -> Vec<RuleRecord> {
    use RuleScope::{BinOp, Call, Method};
    let mut out = vec![native(
        MAX_DIM,
        Method,
        "t.max(dim[, keepdim=b]) / torch.max(t, dim[, keepdim=b])",
        "dim int literal in range; rank 2 with keepdim False or rank 1 with keepdim=True; result tuple (float32 rank 1, int64 rank 1)",
    )];
    out.extend(FUNCTIONAL.iter().flat_map(|f| f.docs).map(RuleDoc::record));
    out.push(native(
        LAYER_NORM,
        Call,
        "torch.nn.functional.layer_norm(x, (n,) | [n][, weight][, bias][, eps])",
        "x rank 1 or 2; normalized_shape a one-element tuple[int] or [n] (checked against the last dim at run time, as eager); weight/bias rank 1 or None; eps float",
    ));
    out.push(native(
        BATCH_NORM,
        Call,
        "torch.nn.functional.batch_norm(x, running_mean, running_var[, weight][, bias][, training=False][, momentum][, eps])",
        "x rank 2 (N, C); running statistics rank 1 (their length checked at run time, as eager); weight/bias rank 1 or None; training omitted or literal False; momentum, eps floats",
    ));
    let mut clamp_rules: Vec<&str> = Vec::new();
    for c in CLAMPS {
        // One record per rule: an alias (`clip`) is documented by the row it aliases.
        if clamp_rules.contains(&c.rule) {
            continue;
        }
        clamp_rules.push(c.rule);
        out.push(native(
            c.rule,
            Call,
            &format!("torch.{0}(t, ...) / t.{0}(...)", c.name),
            "scalar bounds (int/float literal or parameter, or None), at least one; rank 1 or 2; result same rank",
        ));
    }
    for p in PAIRWISE {
        out.push(native(
            function_elementwise(p.name),
            Call,
            &format!("torch.{0}(a, b) / a.{0}(b)", p.name),
            "two float32 tensors, no options; ranks 1/1, 2/2, 2/1, 1/2",
        ));
    }
    for f in FILLS {
        out.push(native(
            like(f.name),
            Call,
            f.pattern,
            "float32 rank 1 or 2, no keywords; value a Python int or float; result float32, same shape",
        ));
    }
    for &CompareOp { op, name, .. } in COMPARISONS {
        for (shape, constraint) in [
            ("same-rank", "two float32 tensors of equal rank 1 or 2; result bool, same rank"),
            ("2d-1d-broadcast", "float32 rank 2 and rank 1, either order; result bool rank 2"),
            ("scalar", "float32 tensor rank 1 or 2 and a Python int or float, either side; result bool, same rank"),
        ] {
            out.push(native(compare(name, shape), BinOp, &format!("a {op} b"), constraint));
        }
    }
    for (kind, constraint) in [
        ("tensors", "bool condition rank 1/2; float32 tensor branches rank 1/2; result float32 of the largest rank"),
        ("tensor-scalar", "bool condition; one float32 tensor branch and one Python int or float; result float32"),
        ("scalars", "bool condition; two Python numbers, not both int; result float32 of the condition's rank"),
    ] {
        out.push(native(where_rule(kind), Call, "torch.where(cond, a, b)", constraint));
    }
    out.extend(
        LAYOUT
            .iter()
            .filter_map(|l| l.rule.as_ref().map(RuleDoc::record)),
    );
    out.push(native(
        T_ATTR,
        Method,
        "t.T",
        "attribute read; rank 2; result a fresh rank-2 tensor",
    ));
    out.push(native(
        CAT,
        Call,
        "torch.cat(tensors[, dim]) / torch.concat(tensors[, dim])",
        "tensors a list or tuple of 1 to 16 float32 rank-2 tensors written in the call (or a tuple value); dim omitted (0) or an int literal in range once (negative normalised); no out=; result a fresh rank-2 tensor",
    ));
    out.extend(QUERIES.iter().map(|q| q.doc.record()));
    out
}

/// Native rule ids, in table order.
pub fn native_ids() -> Vec<String> {
    rextio_plugin_api::kit::native_ids(&records())
}

#[cfg(test)]
mod fresh_tests {
    use super::*;

    /// Every native rule whose result is not declared fresh, by name: a new rule lands here
    /// unless its family is in `FRESH_FAMILIES`, and one that lands there by mistake (a view
    /// under a fresh family's prefix) shows in this list's diff.
    #[test]
    fn fresh_results_are_pinned() {
        let not_fresh: Vec<String> = records()
            .into_iter()
            .filter(|r| r.outcome == rextio_plugin_api::RuleOutcome::Native && !fresh_result(&r.id))
            .map(|r| r.id.trim_start_matches("rextio-torch/").to_owned())
            .filter(|id| !id.starts_with("compare-") && !id.starts_with("cuda0-"))
            .collect();
        assert_eq!(
            not_fresh,
            [
                "tensor-argmax-dim1-i64-cpu-2d",
                "argmax-static-dim-i64-cpu-rank1",
                "max-dim-values-indices-f32-i64-cpu-rank1",
                "functional-dropout-f32-cpu-rank1-2",
                "tensor-transpose-f32-cpu-rank1-2",
                "tensor-t-f32-cpu-rank1-2",
                "tensor-unsqueeze-f32-cpu-1d-to-2d",
                "tensor-flatten-f32-cpu-rank1-2",
                "tensor-attribute-t-f32-cpu-2d",
                "tensor-size-dim-int",
                "tensor-size-tuple-int",
                "tensor-attribute-shape-tuple-int",
                "tensor-dim-int",
                "tensor-attribute-ndim-int",
                "tensor-numel-int",
                "builtin-len-tensor-int",
            ]
        );
        let fresh = records().iter().filter(|r| fresh_result(&r.id)).count();
        assert_eq!(fresh, 76, "fresh rules");
    }
}
