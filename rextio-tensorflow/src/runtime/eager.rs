//! RAII over the TFE C API: one `TF_Status` per operation, owned tensor handles and ops, the
//! borrowed Python eager context with its prepared constants and its idle op. Everything here is
//! `!Send` (it holds `Rc`s): TFE handles are used on the thread, and under the GIL, that created
//! them.

use super::loader::{
    Api, TfDeviceList, TfStatus, TfTensor, TfeContext, TfeOp, TfeTensorHandle, TF_INT32,
};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods, PyDict, PyDictMethods};
use std::cell::{Cell, RefCell};
use std::ffi::{CStr, CString};
use std::os::raw::c_int;
use std::rc::Rc;

/// A `RuntimeError` with the plugin prefix.
pub(crate) fn runtime_error(message: impl std::fmt::Display) -> PyErr {
    PyRuntimeError::new_err(format!("rextio-tensorflow: {message}"))
}

/// A `ValueError` with the plugin prefix.
pub(crate) fn value_error(message: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("rextio-tensorflow: {message}"))
}

/// TensorFlow status code names (`tensorflow/c/tf_status.h`).
fn code_name(code: c_int) -> &'static str {
    match code {
        1 => "CANCELLED",
        2 => "UNKNOWN",
        3 => "INVALID_ARGUMENT",
        4 => "DEADLINE_EXCEEDED",
        5 => "NOT_FOUND",
        6 => "ALREADY_EXISTS",
        7 => "PERMISSION_DENIED",
        8 => "RESOURCE_EXHAUSTED",
        9 => "FAILED_PRECONDITION",
        10 => "ABORTED",
        11 => "OUT_OF_RANGE",
        12 => "UNIMPLEMENTED",
        13 => "INTERNAL",
        14 => "UNAVAILABLE",
        15 => "DATA_LOSS",
        16 => "UNAUTHENTICATED",
        _ => "UNKNOWN_CODE",
    }
}

/// One `TF_Status` per operation: every TFE call of that operation, and the checks of its
/// result, report through it. TF 2.21.0 has no public reset, so a status that saw an error is
/// deleted on drop; one still OK is exactly what a new one is, and goes back to this thread's
/// few spares for the next operation instead (saving an allocation and a free per op).
pub(crate) struct Status {
    api: &'static Api,
    raw: *mut TfStatus,
}

impl Status {
    /// A new status.
    pub fn new(api: &'static Api) -> PyResult<Self> {
        if let Some(raw) = SPARE_STATUSES
            .try_with(|s| s.raw.try_borrow_mut().ok().and_then(|mut v| v.pop()))
            .ok()
            .flatten()
        {
            return Ok(Self { api, raw });
        }
        // SAFETY: TF_NewStatus takes nothing and returns an owned status or null.
        let raw = unsafe { (api.tf_new_status)() };
        if raw.is_null() {
            return Err(runtime_error("TF_NewStatus returned null"));
        }
        Ok(Self { api, raw })
    }

    /// The raw pointer for an out-parameter.
    pub fn ptr(&self) -> *mut TfStatus {
        self.raw
    }

    /// `Ok` when the status is OK; otherwise a `RuntimeError` naming the step and TF's message.
    pub fn check(&self, step: &str) -> PyResult<()> {
        self.check_in("", step)
    }

    /// Like [`Status::check`] for a step of op `op` (`"{op}: {step}"`, formatted only on error).
    pub fn check_in(&self, op: &str, step: &str) -> PyResult<()> {
        // SAFETY: `raw` is a live status.
        let code = unsafe { (self.api.tf_get_code)(self.raw) };
        if code == 0 {
            return Ok(());
        }
        let step = if op.is_empty() {
            step.to_owned()
        } else {
            format!("{op}: {step}")
        };
        // SAFETY: TF_Message returns a string owned by the status (valid while it lives).
        let m = unsafe { (self.api.tf_message)(self.raw) };
        let message = if m.is_null() {
            String::new()
        } else {
            // SAFETY: non-null status message is NUL-terminated.
            unsafe { CStr::from_ptr(m) }.to_string_lossy().into_owned()
        };
        Err(runtime_error(format!(
            "{step} failed ({}): {message}",
            code_name(code)
        )))
    }
}

impl Drop for Status {
    fn drop(&mut self) {
        // SAFETY: `raw` is a live status.
        let ok = unsafe { (self.api.tf_get_code)(self.raw) } == 0;
        let raw = self.raw;
        let api = self.api;
        let kept = ok
            && SPARE_STATUSES
                .try_with(|s| s.keep(api, raw))
                .unwrap_or(false);
        if !kept {
            // SAFETY: owned, deleted once (a kept status is owned by the spares from now on).
            unsafe { (api.tf_delete_status)(raw) }
        }
    }
}

/// This thread's OK statuses, ready for the next operation, deleted when the thread exits.
struct SpareStatuses {
    api: Cell<Option<&'static Api>>,
    raw: RefCell<Vec<*mut TfStatus>>,
}

