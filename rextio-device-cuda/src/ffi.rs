//! CUDA Driver API types and entry-point signatures, written out by hand.
//!
//! Only the entry points the probe and the RAII runtime call are declared. Nothing links against
//! `libcuda`: every pointer is resolved with `dlsym` from one reviewed driver image (see
//! [`crate::loader`]) or supplied by a test as a fake.

use std::ffi::{c_char, c_int, c_uint, c_void};

/// `CUresult`: 0 is success, everything else an error code.
pub type CuResult = c_int;
/// `CUdevice`: a device ordinal as the driver sees it.
pub type CuDevice = c_int;
/// `CUcontext`: an opaque context handle.
pub type CuContext = *mut c_void;
/// `CUstream`: an opaque stream handle.
pub type CuStream = *mut c_void;
/// `CUdeviceptr`: a device address (64-bit on every supported target).
pub type CuDevicePtr = u64;

/// `CUDA_SUCCESS`.
pub const CUDA_SUCCESS: CuResult = 0;
/// `CUDA_ERROR_NO_DEVICE`: the driver is installed but sees no CUDA device.
pub const CUDA_ERROR_NO_DEVICE: CuResult = 100;
/// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR`.
pub const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: c_int = 75;
/// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR`.
pub const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: c_int = 76;
/// `CU_STREAM_NON_BLOCKING`: the dedicated stream does not synchronise with the legacy stream.
pub const CU_STREAM_NON_BLOCKING: c_uint = 1;

/// `cuInit(flags)`.
pub type CuInitFn = unsafe extern "C" fn(flags: c_uint) -> CuResult;
/// `cuDriverGetVersion(&version)`.
pub type CuDriverGetVersionFn = unsafe extern "C" fn(version: *mut c_int) -> CuResult;
/// `cuDeviceGetCount(&count)`.
pub type CuDeviceGetCountFn = unsafe extern "C" fn(count: *mut c_int) -> CuResult;
/// `cuDeviceGet(&device, ordinal)`.
pub type CuDeviceGetFn = unsafe extern "C" fn(device: *mut CuDevice, ordinal: c_int) -> CuResult;
/// `cuDeviceGetName(name, len, device)`.
pub type CuDeviceGetNameFn =
    unsafe extern "C" fn(name: *mut c_char, len: c_int, device: CuDevice) -> CuResult;
/// `cuDeviceGetAttribute(&value, attribute, device)`.
pub type CuDeviceGetAttributeFn =
    unsafe extern "C" fn(value: *mut c_int, attribute: c_int, device: CuDevice) -> CuResult;
/// `cuCtxCreate_v2(&ctx, flags, device)`.
pub type CuCtxCreateFn =
    unsafe extern "C" fn(ctx: *mut CuContext, flags: c_uint, device: CuDevice) -> CuResult;
/// `cuCtxDestroy_v2(ctx)`.
pub type CuCtxDestroyFn = unsafe extern "C" fn(ctx: CuContext) -> CuResult;
/// `cuCtxPushCurrent_v2(ctx)`.
pub type CuCtxPushCurrentFn = unsafe extern "C" fn(ctx: CuContext) -> CuResult;
/// `cuCtxPopCurrent_v2(&ctx)`.
pub type CuCtxPopCurrentFn = unsafe extern "C" fn(ctx: *mut CuContext) -> CuResult;
/// `cuStreamCreate(&stream, flags)`.
pub type CuStreamCreateFn = unsafe extern "C" fn(stream: *mut CuStream, flags: c_uint) -> CuResult;
/// `cuStreamSynchronize(stream)`.
pub type CuStreamSynchronizeFn = unsafe extern "C" fn(stream: CuStream) -> CuResult;
/// `cuStreamDestroy_v2(stream)`.
pub type CuStreamDestroyFn = unsafe extern "C" fn(stream: CuStream) -> CuResult;
/// `cuMemAlloc_v2(&ptr, bytes)`.
pub type CuMemAllocFn = unsafe extern "C" fn(ptr: *mut CuDevicePtr, bytes: usize) -> CuResult;
/// `cuMemFree_v2(ptr)`.
pub type CuMemFreeFn = unsafe extern "C" fn(ptr: CuDevicePtr) -> CuResult;

