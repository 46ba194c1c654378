// A tiny extension that exercises rextio_tensorflow::runtime the way generated crates do: the
// module init calls `load`, every function extracts its inputs at the boundary, runs runtime
// ops on owned handles and materializes the result. Built and driven by tests/tf_runtime.rs.

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use rextio_tensorflow::runtime as rt;
use rextio_tensorflow::runtime::RxtTfTensor;

fn extract(x: &Bound<'_, PyAny>, rank: i64) -> PyResult<RxtTfTensor> {
    match rank {
        1 => rt::extract_f32_cpu_1d(x, "x"),
        _ => rt::extract_f32_cpu_2d(x, "x"),
    }
}

#[pyfunction]
fn unary(py: Python<'_>, op: &str, x: &Bound<'_, PyAny>, rank: i64) -> PyResult<Py<PyAny>> {
    let x = extract(x, rank)?;
    let r = match op {
        "relu" => rt::relu(&x)?,
        "sigmoid" => rt::sigmoid(&x)?,
        "tanh" => rt::tanh(&x)?,
        "abs" => rt::abs(&x)?,
        "negative" => rt::negative(&x)?,
        "square" => rt::square(&x)?,
        "exp" => rt::exp(&x)?,
        "log" => rt::log(&x)?,
        "sqrt" => rt::sqrt(&x)?,
        "softmax_axis0" => rt::softmax_axis0(&x)?,
        "softmax_axis1" => rt::softmax_axis1(&x)?,
        "transpose" => rt::transpose(&x)?,
        "reduce_mean_axis0" => rt::reduce_mean_axis0(&x)?,
        "reduce_mean_axis0_keepdims" => rt::reduce_mean_axis0_keepdims(&x)?,
        "reduce_mean_axis1" => rt::reduce_mean_axis1(&x)?,
        "reduce_mean_axis1_keepdims" => rt::reduce_mean_axis1_keepdims(&x)?,
        "reduce_sum_axis0" => rt::reduce_sum_axis0(&x)?,
        "reduce_sum_axis0_keepdims" => rt::reduce_sum_axis0_keepdims(&x)?,
        "reduce_sum_axis1" => rt::reduce_sum_axis1(&x)?,
        "reduce_sum_axis1_keepdims" => rt::reduce_sum_axis1_keepdims(&x)?,
        "argmax_axis0" => rt::argmax_axis0(&x)?,
        "argmax_axis1" => rt::argmax_axis1(&x)?,
        other => return Err(pyo3::exceptions::PyKeyError::new_err(other.to_owned())),
    };
    rt::materialize_tensor(py, r)
}

#[pyfunction]
fn binary(
    py: Python<'_>,
    op: &str,
    a: &Bound<'_, PyAny>,
    ra: i64,
    b: &Bound<'_, PyAny>,
    rb: i64,
) -> PyResult<Py<PyAny>> {
    let (a, b) = (extract(a, ra)?, extract(b, rb)?);
    let r = match op {
        "add" => rt::add(&a, &b)?,
        "sub" => rt::sub(&a, &b)?,
        "mul" => rt::mul(&a, &b)?,
        "div" => rt::div(&a, &b)?,
        "maximum" => rt::maximum(&a, &b)?,
        "minimum" => rt::minimum(&a, &b)?,
        "matmul" => rt::matmul(&a, &b)?,
        "bias_add" => rt::bias_add(&a, &b)?,
        other => return Err(pyo3::exceptions::PyKeyError::new_err(other.to_owned())),
    };
    rt::materialize_tensor(py, r)
}

#[pyfunction]
fn echo_i64(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let x = rt::extract_i64_cpu_1d(x, "labels")?;
    rt::materialize_tensor(py, x)
}

/// The scoring head: intermediates stay native handles between ops.
#[pyfunction]
fn scoring<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    w: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    rounds: i64,
) -> PyResult<Bound<'py, PyTuple>> {
    let x = rt::extract_f32_cpu_2d(x, "x")?;
    let w = rt::extract_f32_cpu_2d(w, "w")?;
    let b = rt::extract_f32_cpu_1d(b, "b")?;
    let mut h = rt::bias_add(&rt::matmul(&x, &w)?, &b)?;
    for i in 0..rounds {
        h = if i % 2 == 0 { rt::relu(&h)? } else { rt::tanh(&h)? };
        h = rt::add(&h, &b)?;
    }
    let p = rt::softmax_axis1(&h)?;
    let labels = rt::argmax_axis1(&p)?;
    PyTuple::new(
        py,
        [rt::materialize_tensor(py, p)?, rt::materialize_tensor(py, labels)?],
    )
}