/// How many OK statuses a thread keeps (operations nest a few deep at most).
const SPARE_STATUS_LIMIT: usize = 4;

impl SpareStatuses {
    /// Keep `raw` (an OK status) when there is room; `false` leaves it to the caller to delete.
    fn keep(&self, api: &'static Api, raw: *mut TfStatus) -> bool {
        self.api.set(Some(api));
        match self.raw.try_borrow_mut() {
            Ok(mut v) if v.len() < SPARE_STATUS_LIMIT => {
                v.push(raw);
                true
            }
            _ => false,
        }
    }
}

impl Drop for SpareStatuses {
    fn drop(&mut self) {
        if let Some(api) = self.api.get() {
            for raw in self.raw.get_mut().drain(..) {
                // SAFETY: each spare is owned here and deleted once.
                unsafe { (api.tf_delete_status)(raw) }
            }
        }
    }
}

thread_local! {
    static SPARE_STATUSES: SpareStatuses = const {
        SpareStatuses {
            api: Cell::new(None),
            raw: RefCell::new(Vec::new()),
        }
    };
}

thread_local! {
    /// This thread's borrow of the Python eager context, re-validated at every boundary
    /// conversion (see [`Context::current`]).
    static CURRENT: RefCell<Option<Rc<Context>>> = const { RefCell::new(None) };
}

/// A prepared int32 constant (an axis or a permutation), owned by the context that made it.
struct Prepared {
    values: &'static [i32],
    scalar: bool,
    raw: *mut TfeTensorHandle,
}

/// The Python eager context, borrowed: the raw `TFE_Context*` of its null-named capsule, kept
/// alive by strong references to the Python `Context` and the capsule. Never `TFE_NewContext`.
///
/// It also owns what is bound to that `TFE_Context` and to this thread: prepared int32
/// constants (axes, permutations), the interned device names of validated handles and one idle
/// `TFE_Op`. The prepared handles and the idle op are deleted with the context, before the
/// references that keep the `TFE_Context` alive are released.
pub(crate) struct Context {
    pub api: &'static Api,
    pub raw: *mut TfeContext,
    module: Py<PyAny>,
    context: Py<PyAny>,
    capsule: Py<PyAny>,
    /// The namespaces `still_current` reads (the module's, and the `Context` object's when it
    /// has one), so that re-validation is two dict lookups rather than two attribute lookups.
    module_dict: Option<Py<PyDict>>,
    context_dict: Option<Py<PyDict>>,
    /// The namespaces' version tags when `still_current` last found both names unchanged.
    validated: Cell<Option<(u64, u64)>>,
    prepared: RefCell<Vec<Prepared>>,
    devices: RefCell<Vec<Rc<CString>>>,
    /// One idle `TFE_Op` of this context and thread (null when none), reset for the next op.
    spare_op: Cell<*mut TfeOp>,
    /// The full name of the context's only device, when it has exactly one (see
    /// [`Context::placement`]).
    sole_device: Option<Rc<CString>>,
    /// The device of this context's new host tensors (`TFE_NewTensorHandle`), once the first
    /// one was checked in full.
    host_device: RefCell<Option<Rc<CString>>>,
    /// Which [`Local`] devices the context enumerated when it was borrowed (by `Local::index`).
    listed: [bool; Local::ALL.len()],
}

impl Context {
    /// This thread's borrow of the current Python eager context. The borrow is cached per
    /// thread and re-validated on every call, under the GIL: the module's `_context` must still
    /// be the same Python `Context` and its `_context_handle` the same capsule (otherwise the
    /// context was reset and is borrowed afresh). While neither namespace dict changed since
    /// the last validation (CPython's dict version tags) that takes no lookup at all.
    ///
    /// Whether this thread's executor is synchronous is checked where work runs
    /// ([`Context::check_sync`]: before each TFE op and each fused program), not here.
    pub fn current(py: Python<'_>, api: &'static Api) -> PyResult<Rc<Self>> {
        let cached = CURRENT.try_with(|c| c.borrow().clone()).ok().flatten();
        if let Some(context) = cached {
            if context.still_current(py)? {
                return Ok(context);
            }
        }
        let fresh = Self::from_python(py, api)?;
        // A thread that is exiting cannot cache; it still gets a valid borrow.
        let _ = CURRENT.try_with(|c| *c.borrow_mut() = Some(Rc::clone(&fresh)));
        Ok(fresh)
    }

    fn still_current(&self, py: Python<'_>) -> PyResult<bool> {
        let versions = self.dict_versions(py);
        if versions.is_some() && versions == self.validated.get() {
            return Ok(true);
        }
        let context = Self::lookup(
            &self.module,
            self.module_dict.as_ref(),
            pyo3::intern!(py, "_context"),
        )?;
        if !context.is_some_and(|c| c.is(&self.context)) {
            return Ok(false);
        }
        let handle = Self::lookup(
            &self.context,
            self.context_dict.as_ref(),
            pyo3::intern!(py, "_context_handle"),
        )?;
        let current = handle.is_some_and(|h| h.is(&self.capsule));
        if current {
            self.validated.set(versions);
        }
        Ok(current)
    }

