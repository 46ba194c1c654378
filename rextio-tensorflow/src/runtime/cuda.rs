//! The build-only CUDA lane: `tf.matmul -> tf.nn.bias_add -> tf.nn.relu ->
//! tf.reduce_mean(axis=1)` on the eager context's `GPU:0`, with its own Rust tensor type.
//!
//! It reuses the TFE runtime of the imported tensorflow wheel exactly as the CPU lane does (same
//! binding, same borrowed eager context, same RAII handles); the differences are the device and
//! the inference-only guard:
//!
//! - boundary values must be exact EagerTensors whose backing device is exactly
//!   the eager context's enumerated `GPU:0` (exact full-name equality), float32 of the annotated rank; they are never copied
//!   to or from the host (the handle is shared, not resolved);
//! - every op runs on the device of its operands and its result must still be on that `GPU:0`;
//! - inputs are refused when a `GradientTape` or forward accumulator may record them
//!   (`could_possibly_record()`), before any handle is copied or op executed.
//!
//! This lane is lowered only with the `rextio-device-cuda` authorisation of
//! `cuda-tensorflow-tfe-linux-x86_64`; it is compiled in CI but executed only by
//! `cargo xtask certify --cuda` on a GPU host (`support_claim=false`).

use super::eager::value_error;
use super::eager::{Attr, Local};
use super::loader::TF_FLOAT;
use super::{execute_on, extract_on, materialize_tensor, require, Const, RxtTfTensor, T_FLOAT};
use pyo3::prelude::*;
use std::ffi::CStr;
use std::os::raw::c_int;

/// Whether `t` is on the eager context's enumerated `GPU:0`, by exact full name.
fn is_gpu0(t: &RxtTfTensor) -> bool {
    t.inner.context.is_local(&t.facts.device, Local::Gpu0)
}

/// A float32 tensor on the eager context's `GPU:0` inside generated code (an owned TFE handle,
/// `!Send`). A separate type from the CPU lane's [`RxtTfTensor`], so the two never mix.
#[derive(Clone, Debug)]
pub struct RxtTfCudaTensor(RxtTfTensor);

impl RxtTfCudaTensor {
    /// The rank.
    pub fn rank(&self) -> usize {
        self.0.rank()
    }
}

/// Refuse inputs a tape or forward accumulator could record: the lane is inference-only.
fn inference_only(py: Python<'_>) -> PyResult<()> {
    let record = py.import("tensorflow.python.eager.record")?;
    let may_record: bool = record.call_method0("could_possibly_record")?.extract()?;
    if may_record {
        return Err(value_error(
            "the CUDA lane is inference-only: a GradientTape or forward accumulator may record these inputs",
        ));
    }
    Ok(())
}

fn extract(obj: &Bound<'_, PyAny>, rank: c_int) -> PyResult<RxtTfCudaTensor> {
    inference_only(obj.py())?;
    extract_on(obj, TF_FLOAT, rank, Local::Gpu0, "expected a GPU:0 tensor").map(RxtTfCudaTensor)
}

/// Boundary check for `TensorF32Gpu0_1D`.
pub fn extract_f32_gpu0_1d(obj: &Bound<'_, PyAny>, _name: &str) -> PyResult<RxtTfCudaTensor> {
    extract(obj, 1)
}

/// Boundary check for `TensorF32Gpu0_2D`.
pub fn extract_f32_gpu0_2d(obj: &Bound<'_, PyAny>, _name: &str) -> PyResult<RxtTfCudaTensor> {
    extract(obj, 2)
}

/// Hand a `GPU:0` result back to Python as an EagerTensor (the handle, no host copy).
pub fn materialize_gpu0(py: Python<'_>, t: RxtTfCudaTensor) -> PyResult<Py<PyAny>> {
    if !is_gpu0(&t.0) {
        return Err(value_error("expected a GPU:0 tensor"));
    }
    materialize_tensor(py, t.0)
}

