//! Boundary errors that say where and what: a plugin's (or PyO3's) message for a value a native
//! function refuses, followed by the function, the parameter, its position, and what was given.
//!
//! Only the failure path pays for this: the generated code calls [`argument_error`] after a
//! conversion has already failed, so a successful call builds no string.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString};

/// `err` (raised converting `value`, argument `param` at `position` of `function`) with the
/// same exception type and its message followed by where the value went and what it was:
/// `rextio-torch: expected a float32 tensor (argument 'x' at position 0 of pkg.m.f, got a
/// rank-2 torch.float64 Tensor on cpu)`.
pub fn argument_error(
    err: impl Into<PyErr>,
    value: &Bound<'_, PyAny>,
    function: &str,
    param: &str,
    position: usize,
) -> PyErr {
    let py = value.py();
    let err: PyErr = err.into();
    let message = err
        .value(py)
        .str()
        .map_or_else(|_| "invalid argument".to_owned(), |s| s.to_string());
    let text = format!(
        "{message} (argument '{param}' at position {position} of {function}, got {})",
        describe(value)
    );
    PyErr::from_type(err.get_type(py), text)
}

/// What a value is, for an error message: `None`, `a bool (True)`, `an int (3)`, `a list`, or
/// for an array-like object (one with `dtype` and `shape`) its rank, dtype, class and device:
/// `a rank-2 torch.float64 Tensor on cpu`. Reads attributes only; never fails.
pub fn describe(value: &Bound<'_, PyAny>) -> String {
    if value.is_none() {
        return "None".to_owned();
    }
    let class = value
        .get_type()
        .name()
        .map_or_else(|_| "object".to_owned(), |n| n.to_string());
    if value.is_instance_of::<PyBool>()
        || value.is_instance_of::<PyInt>()
        || value.is_instance_of::<PyFloat>()
    {
        let shown = value
            .repr()
            .map_or_else(|_| String::new(), |r| short(&r.to_string()));
        return format!("{} {class} ({shown})", article(&class));
    }
    if value.is_instance_of::<PyString>() {
        return "a str".to_owned();
    }
    let (Ok(dtype), Ok(shape)) = (value.getattr("dtype"), value.getattr("shape")) else {
        return format!("{} {class}", article(&class));
    };
    // `tf.DType` names itself through `.name` (its str is `<dtype: 'float64'>`); torch's str
    // is already `torch.float64`.
    let dtype = dtype
        .getattr("name")
        .ok()
        .filter(|n| n.is_instance_of::<PyString>())
        .unwrap_or(dtype);
    let dtype = dtype
        .str()
        .map_or_else(|_| "?".to_owned(), |s| short(&s.to_string()));
    let rank = shape.len().ok();
    let mut text = match rank {
        Some(r) => format!("a rank-{r} {dtype} {class}"),
        None => format!("{} {dtype} {class}", article(&dtype)),
    };
    if let Ok(layout) = value.getattr("layout") {
        if let Ok(layout) = layout.str() {
            let layout = layout.to_string();
            if !layout.ends_with("strided") {
                text.push_str(&format!(" with layout {}", short(&layout)));
            }
        }
    }
    if let Ok(device) = value.getattr("device") {
        if let Ok(device) = device.str() {
            text.push_str(&format!(" on {}", short(&device.to_string())));
        }
    }
    text
}

fn article(word: &str) -> &'static str {
    match word.chars().next() {
        Some(c) if "aeiouAEIOU".contains(c) => "an",
        _ => "a",
    }
}

/// At most 60 characters of a value's text (a huge int or a long repr stays readable).
fn short(text: &str) -> String {
    const MAX: usize = 60;
    if text.chars().count() <= MAX {
        return text.to_owned();
    }
    let mut s: String = text.chars().take(MAX).collect();
    s.push_str("...");
    s
}

/// The module `name` when it is already imported (`sys.modules[name]`), without importing it:
/// for checks on the failure path (a plugin's symbolic-value check), where a module never
/// imported cannot have made the value. `None` when it is absent or the lookup fails.
pub fn imported_module<'py>(py: Python<'py>, name: &str) -> Option<Bound<'py, PyAny>> {
    let modules = py.import("sys").and_then(|s| s.getattr("modules")).ok()?;
    modules
        .cast_into::<pyo3::types::PyDict>()
        .ok()?
        .get_item(name)
        .ok()
        .flatten()
}
