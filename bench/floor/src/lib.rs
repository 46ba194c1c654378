//! The floor lane of `cargo xtask bench`: each workload's op sequence called from Rust on
//! libtorch (through `tch`) with no Python boundary per call.
//!
//! Every workload has two entry points: `<name>(...)` runs the sequence once and returns the
//! result (the harness checks its parity like any other lane), and `<name>_loop(..., n)` unpacks
//! the inputs once, then runs the sequence `n` times inside Rust and returns the elapsed
//! nanoseconds, so `elapsed / n` is the per-call cost libtorch itself allows. Each iteration
//! holds one no-grad guard and drops its result, as a native call does; temporaries are updated in
//! place where the result would be (`relu_`, `add_`, `div_`), inputs never are.

use std::time::Instant;

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use tch::{Kind, TchError, Tensor};

fn err(e: TchError) -> PyErr {
    PyRuntimeError::new_err(format!("rextio-bench-floor: {e}"))
}

/// Borrow the tensor behind a Python `torch.Tensor` (no copy).
fn unpack(obj: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    // SAFETY: `obj` is a live Python object while we hold the GIL.
    let unpacked = unsafe { Tensor::pyobject_unpack(obj.as_ptr().cast()) }.map_err(err)?;
    unpacked.ok_or_else(|| PyTypeError::new_err("rextio-bench-floor: expected a torch.Tensor"))
}

/// Hand a tensor back to Python (no copy).
fn wrap(py: Python<'_>, t: Tensor) -> PyResult<Py<PyAny>> {
    let ptr = t.pyobject_wrap().map_err(err)?;
    // SAFETY: THPVariable_Wrap returns a new reference, or null with a Python error set.
    let obj = unsafe { Bound::from_owned_ptr_or_err(py, ptr.cast()) }?;
    Ok(obj.unbind())
}

fn check_n(n: u64) -> PyResult<()> {
    if n == 0 {
        return Err(PyValueError::new_err(
            "rextio-bench-floor: the iteration count must be at least 1",
        ));
    }
    Ok(())
}

/// Run `body` `n` times, one no-grad guard per iteration; elapsed nanoseconds.
fn time_loop(n: u64, mut body: impl FnMut() -> Result<Tensor, TchError>) -> PyResult<u64> {
    check_n(n)?;
    let start = Instant::now();
    for _ in 0..n {
        let _guard = tch::no_grad_guard();
        drop(body().map_err(err)?);
    }
    Ok(u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX))
}

/// Phase A: `F.linear(x, w, b).relu().mean(dim=1, keepdim=False)`.
fn phase_a_ops(x: &Tensor, w: &Tensor, b: &Tensor) -> Result<Tensor, TchError> {
    let mut h = x.f_linear(w, Some(b))?;
    drop(h.f_relu_()?);
    h.f_mean_dim(&[1i64][..], false, None::<Kind>)
}

/// Phase B: `depth` rounds of `(h @ w + b)` then relu (even) or sigmoid (odd), then the mean.
fn phase_b_ops(
    x: &Tensor,
    w: &Tensor,
    b: &Tensor,
    depth: i64,
    phase: i64,
) -> Result<Tensor, TchError> {
    let mut h = x.shallow_clone();
    for layer in 0..depth {
        let mut t = h.f_matmul(w)?;
        drop(t.f_add_(b)?);
        if (layer + phase).rem_euclid(2) == 0 {
            drop(t.f_relu_()?);
        } else {
            drop(t.f_sigmoid_()?);
        }
        h = t;
    }
    h.f_mean_dim(&[1i64][..], false, None::<Kind>)
}

/// The scoring pipeline's inputs, unpacked once.
struct Scoring {
    x: Tensor,
    mean: Tensor,
    scale: Tensor,
    w1: Tensor,
    b1: Tensor,
    w2: Tensor,
    b2: Tensor,
    rounds: i64,
}

impl Scoring {
    #[allow(clippy::too_many_arguments)]
    fn unpack(
        x: &Bound<'_, PyAny>,
        mean: &Bound<'_, PyAny>,
        scale: &Bound<'_, PyAny>,
        w1: &Bound<'_, PyAny>,
        b1: &Bound<'_, PyAny>,
        w2: &Bound<'_, PyAny>,
        b2: &Bound<'_, PyAny>,
        rounds: i64,
    ) -> PyResult<Self> {
        Ok(Self {
            x: unpack(x)?,
            mean: unpack(mean)?,
            scale: unpack(scale)?,
            w1: unpack(w1)?,
            b1: unpack(b1)?,
            w2: unpack(w2)?,
            b2: unpack(b2)?,
            rounds,
        })
    }

