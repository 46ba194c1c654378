//! The runtime entry points lowering may call, as one typed table (the unary elementwise ops
//! have their own, [`crate::rules::UNARY_OPS`], with one typed runtime entry for all of them).
//! Lowering names `rextio_torch::runtime` functions only through [`Rt`], never by assembling
//! strings, and every entry is a path the compiler resolves wherever the runtime is built
//! (`every_entry_is_a_runtime_function`), so a misspelt entry fails that build, not a user's.

macro_rules! entries {
    ($($(#[$doc:meta])* $variant:ident => $name:ident $(, owned $owned:ident)?;)*) => {
        /// A function of `rextio_torch::runtime` that generated code calls.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Rt {
            $($(#[$doc])* $variant,)*
        }

        impl Rt {
            /// Its name as an identifier for lowered code.
            pub fn ident(self) -> rextio_plugin_api::syntax::Ident {
                match self {
                    $(Rt::$variant => rextio_plugin_api::syntax::format_ident!("{}", stringify!($name)),)*
                }
            }

            /// The variant that consumes its first tensor operand (and may write it in place),
            /// when there is one.
            pub fn owned_ident(self) -> Option<rextio_plugin_api::syntax::Ident> {
                match self {
                    $(Rt::$variant => entries!(@owned $($owned)?),)*
                }
            }
        }

        /// Every entry and owned variant is an item of the runtime module: this compiles only
        /// when each path resolves.
        #[cfg(feature = "runtime")]
        mod every_entry_is_a_runtime_function {
            $(
                #[allow(unused_imports)]
                use crate::runtime::$name as _;
                $(
                    #[allow(unused_imports)]
                    use crate::runtime::$owned as _;
                )?
            )*
        }
    };
    (@owned) => { None };
    (@owned $o:ident) => { Some(rextio_plugin_api::syntax::format_ident!("{}", stringify!($o))) };
}

entries! {
    /// `F.linear(x, w, b?)`.
    Linear => linear;
    /// `a @ b`.
    Matmul => matmul;
    /// `a + b`.
    Add => add, owned add_owned;
    /// `a - b`.
    Sub => sub, owned sub_owned;
    /// `a * b`.
    Mul => mul, owned mul_owned;
    /// `a / b`.
    Div => div, owned div_owned;
    /// `t + s`.
    AddScalar => add_scalar, owned add_scalar_owned;
    /// `t - s`.
    SubScalar => sub_scalar, owned sub_scalar_owned;
    /// `s - t`.
    RsubScalar => rsub_scalar, owned rsub_scalar_owned;
    /// `t * s`.
    MulScalar => mul_scalar, owned mul_scalar_owned;
    /// `t / s`.
    DivScalar => div_scalar, owned div_scalar_owned;
    /// `s / t`.
    RdivScalar => rdiv_scalar, owned rdiv_scalar_owned;
    /// Exact GELU.
    GeluNone => gelu_none, owned gelu_none_owned;
    /// `mean(dim, keepdim)`.
    MeanDim => mean_dim;
    /// `sum(dim, keepdim)`.
    SumDim => sum_dim;
    /// `softmax(dim)`.
    Softmax => softmax;
    /// `argmax(dim, keepdim)`.
    Argmax => argmax;
    /// `log_softmax(dim)`.
    LogSoftmax => log_softmax;
    /// `amax(dim, keepdim)`.
    AmaxDim => amax_dim;
    /// `amin(dim, keepdim)`.
    AminDim => amin_dim;
    /// `max(dim, keepdim)` -> `(values, indices)`.
    MaxDim => max_dim;
    /// `clamp(min, max)`, scalar bounds.
    Clamp => clamp;
    /// `clamp_min(min)` / `clamp(min=...)`.
    ClampMin => clamp_min;
    /// `clamp_max(max)` / `clamp(max=...)`.
    ClampMax => clamp_max;
    /// `torch.maximum(a, b)`.
    Maximum => maximum;
    /// `torch.minimum(a, b)`.
    Minimum => minimum;
    /// `torch.zeros_like(t)`.
    ZerosLike => zeros_like;
    /// `torch.ones_like(t)`.
    OnesLike => ones_like;
    /// `torch.full_like(t, value)`.
    FullLike => full_like;
    /// `F.silu`.
    Silu => silu;
    /// `F.leaky_relu` with the default slope.
    LeakyRelu => leaky_relu;
    /// `F.leaky_relu` with a given slope.
    LeakyReluSlope => leaky_relu_slope;
    /// `F.gelu(t, approximate="tanh")`.
    GeluTanh => gelu_tanh;
    /// `F.elu` with `alpha=1.0`.
    Elu => elu;
    /// `F.softplus` with `beta=1, threshold=20`.
    Softplus => softplus;
    /// `F.elu` with another `alpha`.
    EluAlpha => elu_alpha;
    /// `F.softplus` with other `beta` / `threshold`.
    SoftplusParams => softplus_params;
    /// `F.dropout(t, p, training)`.
    Dropout => dropout;
    /// `F.layer_norm` over the last dim.
    LayerNorm => layer_norm;
    /// `F.batch_norm` in eval mode.
    BatchNormEval => batch_norm_eval;
    /// `t.transpose(d0, d1)` / `t.t()` / `t.T`, materialised.
    Transpose => transpose;
    /// `t.unsqueeze(d)`, materialised.
    Unsqueeze => unsqueeze;
    /// `t.flatten(s, e)`, materialised.
    Flatten => flatten;
    /// `torch.cat(seq, dim)` of a tuple of tensors.
    Cat => cat;
    /// `a > b` on tensors.
    Gt => gt;
    /// `a < b` on tensors.
    Lt => lt;
    /// `a >= b` on tensors.
    Ge => ge;
    /// `a <= b` on tensors.
    Le => le;
    /// `a == b` on tensors.
    Eq => eq;
    /// `a != b` on tensors.
    Ne => ne;
    /// `t > s`.
    GtScalar => gt_scalar;
    /// `t < s`.
    LtScalar => lt_scalar;
    /// `t >= s`.
    GeScalar => ge_scalar;
    /// `t <= s`.
    LeScalar => le_scalar;
    /// `t == s`.
    EqScalar => eq_scalar;
    /// `t != s`.
    NeScalar => ne_scalar;
    /// `torch.where(c, a, b)`, tensor branches.
    WhereTensors => where_tensors;
    /// `torch.where(c, a, s)`.
    WhereTensorScalar => where_tensor_scalar;
    /// `torch.where(c, s, b)`.
    WhereScalarTensor => where_scalar_tensor;
    /// `torch.where(c, s, s)`.
    WhereScalars => where_scalars;
    /// `t.size(d)` / `len(t)` (d = 0).
    SizeDim => size_dim;
    /// `t.shape` / `t.size()` of a rank-1 tensor.
    Shape1 => shape_1d;
    /// `t.shape` / `t.size()` of a rank-2 tensor.
    Shape2 => shape_2d;
    /// `t.dim()` / `t.ndim`.
    Ndim => ndim;
    /// `t.numel()`.
    Numel => numel;
    /// CUDA lane: `a @ b`, both rank 2 on `cuda:0`.
    CudaMatmul => cuda0_matmul_2d;
    /// CUDA lane: `h + bias`, rank 2 + rank 1 on `cuda:0`.
    CudaAddBias => cuda0_add_bias_2d_1d;
    /// CUDA lane: `h.relu()`, rank 2 on `cuda:0`.
    CudaRelu => cuda0_relu_2d;
    /// CUDA lane: `h.mean(dim=1)`, rank 2 -> rank 1 on `cuda:0`.
    CudaMeanDim1 => cuda0_mean_dim1_2d;
}
