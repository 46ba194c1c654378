//! Run-time checks of compiled `nn.Module` methods: whether calling a submodule would go
//! straight to its `forward` (no hooks), and whether a value lets the native body run (no grad
//! would be recorded).

use super::{shim, RxtTorchTensor};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyModule, PyString};
use rextio_plugin_api::runtime::boundary::imported_module;
use rextio_plugin_api::runtime::entry::DictCache;
use rextio_plugin_api::runtime::memo::{immutable_stamp, Stamp, Stamping};
use rextio_plugin_api::runtime::modules::non_empty_entry;

/// The per-instance hook dictionaries `Module.__call__` consults before calling `forward`.
fn instance_hooks(py: Python<'_>) -> [&Bound<'_, PyString>; 4] {
    [
        pyo3::intern!(py, "_forward_hooks"),
        pyo3::intern!(py, "_forward_pre_hooks"),
        pyo3::intern!(py, "_backward_hooks"),
        pyo3::intern!(py, "_backward_pre_hooks"),
    ]
}

/// The global hook dictionaries of `torch.nn.modules.module` (every module call sees them).
fn global_hooks(py: Python<'_>) -> [&Bound<'_, PyString>; 4] {
    [
        pyo3::intern!(py, "_global_forward_hooks"),
        pyo3::intern!(py, "_global_forward_pre_hooks"),
        pyo3::intern!(py, "_global_backward_hooks"),
        pyo3::intern!(py, "_global_backward_pre_hooks"),
    ]
}

/// The namespace of `torch.nn.modules.module`, where the global hook dictionaries live (read
/// at every check: registering a hook rebinds nothing, it fills the dictionary).
static MODULE_GLOBALS: PyOnceLock<Py<PyDict>> = PyOnceLock::new();

