//! The annotation vocabulary of `rextio_torch.types`.

use rextio_plugin_api::{PluginType, TypeKey};

/// Type key of `TensorF32Cpu1D`.
pub const F32_CPU_1D: &str = "rextio-torch/tensor-f32-cpu-1d";
/// Type key of `TensorF32Cpu2D`.
pub const F32_CPU_2D: &str = "rextio-torch/tensor-f32-cpu-2d";

/// The Rust type of every torch tensor value in generated code.
pub const RUST_TENSOR: &str = "::rextio_torch::runtime::RxtTorchTensor";

/// The float32 CPU rank of a type key, if it is one of ours.
pub fn f32_cpu_rank(key: &TypeKey) -> Option<u8> {
    match key.as_str() {
        F32_CPU_1D => Some(1),
        F32_CPU_2D => Some(2),
        _ => None,
    }
}

/// The type key of a float32 CPU tensor of `rank` (1 or 2).
pub fn f32_cpu_key(rank: u8) -> Option<TypeKey> {
    match rank {
        1 => Some(TypeKey::new(F32_CPU_1D)),
        2 => Some(TypeKey::new(F32_CPU_2D)),
        _ => None,
    }
}

/// The vocabulary.
pub fn vocabulary() -> Vec<PluginType> {
    [
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
    })
    .collect()
}