fn run(
    name: &'static CStr,
    inputs: &[&RxtTfTensor],
    konst: Option<Const>,
    attrs: &[Attr],
    rank: c_int,
) -> PyResult<RxtTfCudaTensor> {
    execute_on(name, inputs, konst, attrs, (TF_FLOAT, rank), Local::Gpu0).map(RxtTfCudaTensor)
}

fn on_gpu0(t: &RxtTfCudaTensor, rank: c_int, what: &str) -> PyResult<()> {
    require(&t.0, rank, what)?;
    if !is_gpu0(&t.0) {
        return Err(value_error(format!("{what}: expected a GPU:0 tensor")));
    }
    Ok(())
}

/// `tf.matmul(a, b)` on rank-2 `GPU:0` tensors (TFE MatMul).
pub fn matmul_gpu0(a: &RxtTfCudaTensor, b: &RxtTfCudaTensor) -> PyResult<RxtTfCudaTensor> {
    on_gpu0(a, 2, "MatMul")?;
    on_gpu0(b, 2, "MatMul")?;
    let attrs = [
        T_FLOAT,
        Attr::Bool(c"transpose_a", false),
        Attr::Bool(c"transpose_b", false),
    ];
    run(c"MatMul", &[&a.0, &b.0], None, &attrs, 2)
}

/// `tf.nn.bias_add(value, bias)` (NHWC) with a rank-2 value and rank-1 bias on `GPU:0`.
pub fn bias_add_gpu0(value: &RxtTfCudaTensor, bias: &RxtTfCudaTensor) -> PyResult<RxtTfCudaTensor> {
    on_gpu0(value, 2, "BiasAdd")?;
    on_gpu0(bias, 1, "BiasAdd")?;
    let attrs = [T_FLOAT, Attr::Str(c"data_format", "NHWC")];
    run(c"BiasAdd", &[&value.0, &bias.0], None, &attrs, 2)
}

/// `tf.nn.relu(x)` on a rank-2 `GPU:0` tensor (TFE Relu).
pub fn relu_gpu0(x: &RxtTfCudaTensor) -> PyResult<RxtTfCudaTensor> {
    on_gpu0(x, 2, "Relu")?;
    run(c"Relu", &[&x.0], None, &[T_FLOAT], 2)
}

/// `tf.reduce_mean(x, axis=1)` on a rank-2 `GPU:0` tensor: rank 1 on `GPU:0` (TFE Mean; the
/// int32 axis is a host-memory input, as for every GPU reduction kernel).
pub fn reduce_mean_axis1_gpu0(x: &RxtTfCudaTensor) -> PyResult<RxtTfCudaTensor> {
    on_gpu0(x, 2, "Mean")?;
    let attrs = [
        T_FLOAT,
        Attr::Type(c"Tidx", super::loader::TF_INT32),
        Attr::Bool(c"keep_dims", false),
    ];
    run(c"Mean", &[&x.0], Some(Const(&[1], true)), &attrs, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_local_names_are_accepted() {
        assert!(Local::Gpu0.is(c"/job:localhost/replica:0/task:0/device:GPU:0"));
        assert!(Local::Cpu0.is(c"/job:localhost/replica:0/task:0/device:CPU:0"));
        for other in [
            c"/job:localhost/replica:0/task:0/device:GPU:1",
            c"/job:localhost/replica:0/task:0/device:CPU:0",
            c"/job:worker/replica:0/task:0/device:GPU:0",
            c"/job:localhost/replica:0/task:1/device:GPU:0",
            c"GPU:0",
        ] {
            assert!(!Local::Gpu0.is(other), "{other:?}");
        }
        for other in [
            c"/job:worker/replica:0/task:1/device:CPU:0",
            c"/job:localhost/replica:0/task:0/device:CPU:1",
            c"/job:localhost/replica:1/task:0/device:CPU:0",
            c"/device:CPU:0",
            c"CPU:0",
        ] {
            assert!(!Local::Cpu0.is(other), "{other:?}");
        }
    }
}
