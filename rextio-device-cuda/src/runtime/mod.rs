//! The provider-owned CUDA runtime: a driver function table and RAII context, dedicated stream
//! and device allocation.
//!
//! * [`DriverApi`] is the table of driver entry points. [`DriverApi::load_reviewed`] resolves it
//!   from the one reviewed driver image ([`crate::loader`]); the table holds an `Arc` to that
//!   image, so the image outlives every table, context, stream and allocation made from it.
//!   Generated code never links `cuda`/`nvcuda` directly.
//! * [`CudaContext`] owns a raw context (`cuCtxCreate_v2`); it is not left current on the thread:
//!   every operation pushes it, works, and pops it again.
//! * [`CudaStream`] (a dedicated non-blocking stream) and [`DeviceAllocation`] (`cuMemAlloc_v2`)
//!   hold an `Rc` to their context, so the context is destroyed only after its last child is
//!   released: allocations and streams always go before the context.
//! * Every handle is released exactly once: by `close()` (which reports the driver's answer) or
//!   else by `Drop` (which logs it). All types are `!Send` and `!Sync` (thread-affine).
//!
//! ```
//! // The driver table itself may move between threads (it is only function pointers and an
//! // `Arc` of the image); the resources below may not.
//! fn needs_send_sync<T: Send + Sync>() {}
//! needs_send_sync::<rextio_device_cuda::runtime::DriverApi>();
//! ```
//! ```compile_fail
//! fn needs_send<T: Send>() {}
//! needs_send::<rextio_device_cuda::runtime::CudaContext>();
//! ```
//! ```compile_fail
//! fn needs_sync<T: Sync>() {}
//! needs_sync::<rextio_device_cuda::runtime::CudaStream>();
//! ```
//! ```compile_fail
//! fn needs_send<T: Send>() {}
//! needs_send::<rextio_device_cuda::runtime::DeviceAllocation>();
//! ```

use crate::ffi::{
    result_name, CuContext, CuDevice, CuDevicePtr, CuResult, CuStream, DriverFns, CUDA_SUCCESS,
    CU_STREAM_NON_BLOCKING,
};
use crate::loader::{DriverImage, LoadError};
use std::cell::Cell;
use std::fmt;
use std::rc::Rc;
use std::sync::Arc;

#[cfg(test)]
mod tests;

/// A failed driver call or a misuse of the RAII types.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DriverError {
    /// The driver answered with an error code.
    #[error("{entry_point} failed with CUresult {code}{}", name_suffix(*code))]
    Call {
        /// The entry point.
        entry_point: &'static str,
        /// Its `CUresult`.
        code: CuResult,
    },
    /// The driver reported success but returned a null handle.
    #[error("{entry_point} reported success but returned a null handle")]
    NullHandle {
        /// The entry point.
        entry_point: &'static str,
    },
    /// The device ordinal does not fit the driver's `int`.
    #[error("device ordinal {0} is out of range")]
    InvalidOrdinal(u32),
    /// `close()` on a context whose streams or allocations are still alive.
    #[error("the context still has {children} live stream(s) or allocation(s); it is released after the last of them")]
    ContextInUse {
        /// How many children hold it.
        children: usize,
    },
}

fn name_suffix(code: CuResult) -> String {
    result_name(code)
        .map(|n| format!(" ({n})"))
        .unwrap_or_default()
}

impl DriverError {
    /// The `CUresult` of a failed call.
    pub fn code(&self) -> Option<CuResult> {
        match self {
            DriverError::Call { code, .. } => Some(*code),
            _ => None,
        }
    }
}

fn check(entry_point: &'static str, code: CuResult) -> Result<(), DriverError> {
    if code == CUDA_SUCCESS {
        Ok(())
    } else {
        Err(DriverError::Call { entry_point, code })
    }
}

/// The driver entry points, plus ownership of the image they came from.
#[derive(Clone)]
pub struct DriverApi {
    fns: DriverFns,
    image: Option<Arc<DriverImage>>,
}

impl fmt::Debug for DriverApi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DriverApi")
            .field(
                "image",
                &self.image.as_ref().map(|i| i.path().to_path_buf()),
            )
            .finish_non_exhaustive()
    }
}

impl DriverApi {
    /// Open the reviewed driver image of this host and resolve every runtime entry point.
    pub fn load_reviewed() -> Result<DriverApi, LoadError> {
        DriverApi::from_image(Arc::new(DriverImage::open_reviewed()?))
    }

    /// Resolve every runtime entry point from an already opened reviewed image (the host's
    /// shared loader); the table keeps the image alive.
    pub fn from_image(image: Arc<DriverImage>) -> Result<DriverApi, LoadError> {
        Ok(DriverApi {
            fns: image.driver_fns()?,
            image: Some(image),
        })
    }

    /// A table of caller-supplied functions (a fake driver in tests).
    ///
    /// # Safety
    /// Every function must honour the CUDA Driver API signature and contract of its entry
    /// point for as long as any value made from this table is alive.
    pub unsafe fn from_fns(fns: DriverFns) -> DriverApi {
        DriverApi { fns, image: None }
    }

