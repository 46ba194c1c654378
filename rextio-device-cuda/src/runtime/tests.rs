//! The RAII runtime against a FAKE driver function table (no GPU exists in CI): plain
//! `extern "C"` functions that record every call in a thread-local log and fail on demand.

use super::*;
use crate::ffi::{CuDevice, InventoryFns};
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_void};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Call {
    Init,
    DeviceGet(c_int),
    CtxCreate(usize),
    CtxDestroy(usize),
    Push(usize),
    Pop,
    StreamCreate(usize),
    StreamSync(usize),
    StreamDestroy(usize),
    MemAlloc(u64, usize),
    MemFree(u64),
}

thread_local! {
    static LOG: RefCell<Vec<Call>> = const { RefCell::new(Vec::new()) };
    static FAIL: RefCell<HashMap<&'static str, CuResult>> = RefCell::new(HashMap::new());
    static NEXT_HANDLE: Cell<usize> = const { Cell::new(0x1000) };
    static NULL_HANDLES: Cell<bool> = const { Cell::new(false) };
}

fn log(call: Call) {
    LOG.with(|l| l.borrow_mut().push(call));
}
fn failure(entry: &'static str) -> CuResult {
    FAIL.with(|f| f.borrow().get(entry).copied().unwrap_or(0))
}
fn next_handle() -> usize {
    if NULL_HANDLES.with(Cell::get) {
        return 0;
    }
    NEXT_HANDLE.with(|n| {
        let h = n.get();
        n.set(h + 0x10);
        h
    })
}
fn calls() -> Vec<Call> {
    LOG.with(|l| l.borrow().clone())
}
fn count(pred: impl Fn(&Call) -> bool) -> usize {
    calls().iter().filter(|c| pred(c)).count()
}
fn fail(entry: &'static str, code: CuResult) {
    FAIL.with(|f| f.borrow_mut().insert(entry, code));
}
fn heal() {
    FAIL.with(|f| f.borrow_mut().clear());
}

unsafe extern "C" fn init(_flags: c_uint) -> CuResult {
    log(Call::Init);
    failure("cuInit")
}
unsafe extern "C" fn driver_version(v: *mut c_int) -> CuResult {
    // SAFETY: valid out-pointer from the caller.
    unsafe { *v = 12080 };
    0
}
unsafe extern "C" fn device_count(n: *mut c_int) -> CuResult {
    // SAFETY: valid out-pointer from the caller.
    unsafe { *n = 1 };
    0
}
unsafe extern "C" fn device_get(d: *mut CuDevice, ordinal: c_int) -> CuResult {
    log(Call::DeviceGet(ordinal));
    // SAFETY: valid out-pointer from the caller.
    unsafe { *d = ordinal };
    failure("cuDeviceGet")
}
unsafe extern "C" fn device_name(_b: *mut c_char, _l: c_int, _d: CuDevice) -> CuResult {
    0
}
unsafe extern "C" fn device_attribute(v: *mut c_int, _a: c_int, _d: CuDevice) -> CuResult {
    // SAFETY: valid out-pointer from the caller.
    unsafe { *v = 0 };
    0
}
unsafe extern "C" fn ctx_create(ctx: *mut CuContext, _flags: c_uint, _d: CuDevice) -> CuResult {
    let rc = failure("cuCtxCreate_v2");
    if rc != 0 {
        return rc;
    }
    let h = next_handle();
    log(Call::CtxCreate(h));
    // SAFETY: valid out-pointer from the caller.
    unsafe { *ctx = h as *mut c_void };
    0
}
unsafe extern "C" fn ctx_destroy(ctx: CuContext) -> CuResult {
    log(Call::CtxDestroy(ctx as usize));
    failure("cuCtxDestroy_v2")
}
unsafe extern "C" fn ctx_push(ctx: CuContext) -> CuResult {
    let rc = failure("cuCtxPushCurrent_v2");
    if rc == 0 {
        log(Call::Push(ctx as usize));
    }
    rc
}
unsafe extern "C" fn ctx_pop(_ctx: *mut CuContext) -> CuResult {
    log(Call::Pop);
    failure("cuCtxPopCurrent_v2")
}
unsafe extern "C" fn stream_create(s: *mut CuStream, flags: c_uint) -> CuResult {
    assert_eq!(
        flags, CU_STREAM_NON_BLOCKING,
        "the dedicated stream is non-blocking"
    );
    let rc = failure("cuStreamCreate");
    if rc != 0 {
        return rc;
    }
    let h = next_handle();
    log(Call::StreamCreate(h));
    // SAFETY: valid out-pointer from the caller.
    unsafe { *s = h as *mut c_void };
    0
}
unsafe extern "C" fn stream_sync(s: CuStream) -> CuResult {
    log(Call::StreamSync(s as usize));
    failure("cuStreamSynchronize")
}
unsafe extern "C" fn stream_destroy(s: CuStream) -> CuResult {
    log(Call::StreamDestroy(s as usize));
    failure("cuStreamDestroy_v2")
}
unsafe extern "C" fn mem_alloc(p: *mut CuDevicePtr, bytes: usize) -> CuResult {
    let rc = failure("cuMemAlloc_v2");
    if rc != 0 {
        return rc;
    }
    let h = next_handle() as u64;
    log(Call::MemAlloc(h, bytes));
    // SAFETY: valid out-pointer from the caller.
    unsafe { *p = h };
    0
}
unsafe extern "C" fn mem_free(p: CuDevicePtr) -> CuResult {
    log(Call::MemFree(p));
    failure("cuMemFree_v2")
}

