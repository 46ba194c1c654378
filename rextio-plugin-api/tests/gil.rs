//! `gil::sole_python_thread` in a process of its own (this file is its own test binary with a
//! single test, so no other test's thread holds a Python thread state meanwhile): true while the
//! calling thread's state is the only one, false while a Python thread exists, true again once
//! it has ended.
#![cfg(feature = "runtime")]

use pyo3::prelude::*;
use pyo3::types::PyDict;
use rextio_plugin_api::runtime::gil::sole_python_thread;

#[test]
fn only_a_lone_python_thread_is_told_it_is_alone() {
    Python::initialize();
    Python::attach(|py| {
        let g = PyDict::new(py);
        let run = |code: &std::ffi::CStr| py.run(code, Some(&g), None).unwrap();
        assert!(
            sole_python_thread(py),
            "only this thread has a Python thread state"
        );
        run(c"import threading\ngo = threading.Event()\nt = threading.Thread(target=go.wait)\nt.start()");
        assert!(!sole_python_thread(py), "a Python thread waits on an event");
        run(c"go.set()\nt.join()");
        assert!(sole_python_thread(py), "the thread has ended");
    });
}