    /// The version tags of the two namespace dicts `still_current` reads, when both are plain
    /// dicts: CPython 3.11 gives every change of a dict a new, process-wide unique tag, so
    /// equal tags mean neither `_context` nor `_context_handle` can have changed. (The runtime
    /// loads only under CPython 3.11, [`crate::EAGER_ABI_PYTHON`].)
    #[allow(deprecated)] // `ma_version_tag` is deprecated from CPython 3.12 on.
    fn dict_versions(&self, py: Python<'_>) -> Option<(u64, u64)> {
        let tag = |d: &Py<PyDict>| {
            // SAFETY: the GIL is held and `d` is a live exact dict (checked when it was taken),
            // so its object is a `PyDictObject`; the tag is only read.
            unsafe { (*d.bind(py).as_ptr().cast::<pyo3::ffi::PyDictObject>()).ma_version_tag }
        };
        Some((
            tag(self.module_dict.as_ref()?),
            tag(self.context_dict.as_ref()?),
        ))
    }

    /// `obj.key`, read from `obj`'s namespace dict when it has one (`None`: not there).
    fn lookup<'py>(
        obj: &Py<PyAny>,
        dict: Option<&Py<PyDict>>,
        key: &Bound<'py, pyo3::types::PyString>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = key.py();
        match dict {
            Some(d) => d.bind(py).get_item(key),
            None => obj.bind(py).getattr(key).map(Some),
        }
    }

    /// `obj.__dict__` when it is a plain dict (a module's always is; TensorFlow's `Context`
    /// keeps `_context_handle` in its instance dict). A namespace that is not one is read by
    /// attribute instead.
    fn namespace(obj: &Bound<'_, PyAny>) -> Option<Py<PyDict>> {
        let d = obj.getattr(pyo3::intern!(obj.py(), "__dict__")).ok()?;
        d.cast_exact::<PyDict>().ok().map(|d| d.clone().unbind())
    }

    /// Fail unless this thread's executor of the context is synchronous (the only kind the
    /// runtime runs work on).
    pub fn check_sync(&self) -> PyResult<()> {
        // SAFETY: the context is live (held by `capsule`); the call returns a new wrapper
        // that does not own the executor.
        let executor = unsafe { (self.api.tfe_context_executor_for_thread)(self.raw) };
        if executor.is_null() {
            return Err(runtime_error(
                "TFE_ContextGetExecutorForThread returned null",
            ));
        }
        // SAFETY: `executor` is the live wrapper from above, deleted exactly once.
        let is_async = unsafe {
            let a = (self.api.tfe_executor_is_async)(executor);
            (self.api.tfe_delete_executor)(executor);
            a
        };
        if is_async {
            return Err(runtime_error(
                "the Python eager context is asynchronous; only the synchronous context is supported",
            ));
        }
        Ok(())
    }

    /// Borrow the existing synchronous eager context of `tensorflow.python.eager.context`.
    fn from_python(py: Python<'_>, api: &'static Api) -> PyResult<Rc<Self>> {
        let module = py.import("tensorflow.python.eager.context")?;
        let context = module.call_method0("context")?;
        context.call_method0("ensure_initialized")?;
        let handle = context.getattr("_handle")?;
        let capsule = handle
            .cast::<PyCapsule>()
            .map_err(|_| runtime_error("eager context `_handle` is not a capsule"))?;
        if let Some(name) = capsule.name()? {
            // SAFETY: a capsule name is a NUL-terminated string owned by the capsule.
            let name = unsafe { CStr::from_ptr(name.as_ptr()) }
                .to_string_lossy()
                .into_owned();
            return Err(runtime_error(format!(
                "unexpected named eager context capsule {name:?}"
            )));
        }
        let raw = capsule.pointer_checked(None)?.as_ptr().cast::<TfeContext>();
        let mut this = Self {
            api,
            raw,
            module_dict: Self::namespace(module.as_any()),
            context_dict: Self::namespace(&context),
            validated: Cell::new(None),
            module: module.into_any().unbind(),
            context: context.unbind(),
            capsule: handle.unbind(),
            prepared: RefCell::new(Vec::new()),
            devices: RefCell::new(Vec::new()),
            spare_op: Cell::new(std::ptr::null_mut()),
            sole_device: None,
            host_device: RefCell::new(None),
            listed: [false; Local::ALL.len()],
        };
        this.check_sync()?;
        let names = this.device_names()?;
        for local in Local::ALL {
            this.listed[local.index()] = names.iter().any(|n| local.is(n));
        }
        // With exactly one device, ops need not name it (see `placement`).
        if let [only] = names.as_slice() {
            this.sole_device = Some(this.intern_device(only));
        }
        Ok(Rc::new(this))
    }

    /// The full names of the context's devices (local and remote), as it enumerates them.
    fn device_names(&self) -> PyResult<Vec<CString>> {
        let status = Status::new(self.api)?;
        // SAFETY: the context is live (held by `capsule`); the status is a valid out-parameter.
        let raw = unsafe { (self.api.tfe_context_list_devices)(self.raw, status.ptr()) };
        let list = (!raw.is_null()).then_some(DeviceList { api: self.api, raw });
        status.check("TFE_ContextListDevices")?;
        let Some(list) = list else {
            return Err(runtime_error("TFE_ContextListDevices returned null"));
        };
        // SAFETY: `list.raw` is a live device list.
        let count = unsafe { (self.api.tf_device_list_count)(list.raw) };
        let mut names = Vec::new();
        for i in 0..count.max(0) {
            // SAFETY: `i` < count; the name is owned by the list, copied before it is deleted.
            let name = unsafe { (self.api.tf_device_list_name)(list.raw, i, status.ptr()) };
            status.check("TF_DeviceListName")?;
            if name.is_null() {
                return Err(runtime_error("TF_DeviceListName returned null"));
            }
            // SAFETY: a non-null device name is NUL-terminated and lives as long as the list.
            names.push(unsafe { CStr::from_ptr(name) }.to_owned());
        }
        Ok(names)
    }

    /// Whether `device` is `local`'s exact full name and the context enumerated that device.
    pub fn is_local(&self, device: &CStr, local: Local) -> bool {
        self.listed[local.index()] && local.is(device)
    }

    /// The device name an op on `device` is created with: empty (TensorFlow places it) when
    /// `device` is the context's only device, where placement cannot pick anything else, which
    /// saves parsing the full name on every op; otherwise `device` itself. Results are checked
    /// for their device either way.
    pub fn placement<'d>(&self, device: &'d CStr) -> &'d CStr {
        match &self.sole_device {
            Some(sole) if sole.as_c_str() == device => c"",
            _ => device,
        }
    }

    /// The device a new host tensor of this context is on, once one was checked.
    pub fn host_device(&self) -> Option<Rc<CString>> {
        self.host_device.try_borrow().ok().and_then(|d| d.clone())
    }

    /// Remember the device of a new host tensor that was checked in full.
    pub fn set_host_device(&self, device: &Rc<CString>) {
        if let Ok(mut d) = self.host_device.try_borrow_mut() {
            *d = Some(Rc::clone(device));
        }
    }

    /// The interned copy of a device name (one allocation per distinct device and context).
    fn intern_device(&self, name: &CStr) -> Rc<CString> {
        if let Ok(devices) = self.devices.try_borrow() {
            if let Some(d) = devices.iter().find(|d| d.as_c_str() == name) {
                return Rc::clone(d);
            }
        }
        let d = Rc::new(name.to_owned());
        if let Ok(mut devices) = self.devices.try_borrow_mut() {
            if devices.len() < 16 {
                devices.push(Rc::clone(&d));
            }
        }
        d
    }

    /// A prepared int32 constant (scalar when `scalar`, else rank 1), made once per context
    /// and thread and borrowed by ops (each op input takes its own reference).
    pub fn prepared(
        self: &Rc<Self>,
        values: &'static [i32],
        scalar: bool,
    ) -> PyResult<*mut TfeTensorHandle> {
        if let Ok(prepared) = self.prepared.try_borrow() {
            if let Some(p) = prepared
                .iter()
                .find(|p| p.values == values && p.scalar == scalar)
            {
                return Ok(p.raw);
            }
        }
        let handle = int32_handle(self, values, scalar)?;
        let raw = handle.into_raw()?;
        match self.prepared.try_borrow_mut() {
            Ok(mut prepared) => {
                prepared.push(Prepared {
                    values,
                    scalar,
                    raw,
                });
                Ok(raw)
            }
            Err(_) => {
                // SAFETY: `raw` is owned here and was never shared.
                unsafe { (self.api.tfe_delete_tensor_handle)(raw) };
                Err(runtime_error("the prepared-constant table is in use"))
            }
        }
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // Prepared handles and the spare op go before `capsule` (a field, dropped after this
        // body) can release the TFE_Context they belong to.
        let spare = self.spare_op.replace(std::ptr::null_mut());
        if !spare.is_null() {
            // SAFETY: the spare op is owned by the context, holds no inputs, and is deleted once.
            unsafe { (self.api.tfe_delete_op)(spare) }
        }
        for p in self.prepared.get_mut().drain(..) {
            // SAFETY: prepared handles are owned by the table and deleted once.
            unsafe { (self.api.tfe_delete_tensor_handle)(p.raw) }
        }
    }
}