/// The inventory entry points, the only ones the probe resolves and calls.
#[derive(Debug, Clone, Copy)]
pub struct InventoryFns {
    /// `cuInit`.
    pub init: CuInitFn,
    /// `cuDriverGetVersion`.
    pub driver_get_version: CuDriverGetVersionFn,
    /// `cuDeviceGetCount`.
    pub device_get_count: CuDeviceGetCountFn,
    /// `cuDeviceGet`.
    pub device_get: CuDeviceGetFn,
    /// `cuDeviceGetName`.
    pub device_get_name: CuDeviceGetNameFn,
    /// `cuDeviceGetAttribute` (called for the compute-capability attributes only).
    pub device_get_attribute: CuDeviceGetAttributeFn,
}

/// Symbol names of [`InventoryFns`], in field order; also the only `entry_point` values a probe
/// report may name.
pub const INVENTORY_SYMBOLS: [&str; 6] = [
    "cuInit",
    "cuDriverGetVersion",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetName",
    "cuDeviceGetAttribute",
];

/// Every entry point the RAII runtime uses: the inventory plus context, stream and memory.
#[derive(Debug, Clone, Copy)]
pub struct DriverFns {
    /// Inventory entry points.
    pub inventory: InventoryFns,
    /// `cuCtxCreate_v2`.
    pub ctx_create: CuCtxCreateFn,
    /// `cuCtxDestroy_v2`.
    pub ctx_destroy: CuCtxDestroyFn,
    /// `cuCtxPushCurrent_v2`.
    pub ctx_push_current: CuCtxPushCurrentFn,
    /// `cuCtxPopCurrent_v2`.
    pub ctx_pop_current: CuCtxPopCurrentFn,
    /// `cuStreamCreate`.
    pub stream_create: CuStreamCreateFn,
    /// `cuStreamSynchronize`.
    pub stream_synchronize: CuStreamSynchronizeFn,
    /// `cuStreamDestroy_v2`.
    pub stream_destroy: CuStreamDestroyFn,
    /// `cuMemAlloc_v2`.
    pub mem_alloc: CuMemAllocFn,
    /// `cuMemFree_v2`.
    pub mem_free: CuMemFreeFn,
}

/// Symbol names of the runtime-only entry points of [`DriverFns`], in field order.
pub const RUNTIME_SYMBOLS: [&str; 9] = [
    "cuCtxCreate_v2",
    "cuCtxDestroy_v2",
    "cuCtxPushCurrent_v2",
    "cuCtxPopCurrent_v2",
    "cuStreamCreate",
    "cuStreamSynchronize",
    "cuStreamDestroy_v2",
    "cuMemAlloc_v2",
    "cuMemFree_v2",
];

/// The `CUDA_ERROR_*` name of a driver result code, when it is one this crate knows.
pub fn result_name(code: CuResult) -> Option<&'static str> {
    Some(match code {
        0 => "CUDA_SUCCESS",
        1 => "CUDA_ERROR_INVALID_VALUE",
        2 => "CUDA_ERROR_OUT_OF_MEMORY",
        3 => "CUDA_ERROR_NOT_INITIALIZED",
        4 => "CUDA_ERROR_DEINITIALIZED",
        34 => "CUDA_ERROR_STUB_LIBRARY",
        35 => "CUDA_ERROR_INSUFFICIENT_DRIVER",
        46 => "CUDA_ERROR_DEVICES_UNAVAILABLE",
        100 => "CUDA_ERROR_NO_DEVICE",
        101 => "CUDA_ERROR_INVALID_DEVICE",
        201 => "CUDA_ERROR_INVALID_CONTEXT",
        304 => "CUDA_ERROR_OPERATING_SYSTEM",
        400 => "CUDA_ERROR_INVALID_HANDLE",
        700 => "CUDA_ERROR_ILLEGAL_ADDRESS",
        709 => "CUDA_ERROR_CONTEXT_IS_DESTROYED",
        801 => "CUDA_ERROR_NOT_SUPPORTED",
        999 => "CUDA_ERROR_UNKNOWN",
        _ => return None,
    })
}
