//! The annotation vocabulary of `rextio_torch.types`.

use rextio_plugin_api::kit::{Boundary, Marker, MarkerModule, RankFamily};
use rextio_plugin_api::{PluginType, TypeKey, ValueType};

/// Type key of `TensorF32Cpu1D`.
pub const F32_CPU_1D: &str = "rextio-torch/tensor-f32-cpu-1d";
/// Type key of `TensorF32Cpu2D`.
pub const F32_CPU_2D: &str = "rextio-torch/tensor-f32-cpu-2d";
/// Type key of `TensorI64Cpu1D` (classification results).
pub const I64_CPU_1D: &str = "rextio-torch/tensor-i64-cpu-1d";

/// Type key of `TensorBoolCpu1D` (comparison results).
pub const BOOL_CPU_1D: &str = "rextio-torch/tensor-bool-cpu-1d";
/// Type key of `TensorBoolCpu2D` (comparison results).
pub const BOOL_CPU_2D: &str = "rextio-torch/tensor-bool-cpu-2d";

/// Type key of `TensorF32Cuda0_1D` (the build-only CUDA lane).
pub const F32_CUDA0_1D: &str = "rextio-torch/tensor-f32-cuda0-1d";
/// Type key of `TensorF32Cuda0_2D` (the build-only CUDA lane).
pub const F32_CUDA0_2D: &str = "rextio-torch/tensor-f32-cuda0-2d";

/// The Rust type of every torch tensor value in generated code.
pub const RUST_TENSOR: &str = "::rextio_torch::runtime::RxtTorchTensor";

/// Float32 CPU tensors by rank.
pub const F32_CPU: RankFamily = RankFamily::new(&[F32_CPU_1D, F32_CPU_2D]);
/// Bool CPU tensors (comparison results) by rank.
pub const BOOL_CPU: RankFamily = RankFamily::new(&[BOOL_CPU_1D, BOOL_CPU_2D]);
/// Float32 `cuda:0` tensors (the build-only CUDA lane) by rank.
pub const F32_CUDA0: RankFamily = RankFamily::new(&[F32_CUDA0_1D, F32_CUDA0_2D]);

/// The type of an int64 CPU rank-1 tensor.
pub fn i64_cpu_1d() -> ValueType {
    ValueType::Plugin(TypeKey::new(I64_CPU_1D))
}

/// Where CUDA-lane markers say how they are authorised.
const CUDA_NOTE: &[&str] = &[
    "Lowered only with the ``rextio-device-cuda`` authorisation of",
    "``cuda-libtorch-linux-x86_64``; never moved between host and device.",
];

/// The markers of `rextio_torch.types`, one row each: the Python module
/// (`python/rextio_torch/types.py`, rendered from this table) and [`vocabulary`] derive from it.
pub const MARKERS: MarkerModule = MarkerModule {
    backend: "rextio-torch",
    package: "rextio_torch",
    framework: "torch",
    host_device: "cpu",
    values: "ordinary ``torch.Tensor`` objects",
    source: "rextio-torch/src/types.rs",
    markers: &[
        Marker::new("TensorF32Cpu1D", F32_CPU_1D, "float32", "cpu", 1),
        Marker::new("TensorF32Cpu2D", F32_CPU_2D, "float32", "cpu", 2),
        Marker::new("TensorI64Cpu1D", I64_CPU_1D, "int64", "cpu", 1)
            .for_role("the classification result")
            .described("an int64 rank-1 tensor"),
        Marker::new("TensorBoolCpu1D", BOOL_CPU_1D, "bool", "cpu", 1)
            .for_role("a comparison result"),
        Marker::new("TensorBoolCpu2D", BOOL_CPU_2D, "bool", "cpu", 2)
            .for_role("a comparison result"),
        Marker::new("TensorF32Cuda0_1D", F32_CUDA0_1D, "float32", "cuda:0", 1)
            .for_role("the build-only CUDA lane")
            .with_note(CUDA_NOTE),
        Marker::new("TensorF32Cuda0_2D", F32_CUDA0_2D, "float32", "cuda:0", 2)
            .for_role("the build-only CUDA lane")
            .with_note(CUDA_NOTE),
    ],
};

/// The vocabulary: one entry per [`MARKERS`] row, extracted by `extract_<key suffix>` and
/// wrapped by `wrap` (`wrap_cuda0` on the CUDA lane).
pub fn vocabulary() -> Vec<PluginType> {
    MARKERS.vocabulary("torch.Tensor", |m| {
        let cuda = F32_CUDA0.rank(&TypeKey::new(m.key)).is_some();
        Boundary {
            rust_type: RUST_TENSOR.to_owned(),
            extract_fn: format!("::rextio_torch::runtime::extract_{}", m.key_suffix()),
            wrap_fn: if cuda {
                "::rextio_torch::runtime::wrap_cuda0"
            } else {
                "::rextio_torch::runtime::wrap"
            }
            .to_owned(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checked_in_marker_module_is_the_one_rendered_from_the_table() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("python/rextio_torch/types.py");
        if let Err(e) = MARKERS.check_file(&path) {
            panic!("{e}");
        }
    }
}