/// An owned `TF_DeviceList*`, deleted on drop.
struct DeviceList {
    api: &'static Api,
    raw: *mut TfDeviceList,
}

impl Drop for DeviceList {
    fn drop(&mut self) {
        // SAFETY: owned, deleted once.
        unsafe { (self.api.tf_delete_device_list)(self.raw) }
    }
}

/// What is known of a validated handle: dtype, rank and its CPU device name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Facts {
    pub dtype: c_int,
    pub rank: c_int,
    pub device: Rc<CString>,
}

/// An owned `TFE_TensorHandle*`, deleted on drop, keeping its context alive.
pub(crate) struct Handle {
    pub api: &'static Api,
    raw: *mut TfeTensorHandle,
    pub context: Rc<Context>,
    /// The EagerTensor this handle is borrowed from (it owns `raw`, and this strong reference
    /// keeps it alive as long as the handle is), or `None` when the handle owns `raw`. A
    /// borrowed handle goes back to Python as its EagerTensor itself.
    origin: Option<Py<PyAny>>,
    /// The sizes of a rank-1 or rank-2 handle, once read (they never change).
    dims: Cell<Option<[usize; 2]>>,
    /// The buffer is this handle's alone: the fused path allocated it, and since then only
    /// fused programs (which never alias a buffer) have read it. A TFE op may return a view
    /// sharing its input's buffer (Transpose of a `[1, n]` matrix, for one), and a handle given
    /// to Python may be shared, so both clear it; only an exclusive buffer is written in place.
    exclusive: Cell<bool>,
    /// The fused path's view of the buffer (sizes of a rank-1 or rank-2 handle, base address,
    /// byte size), once read: a local handle's buffer never changes.
    view: Cell<Option<HostView>>,
}