fn fake_driver() -> DriverApi {
    LOG.with(|l| l.borrow_mut().clear());
    heal();
    NULL_HANDLES.with(|n| n.set(false));
    // SAFETY: the fakes honour the declared signatures and never touch invalid memory.
    unsafe {
        DriverApi::from_fns(DriverFns {
            inventory: InventoryFns {
                init,
                driver_get_version: driver_version,
                device_get_count: device_count,
                device_get,
                device_get_name: device_name,
                device_get_attribute: device_attribute,
            },
            ctx_create,
            ctx_destroy,
            ctx_push_current: ctx_push,
            ctx_pop_current: ctx_pop,
            stream_create,
            stream_synchronize: stream_sync,
            stream_destroy,
            mem_alloc,
            mem_free,
        })
    }
}

/// Pushes and pops balance, and the context is never left current: `cuCtxCreate` counts as a
/// push.
fn assert_balanced() {
    let pushes = count(|c| matches!(c, Call::Push(_) | Call::CtxCreate(_)));
    let pops = count(|c| matches!(c, Call::Pop));
    assert_eq!(pushes, pops, "unbalanced push/pop: {:?}", calls());
}

#[test]
fn fake_driver_releases_every_resource_exactly_once() {
    let api = fake_driver();
    let ctx = CudaContext::create(&api, 0).unwrap();
    let raw_ctx = ctx.as_raw() as usize;
    let stream = ctx.create_stream().unwrap();
    let raw_stream = stream.as_raw() as usize;
    stream.synchronize().unwrap();
    let mem = ctx.allocate(4096).unwrap();
    let raw_mem = mem.as_raw();
    assert_eq!(mem.len(), 4096);
    assert_eq!(ctx.child_count(), 2);
    drop(mem);
    drop(stream);
    drop(ctx);
    assert_eq!(count(|c| *c == Call::MemFree(raw_mem)), 1);
    assert_eq!(count(|c| *c == Call::StreamDestroy(raw_stream)), 1);
    assert_eq!(count(|c| *c == Call::CtxDestroy(raw_ctx)), 1);
    assert_eq!(
        count(|c| matches!(
            c,
            Call::MemFree(_) | Call::StreamDestroy(_) | Call::CtxDestroy(_)
        )),
        3
    );
    assert_eq!(
        calls()[..3],
        [Call::Init, Call::DeviceGet(0), Call::CtxCreate(raw_ctx)]
    );
    assert_balanced();
}

#[test]
fn fake_driver_children_keep_the_context_alive() {
    let api = fake_driver();
    let ctx = CudaContext::create(&api, 0).unwrap();
    let raw_ctx = ctx.as_raw() as usize;
    let mem = ctx.allocate(16).unwrap();
    let stream = ctx.create_stream().unwrap();
    drop(ctx);
    assert_eq!(
        count(|c| matches!(c, Call::CtxDestroy(_))),
        0,
        "context destroyed under its children"
    );
    // The children still work: they push the live context.
    stream.synchronize().unwrap();
    assert_eq!(calls().iter().rev().nth(2), Some(&Call::Push(raw_ctx)));
    drop(stream);
    assert_eq!(count(|c| matches!(c, Call::CtxDestroy(_))), 0);
    drop(mem);
    assert_eq!(calls().last(), Some(&Call::CtxDestroy(raw_ctx)));
    assert_eq!(count(|c| matches!(c, Call::CtxDestroy(_))), 1);
    assert_balanced();
}

#[test]
fn fake_driver_release_order_puts_children_before_the_context() {
    // Every drop order of (context, stream, allocation): the context goes last.
    let orders: [[usize; 3]; 6] = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    for order in orders {
        let api = fake_driver();
        let ctx = CudaContext::create(&api, 0).unwrap();
        let stream = ctx.create_stream().unwrap();
        let mem = ctx.allocate(8).unwrap();
        let mut slots: [Option<Box<dyn std::any::Any>>; 3] = [
            Some(Box::new(ctx)),
            Some(Box::new(stream)),
            Some(Box::new(mem)),
        ];
        for i in order {
            slots[i] = None;
        }
        let releases: Vec<Call> = calls()
            .into_iter()
            .filter(|c| {
                matches!(
                    c,
                    Call::MemFree(_) | Call::StreamDestroy(_) | Call::CtxDestroy(_)
                )
            })
            .collect();
        assert_eq!(releases.len(), 3, "{order:?}: {releases:?}");
        assert!(
            matches!(releases[2], Call::CtxDestroy(_)),
            "{order:?}: {releases:?}"
        );
        assert_balanced();
    }
}

