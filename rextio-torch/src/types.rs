//! The annotation vocabulary of `rextio_torch.types`.

use rextio_plugin_api::kit::RankFamily;
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

/// The vocabulary.
pub fn vocabulary() -> Vec<PluginType> {
    let f32s = [
        (F32_CPU_1D, "TensorF32Cpu1D", 1),
        (F32_CPU_2D, "TensorF32Cpu2D", 2),
    ]
    .into_iter()
    .map(|(key, name, rank)| PluginType {
        annotation: format!("rextio_torch.types.{name}"),
        key: TypeKey::new(key),
        rust_type: RUST_TENSOR.to_owned(),
        extract_fn: format!("::rextio_torch::runtime::extract_f32_cpu_{rank}d"),
        wrap_fn: "::rextio_torch::runtime::wrap".to_owned(),
        description: format!("torch.Tensor, float32, CPU, rank {rank}"),
    });
    f32s.chain(std::iter::once(PluginType {
        annotation: "rextio_torch.types.TensorI64Cpu1D".to_owned(),
        key: TypeKey::new(I64_CPU_1D),
        rust_type: RUST_TENSOR.to_owned(),
        extract_fn: "::rextio_torch::runtime::extract_i64_cpu_1d".to_owned(),
        wrap_fn: "::rextio_torch::runtime::wrap".to_owned(),
        description: "torch.Tensor, int64, CPU, rank 1 (classification result)".to_owned(),
    }))
    .chain(
        [
            (BOOL_CPU_1D, "TensorBoolCpu1D", 1),
            (BOOL_CPU_2D, "TensorBoolCpu2D", 2),
        ]
        .into_iter()
        .map(|(key, name, rank)| PluginType {
            annotation: format!("rextio_torch.types.{name}"),
            key: TypeKey::new(key),
            rust_type: RUST_TENSOR.to_owned(),
            extract_fn: format!("::rextio_torch::runtime::extract_bool_cpu_{rank}d"),
            wrap_fn: "::rextio_torch::runtime::wrap".to_owned(),
            description: format!("torch.Tensor, bool, CPU, rank {rank} (comparison result)"),
        }),
    )
    .chain(
        [
            (F32_CUDA0_1D, "TensorF32Cuda0_1D", 1),
            (F32_CUDA0_2D, "TensorF32Cuda0_2D", 2),
        ]
        .into_iter()
        .map(|(key, name, rank)| PluginType {
            annotation: format!("rextio_torch.types.{name}"),
            key: TypeKey::new(key),
            rust_type: RUST_TENSOR.to_owned(),
            extract_fn: format!("::rextio_torch::runtime::extract_f32_cuda0_{rank}d"),
            wrap_fn: "::rextio_torch::runtime::wrap_cuda0".to_owned(),
            description: format!(
                "torch.Tensor, float32, cuda:0, rank {rank} (build-only CUDA E2 slice)"
            ),
        }),
    )
    .collect()
}