/// Sizes (rank <= 2), base address and byte size of a handle's host buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HostView {
    pub dims: [usize; 2],
    pub addr: usize,
    pub bytes: usize,
}

impl Handle {
    /// Take ownership of `raw` (null is an error; a non-null handle is owned even then).
    pub fn own(
        api: &'static Api,
        raw: *mut TfeTensorHandle,
        context: Rc<Context>,
        what: &str,
    ) -> PyResult<Self> {
        if raw.is_null() {
            return Err(runtime_error(format!(
                "{what} returned a null tensor handle"
            )));
        }
        Ok(Self::with_origin(api, raw, context, None))
    }

    /// Borrow `raw`, the handle of the EagerTensor `origin` (held until this handle drops).
    pub fn borrowed(
        api: &'static Api,
        raw: *mut TfeTensorHandle,
        context: Rc<Context>,
        origin: Py<PyAny>,
    ) -> Self {
        Self::with_origin(api, raw, context, Some(origin))
    }

    fn with_origin(
        api: &'static Api,
        raw: *mut TfeTensorHandle,
        context: Rc<Context>,
        origin: Option<Py<PyAny>>,
    ) -> Self {
        Self {
            api,
            raw,
            context,
            origin,
            dims: Cell::new(None),
            exclusive: Cell::new(false),
            view: Cell::new(None),
        }
    }

    /// The same handle with its sizes and buffer already known (read by an earlier conversion
    /// of the same EagerTensor, see `known`).
    pub fn with_known(self, dims: [usize; 2], view: Option<HostView>) -> Self {
        self.dims.set(Some(dims));
        self.view.set(view);
        self
    }

    /// The EagerTensor a borrowed handle came from.
    pub fn origin(&self) -> Option<&Py<PyAny>> {
        self.origin.as_ref()
    }

    /// The raw handle, borrowed.
    pub fn ptr(&self) -> *mut TfeTensorHandle {
        self.raw
    }

    /// Give up ownership (for a consumer that takes it, such as `EagerTensorFromHandle`); a
    /// borrowed handle gives up a new handle sharing its buffer.
    pub fn into_raw(self) -> PyResult<*mut TfeTensorHandle> {
        if self.origin.is_some() {
            return self.copy_sharing()?.into_raw();
        }
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped, so the context reference is moved out exactly once
        // and released here; only the handle itself changes owner.
        drop(unsafe { std::ptr::read(&this.context) });
        Ok(this.raw)
    }

    /// A new owned handle sharing this handle's tensor buffer.
    pub fn copy_sharing(&self) -> PyResult<Self> {
        let status = Status::new(self.api)?;
        // SAFETY: `raw` is live; the status is a valid out-parameter.
        let raw = unsafe { (self.api.tfe_copy_sharing)(self.raw, status.ptr()) };
        // Own whatever came back before looking at the status.
        let copy = Handle::own(
            self.api,
            raw,
            Rc::clone(&self.context),
            "TFE_TensorHandleCopySharingTensor",
        );
        status.check("TFE_TensorHandleCopySharingTensor")?;
        copy
    }

    /// Dtype, rank and device, read from TensorFlow (`status` is the operation's status).
    pub fn facts(&self, status: &Status) -> PyResult<Facts> {
        // SAFETY: `raw` is live for every call below; the status is a valid out-parameter.
        let dtype = unsafe { (self.api.tfe_data_type)(self.raw) };
        let rank = unsafe { (self.api.tfe_num_dims)(self.raw, status.ptr()) };
        status.check("TFE_TensorHandleNumDims")?;
        let device = unsafe { (self.api.tfe_backing_device)(self.raw, status.ptr()) };
        status.check("TFE_TensorHandleBackingDeviceName")?;
        if device.is_null() {
            return Err(value_error("expected a CPU tensor"));
        }
        // SAFETY: non-null device name is NUL-terminated and owned by the handle.
        let device = self
            .context
            .intern_device(unsafe { CStr::from_ptr(device) });
        Ok(Facts {
            dtype,
            rank,
            device,
        })
    }

