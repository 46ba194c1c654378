//! The annotation vocabulary of `rextio_tensorflow.types`.

use rextio_plugin_api::kit::RankFamily;
use rextio_plugin_api::{PluginType, TypeKey, ValueType};

/// Type key of `TensorF32Cpu1D`.
pub const F32_CPU_1D: &str = "rextio-tensorflow/tensor-f32-cpu-1d";
/// Type key of `TensorF32Cpu2D`.
pub const F32_CPU_2D: &str = "rextio-tensorflow/tensor-f32-cpu-2d";
/// Type key of `TensorI64Cpu1D` (the default-int64 `tf.argmax` result).
pub const I64_CPU_1D: &str = "rextio-tensorflow/tensor-i64-cpu-1d";

/// Type key of `TensorF32Gpu0_1D` (the build-only CUDA lane).
pub const F32_GPU0_1D: &str = "rextio-tensorflow/tensor-f32-gpu0-1d";
/// Type key of `TensorF32Gpu0_2D` (the build-only CUDA lane).
pub const F32_GPU0_2D: &str = "rextio-tensorflow/tensor-f32-gpu0-2d";

/// The Rust type of the CUDA lane's tensors (a separate type: the lanes never mix).
pub const RUST_CUDA_TENSOR: &str = "::rextio_tensorflow::runtime::cuda::RxtTfCudaTensor";

/// Float32 `GPU:0` tensors (the build-only CUDA lane) by rank.
pub const F32_GPU0: RankFamily = RankFamily::new(&[F32_GPU0_1D, F32_GPU0_2D]);

/// The Rust type of every TensorFlow tensor value in generated code.
pub const RUST_TENSOR: &str = "::rextio_tensorflow::runtime::RxtTfTensor";

/// Rust path of the boundary wrapper shared by every type.
pub const WRAP_FN: &str = "::rextio_tensorflow::runtime::materialize_tensor";

/// Float32 CPU tensors by rank.
pub const F32_CPU: RankFamily = RankFamily::new(&[F32_CPU_1D, F32_CPU_2D]);

/// The type of an int64 CPU rank-1 tensor.
pub fn i64_cpu_1d() -> ValueType {
    ValueType::Plugin(TypeKey::new(I64_CPU_1D))
}

/// Rust path of the CUDA lane's boundary wrapper.
pub const CUDA_WRAP_FN: &str = "::rextio_tensorflow::runtime::cuda::materialize_gpu0";

/// The vocabulary: import-free markers (three CPU, two build-only `GPU:0`), one Rust type per
/// lane, per-type extractors.
pub fn vocabulary() -> Vec<PluginType> {
    let entry = |key: &str, name: &str, extract: &str, description: &str| PluginType {
        annotation: format!("rextio_tensorflow.types.{name}"),
        key: TypeKey::new(key),
        rust_type: RUST_TENSOR.to_owned(),
        extract_fn: format!("::rextio_tensorflow::runtime::{extract}"),
        wrap_fn: WRAP_FN.to_owned(),
        description: description.to_owned(),
    };
    vec![
        entry(
            F32_CPU_1D,
            "TensorF32Cpu1D",
            "extract_f32_cpu_1d",
            "TensorFlow EagerTensor, float32, CPU:0, rank 1",
        ),
        entry(
            F32_CPU_2D,
            "TensorF32Cpu2D",
            "extract_f32_cpu_2d",
            "TensorFlow EagerTensor, float32, CPU:0, rank 2",
        ),
        entry(
            I64_CPU_1D,
            "TensorI64Cpu1D",
            "extract_i64_cpu_1d",
            "TensorFlow EagerTensor, int64, CPU:0, rank 1 (tf.argmax result)",
        ),
        PluginType {
            rust_type: RUST_CUDA_TENSOR.to_owned(),
            wrap_fn: CUDA_WRAP_FN.to_owned(),
            ..entry(
                F32_GPU0_1D,
                "TensorF32Gpu0_1D",
                "cuda::extract_f32_gpu0_1d",
                "TensorFlow EagerTensor, float32, GPU:0, rank 1 (build-only CUDA E3 lane)",
            )
        },
        PluginType {
            rust_type: RUST_CUDA_TENSOR.to_owned(),
            wrap_fn: CUDA_WRAP_FN.to_owned(),
            ..entry(
                F32_GPU0_2D,
                "TensorF32Gpu0_2D",
                "cuda::extract_f32_gpu0_2d",
                "TensorFlow EagerTensor, float32, GPU:0, rank 2 (build-only CUDA E3 lane)",
            )
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vocabulary_names_the_published_markers_and_runtime_boundary() {
        let v = vocabulary();
        let names: Vec<&str> = v.iter().map(|t| t.annotation.as_str()).collect();
        assert_eq!(
            names,
            [
                "rextio_tensorflow.types.TensorF32Cpu1D",
                "rextio_tensorflow.types.TensorF32Cpu2D",
                "rextio_tensorflow.types.TensorI64Cpu1D",
                "rextio_tensorflow.types.TensorF32Gpu0_1D",
                "rextio_tensorflow.types.TensorF32Gpu0_2D",
            ]
        );
        for t in &v {
            let gpu = F32_GPU0.rank(&t.key).is_some();
            let (rust, wrap, extract) = if gpu {
                (
                    RUST_CUDA_TENSOR,
                    CUDA_WRAP_FN,
                    "::rextio_tensorflow::runtime::cuda::extract_f32_gpu0_",
                )
            } else {
                (
                    RUST_TENSOR,
                    WRAP_FN,
                    "::rextio_tensorflow::runtime::extract_",
                )
            };
            assert_eq!(t.rust_type, rust);
            assert_eq!(t.wrap_fn, wrap);
            assert!(t.extract_fn.starts_with(extract), "{}", t.extract_fn);
        }
    }
}