    /// The entry points.
    pub fn fns(&self) -> &DriverFns {
        &self.fns
    }

    /// The image the entry points came from, if loaded from one.
    pub fn image(&self) -> Option<&Arc<DriverImage>> {
        self.image.as_ref()
    }
}

struct ContextInner {
    api: DriverApi,
    raw: Cell<CuContext>,
    device: CuDevice,
}

impl ContextInner {
    /// Run `f` with the context current on this thread; pop it afterwards whatever happens.
    fn scoped<R>(&self, f: impl FnOnce() -> Result<R, DriverError>) -> Result<R, DriverError> {
        let raw = self.raw.get();
        // SAFETY: raw is a live context (children keep it alive; it is nulled only on release).
        check("cuCtxPushCurrent_v2", unsafe {
            (self.api.fns.ctx_push_current)(raw)
        })?;
        let result = f();
        let mut popped: CuContext = std::ptr::null_mut();
        // SAFETY: we pushed a context just above; popped is a valid out-pointer.
        let pop = check("cuCtxPopCurrent_v2", unsafe {
            (self.api.fns.ctx_pop_current)(&mut popped)
        });
        match (result, pop) {
            (Ok(value), Ok(())) => Ok(value),
            (Err(e), _) | (Ok(_), Err(e)) => Err(e),
        }
    }

    /// Destroy the context if not yet destroyed; exactly one driver call per context.
    fn release(&self) -> Result<(), DriverError> {
        let raw = self.raw.replace(std::ptr::null_mut());
        if raw.is_null() {
            return Ok(());
        }
        // SAFETY: raw came from cuCtxCreate_v2 and, having been swapped out, is destroyed once.
        check("cuCtxDestroy_v2", unsafe {
            (self.api.fns.ctx_destroy)(raw)
        })
    }
}

impl Drop for ContextInner {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            tracing::warn!(error = %e, "releasing a CUDA context failed");
        }
    }
}

/// A provider-owned raw CUDA context on one device. `!Send`, `!Sync`.
pub struct CudaContext {
    inner: Rc<ContextInner>,
}

impl fmt::Debug for CudaContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CudaContext")
            .field("device", &self.inner.device)
            .field("children", &self.child_count())
            .finish()
    }
}

impl CudaContext {
    /// Initialise the driver and create a context on device `ordinal`; the context is not left
    /// current on the calling thread.
    pub fn create(api: &DriverApi, ordinal: u32) -> Result<CudaContext, DriverError> {
        let index = i32::try_from(ordinal).map_err(|_| DriverError::InvalidOrdinal(ordinal))?;
        let fns = api.fns();
        // SAFETY (all calls below): the table honours the driver contract (DriverApi invariant)
        // and every out-pointer is a live local.
        check("cuInit", unsafe { (fns.inventory.init)(0) })?;
        let mut device: CuDevice = 0;
        check("cuDeviceGet", unsafe {
            (fns.inventory.device_get)(&mut device, index)
        })?;
        let mut raw: CuContext = std::ptr::null_mut();
        check("cuCtxCreate_v2", unsafe {
            (fns.ctx_create)(&mut raw, 0, device)
        })?;
        if raw.is_null() {
            return Err(DriverError::NullHandle {
                entry_point: "cuCtxCreate_v2",
            });
        }
        // From here the context is owned: any early return destroys it through Drop.
        let context = CudaContext {
            inner: Rc::new(ContextInner {
                api: api.clone(),
                raw: Cell::new(raw),
                device,
            }),
        };
        // cuCtxCreate made it current; pop it so use is always explicitly scoped.
        let mut popped: CuContext = std::ptr::null_mut();
        check("cuCtxPopCurrent_v2", unsafe {
            (fns.ctx_pop_current)(&mut popped)
        })?;
        Ok(context)
    }

    /// The driver device handle.
    pub fn device(&self) -> CuDevice {
        self.inner.device
    }

    /// The raw context handle (null once released).
    pub fn as_raw(&self) -> CuContext {
        self.inner.raw.get()
    }

    /// Streams and allocations currently keeping this context alive.
    pub fn child_count(&self) -> usize {
        Rc::strong_count(&self.inner).saturating_sub(1)
    }

    /// Create a dedicated non-blocking stream on this context.
    pub fn create_stream(&self) -> Result<CudaStream, DriverError> {
        let fns = self.inner.api.fns;
        self.inner.scoped(|| {
            let mut raw: CuStream = std::ptr::null_mut();
            // SAFETY: the context is current; raw is a valid out-pointer.
            check("cuStreamCreate", unsafe {
                (fns.stream_create)(&mut raw, CU_STREAM_NON_BLOCKING)
            })?;
            if raw.is_null() {
                return Err(DriverError::NullHandle {
                    entry_point: "cuStreamCreate",
                });
            }
            Ok(CudaStream {
                context: Rc::clone(&self.inner),
                raw: Cell::new(raw),
            })
        })
    }