    /// Every dim of a validated rank is concrete (eager tensors always are; fail closed); the
    /// sizes of a rank-1 or rank-2 handle are remembered for [`Handle::dims2`].
    pub fn check_dims(&self, rank: c_int, status: &Status) -> PyResult<()> {
        let mut sizes = [0usize; 2];
        for i in 0..rank {
            // SAFETY: `raw` is live and `i` < rank.
            let d = unsafe { (self.api.tfe_dim)(self.raw, i, status.ptr()) };
            status.check("TFE_TensorHandleDim")?;
            let Ok(d) = usize::try_from(d) else {
                return Err(value_error(format!(
                    "expected concrete dimensions, got dim[{i}] = {d}"
                )));
            };
            if let Some(slot) = usize::try_from(i).ok().and_then(|i| sizes.get_mut(i)) {
                *slot = d;
            }
        }
        if (1..=2).contains(&rank) {
            self.dims.set(Some(sizes));
        }
        Ok(())
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        if self.origin.is_none() {
            // SAFETY: owned, deleted once.
            unsafe { (self.api.tfe_delete_tensor_handle)(self.raw) }
        }
        // A borrowed handle's EagerTensor (which owns `raw`) is released after this, with the
        // field.
    }
}

/// A device of this process that a lane reads and writes: named by its exact full name, and
/// only when the eager context enumerates it (`TFE_ContextListDevices`). A remote task's
/// `CPU:0` or `GPU:0`, another index, or a context that lists no such device never matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Local {
    Cpu0 = 0,
    Gpu0 = 1,
}

impl Local {
    /// Every one, in `index` order.
    pub const ALL: [Local; 2] = [Local::Cpu0, Local::Gpu0];

    /// Its position in [`Local::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The full name.
    pub fn full_name(self) -> &'static CStr {
        match self {
            Local::Cpu0 => c"/job:localhost/replica:0/task:0/device:CPU:0",
            Local::Gpu0 => c"/job:localhost/replica:0/task:0/device:GPU:0",
        }
    }

    /// The short name messages use.
    pub fn label(self) -> &'static str {
        match self {
            Local::Cpu0 => "CPU:0",
            Local::Gpu0 => "GPU:0",
        }
    }

    /// Whether `device` is this device's full name, exactly.
    pub fn is(self, device: &CStr) -> bool {
        device == self.full_name()
    }
}

/// An owned `TF_Tensor*`, deleted on drop.
struct HostTensor {
    api: &'static Api,
    raw: *mut TfTensor,
}

impl Drop for HostTensor {
    fn drop(&mut self) {
        // SAFETY: owned, deleted once.
        unsafe { (self.api.tf_delete_tensor)(self.raw) }
    }
}

/// A new host tensor of `dtype` and `dims` (`bytes` long) as a handle, with the base pointer of
/// the buffer the handle reads (uninitialised: the caller writes every byte before anyone
/// reads it).
pub(crate) fn new_host_tensor(
    context: &Rc<Context>,
    dtype: c_int,
    dims: &[i64],
    bytes: usize,
) -> PyResult<(Handle, *mut u8)> {
    let api = context.api;
    let ndims = c_int::try_from(dims.len()).map_err(|_| runtime_error("too many dims"))?;
    // SAFETY: `dims` holds `ndims` sizes whose product times the dtype's size is `bytes`.
    let raw = unsafe { (api.tf_allocate_tensor)(dtype, dims.as_ptr(), ndims, bytes) };
    if raw.is_null() {
        return Err(runtime_error("TF_AllocateTensor returned null"));
    }
    let tensor = HostTensor { api, raw };
    let status = Status::new(api)?;
    // SAFETY: `tensor` is live; the handle takes its own reference to the buffer.
    let h = unsafe { (api.tfe_new_tensor_handle)(tensor.raw, status.ptr()) };
    let handle = Handle::own(api, h, Rc::clone(context), "TFE_NewTensorHandle");
    status.check("TFE_NewTensorHandle")?;
    let handle = handle?;
    let (ptr, size) = handle.host_buffer(&status)?;
    if size != bytes || (ptr.is_null() && bytes != 0) {
        return Err(runtime_error(
            "TFE_NewTensorHandle holds an unexpected buffer",
        ));
    }
    // `tensor` is released when this returns: the handle holds the only reference.
    handle.exclusive.set(true);
    let mut d = [0usize; 2];
    for (d, &s) in d.iter_mut().zip(dims) {
        *d = usize::try_from(s).map_err(|_| runtime_error("a negative size"))?;
    }
    handle.view.set(Some(HostView {
        dims: d,
        addr: ptr as usize,
        bytes,
    }));
    Ok((handle, ptr))
}

