//! Binding the imported tensorflow wheel: find its images next to `tensorflow.__file__`, open
//! each with `RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD` (a missing image is an error, never an
//! instruction to load a second TensorFlow), resolve every symbol from its owning image with
//! `dlsym(handle, ...)` (never `RTLD_DEFAULT`), prove its provenance with `dladdr`, and require
//! `tf.__version__` and `TF_Version()` to be the pinned version.

use libc::{c_char, c_int, c_uchar, c_void, size_t};
use pyo3::prelude::*;
use rextio_plugin_api::dl::DlImage;
use std::ffi::CStr;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Opaque `TF_Status`.
pub(crate) enum TfStatus {}
/// Opaque `TF_Tensor`.
pub(crate) enum TfTensor {}
/// Opaque `TFE_Context`.
pub(crate) enum TfeContext {}
/// Opaque `TFE_TensorHandle`.
pub(crate) enum TfeTensorHandle {}
/// Opaque `TFE_Op`.
pub(crate) enum TfeOp {}
/// Opaque `TFE_Executor`.
pub(crate) enum TfeExecutor {}
/// Opaque `TF_DeviceList`.
pub(crate) enum TfDeviceList {}

/// `TF_FLOAT`.
pub(crate) const TF_FLOAT: c_int = 1;
/// `TF_INT32`.
pub(crate) const TF_INT32: c_int = 3;
/// `TF_INT64`.
pub(crate) const TF_INT64: c_int = 9;

/// The dlopen mode: bind now, keep the symbols local, and never load an image that is not
/// already mapped.
pub(crate) const DLOPEN_FLAGS: c_int = rextio_plugin_api::dl::NOW_LOCAL_NOLOAD;

/// Wheel images, relative to the tensorflow package directory, and the `platform.machine()`
/// tags of this build's target (Linux GNU only; other targets stop at `compile_error!`).
pub(crate) struct Profile {
    /// Profile id.
    pub id: &'static str,
    /// `libtensorflow_cc`: TFE C API and `TF_Version`.
    pub cc: &'static str,
    /// `libtensorflow_framework`: `TF_Status` and `TF_Tensor`.
    pub framework: &'static str,
    /// The pywrap image exporting the private EagerTensor bridge.
    pub pywrap: &'static str,
    /// Accepted `platform.machine()` values.
    pub machines: &'static [&'static str],
}

#[cfg(target_arch = "x86_64")]
pub(crate) const PROFILE: Profile = Profile {
    id: "linux-x86_64",
    cc: "libtensorflow_cc.so.2",
    framework: "libtensorflow_framework.so.2",
    pywrap: "python/lib_pywrap_tensorflow_common.so",
    machines: &["x86_64"],
};

#[cfg(target_arch = "aarch64")]
pub(crate) const PROFILE: Profile = Profile {
    id: "linux-aarch64",
    cc: "libtensorflow_cc.so.2",
    framework: "libtensorflow_framework.so.2",
    pywrap: "python/lib_pywrap_tensorflow_common.so",
    machines: &["aarch64", "arm64"],
};

/// Private bridge symbols (Itanium-mangled) exported by the pywrap image of 2.21.0.
pub(crate) const SYM_EAGER_TENSOR_HANDLE: &str = "_Z18EagerTensor_HandlePK7_object";
/// `EagerTensorFromHandle(TFE_TensorHandle*, bool is_packed)`: takes ownership of the handle.
pub(crate) const SYM_EAGER_TENSOR_FROM_HANDLE: &str =
    "_Z21EagerTensorFromHandleP16TFE_TensorHandleb";
/// `EagerTensor_CheckExact(const PyObject*)`.
pub(crate) const SYM_EAGER_TENSOR_CHECK_EXACT: &str = "_Z22EagerTensor_CheckExactPK7_object";

/// A binding failure, with the message a user sees (prefixed `rextio-tensorflow: `).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindError(pub String);