    /// `softmax(linear(rounds(linear((x - mean) / scale))))`.
    fn probabilities(&self) -> Result<Tensor, TchError> {
        let mut h = self.x.f_sub(&self.mean)?;
        drop(h.f_div_(&self.scale)?);
        let mut h = h.f_linear(&self.w1, Some(&self.b1))?;
        for step in 0..self.rounds {
            if step.rem_euclid(2) == 0 {
                drop(h.f_relu_()?);
            } else {
                drop(h.f_tanh_()?);
            }
        }
        let logits = h.f_linear(&self.w2, Some(&self.b2))?;
        logits.f_softmax(1, None::<Kind>)
    }

    /// The labels: `argmax(probabilities, dim=1)`.
    fn classify(&self) -> Result<Tensor, TchError> {
        self.probabilities()?.f_argmax(1i64, false)
    }
}

/// Phase A once; returns the result.
#[pyfunction]
fn phase_a(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    w: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let (x, w, b) = (unpack(x)?, unpack(w)?, unpack(b)?);
    let out = {
        let _guard = tch::no_grad_guard();
        phase_a_ops(&x, &w, &b).map_err(err)?
    };
    wrap(py, out)
}

/// Phase A `n` times inside Rust; elapsed nanoseconds.
#[pyfunction]
fn phase_a_loop(
    x: &Bound<'_, PyAny>,
    w: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    n: u64,
) -> PyResult<u64> {
    let (x, w, b) = (unpack(x)?, unpack(w)?, unpack(b)?);
    time_loop(n, || phase_a_ops(&x, &w, &b))
}

/// Phase B once; returns the result.
#[pyfunction]
fn phase_b(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    w: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    depth: i64,
    phase: i64,
) -> PyResult<Py<PyAny>> {
    let (x, w, b) = (unpack(x)?, unpack(w)?, unpack(b)?);
    let out = {
        let _guard = tch::no_grad_guard();
        phase_b_ops(&x, &w, &b, depth, phase).map_err(err)?
    };
    wrap(py, out)
}

/// Phase B `n` times inside Rust; elapsed nanoseconds.
#[pyfunction]
fn phase_b_loop(
    x: &Bound<'_, PyAny>,
    w: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    depth: i64,
    phase: i64,
    n: u64,
) -> PyResult<u64> {
    let (x, w, b) = (unpack(x)?, unpack(w)?, unpack(b)?);
    time_loop(n, || phase_b_ops(&x, &w, &b, depth, phase))
}

/// The scoring pipeline's probabilities once.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn scoring_probabilities(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    mean: &Bound<'_, PyAny>,
    scale: &Bound<'_, PyAny>,
    w1: &Bound<'_, PyAny>,
    b1: &Bound<'_, PyAny>,
    w2: &Bound<'_, PyAny>,
    b2: &Bound<'_, PyAny>,
    rounds: i64,
) -> PyResult<Py<PyAny>> {
    let s = Scoring::unpack(x, mean, scale, w1, b1, w2, b2, rounds)?;
    let out = {
        let _guard = tch::no_grad_guard();
        s.probabilities().map_err(err)?
    };
    wrap(py, out)
}

/// The scoring pipeline's labels once.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn scoring(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    mean: &Bound<'_, PyAny>,
    scale: &Bound<'_, PyAny>,
    w1: &Bound<'_, PyAny>,
    b1: &Bound<'_, PyAny>,
    w2: &Bound<'_, PyAny>,
    b2: &Bound<'_, PyAny>,
    rounds: i64,
) -> PyResult<Py<PyAny>> {
    let s = Scoring::unpack(x, mean, scale, w1, b1, w2, b2, rounds)?;
    let out = {
        let _guard = tch::no_grad_guard();
        s.classify().map_err(err)?
    };
    wrap(py, out)
}

/// The scoring pipeline's labels `n` times inside Rust; elapsed nanoseconds.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn scoring_loop(
    x: &Bound<'_, PyAny>,
    mean: &Bound<'_, PyAny>,
    scale: &Bound<'_, PyAny>,
    w1: &Bound<'_, PyAny>,
    b1: &Bound<'_, PyAny>,
    w2: &Bound<'_, PyAny>,
    b2: &Bound<'_, PyAny>,
    rounds: i64,
    n: u64,
) -> PyResult<u64> {
    let s = Scoring::unpack(x, mean, scale, w1, b1, w2, b2, rounds)?;
    time_loop(n, || s.classify())
}

/// The extension module (named so it cannot clash with a generated `_rextio_native_*`).
#[pymodule]
fn _rextio_bench_floor(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(phase_a, m)?)?;
    m.add_function(wrap_pyfunction!(phase_a_loop, m)?)?;
    m.add_function(wrap_pyfunction!(phase_b, m)?)?;
    m.add_function(wrap_pyfunction!(phase_b_loop, m)?)?;
    m.add_function(wrap_pyfunction!(scoring_probabilities, m)?)?;
    m.add_function(wrap_pyfunction!(scoring, m)?)?;
    m.add_function(wrap_pyfunction!(scoring_loop, m)?)?;
    Ok(())
}
