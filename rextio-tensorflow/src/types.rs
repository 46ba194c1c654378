//! The annotation vocabulary of `rextio_tensorflow.types`.

use rextio_plugin_api::{PluginType, TypeKey, ValueType};

/// Type key of `TensorF32Cpu1D`.
pub const F32_CPU_1D: &str = "rextio-tensorflow/tensor-f32-cpu-1d";
/// Type key of `TensorF32Cpu2D`.
pub const F32_CPU_2D: &str = "rextio-tensorflow/tensor-f32-cpu-2d";
/// Type key of `TensorI64Cpu1D` (the default-int64 `tf.argmax` result).
pub const I64_CPU_1D: &str = "rextio-tensorflow/tensor-i64-cpu-1d";

/// The Rust type of every TensorFlow tensor value in generated code.
pub const RUST_TENSOR: &str = "::rextio_tensorflow::runtime::RxtTfTensor";

/// Rust path of the boundary wrapper shared by every type.
pub const WRAP_FN: &str = "::rextio_tensorflow::runtime::materialize_tensor";

/// The float32 CPU rank of a type key, if it is one of ours.
pub fn f32_cpu_rank(key: &TypeKey) -> Option<u8> {
    match key.as_str() {
        F32_CPU_1D => Some(1),
        F32_CPU_2D => Some(2),
        _ => None,
    }
}

/// The type of a float32 CPU tensor of `rank` (1 or 2).
pub fn f32_cpu(rank: u8) -> Option<ValueType> {
    match rank {
        1 => Some(ValueType::Plugin(TypeKey::new(F32_CPU_1D))),
        2 => Some(ValueType::Plugin(TypeKey::new(F32_CPU_2D))),
        _ => None,
    }
}

/// The type of an int64 CPU rank-1 tensor.
pub fn i64_cpu_1d() -> ValueType {
    ValueType::Plugin(TypeKey::new(I64_CPU_1D))
}

/// The vocabulary: three import-free markers, one Rust type, per-type extractors.
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
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vocabulary_names_the_seed_markers_and_runtime_boundary() {
        let v = vocabulary();
        let names: Vec<&str> = v.iter().map(|t| t.annotation.as_str()).collect();
        assert_eq!(
            names,
            [
                "rextio_tensorflow.types.TensorF32Cpu1D",
                "rextio_tensorflow.types.TensorF32Cpu2D",
                "rextio_tensorflow.types.TensorI64Cpu1D",
            ]
        );
        for t in &v {
            assert_eq!(t.rust_type, RUST_TENSOR);
            assert_eq!(t.wrap_fn, WRAP_FN);
            assert!(t
                .extract_fn
                .starts_with("::rextio_tensorflow::runtime::extract_"));
        }
    }
}