    /// Allocate `bytes` of device memory on this context.
    pub fn allocate(&self, bytes: usize) -> Result<DeviceAllocation, DriverError> {
        let fns = self.inner.api.fns;
        self.inner.scoped(|| {
            let mut ptr: CuDevicePtr = 0;
            // SAFETY: the context is current; ptr is a valid out-pointer.
            check("cuMemAlloc_v2", unsafe { (fns.mem_alloc)(&mut ptr, bytes) })?;
            if ptr == 0 {
                return Err(DriverError::NullHandle {
                    entry_point: "cuMemAlloc_v2",
                });
            }
            Ok(DeviceAllocation {
                context: Rc::clone(&self.inner),
                ptr: Cell::new(ptr),
                bytes,
            })
        })
    }

    /// Destroy the context now and report the driver's answer. With live children it returns
    /// [`DriverError::ContextInUse`] and the context is destroyed after the last child.
    pub fn close(self) -> Result<(), DriverError> {
        let children = self.child_count();
        if children > 0 {
            return Err(DriverError::ContextInUse { children });
        }
        self.inner.release()
    }
}

/// Release a child handle: exactly one release call, bracketed by its context when the push
/// succeeds. The call is made even if the push fails (the driver finds the owning context from
/// the handle), so a handle is never leaked by a bracketing error; the first error is returned.
fn release_child(
    context: &ContextInner,
    entry_point: &'static str,
    call: impl FnOnce() -> CuResult,
) -> Result<(), DriverError> {
    let fns = context.api.fns;
    // SAFETY: the context is alive (the child holds it) and not yet released.
    let pushed = check("cuCtxPushCurrent_v2", unsafe {
        (fns.ctx_push_current)(context.raw.get())
    });
    let released = check(entry_point, call());
    let popped = if pushed.is_ok() {
        let mut popped: CuContext = std::ptr::null_mut();
        // SAFETY: we pushed above; popped is a valid out-pointer.
        check("cuCtxPopCurrent_v2", unsafe {
            (fns.ctx_pop_current)(&mut popped)
        })
    } else {
        Ok(())
    };
    pushed.and(released).and(popped)
}

/// A dedicated non-blocking stream; keeps its context alive. `!Send`, `!Sync`.
pub struct CudaStream {
    context: Rc<ContextInner>,
    raw: Cell<CuStream>,
}

impl fmt::Debug for CudaStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CudaStream")
            .field("raw", &self.raw.get())
            .finish()
    }
}

impl CudaStream {
    /// The raw stream handle (null once released).
    pub fn as_raw(&self) -> CuStream {
        self.raw.get()
    }

    /// Wait for all work queued on the stream.
    pub fn synchronize(&self) -> Result<(), DriverError> {
        let raw = self.raw.get();
        let fns = self.context.api.fns;
        // SAFETY: raw is a live stream of this context.
        self.context.scoped(|| {
            check("cuStreamSynchronize", unsafe {
                (fns.stream_synchronize)(raw)
            })
        })
    }

    fn release(&self) -> Result<(), DriverError> {
        let raw = self.raw.replace(std::ptr::null_mut());
        if raw.is_null() {
            return Ok(());
        }
        let fns = self.context.api.fns;
        // SAFETY: raw came from cuStreamCreate and, swapped out, is destroyed once.
        release_child(&self.context, "cuStreamDestroy_v2", || unsafe {
            (fns.stream_destroy)(raw)
        })
    }

    /// Destroy the stream now and report the driver's answer.
    pub fn close(self) -> Result<(), DriverError> {
        self.release()
    }
}

impl Drop for CudaStream {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            tracing::warn!(error = %e, "releasing a CUDA stream failed");
        }
    }
}

/// Device memory from `cuMemAlloc_v2`; keeps its context alive. `!Send`, `!Sync`.
pub struct DeviceAllocation {
    context: Rc<ContextInner>,
    ptr: Cell<CuDevicePtr>,
    bytes: usize,
}

impl fmt::Debug for DeviceAllocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceAllocation")
            .field("ptr", &format_args!("{:#x}", self.ptr.get()))
            .field("bytes", &self.bytes)
            .finish()
    }
}

impl DeviceAllocation {
    /// The device address (0 once released).
    pub fn as_raw(&self) -> CuDevicePtr {
        self.ptr.get()
    }

    /// The size in bytes.
    pub fn len(&self) -> usize {
        self.bytes
    }

    /// Whether the allocation has zero bytes.
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    fn release(&self) -> Result<(), DriverError> {
        let ptr = self.ptr.replace(0);
        if ptr == 0 {
            return Ok(());
        }
        let fns = self.context.api.fns;
        // SAFETY: ptr came from cuMemAlloc_v2 and, swapped out, is freed once.
        release_child(&self.context, "cuMemFree_v2", || unsafe {
            (fns.mem_free)(ptr)
        })
    }

    /// Free the memory now and report the driver's answer.
    pub fn close(self) -> Result<(), DriverError> {
        self.release()
    }
}

impl Drop for DeviceAllocation {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            tracing::warn!(error = %e, "freeing CUDA device memory failed");
        }
    }
}