impl Handle {
    /// Whether the buffer is this handle's alone (see [`Handle`]).
    pub fn is_exclusive(&self) -> bool {
        self.exclusive.get()
    }

    /// From now on the buffer may be shared (see [`Handle`]).
    pub fn share_buffer(&self) {
        self.exclusive.set(false);
    }

    /// The sizes, base address and byte size of this local handle (rank `rank`, at most 2),
    /// read from TensorFlow once and then remembered.
    pub fn host_view(&self, rank: c_int, status: &Status) -> PyResult<HostView> {
        if let Some(v) = self.view.get() {
            return Ok(v);
        }
        let dims = self.dims2(rank, status)?;
        let (ptr, bytes) = self.host_buffer(status)?;
        let v = HostView {
            dims,
            addr: ptr as usize,
            bytes,
        };
        self.view.set(Some(v));
        Ok(v)
    }

    /// The base pointer and byte size of this local handle's buffer.
    pub fn host_buffer(&self, status: &Status) -> PyResult<(*mut u8, usize)> {
        // SAFETY: `raw` is live; the status is a valid out-parameter.
        let ptr = unsafe { (self.api.tfe_device_pointer)(self.raw, status.ptr()) };
        status.check("TFE_TensorHandleDevicePointer")?;
        // SAFETY: as above.
        let size = unsafe { (self.api.tfe_device_memory_size)(self.raw, status.ptr()) };
        status.check("TFE_TensorHandleDeviceMemorySize")?;
        Ok((ptr.cast(), size))
    }

    /// The sizes of a handle of rank `rank` (at most 2).
    pub fn dims2(&self, rank: c_int, status: &Status) -> PyResult<[usize; 2]> {
        if let Some(dims) = self.dims.get() {
            return Ok(dims);
        }
        let mut dims = [0usize; 2];
        for (i, d) in (0..rank.min(2)).zip(dims.iter_mut()) {
            // SAFETY: `raw` is live and `i` < rank.
            let v = unsafe { (self.api.tfe_dim)(self.raw, i, status.ptr()) };
            status.check("TFE_TensorHandleDim")?;
            *d = usize::try_from(v).map_err(|_| value_error("expected concrete dimensions"))?;
        }
        Ok(dims)
    }
}

/// An int32 constant handle (`values` as a scalar when `scalar`, else rank 1): the axis of
/// Mean/Sum/ArgMax and the perm of Transpose.
fn int32_handle(context: &Rc<Context>, values: &[i32], scalar: bool) -> PyResult<Handle> {
    let api = context.api;
    if scalar && values.len() != 1 {
        return Err(runtime_error(
            "a scalar int32 constant has exactly one value",
        ));
    }
    let dims = [values.len() as i64];
    let (dims_ptr, ndims) = if scalar {
        (std::ptr::null(), 0)
    } else {
        (dims.as_ptr(), 1)
    };
    let bytes = std::mem::size_of_val(values);
    // SAFETY: dims_ptr points to `ndims` dims (or is unused when 0); bytes matches them.
    let raw = unsafe { (api.tf_allocate_tensor)(TF_INT32, dims_ptr, ndims, bytes) };
    if raw.is_null() {
        return Err(runtime_error("TF_AllocateTensor returned null"));
    }
    let tensor = HostTensor { api, raw };
    // SAFETY: `raw` is a live tensor.
    let (data, size) = unsafe {
        (
            (api.tf_tensor_data)(tensor.raw),
            (api.tf_tensor_byte_size)(tensor.raw),
        )
    };
    if data.is_null() || size != bytes {
        return Err(runtime_error(
            "TF_AllocateTensor returned an unexpected buffer",
        ));
    }
    // SAFETY: `data` holds `bytes` writable bytes, suitably aligned for int32 (TF aligns to 64).
    unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), data.cast::<i32>(), values.len()) };
    let status = Status::new(api)?;
    // SAFETY: `tensor` is live; the handle takes its own reference to the buffer.
    let h = unsafe { (api.tfe_new_tensor_handle)(tensor.raw, status.ptr()) };
    let handle = Handle::own(api, h, Rc::clone(context), "TFE_NewTensorHandle");
    status.check("TFE_NewTensorHandle")?;
    handle
}