#[test]
fn fake_driver_close_reports_the_curesult_and_never_releases_twice() {
    let api = fake_driver();
    let ctx = CudaContext::create(&api, 0).unwrap();
    let mem = ctx.allocate(64).unwrap();
    fail("cuMemFree_v2", 1);
    let err = mem.close().unwrap_err();
    assert_eq!(
        err,
        DriverError::Call {
            entry_point: "cuMemFree_v2",
            code: 1
        }
    );
    assert_eq!(err.code(), Some(1));
    assert!(
        err.to_string().contains("CUDA_ERROR_INVALID_VALUE"),
        "{err}"
    );
    assert_eq!(count(|c| matches!(c, Call::MemFree(_))), 1);

    let stream = ctx.create_stream().unwrap();
    fail("cuStreamDestroy_v2", 400);
    drop(stream); // a failing release in Drop is logged, not retried, never a panic
    assert_eq!(count(|c| matches!(c, Call::StreamDestroy(_))), 1);
    heal();
    ctx.close().unwrap();
    drop(api);
    assert_eq!(count(|c| matches!(c, Call::CtxDestroy(_))), 1);
    assert_balanced();
}

#[test]
fn fake_driver_context_close_with_live_children_is_deferred() {
    let api = fake_driver();
    let ctx = CudaContext::create(&api, 0).unwrap();
    let stream = ctx.create_stream().unwrap();
    let err = ctx.close().unwrap_err();
    assert_eq!(err, DriverError::ContextInUse { children: 1 });
    assert_eq!(count(|c| matches!(c, Call::CtxDestroy(_))), 0);
    stream.close().unwrap();
    assert_eq!(count(|c| matches!(c, Call::CtxDestroy(_))), 1);
    assert_eq!(count(|c| matches!(c, Call::StreamDestroy(_))), 1);
}

#[test]
fn fake_driver_errors_map_to_typed_errors_with_their_curesult() {
    let table: [(&'static str, CuResult); 5] = [
        ("cuInit", 100),
        ("cuDeviceGet", 101),
        ("cuCtxCreate_v2", 2),
        ("cuStreamCreate", 2),
        ("cuMemAlloc_v2", 2),
    ];
    for (entry, code) in table {
        let api = fake_driver();
        fail(entry, code);
        let result = CudaContext::create(&api, 0).and_then(|ctx| {
            let s = ctx.create_stream().map(drop);
            let m = ctx.allocate(1 << 40).map(drop);
            s.and(m)
        });
        assert_eq!(
            result.unwrap_err(),
            DriverError::Call {
                entry_point: entry,
                code
            },
            "{entry}"
        );
        // Nothing created is leaked and nothing is released twice.
        let created = count(|c| {
            matches!(
                c,
                Call::CtxCreate(_) | Call::StreamCreate(_) | Call::MemAlloc(..)
            )
        });
        let released = count(|c| {
            matches!(
                c,
                Call::CtxDestroy(_) | Call::StreamDestroy(_) | Call::MemFree(_)
            )
        });
        assert_eq!(created, released, "{entry}: {:?}", calls());
        assert_balanced();
    }
}

#[test]
fn fake_driver_pop_failure_after_create_destroys_the_context_once() {
    let api = fake_driver();
    fail("cuCtxPopCurrent_v2", 201);
    let err = CudaContext::create(&api, 0).unwrap_err();
    assert_eq!(
        err,
        DriverError::Call {
            entry_point: "cuCtxPopCurrent_v2",
            code: 201
        }
    );
    assert_eq!(count(|c| matches!(c, Call::CtxDestroy(_))), 1);
}

#[test]
fn fake_driver_push_failure_still_releases_the_child_once() {
    let api = fake_driver();
    let ctx = CudaContext::create(&api, 0).unwrap();
    let mem = ctx.allocate(32).unwrap();
    fail("cuCtxPushCurrent_v2", 201);
    let err = mem.close().unwrap_err();
    assert_eq!(
        err,
        DriverError::Call {
            entry_point: "cuCtxPushCurrent_v2",
            code: 201
        }
    );
    assert_eq!(
        count(|c| matches!(c, Call::MemFree(_))),
        1,
        "released despite the push error"
    );
    heal();
    drop(ctx);
    assert_eq!(count(|c| matches!(c, Call::CtxDestroy(_))), 1);
}

#[test]
fn fake_driver_null_handles_are_errors_not_resources() {
    let api = fake_driver();
    NULL_HANDLES.with(|n| n.set(true));
    let err = CudaContext::create(&api, 0).unwrap_err();
    assert_eq!(
        err,
        DriverError::NullHandle {
            entry_point: "cuCtxCreate_v2"
        }
    );
    assert_eq!(count(|c| matches!(c, Call::CtxDestroy(_))), 0);
    let err = CudaContext::create(&api, u32::MAX).unwrap_err();
    assert_eq!(err, DriverError::InvalidOrdinal(u32::MAX));
}

#[test]
fn fake_driver_table_has_no_image() {
    let api = fake_driver();
    assert!(api.image().is_none());
    assert!(format!("{api:?}").contains("DriverApi"));
}