/// The namespace of `torch.nn.modules.module`.
fn module_globals(py: Python<'_>) -> PyResult<&'static Py<PyDict>> {
    MODULE_GLOBALS.get_or_try_init(py, || {
        PyModule::import(py, "torch.nn.modules.module")
            .and_then(|m| m.getattr(pyo3::intern!(py, "__dict__")))
            .and_then(|d| d.cast_into::<PyDict>().map_err(Into::into))
            .map(Bound::unbind)
    })
}

/// Why calling the module whose instance dictionary is `dict` would not go straight to its
/// `forward` as the compiled method does: a forward, pre-forward or backward hook on it. `None`
/// when `Module.__call__` would take its fast path (global hooks: [`module_global_check`]).
pub fn module_call_check(dict: &Bound<'_, PyDict>) -> PyResult<Option<String>> {
    for key in instance_hooks(dict.py()) {
        if non_empty_entry(dict, key)? {
            return Ok(Some(format!("hook: a `{key}` entry on this submodule")));
        }
    }
    Ok(None)
}

/// Why no submodule call would go straight to its `forward`: a global module hook
/// (`register_module_forward_hook` and friends) fires on every module call.
pub fn module_global_check(py: Python<'_>) -> PyResult<Option<String>> {
    let globals = module_globals(py)?;
    // Held by a static: the state memo may check its tag without a fact proving it alive.
    rextio_plugin_api::runtime::memo::static_root(py, globals);
    let globals = globals.bind(py);
    for key in global_hooks(py) {
        if non_empty_entry(globals, key)? {
            return Ok(Some(format!("hook: a global module hook (`{key}`)")));
        }
    }
    Ok(None)
}

/// Whether a hook dictionary (or whatever the attribute holds) has entries, as `bool()` says.
fn has_entries(v: &Bound<'_, PyAny>) -> PyResult<bool> {
    match v.cast::<PyDict>() {
        Ok(d) => Ok(!d.is_empty()),
        Err(_) => v.is_truthy(),
    }
}

/// Why calling the module `slf` (`model(x)`), whose instance dictionary is `dict`, would do
/// more in `Module.__call__` than call its `forward` with the same arguments, `None` when it
/// would only call it: what `_wrapped_call_impl` and `_call_impl` test before their fast path
/// (a per-instance compiled call from `Module.compile()`, a running `torch.jit.trace`, hooks on
/// the instance, global module hooks). Runs at every `model(x)`, so the dictionaries' entries
/// are found through caches that trust an unchanged version tag.
pub fn module_entry_check(
    slf: &Bound<'_, PyAny>,
    dict: &Bound<'_, PyDict>,
) -> PyResult<Option<String>> {
    static INSTANCE: DictCache<5> = DictCache::new();
    static GLOBAL: DictCache<4> = DictCache::new();
    let py = slf.py();
    let compiled = pyo3::intern!(py, "_compiled_call_impl");
    let [forward, forward_pre, backward, backward_pre] = instance_hooks(py);
    let [compiled_here, hooks @ ..] = INSTANCE.get(
        dict,
        [compiled, forward, forward_pre, backward, backward_pre],
    )?;
    // Set on the instance by `compile()`; otherwise the class attribute (`None`) answers.
    let compiled = match compiled_here {
        Some(v) => v,
        None => slf.get_type().getattr(compiled)?,
    };
    if !compiled.is_none() {
        return Ok(Some("a compiled call (`Module.compile()`)".to_owned()));
    }
    if shim::is_tracing() {
        return Ok(Some("a running `torch.jit.trace`".to_owned()));
    }
    for (name, hook) in instance_hooks(py).into_iter().zip(hooks) {
        // `Module.__call__` reads each as an attribute: a missing one is its error to raise.
        let Some(hook) = hook else {
            return Ok(Some(format!("no `{name}` on the instance")));
        };
        if has_entries(&hook)? {
            return Ok(Some(format!("hook: a `{name}` entry on the instance")));
        }
    }
    let globals = module_globals(py)?;
    let found = GLOBAL.get(globals.bind(py), global_hooks(py))?;
    for (name, hook) in global_hooks(py).into_iter().zip(found) {
        if let Some(hook) = hook {
            if has_entries(&hook)? {
                return Ok(Some(format!("hook: a global module hook (`{name}`)")));
            }
        }
    }
    Ok(None)
}

/// Why a value read or received by a compiled method sends the call to the original: with grad
/// mode on, a tensor that requires grad would be recorded by autograd in eager; while
/// `torch.jit.trace` records, the trace must see the operations eager runs.
pub fn module_admit(t: &RxtTorchTensor) -> Option<String> {
    if shim::grad_enabled() && t.tensor().requires_grad() {
        return Some(
            "grad: grad mode is enabled and a parameter or input requires grad; call the model \
             under torch.inference_mode() or torch.no_grad() for the native path"
                .to_owned(),
        );
    }
    if shim::is_tracing() {
        return Some(
            "trace: torch.jit.trace is recording, and records the original's operations".to_owned(),
        );
    }
    None
}

/// What converting each of `values`, the values a compiled method's state read found, depends
/// on (the plugin's `stamp_fn`): nothing but the object itself for an immutable builtin value,
/// the tensor's storage, shape, dtype, device and admission for a tensor (see `rx_stamps`);
/// `false` when one is neither. Checking (at every call of a kept state) reads each tensor
/// again and compares in the shim, writing nothing, and skips immutable values.
pub fn module_stamps(values: &[Bound<'_, PyAny>], what: Stamping<'_>) -> bool {
    match what {
        Stamping::Make(out) => make_stamps(values, out),
        Stamping::Check(expect) => {
            expect.len() == values.len()
                && values
                    .chunks(shim::STAMP_CHUNK)
                    .zip(expect.chunks(shim::STAMP_CHUNK))
                    .all(|(vals, expect)| shim::stamps_match(vals, expect))
        }
    }
}

fn make_stamps(values: &[Bound<'_, PyAny>], out: &mut Vec<Stamp>) -> bool {
    out.clear();
    out.resize(values.len(), Stamp::default());
    let mut tensor = [0u8; shim::STAMP_CHUNK];
    for (vals, outs) in values
        .chunks(shim::STAMP_CHUNK)
        .zip(out.chunks_mut(shim::STAMP_CHUNK))
    {
        if !shim::stamps(vals, outs, &mut tensor) {
            return false;
        }
        for ((v, o), &t) in vals.iter().zip(outs).zip(&tensor) {
            if t == 0 {
                match immutable_stamp(v) {
                    Some(s) => *o = s,
                    None => return false,
                }
            }
        }
    }
    true
}

/// Whether `obj` is a value `torch.fx` traces with (a `torch.fx.Proxy`, which
/// `symbolic_trace` passes in place of tensors and of what is computed from them): a compiled
/// function given one runs its original, so the trace records eager's operations. Read from
/// `sys.modules`, so the check imports nothing: when `torch.fx` was never imported, nothing is a
/// proxy. Any failure answers `false` (the argument is then refused as before).
pub fn is_symbolic(obj: &Bound<'_, PyAny>) -> bool {
    let py = obj.py();
    imported_module(py, "torch.fx")
        .and_then(|fx| fx.getattr(pyo3::intern!(py, "Proxy")).ok())
        .is_some_and(|proxy| obj.is_instance(&proxy).unwrap_or(false))
}