impl std::fmt::Display for BindError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "rextio-tensorflow: {}", self.0)
    }
}

fn fail<T>(message: impl Into<String>) -> Result<T, BindError> {
    Err(BindError(message.into()))
}

fn py_fail(step: &str, e: PyErr) -> BindError {
    BindError(format!("{step}: {e}"))
}

/// An image opened with `RTLD_NOLOAD`; closed on drop unless retained by the API table.
struct Image {
    image: DlImage,
    label: &'static str,
}

impl Image {
    fn open(path: PathBuf, label: &'static str) -> Result<Self, BindError> {
        let Some(text) = path.to_str() else {
            return fail(format!("{label} path {} is not UTF-8", path.display()));
        };
        if text.contains('\0') {
            return fail(format!("{label} path contains NUL"));
        }
        // SAFETY: RTLD_NOLOAD only returns an image the process already mapped, so no
        // constructor of a new copy runs.
        let image = unsafe { DlImage::open(&path, DLOPEN_FLAGS) }.map_err(|e| {
            BindError(format!(
                "{label} ({}) is not loaded by the imported tensorflow wheel ({e}); refusing to load a second TensorFlow",
                path.display()
            ))
        })?;
        Ok(Self { image, label })
    }

    /// Resolve `symbol` from this image only and prove that it lives in this image.
    ///
    /// # Safety
    /// `T` must be the exact `extern "C"` function-pointer type of `symbol`.
    unsafe fn symbol<T: Copy>(&self, symbol: &str) -> Result<T, BindError> {
        if std::mem::size_of::<T>() != std::mem::size_of::<*mut c_void>() {
            return fail(format!("{symbol}: not a function-pointer type"));
        }
        if symbol.contains('\0') {
            return fail(format!("symbol name {symbol:?} contains NUL"));
        }
        let pointer = self.image.symbol(symbol).map_err(|e| {
            BindError(format!(
                "required TensorFlow symbol {symbol} is missing from {} ({e})",
                self.label
            ))
        })?;
        let pointer = pointer.as_ptr();
        provenance(pointer, self.image.path(), symbol)?;
        // SAFETY: sizes match (checked above) and the caller guarantees the signature.
        Ok(unsafe { std::mem::transmute_copy::<*mut c_void, T>(&pointer) })
    }

    /// Keep the image open for the life of the process (the function table points into it).
    fn retain(self) -> usize {
        self.image.retain()
    }
}

fn canonical(path: &Path, label: &str) -> Result<PathBuf, BindError> {
    path.canonicalize()
        .map_err(|e| BindError(format!("cannot resolve {label} {}: {e}", path.display())))
}