/// An attribute of an op (names are C string literals: nothing is allocated per call).
pub(crate) enum Attr {
    /// A type attribute.
    Type(&'static CStr, c_int),
    /// A bool attribute.
    Bool(&'static CStr, bool),
    /// A string attribute.
    Str(&'static CStr, &'static str),
}

/// An owned `TFE_Op*`, deleted on drop unless it can go back to its context as the spare op.
///
/// Ops are reused the way TensorFlow's own Python fast path reuses its thread-local op: each
/// context keeps one idle op for this thread and `TFE_OpReset` turns it into the next op, which
/// saves allocating and deleting an `EagerOperation` per op. An op goes back only
/// after a successful `TFE_Execute` and only when it holds no inputs (TFE releases them when a
/// synchronous execute returns; `TFE_OpGetFlatInputCount` checks it), so a pooled op never keeps
/// a tensor alive; on any error it is deleted instead.
pub(crate) struct Op<'c> {
    context: &'c Rc<Context>,
    raw: *mut TfeOp,
    label: &'static str,
    reusable: Cell<bool>,
}

impl<'c> Op<'c> {
    /// An op named `name` in the borrowed context, placed on `device` (empty: by TensorFlow).
    pub fn new(
        context: &'c Rc<Context>,
        name: &'static CStr,
        device: &CStr,
        status: &Status,
    ) -> PyResult<Self> {
        let api = context.api;
        let label = name.to_str().unwrap_or("op");
        let spare = context.spare_op.replace(std::ptr::null_mut());
        if !spare.is_null() {
            let op = Self {
                context,
                raw: spare,
                label,
                reusable: Cell::new(false),
            };
            // SAFETY: `spare` is a live op of this context with no inputs; names are
            // NUL-terminated. On error `op` is dropped (deleted), never reused.
            unsafe { (api.tfe_op_reset)(op.raw, name.as_ptr(), device.as_ptr(), status.ptr()) };
            status.check_in(label, "TFE_OpReset")?;
            return Ok(op);
        }
        // SAFETY: the context pointer is kept alive by `context`; the name is NUL-terminated.
        let raw = unsafe { (api.tfe_new_op)(context.raw, name.as_ptr(), status.ptr()) };
        let op = if raw.is_null() {
            None
        } else {
            Some(Self {
                context,
                raw,
                label,
                reusable: Cell::new(false),
            })
        };
        status.check_in(label, "TFE_NewOp")?;
        let op = op.ok_or_else(|| runtime_error(format!("TFE_NewOp({label}) returned null")))?;
        if !device.is_empty() {
            // SAFETY: `op.raw` is live; the device name is NUL-terminated.
            unsafe { (api.tfe_op_set_device)(op.raw, device.as_ptr(), status.ptr()) };
            status.check_in(label, "TFE_OpSetDevice")?;
        }
        Ok(op)
    }

    /// Add an input (borrowed: TFE takes its own reference).
    pub fn input(&self, h: *mut TfeTensorHandle, status: &Status) -> PyResult<()> {
        // SAFETY: `self.raw` and `h` are live.
        unsafe { (self.context.api.tfe_op_add_input)(self.raw, h, status.ptr()) };
        status.check_in(self.label, "TFE_OpAddInput")
    }

    /// Set an attribute.
    pub fn attr(&self, attr: &Attr) {
        let api = self.context.api;
        match attr {
            // SAFETY (all three): live op, NUL-terminated attribute name; TFE copies what it
            // keeps (for strings, `v.len()` bytes from `v`).
            Attr::Type(n, v) => unsafe { (api.tfe_op_set_attr_type)(self.raw, n.as_ptr(), *v) },
            Attr::Bool(n, v) => unsafe {
                (api.tfe_op_set_attr_bool)(self.raw, n.as_ptr(), u8::from(*v))
            },
            Attr::Str(n, v) => unsafe {
                (api.tfe_op_set_attr_string)(self.raw, n.as_ptr(), v.as_ptr().cast(), v.len())
            },
        }
    }

    /// `TFE_Execute` with exactly one output, owned before the status is read.
    pub fn execute(&self, status: &Status) -> PyResult<Handle> {
        let api = self.context.api;
        let mut out: [*mut TfeTensorHandle; 1] = [std::ptr::null_mut()];
        let mut n: c_int = 1;
        // SAFETY: `out` has room for `n` handles; the op and status are live.
        unsafe { (api.tfe_execute)(self.raw, out.as_mut_ptr(), &mut n, status.ptr()) };
        let result = if n >= 1 && !out[0].is_null() {
            Some(Handle::own(
                api,
                out[0],
                Rc::clone(self.context),
                self.label,
            ))
        } else {
            None
        };
        status.check(self.label)?;
        // SAFETY: the op is live; the status is a valid out-parameter.
        let held = unsafe { (api.tfe_op_flat_input_count)(self.raw, status.ptr()) };
        status.check_in(self.label, "TFE_OpGetFlatInputCount")?;
        self.reusable.set(held == 0);
        if n != 1 {
            return Err(runtime_error(format!(
                "{} returned {n} outputs, expected 1",
                self.label
            )));
        }
        result.unwrap_or_else(|| Err(runtime_error(format!("{} returned no output", self.label))))
    }
}

impl Drop for Op<'_> {
    fn drop(&mut self) {
        if self.reusable.get() && self.context.spare_op.get().is_null() {
            // Ownership passes to the context (deleted with it or reused by the next op).
            self.context.spare_op.set(self.raw);
            return;
        }
        // SAFETY: owned, deleted once.
        unsafe { (self.context.api.tfe_delete_op)(self.raw) }
    }
}