/// Native body of the bench's scoring pipeline, written the way the host's emitter writes it:
/// owned typed parameters, one runtime call per claimed site, locals re-bound in the loop.
#[allow(clippy::too_many_arguments)]
fn scoring_body(
    x: RxtTfTensor,
    mean: RxtTfTensor,
    scale: RxtTfTensor,
    w1: RxtTfTensor,
    b1: RxtTfTensor,
    w2: RxtTfTensor,
    b2: RxtTfTensor,
    rounds: i64,
    labels: bool,
) -> PyResult<RxtTfTensor> {
    let centered = rt::sub(&(x), &(mean))?;
    let normalized = rt::div(&(centered), &(scale))?;
    let mut hidden = rt::bias_add(&(rt::matmul(&(normalized), &(w1))?), &(b1))?;
    for step in 0..rounds {
        if step % 2 == 0 {
            hidden = rt::relu(&(hidden))?;
        } else {
            hidden = rt::tanh(&(hidden))?;
        }
    }
    let logits = rt::add(&(rt::matmul(&(hidden), &(w2))?), &(b2))?;
    let probs = rt::softmax_axis1(&(logits))?;
    if !labels {
        return Ok(probs);
    }
    rt::argmax_axis1(&(probs))
}

/// `classify` of the bench's TensorFlow scoring project: 7 tensors and `rounds` in, int64
/// labels out (12 TFE ops at rounds = 4).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn scoring_labels<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    mean: &Bound<'py, PyAny>,
    scale: &Bound<'py, PyAny>,
    w1: &Bound<'py, PyAny>,
    b1: &Bound<'py, PyAny>,
    w2: &Bound<'py, PyAny>,
    b2: &Bound<'py, PyAny>,
    rounds: i64,
) -> PyResult<Py<PyAny>> {
    let x = rt::extract_f32_cpu_2d(x, "x")?;
    let mean = rt::extract_f32_cpu_1d(mean, "mean")?;
    let scale = rt::extract_f32_cpu_1d(scale, "scale")?;
    let w1 = rt::extract_f32_cpu_2d(w1, "w1")?;
    let b1 = rt::extract_f32_cpu_1d(b1, "b1")?;
    let w2 = rt::extract_f32_cpu_2d(w2, "w2")?;
    let b2 = rt::extract_f32_cpu_1d(b2, "b2")?;
    let out = scoring_body(x, mean, scale, w1, b1, w2, b2, rounds, true)?;
    rt::materialize_tensor(py, out)
}

/// `probabilities` of the same project (the pipeline without the argmax).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn scoring_probabilities<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    mean: &Bound<'py, PyAny>,
    scale: &Bound<'py, PyAny>,
    w1: &Bound<'py, PyAny>,
    b1: &Bound<'py, PyAny>,
    w2: &Bound<'py, PyAny>,
    b2: &Bound<'py, PyAny>,
    rounds: i64,
) -> PyResult<Py<PyAny>> {
    let x = rt::extract_f32_cpu_2d(x, "x")?;
    let mean = rt::extract_f32_cpu_1d(mean, "mean")?;
    let scale = rt::extract_f32_cpu_1d(scale, "scale")?;
    let w1 = rt::extract_f32_cpu_2d(w1, "w1")?;
    let b1 = rt::extract_f32_cpu_1d(b1, "b1")?;
    let w2 = rt::extract_f32_cpu_2d(w2, "w2")?;
    let b2 = rt::extract_f32_cpu_1d(b2, "b2")?;
    let out = scoring_body(x, mean, scale, w1, b1, w2, b2, rounds, false)?;
    rt::materialize_tensor(py, out)
}

/// The same tensor returned twice (the second materialization shares the first's owner).
#[pyfunction]
fn twice<'py>(py: Python<'py>, x: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
    let x = rt::extract_f32_cpu_2d(x, "x")?;
    let r = rt::relu(&x)?;
    let keep = r.clone();
    PyTuple::new(py, [rt::materialize_tensor(py, r)?, rt::materialize_tensor(py, keep)?])
}

#[pyfunction]
fn info() -> (Option<String>, &'static str, bool) {
    (
        rt::tensorflow_root().map(|p| p.display().to_string()),
        rt::platform_profile(),
        rt::is_loaded(),
    )
}

#[pymodule]
fn rxtf_check(m: &Bound<'_, PyModule>) -> PyResult<()> {
    rt::load(m.py())?;
    m.add_function(wrap_pyfunction!(unary, m)?)?;
    m.add_function(wrap_pyfunction!(binary, m)?)?;
    m.add_function(wrap_pyfunction!(echo_i64, m)?)?;
    m.add_function(wrap_pyfunction!(scoring, m)?)?;
    m.add_function(wrap_pyfunction!(twice, m)?)?;
    m.add_function(wrap_pyfunction!(scoring_labels, m)?)?;
    m.add_function(wrap_pyfunction!(scoring_probabilities, m)?)?;
    m.add_function(wrap_pyfunction!(info, m)?)?;
    Ok(())
}