/// `dladdr` must place `pointer` inside the image at `expected` (canonical paths compared).
fn provenance(pointer: *mut c_void, expected: &Path, symbol: &str) -> Result<(), BindError> {
    let mut info = libc::Dl_info {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
    // SAFETY: `info` is a valid out-parameter; dladdr only reads loader tables.
    let found = unsafe { libc::dladdr(pointer.cast_const(), &mut info) };
    if found == 0 || info.dli_fname.is_null() {
        return fail(format!("dladdr cannot place {symbol} in any image"));
    }
    // SAFETY: dli_fname is a NUL-terminated path owned by the loader.
    let reported = unsafe { CStr::from_ptr(info.dli_fname) }
        .to_string_lossy()
        .into_owned();
    let actual = canonical(Path::new(&reported), "dladdr image")?;
    if actual != expected {
        return fail(format!(
            "symbol provenance mismatch for {symbol}: expected {}, found {}",
            expected.display(),
            actual.display()
        ));
    }
    Ok(())
}

/// The function table: every pointer was resolved from its owning image of the imported wheel.
pub(crate) struct Api {
    /// Canonical tensorflow package directory the images were found in.
    pub root: PathBuf,
    _images: [usize; 3],
    pub tf_version: unsafe extern "C" fn() -> *const c_char,
    pub tf_new_status: unsafe extern "C" fn() -> *mut TfStatus,
    pub tf_delete_status: unsafe extern "C" fn(*mut TfStatus),
    pub tf_get_code: unsafe extern "C" fn(*const TfStatus) -> c_int,
    pub tf_message: unsafe extern "C" fn(*const TfStatus) -> *const c_char,
    pub tf_allocate_tensor: unsafe extern "C" fn(c_int, *const i64, c_int, size_t) -> *mut TfTensor,
    pub tf_delete_tensor: unsafe extern "C" fn(*mut TfTensor),
    pub tf_tensor_data: unsafe extern "C" fn(*const TfTensor) -> *mut c_void,
    pub tf_tensor_byte_size: unsafe extern "C" fn(*const TfTensor) -> size_t,
    pub tfe_new_tensor_handle:
        unsafe extern "C" fn(*const TfTensor, *mut TfStatus) -> *mut TfeTensorHandle,
    pub tfe_delete_tensor_handle: unsafe extern "C" fn(*mut TfeTensorHandle),
    pub tfe_copy_sharing:
        unsafe extern "C" fn(*mut TfeTensorHandle, *mut TfStatus) -> *mut TfeTensorHandle,
    pub tfe_data_type: unsafe extern "C" fn(*mut TfeTensorHandle) -> c_int,
    pub tfe_num_dims: unsafe extern "C" fn(*mut TfeTensorHandle, *mut TfStatus) -> c_int,
    pub tfe_dim: unsafe extern "C" fn(*mut TfeTensorHandle, c_int, *mut TfStatus) -> i64,
    pub tfe_backing_device:
        unsafe extern "C" fn(*mut TfeTensorHandle, *mut TfStatus) -> *const c_char,
    pub tfe_device_pointer:
        unsafe extern "C" fn(*mut TfeTensorHandle, *mut TfStatus) -> *mut c_void,
    pub tfe_device_memory_size: unsafe extern "C" fn(*mut TfeTensorHandle, *mut TfStatus) -> size_t,
    pub tfe_new_op:
        unsafe extern "C" fn(*mut TfeContext, *const c_char, *mut TfStatus) -> *mut TfeOp,
    pub tfe_delete_op: unsafe extern "C" fn(*mut TfeOp),
    pub tfe_op_set_device: unsafe extern "C" fn(*mut TfeOp, *const c_char, *mut TfStatus),
    /// `TFE_OpReset`: clear the inputs and attributes of an op and make it `name` on `device`.
    pub tfe_op_reset: unsafe extern "C" fn(*mut TfeOp, *const c_char, *const c_char, *mut TfStatus),
    /// `TFE_OpGetFlatInputCount`: how many inputs an op holds references to.
    pub tfe_op_flat_input_count: unsafe extern "C" fn(*mut TfeOp, *mut TfStatus) -> c_int,
    /// `TFE_ContextListDevices`: a new list of the context's devices (local and remote).
    pub tfe_context_list_devices:
        unsafe extern "C" fn(*mut TfeContext, *mut TfStatus) -> *mut TfDeviceList,
    /// `TF_DeviceListCount`.
    pub tf_device_list_count: unsafe extern "C" fn(*const TfDeviceList) -> c_int,
    /// `TF_DeviceListName`: the full name of device `i`, owned by the list.
    pub tf_device_list_name:
        unsafe extern "C" fn(*const TfDeviceList, c_int, *mut TfStatus) -> *const c_char,
    /// `TF_DeleteDeviceList`.
    pub tf_delete_device_list: unsafe extern "C" fn(*mut TfDeviceList),
    /// `TFE_ContextGetExecutorForThread`: a new, non-owning wrapper of this thread's executor.
    pub tfe_context_executor_for_thread: unsafe extern "C" fn(*mut TfeContext) -> *mut TfeExecutor,
    /// `TFE_ExecutorIsAsync`.
    pub tfe_executor_is_async: unsafe extern "C" fn(*mut TfeExecutor) -> bool,
    /// `TFE_DeleteExecutor` (deletes the wrapper; the context keeps its executor).
    pub tfe_delete_executor: unsafe extern "C" fn(*mut TfeExecutor),
    pub tfe_op_add_input: unsafe extern "C" fn(*mut TfeOp, *mut TfeTensorHandle, *mut TfStatus),
    pub tfe_op_set_attr_type: unsafe extern "C" fn(*mut TfeOp, *const c_char, c_int),
    pub tfe_op_set_attr_bool: unsafe extern "C" fn(*mut TfeOp, *const c_char, c_uchar),
    pub tfe_op_set_attr_string:
        unsafe extern "C" fn(*mut TfeOp, *const c_char, *const c_void, size_t),
    pub tfe_execute:
        unsafe extern "C" fn(*mut TfeOp, *mut *mut TfeTensorHandle, *mut c_int, *mut TfStatus),
    pub eager_tensor_handle:
        unsafe extern "C" fn(*const pyo3::ffi::PyObject) -> *mut TfeTensorHandle,
    pub eager_tensor_from_handle:
        unsafe extern "C" fn(*mut TfeTensorHandle, bool) -> *mut pyo3::ffi::PyObject,
    pub eager_tensor_check_exact: unsafe extern "C" fn(*const pyo3::ffi::PyObject) -> bool,
}

static API: OnceLock<Api> = OnceLock::new();

/// The bound API, binding it on first use.
pub(crate) fn api(py: Python<'_>) -> Result<&'static Api, BindError> {
    if let Some(api) = API.get() {
        return Ok(api);
    }
    let bound = bind(py)?;
    // Under the GIL two binders cannot race past `get`; if one did, the first table wins and
    // the second one's retained images are reference counts only.
    let _ = API.set(bound);
    API.get()
        .ok_or_else(|| BindError("the TensorFlow API table was not retained".to_owned()))
}

/// The bound API if binding already succeeded.
pub(crate) fn bound() -> Option<&'static Api> {
    API.get()
}

fn check_interpreter(py: Python<'_>) -> Result<(), BindError> {
    let sys = py.import("sys").map_err(|e| py_fail("import sys", e))?;
    let name: String = sys
        .getattr("implementation")
        .and_then(|i| i.getattr("name"))
        .and_then(|n| n.extract())
        .map_err(|e| py_fail("sys.implementation", e))?;
    let (major, minor): (i64, i64) = sys
        .getattr("version_info")
        .and_then(|v| {
            Ok((
                v.getattr("major")?.extract()?,
                v.getattr("minor")?.extract()?,
            ))
        })
        .map_err(|e| py_fail("sys.version_info", e))?;
    let (abi_major, abi_minor) = crate::EAGER_ABI_PYTHON;
    if name != "cpython" || (major, minor) != crate::EAGER_ABI_PYTHON {
        return fail(format!(
            "the private EagerTensor bridge is pinned to CPython {abi_major}.{abi_minor}, this is {name} {major}.{minor}"
        ));
    }
    let machine: String = py
        .import("platform")
        .and_then(|p| p.call_method0("machine"))
        .and_then(|m| m.extract())
        .map_err(|e| py_fail("platform.machine()", e))?;
    if !PROFILE.machines.contains(&machine.as_str()) {
        return fail(format!(
            "platform profile {} expects machine {:?}, the interpreter reports {machine}",
            PROFILE.id, PROFILE.machines
        ));
    }
    Ok(())
}

/// The canonical directory of the imported tensorflow package, after the Python version check.
fn tensorflow_root(py: Python<'_>) -> Result<PathBuf, BindError> {
    let tf = py
        .import("tensorflow")
        .map_err(|e| py_fail("import tensorflow", e))?;
    let version: String = tf
        .getattr("__version__")
        .and_then(|v| v.extract())
        .map_err(|e| py_fail("tensorflow.__version__", e))?;
    if version != crate::TENSORFLOW_VERSION {
        return fail(format!(
            "TensorFlow version mismatch: expected tensorflow {} (tf.__version__), got {version}",
            crate::TENSORFLOW_VERSION
        ));
    }
    let file: String = tf
        .getattr("__file__")
        .and_then(|v| v.extract())
        .map_err(|e| py_fail("tensorflow.__file__", e))?;
    let file = canonical(Path::new(&file), "tensorflow.__file__")?;
    match file.parent() {
        Some(p) => Ok(p.to_path_buf()),
        None => fail("tensorflow.__file__ has no package directory"),
    }
}

fn image(root: &Path, rel: &str, label: &'static str) -> Result<Image, BindError> {
    let path = canonical(&root.join(rel), label)?;
    if !path.starts_with(root) {
        return fail(format!(
            "{label} resolves outside the imported tensorflow package: {}",
            path.display()
        ));
    }
    Image::open(path, label)
}

fn bind(py: Python<'_>) -> Result<Api, BindError> {
    check_interpreter(py)?;
    let root = tensorflow_root(py)?;
    let cc = image(&root, PROFILE.cc, "libtensorflow_cc")?;
    let fw = image(&root, PROFILE.framework, "libtensorflow_framework")?;
    let pw = image(&root, PROFILE.pywrap, "lib_pywrap_tensorflow_common")?;
    // SAFETY: each type below is the C signature of the named symbol in TensorFlow 2.21.0's
    // c_api.h / c_api_eager.h / c_api_experimental.h / pywrap_tensor.h (the bridge functions are C++ but take and
    // return plain pointers and bool, with the platform C calling convention).
    let api = unsafe {
        Api {
            root,
            _images: [0; 3],
            tf_version: cc.symbol("TF_Version")?,
            tf_new_status: fw.symbol("TF_NewStatus")?,
            tf_delete_status: fw.symbol("TF_DeleteStatus")?,
            tf_get_code: fw.symbol("TF_GetCode")?,
            tf_message: fw.symbol("TF_Message")?,
            tf_allocate_tensor: fw.symbol("TF_AllocateTensor")?,
            tf_delete_tensor: fw.symbol("TF_DeleteTensor")?,
            tf_tensor_data: fw.symbol("TF_TensorData")?,
            tf_tensor_byte_size: fw.symbol("TF_TensorByteSize")?,
            tfe_new_tensor_handle: cc.symbol("TFE_NewTensorHandle")?,
            tfe_delete_tensor_handle: cc.symbol("TFE_DeleteTensorHandle")?,
            tfe_copy_sharing: cc.symbol("TFE_TensorHandleCopySharingTensor")?,
            tfe_data_type: cc.symbol("TFE_TensorHandleDataType")?,
            tfe_num_dims: cc.symbol("TFE_TensorHandleNumDims")?,
            tfe_dim: cc.symbol("TFE_TensorHandleDim")?,
            tfe_backing_device: cc.symbol("TFE_TensorHandleBackingDeviceName")?,
            tfe_device_pointer: cc.symbol("TFE_TensorHandleDevicePointer")?,
            tfe_device_memory_size: cc.symbol("TFE_TensorHandleDeviceMemorySize")?,
            tfe_new_op: cc.symbol("TFE_NewOp")?,
            tfe_delete_op: cc.symbol("TFE_DeleteOp")?,
            tfe_op_set_device: cc.symbol("TFE_OpSetDevice")?,
            tfe_op_reset: cc.symbol("TFE_OpReset")?,
            tfe_op_flat_input_count: cc.symbol("TFE_OpGetFlatInputCount")?,
            tfe_context_list_devices: cc.symbol("TFE_ContextListDevices")?,
            tf_device_list_count: cc.symbol("TF_DeviceListCount")?,
            tf_device_list_name: cc.symbol("TF_DeviceListName")?,
            tf_delete_device_list: cc.symbol("TF_DeleteDeviceList")?,
            tfe_context_executor_for_thread: cc.symbol("TFE_ContextGetExecutorForThread")?,
            tfe_executor_is_async: cc.symbol("TFE_ExecutorIsAsync")?,
            tfe_delete_executor: cc.symbol("TFE_DeleteExecutor")?,
            tfe_op_add_input: cc.symbol("TFE_OpAddInput")?,
            tfe_op_set_attr_type: cc.symbol("TFE_OpSetAttrType")?,
            tfe_op_set_attr_bool: cc.symbol("TFE_OpSetAttrBool")?,
            tfe_op_set_attr_string: cc.symbol("TFE_OpSetAttrString")?,
            tfe_execute: cc.symbol("TFE_Execute")?,
            eager_tensor_handle: pw.symbol(SYM_EAGER_TENSOR_HANDLE)?,
            eager_tensor_from_handle: pw.symbol(SYM_EAGER_TENSOR_FROM_HANDLE)?,
            eager_tensor_check_exact: pw.symbol(SYM_EAGER_TENSOR_CHECK_EXACT)?,
        }
    };
    // SAFETY: TF_Version takes nothing and returns a static C string (or null).
    let v = unsafe { (api.tf_version)() };
    if v.is_null() {
        return fail("TF_Version() returned null");
    }
    // SAFETY: non-null TF_Version text is a static NUL-terminated string.
    let c_version = unsafe { CStr::from_ptr(v) }.to_string_lossy().into_owned();
    if c_version != crate::TENSORFLOW_VERSION {
        return fail(format!(
            "TensorFlow C runtime version mismatch: expected TF_Version() {}, got {c_version}",
            crate::TENSORFLOW_VERSION
        ));
    }
    Ok(Api {
        _images: [cc.retain(), fw.retain(), pw.retain()],
        ..api
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dlopen_mode_is_now_local_noload_with_glibc_values() {
        assert_eq!(DLOPEN_FLAGS, 0x2 | 0x4);
        assert_eq!(libc::RTLD_LOCAL, 0);
        assert_eq!(DLOPEN_FLAGS & libc::RTLD_GLOBAL, 0);
    }

    #[test]
    fn an_image_that_is_not_mapped_is_refused_not_loaded() {
        let dir = tempfile::tempdir().unwrap();
        // A file that exists but was never mapped: RTLD_NOLOAD must refuse it.
        let p = dir.path().join("libtensorflow_cc.so.2");
        std::fs::write(&p, b"not an ELF image").unwrap();
        let err = Image::open(p, "libtensorflow_cc").err().unwrap();
        assert!(
            err.0.contains("refusing to load a second TensorFlow"),
            "{err}"
        );
    }

    #[test]
    fn provenance_rejects_a_symbol_from_another_image() {
        // `dlopen` lives in libc, not in this test binary's path.
        let here = std::env::current_exe().unwrap().canonicalize().unwrap();
        let err = provenance(libc::dlopen as *mut c_void, &here, "dlopen").unwrap_err();
        assert!(err.0.contains("provenance mismatch"), "{err}");
    }

    #[test]
    fn paths_outside_the_package_are_refused() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("libtensorflow_cc.so.2");
        std::fs::write(&target, b"x").unwrap();
        std::os::unix::fs::symlink(&target, root.path().join("libtensorflow_cc.so.2")).unwrap();
        let root = root.path().canonicalize().unwrap();
        let err = image(&root, "libtensorflow_cc.so.2", "libtensorflow_cc")
            .err()
            .unwrap();
        assert!(
            err.0.contains("outside the imported tensorflow package"),
            "{err}"
        );
    }
}
