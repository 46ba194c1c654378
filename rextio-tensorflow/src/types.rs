//! The annotation vocabulary of `rextio_tensorflow.types`.

use rextio_plugin_api::kit::{Boundary, Marker, MarkerModule, RankFamily};
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

/// Where GPU-lane markers say how they are authorised.
const GPU_NOTE: &[&str] = &[
    "Lowered only with the ``rextio-device-cuda`` authorisation of",
    "``cuda-tensorflow-tfe-linux-x86_64``; never moved between host and device.",
];

/// The markers of `rextio_tensorflow.types`, one row each: the Python module
/// (`python/rextio_tensorflow/types.py`, rendered from this table) and [`vocabulary`] derive
/// from it.
pub const MARKERS: MarkerModule = MarkerModule {
    backend: "rextio-tensorflow",
    package: "rextio_tensorflow",
    framework: "tensorflow",
    host_device: "CPU:0",
    values: "ordinary TensorFlow EagerTensors (``tf.Tensor``)",
    source: "rextio-tensorflow/src/types.rs",
    markers: &[
        Marker::new("TensorF32Cpu1D", F32_CPU_1D, "float32", "CPU:0", 1),
        Marker::new("TensorF32Cpu2D", F32_CPU_2D, "float32", "CPU:0", 2),
        Marker::new("TensorI64Cpu1D", I64_CPU_1D, "int64", "CPU:0", 1)
            .for_role("the default ``tf.argmax`` result")
            .described("an int64 rank-1 tensor"),
        Marker::new("TensorF32Gpu0_1D", F32_GPU0_1D, "float32", "GPU:0", 1)
            .for_role("the build-only CUDA lane")
            .with_note(GPU_NOTE),
        Marker::new("TensorF32Gpu0_2D", F32_GPU0_2D, "float32", "GPU:0", 2)
            .for_role("the build-only CUDA lane")
            .with_note(GPU_NOTE),
    ],
};

/// The vocabulary: one entry per [`MARKERS`] row, extracted by `extract_<key suffix>`; the GPU
/// lane has its own Rust type, wrapper and `cuda::` extractors (the lanes never mix).
pub fn vocabulary() -> Vec<PluginType> {
    MARKERS.vocabulary("TensorFlow EagerTensor", |m| {
        let gpu = F32_GPU0.rank(&TypeKey::new(m.key)).is_some();
        let (rust_type, wrap_fn, lane) = if gpu {
            (RUST_CUDA_TENSOR, CUDA_WRAP_FN, "cuda::")
        } else {
            (RUST_TENSOR, WRAP_FN, "")
        };
        Boundary {
            rust_type: rust_type.to_owned(),
            extract_fn: format!(
                "::rextio_tensorflow::runtime::{lane}extract_{}",
                m.key_suffix()
            ),
            wrap_fn: wrap_fn.to_owned(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checked_in_marker_module_is_the_one_rendered_from_the_table() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("python/rextio_tensorflow/types.py");
        if let Err(e) = MARKERS.check_file(&path) {
            panic!("{e}");
        }
    }

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
