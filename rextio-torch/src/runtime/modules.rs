//! Run-time checks of compiled `nn.Module` methods: whether calling a submodule would go
//! straight to its `forward` (no hooks), and whether a value lets the native body run (no grad
//! would be recorded).

use super::{shim, RxtTorchTensor};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyModule};

/// The per-instance hook dictionaries `Module.__call__` consults before calling `forward`.
const INSTANCE_HOOKS: [&str; 4] = [
    "_forward_hooks",
    "_forward_pre_hooks",
    "_backward_hooks",
    "_backward_pre_hooks",
];

/// The global hook dictionaries of `torch.nn.modules.module` (every module call sees them).
const GLOBAL_HOOKS: [&str; 4] = [
    "_global_forward_hooks",
    "_global_forward_pre_hooks",
    "_global_backward_hooks",
    "_global_backward_pre_hooks",
];

static MODULE_MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

fn non_empty(obj: Option<Bound<'_, PyAny>>) -> PyResult<bool> {
    match obj {
        None => Ok(false),
        Some(o) if o.is_none() => Ok(false),
        Some(o) => o.is_truthy(),
    }
}

/// Why calling `module` would not go straight to its `forward` as the compiled method does:
/// a forward, pre-forward or backward hook on it, a global module hook, or an active tracer.
/// `None` when `Module.__call__` would take its fast path.
pub fn module_call_check(module: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    let py = module.py();
    let dict = module.getattr(pyo3::intern!(py, "__dict__"))?;
    let dict = dict.cast::<PyDict>()?;
    for name in INSTANCE_HOOKS {
        if non_empty(dict.get_item(name)?)? {
            return Ok(Some(format!("hook: a `{name}` entry on this submodule")));
        }
    }
    let m = MODULE_MODULE.get_or_try_init(py, || {
        PyModule::import(py, "torch.nn.modules.module").map(Bound::unbind)
    })?;
    let m = m.bind(py);
    for name in GLOBAL_HOOKS {
        if non_empty(m.getattr(name).ok())? {
            return Ok(Some(format!("hook: a global module hook (`{name}`)")));
        }
    }
    Ok(None)
}

/// Why a value read or received by a compiled method sends the call to the original: with grad
/// mode on, a tensor that requires grad would be recorded by autograd in eager.
pub fn module_admit(t: &RxtTorchTensor) -> Option<String> {
    if shim::grad_enabled() && t.tensor().requires_grad() {
        return Some(
            "grad: grad mode is enabled and a parameter or input requires grad; call the model \
             under torch.inference_mode() or torch.no_grad() for the native path"
                .to_owned(),
        );
    }
    None
}
