//! The runtime entry points lowering may call, as one typed table. Lowering names
//! `rextio_tensorflow::runtime` functions only through [`Rt`], and every entry is a path the
//! compiler resolves wherever the runtime is built (`every_entry_is_a_runtime_function`), so a
//! misspelt entry fails that build, not a user's.

use rextio_plugin_api::syntax::{quote, TokenStream};

macro_rules! entries {
    ($($(#[$doc:meta])* $variant:ident => $($seg:ident)::+;)*) => {
        /// A function of `rextio_tensorflow::runtime` that generated code calls.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Rt {
            $($(#[$doc])* $variant,)*
        }

        impl Rt {
            /// Its path under `rextio_tensorflow::runtime`, for lowered code.
            pub fn path(self) -> TokenStream {
                match self {
                    $(Rt::$variant => quote!($($seg)::+),)*
                }
            }
        }

        /// Every entry is an item of the runtime module: this compiles only when each path
        /// resolves.
        #[cfg(feature = "runtime")]
        mod every_entry_is_a_runtime_function {
            $(
                #[allow(unused_imports)]
                use crate::runtime::$($seg)::+ as _;
            )*
        }
    };
}

entries! {
    /// `tf.matmul(a, b)` (TFE MatMul).
    Matmul => matmul;
    /// `tf.transpose(x)` of a matrix.
    Transpose => transpose;
    /// `tf.nn.relu`.
    Relu => relu;
    /// `tf.nn.sigmoid`.
    Sigmoid => sigmoid;
    /// `tf.nn.tanh`.
    Tanh => tanh;
    /// `tf.nn.elu`.
    Elu => elu;
    /// `tf.abs`.
    Abs => abs;
    /// `tf.negative`.
    Negative => negative;
    /// `tf.square`.
    Square => square;
    /// `tf.exp`.
    Exp => exp;
    /// `tf.math.log`.
    Log => log;
    /// `tf.math.sqrt`.
    Sqrt => sqrt;
    /// `a + b` / `tf.add`.
    Add => add;
    /// `a - b` / `tf.subtract`.
    Sub => sub;
    /// `a * b` / `tf.multiply`.
    Mul => mul;
    /// `a / b` / `tf.divide`.
    Div => div;
    /// `tf.maximum`.
    Maximum => maximum;
    /// `tf.minimum`.
    Minimum => minimum;
    /// `tf.nn.bias_add(value, bias)`.
    BiasAdd => bias_add;
    /// `tf.reduce_mean(x, axis=0)`.
    ReduceMeanAxis0 => reduce_mean_axis0;
    /// `tf.reduce_mean(x, axis=0, keepdims=True)`.
    ReduceMeanAxis0Keepdims => reduce_mean_axis0_keepdims;
    /// `tf.reduce_mean(x, axis=1)`.
    ReduceMeanAxis1 => reduce_mean_axis1;
    /// `tf.reduce_mean(x, axis=1, keepdims=True)`.
    ReduceMeanAxis1Keepdims => reduce_mean_axis1_keepdims;
    /// `tf.reduce_sum(x, axis=0)`.
    ReduceSumAxis0 => reduce_sum_axis0;
    /// `tf.reduce_sum(x, axis=0, keepdims=True)`.
    ReduceSumAxis0Keepdims => reduce_sum_axis0_keepdims;
    /// `tf.reduce_sum(x, axis=1)`.
    ReduceSumAxis1 => reduce_sum_axis1;
    /// `tf.reduce_sum(x, axis=1, keepdims=True)`.
    ReduceSumAxis1Keepdims => reduce_sum_axis1_keepdims;
    /// `tf.nn.softmax` of a vector.
    SoftmaxAxis0 => softmax_axis0;
    /// `tf.nn.softmax` over the last axis of a matrix.
    SoftmaxAxis1 => softmax_axis1;
    /// `tf.argmax(x, axis=0)`.
    ArgmaxAxis0 => argmax_axis0;
    /// `tf.argmax(x, axis=1)`.
    ArgmaxAxis1 => argmax_axis1;
    /// CUDA lane: `tf.matmul` on `GPU:0`.
    CudaMatmul => cuda::matmul_gpu0;
    /// CUDA lane: `tf.nn.bias_add` on `GPU:0`.
    CudaBiasAdd => cuda::bias_add_gpu0;
    /// CUDA lane: `tf.nn.relu` on `GPU:0`.
    CudaRelu => cuda::relu_gpu0;
    /// CUDA lane: `tf.reduce_mean(h, axis=1)` on `GPU:0`.
    CudaReduceMeanAxis1 => cuda::reduce_mean_axis1_gpu0;
}
