//! The floor lane of `cargo xtask bench` for the TensorFlow workloads: each workload's op
//! sequence called from Rust through `rextio_tensorflow::runtime` (the TFE C API of the
//! tensorflow wheel the process imported) with no Python per op.
//!
//! Every workload has two entry points: `<name>(...)` runs the sequence once and returns the
//! result (the harness checks its parity like any other lane), and `<name>_loop(..., n)` takes
//! the inputs across the boundary once, then runs the sequence `n` times inside Rust and returns
//! the elapsed nanoseconds, so `elapsed / n` is the per-call cost the eager TFE ops themselves
//! allow. Each iteration drops its result, as a native call does after materializing it.

use std::time::Instant;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rextio_tensorflow::runtime as rt;
use rextio_tensorflow::runtime::RxtTfTensor;

fn check_n(n: u64) -> PyResult<()> {
    if n == 0 {
        return Err(PyValueError::new_err(
            "rextio-bench-floor-tf: the iteration count must be at least 1",
        ));
    }
    Ok(())
}

/// Run `body` `n` times, dropping each result; elapsed nanoseconds.
fn time_loop(n: u64, mut body: impl FnMut() -> PyResult<RxtTfTensor>) -> PyResult<u64> {
    check_n(n)?;
    let start = Instant::now();
    for _ in 0..n {
        drop(body()?);
    }
    Ok(u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX))
}

/// Phase A: `tf.reduce_mean(tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w), b)), axis=1)`.
fn phase_a_ops(x: &RxtTfTensor, w: &RxtTfTensor, b: &RxtTfTensor) -> PyResult<RxtTfTensor> {
    let h = rt::bias_add(&rt::matmul(x, w)?, b)?;
    rt::reduce_mean_axis1(&rt::relu(&h)?)
}

struct Scoring {
    x: RxtTfTensor,
    mean: RxtTfTensor,
    scale: RxtTfTensor,
    w1: RxtTfTensor,
    b1: RxtTfTensor,
    w2: RxtTfTensor,
    b2: RxtTfTensor,
    rounds: i64,
}

impl Scoring {
    #[allow(clippy::too_many_arguments)]
    fn extract(
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
            x: rt::extract_f32_cpu_2d(x, "x")?,
            mean: rt::extract_f32_cpu_1d(mean, "mean")?,
            scale: rt::extract_f32_cpu_1d(scale, "scale")?,
            w1: rt::extract_f32_cpu_2d(w1, "w1")?,
            b1: rt::extract_f32_cpu_1d(b1, "b1")?,
            w2: rt::extract_f32_cpu_2d(w2, "w2")?,
            b2: rt::extract_f32_cpu_1d(b2, "b2")?,
            rounds,
        })
    }

    /// `(x - mean) / scale -> bias_add(matmul(., w1), b1) -> relu/tanh rounds
    /// -> matmul(., w2) + b2 -> softmax(axis=1)`.
    fn probabilities(&self) -> PyResult<RxtTfTensor> {
        let normalized = rt::div(&rt::sub(&self.x, &self.mean)?, &self.scale)?;
        let mut h = rt::bias_add(&rt::matmul(&normalized, &self.w1)?, &self.b1)?;
        for step in 0..self.rounds {
            h = if step.rem_euclid(2) == 0 {
                rt::relu(&h)?
            } else {
                rt::tanh(&h)?
            };
        }
        let logits = rt::add(&rt::matmul(&h, &self.w2)?, &self.b2)?;
        rt::softmax_axis1(&logits)
    }

    fn classify(&self) -> PyResult<RxtTfTensor> {
        rt::argmax_axis1(&self.probabilities()?)
    }
}

#[pyfunction]
fn tf_phase_a(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    w: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let x = rt::extract_f32_cpu_2d(x, "x")?;
    let w = rt::extract_f32_cpu_2d(w, "w")?;
    let b = rt::extract_f32_cpu_1d(b, "b")?;
    rt::materialize_tensor(py, phase_a_ops(&x, &w, &b)?)
}

#[pyfunction]
fn tf_phase_a_loop(
    x: &Bound<'_, PyAny>,
    w: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    n: u64,
) -> PyResult<u64> {
    let x = rt::extract_f32_cpu_2d(x, "x")?;
    let w = rt::extract_f32_cpu_2d(w, "w")?;
    let b = rt::extract_f32_cpu_1d(b, "b")?;
    time_loop(n, || phase_a_ops(&x, &w, &b))
}

#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn tf_scoring_probabilities(
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
    let s = Scoring::extract(x, mean, scale, w1, b1, w2, b2, rounds)?;
    rt::materialize_tensor(py, s.probabilities()?)
}

#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn tf_scoring(
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
    let s = Scoring::extract(x, mean, scale, w1, b1, w2, b2, rounds)?;
    rt::materialize_tensor(py, s.classify()?)
}

#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn tf_scoring_loop(
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
    let s = Scoring::extract(x, mean, scale, w1, b1, w2, b2, rounds)?;
    time_loop(n, || s.classify())
}

#[pymodule]
fn _rextio_bench_floor_tf(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Bind the imported tensorflow wheel now, so a mismatch fails the import, not a call.
    rt::load(m.py())?;
    m.add_function(wrap_pyfunction!(tf_phase_a, m)?)?;
    m.add_function(wrap_pyfunction!(tf_phase_a_loop, m)?)?;
    m.add_function(wrap_pyfunction!(tf_scoring_probabilities, m)?)?;
    m.add_function(wrap_pyfunction!(tf_scoring, m)?)?;
    m.add_function(wrap_pyfunction!(tf_scoring_loop, m)?)?;
    Ok(())
}
