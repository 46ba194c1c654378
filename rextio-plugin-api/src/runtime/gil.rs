//! Whether releasing the GIL can let anything else run.

use pyo3::ffi;
use pyo3::Python;

/// Whether the calling thread's state is the only Python thread state of the process's only
/// interpreter: no other thread could take the GIL if this one released it now, so a native
/// call doing a little work keeps it (releasing and taking back an uncontended GIL costs about
/// 0.1 µs, a few percent of a batch-1 call).
///
/// A thread that registers meanwhile (one started from C asking for the GIL) waits for the
/// call, as it would for any Python code; backends bound that wait by releasing the GIL for
/// larger calls anyway.
///
/// Reads only fields of this thread's own state and of its interpreter (both live while this
/// thread holds the GIL), never the state of another thread: the lists may change under
/// CPython's own lock while they are read, and only whether a neighbour exists is asked.
pub fn sole_python_thread(_py: Python<'_>) -> bool {
    // SAFETY: the GIL is held (the token), so this thread has a current thread state.
    unsafe {
        let ts = ffi::PyThreadState_Get();
        if ts.is_null() {
            return false;
        }
        let interp = ffi::PyThreadState_GetInterpreter(ts);
        !interp.is_null()
            && ffi::PyInterpreterState_Head() == interp
            && ffi::PyInterpreterState_Next(interp).is_null()
            && ffi::PyInterpreterState_ThreadHead(interp) == ts
            && ffi::PyThreadState_Next(ts).is_null()
    }
}
