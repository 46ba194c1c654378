//! EagerTensors met before: what the boundary read of each, kept while the tensor lives.
//!
//! A model's weights cross the boundary on every call, and everything the boundary reads of an
//! EagerTensor through the TFE API (dtype, rank, device, sizes, buffer address and size; each a
//! call that takes the handle's locks) is fixed for its life: an EagerTensor owns one handle,
//! and a local handle's tensor never changes in a synchronous context. So this thread keeps the
//! answers for the last few tensors it converted, and a tensor met again is checked against
//! them instead of asking TensorFlow again.
//!
//! An entry is found by the tensor's address and trusted only while a weak reference to the
//! tensor still returns that same object (an address reused by a new object never matches: the
//! old object's weak reference is dead), the tensor still has the same handle, and the
//! conversion runs in the same eager context the entry was made in. Entries hold no strong
//! reference: the cache never keeps a tensor (or a context) alive.

use super::eager::{Context, Facts, HostView};
use super::loader::TfeTensorHandle;
use pyo3::prelude::*;
use pyo3::types::PyWeakrefReference;
use std::cell::RefCell;
use std::rc::{Rc, Weak};

/// How many tensors a thread remembers (a model's weights and its last inputs).
const SLOTS: usize = 32;

/// What the boundary read of one tensor.
#[derive(Clone)]
pub(crate) struct Known {
    /// Dtype, rank, device.
    pub facts: Facts,
    /// Sizes of a rank-1 or rank-2 tensor.
    pub dims: [usize; 2],
    /// The buffer, for a local float32 rank-1 or rank-2 tensor.
    pub view: Option<HostView>,
}

struct Entry {
    addr: usize,
    weak: Py<PyWeakrefReference>,
    handle: *mut TfeTensorHandle,
    context: Weak<Context>,
    known: Known,
}

#[derive(Default)]
struct Slots {
    entries: Vec<Entry>,
    /// The entry the next new tensor replaces once every slot is taken.
    next: usize,
}

thread_local! {
    static SLOTS_OF_THREAD: RefCell<Slots> = RefCell::new(Slots::default());
}

/// What was read of `obj` (whose handle is `handle`) when it last crossed in `context`, if it
/// did and is the same live tensor.
pub(crate) fn recall(
    obj: &Bound<'_, PyAny>,
    handle: *mut TfeTensorHandle,
    context: &Rc<Context>,
) -> Option<Known> {
    let addr = obj.as_ptr() as usize;
    SLOTS_OF_THREAD
        .try_with(|s| {
            let slots = s.try_borrow().ok()?;
            let e = slots.entries.iter().find(|e| e.addr == addr)?;
            let alive = e.weak.bind(obj.py()).upgrade().is_some_and(|o| o.is(obj));
            (alive && e.handle == handle && std::ptr::eq(e.context.as_ptr(), Rc::as_ptr(context)))
                .then(|| e.known.clone())
        })
        .ok()
        .flatten()
}

/// Remember what was read of `obj` in `context` (nothing is remembered for an object that
/// takes no weak reference).
pub(crate) fn remember(
    obj: &Bound<'_, PyAny>,
    handle: *mut TfeTensorHandle,
    context: &Rc<Context>,
    facts: &Facts,
    dims: [usize; 2],
    view: Option<HostView>,
) {
    let Ok(weak) = PyWeakrefReference::new(obj) else {
        // Not weakly referenceable: converted in full every time.
        return;
    };
    let entry = Entry {
        addr: obj.as_ptr() as usize,
        weak: weak.unbind(),
        handle,
        context: Rc::downgrade(context),
        known: Known {
            facts: facts.clone(),
            dims,
            view,
        },
    };
    let _ = SLOTS_OF_THREAD.try_with(|s| {
        let Ok(mut slots) = s.try_borrow_mut() else {
            return;
        };
        // One entry per address: a dead tensor's entry at this address is replaced.
        if let Some(old) = slots.entries.iter_mut().find(|e| e.addr == entry.addr) {
            *old = entry;
        } else if slots.entries.len() < SLOTS {
            slots.entries.push(entry);
        } else {
            let i = slots.next % SLOTS;
            slots.next = (i + 1) % SLOTS;
            if let Some(slot) = slots.entries.get_mut(i) {
                *slot = entry;
            }
        }
    });
}
