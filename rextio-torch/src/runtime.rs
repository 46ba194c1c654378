//! The runtime module linked into generated crates: zero-copy boundary, fallible ops, guard.
//!
//! Every libtorch error becomes a Python exception; nothing here unwraps or panics on a path a
//! user can reach. Values that came from Python are only ever read: in-place kernels run only on
//! owned temporaries (`*_owned`), which the host hands over when nothing else can observe them.

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use tch::{Device, Kind, TchError, Tensor};

/// A torch tensor inside generated code. `Clone` shares storage (`shallow_clone`).
#[derive(Debug)]
pub struct RxtTorchTensor(pub Tensor);

impl Clone for RxtTorchTensor {
    fn clone(&self) -> Self {
        Self(self.0.shallow_clone())
    }
}

/// Map a libtorch error to a Python `RuntimeError`, keeping libtorch's message without its C++
/// backtrace.
pub fn map_err(e: TchError) -> PyErr {
    let text = e.to_string();
    let head = text
        .split("\nException raised from")
        .next()
        .unwrap_or(&text)
        .trim_end();
    let head = head.strip_prefix("Internal torch error: ").unwrap_or(head);
    PyRuntimeError::new_err(format!("rextio-torch: {head}"))
}

fn extract_f32_cpu(obj: &Bound<'_, PyAny>, rank: usize) -> PyResult<RxtTorchTensor> {
    // SAFETY: `obj` is a live Python object for the duration of the call (we hold the GIL).
    let unpacked = unsafe { Tensor::pyobject_unpack(obj.as_ptr().cast()) }.map_err(map_err)?;
    let Some(t) = unpacked else {
        return Err(PyTypeError::new_err(
            "rextio-torch: expected a torch.Tensor",
        ));
    };
    if t.device() != Device::Cpu {
        return Err(PyValueError::new_err("rextio-torch: expected a CPU tensor"));
    }
    if t.f_kind().ok() != Some(Kind::Float) {
        return Err(PyValueError::new_err(
            "rextio-torch: expected a float32 tensor",
        ));
    }
    if t.is_sparse() || t.is_mkldnn() {
        return Err(PyValueError::new_err(
            "rextio-torch: expected a strided (dense) tensor",
        ));
    }
    let got = t.dim();
    if got != rank {
        return Err(PyValueError::new_err(format!(
            "rextio-torch: expected rank-{rank} tensor, got rank {got}"
        )));
    }
    Ok(RxtTorchTensor(t))
}

/// Boundary check for `TensorF32Cpu1D`.
pub fn extract_f32_cpu_1d(obj: &Bound<'_, PyAny>, _name: &str) -> PyResult<RxtTorchTensor> {
    extract_f32_cpu(obj, 1)
}

/// Boundary check for `TensorF32Cpu2D`.
pub fn extract_f32_cpu_2d(obj: &Bound<'_, PyAny>, _name: &str) -> PyResult<RxtTorchTensor> {
    extract_f32_cpu(obj, 2)
}

/// Hand a tensor back to Python (no storage copy).
pub fn wrap(py: Python<'_>, t: RxtTorchTensor) -> PyResult<Py<PyAny>> {
    let ptr = t.0.pyobject_wrap().map_err(map_err)?;
    // SAFETY: THPVariable_Wrap returns a new reference or null with a Python error set.
    let obj = unsafe { Bound::from_owned_ptr_or_err(py, ptr.cast()) }?;
    Ok(obj.unbind())
}

/// The function-scope no-grad guard: outputs never require grad, and the caller's grad mode is
/// restored when it drops, on every exit.
pub struct FunctionGuard(#[allow(dead_code)] tch::NoGradGuard);

impl FunctionGuard {
    /// Disable grad for the rest of the scope.
    pub fn enter() -> Self {
        Self(tch::no_grad_guard())
    }
}

fn ok(r: Result<Tensor, TchError>) -> PyResult<RxtTorchTensor> {
    r.map(RxtTorchTensor).map_err(map_err)
}

/// `F.linear(x, w, b)`.
pub fn linear(
    x: &RxtTorchTensor,
    w: &RxtTorchTensor,
    b: Option<&RxtTorchTensor>,
) -> PyResult<RxtTorchTensor> {
    ok(x.0.f_linear(&w.0, b.map(|b| &b.0)))
}

/// `a @ b`.
pub fn matmul(a: &RxtTorchTensor, b: &RxtTorchTensor) -> PyResult<RxtTorchTensor> {
    ok(a.0.f_matmul(&b.0))
}

/// `a + b`.
pub fn add(a: &RxtTorchTensor, b: &RxtTorchTensor) -> PyResult<RxtTorchTensor> {
    ok(a.0.f_add(&b.0))
}

/// Whether `b` broadcasts into `a`'s shape without growing it.
fn broadcasts_into(a: &[i64], b: &[i64]) -> bool {
    if b.len() > a.len() {
        return false;
    }
    a.iter()
        .rev()
        .zip(b.iter().rev())
        .all(|(x, y)| y == x || *y == 1)
}

/// `a + b` where `a` is an owned temporary: in place when the result keeps `a`'s shape.
pub fn add_owned(mut a: RxtTorchTensor, b: &RxtTorchTensor) -> PyResult<RxtTorchTensor> {
    if broadcasts_into(&a.0.size(), &b.0.size()) {
        // The returned handle aliases `a`; only the side effect matters.
        drop(a.0.f_add_(&b.0).map_err(map_err)?);
        Ok(a)
    } else {
        add(&a, b)
    }
}

macro_rules! unary {
    ($name:ident, $owned:ident, $f:ident, $f_:ident, $doc:literal) => {
        #[doc = concat!("`t.", $doc, "()`.")]
        pub fn $name(t: &RxtTorchTensor) -> PyResult<RxtTorchTensor> {
            ok(t.0.$f())
        }
        #[doc = concat!("`t.", $doc, "()` on an owned temporary, in place.")]
        pub fn $owned(mut t: RxtTorchTensor) -> PyResult<RxtTorchTensor> {
            drop(t.0.$f_().map_err(map_err)?);
            Ok(t)
        }
    };
}

unary!(relu, relu_owned, f_relu, f_relu_, "relu");
unary!(sigmoid, sigmoid_owned, f_sigmoid, f_sigmoid_, "sigmoid");
unary!(tanh, tanh_owned, f_tanh, f_tanh_, "tanh");

/// `t.mean(dim=1, keepdim=False)`.
pub fn mean_dim1(t: &RxtTorchTensor) -> PyResult<RxtTorchTensor> {
    ok(t.0.f_mean_dim(&[1i64][..], false, None::<Kind>))
}

/// `t.sum(dim=1, keepdim=False)`.
pub fn sum_dim1(t: &RxtTorchTensor) -> PyResult<RxtTorchTensor> {
    ok(t.0.f_sum_dim_intlist(&[1i64][..], false, None::<Kind>))
}

#[cfg(test)]
mod tests {
    use super::broadcasts_into;

    #[test]
    fn in_place_only_when_shape_is_kept() {
        assert!(broadcasts_into(&[4, 3], &[3]));
        assert!(broadcasts_into(&[4, 3], &[4, 3]));
        assert!(broadcasts_into(&[4, 3], &[1, 3]));
        assert!(!broadcasts_into(&[1, 3], &[4, 3]));
        assert!(!broadcasts_into(&[3], &[4, 3]));
        assert!(!broadcasts_into(&[4, 1], &[4, 3]));
    }
}
