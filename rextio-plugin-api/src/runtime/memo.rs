//! The state memo of a compiled module method: the facts its last full read of the instance
//! depended on, and the objects it converted, so that the next call on an unchanged model checks
//! the facts and converts the same objects again instead of walking the module tree.
//!
//! A full read (the generated `__rx_read_<n>`) looks attributes up in dictionaries, reads
//! instance dictionaries and exact classes, and converts the values it finds (tensors through the
//! plugin's extractor). While a [`StateMemo::read`] records, the helpers of
//! [`super::modules`] note each of those observations here:
//!
//! - a dictionary's version tag, the first time the read looks into it (CPython 3.11 and 3.12
//!   give every dictionary a tag that is new at its creation and at every change, so an equal
//!   tag means the same entries in the same order);
//! - the instance dictionary an object has, and the exact class it has;
//! - the objects the read converted, in order, and the lengths of the containers it walked.
//!
//! The next call checks the facts in recording order and stops at the first that no longer
//! holds. Every fact is about an object an earlier fact proves alive: the receiver, a static
//! root, or a value of a dictionary whose tag is unchanged (the recording refuses to keep a fact
//! about anything else). When all hold, every attribute the read would find is the one it found
//! last time, so only the conversions run again ([`Values`], the generated `__rx_fast_<n>`):
//! tensor metadata, dtypes, devices and grad state can change in place without any dictionary
//! changing, and the plugin's extractor and admission check see them at every call.
//!
//! Where the plugin can stamp what its conversions depend on ([`Stamp`]: for a tensor its
//! storage, shape, dtype, device and grad state), the state the conversions gave is kept too,
//! per thread: a call whose facts hold and whose values all carry the stamps they had then
//! gets a copy of that state without converting anything. Reads that check something at every
//! call (a method dispatch, [`record_dispatch`]) always convert.
//!
//! A read that ran Python code whose answer a tag does not pin (`bool()` of an arbitrary object,
//! `==` on something other than a builtin scalar), looked into a dictionary it could not prove
//! alive, or ran on an interpreter without trustworthy tags (3.13 and later) is not kept: the
//! next call reads everything again, as it would without a memo.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// One fact a full read depended on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fact {
    /// The object the method was called on.
    Receiver(usize),
    /// A dictionary's version tag.
    Dict { dict: usize, tag: u64 },
    /// The instance dictionary of an object.
    InstanceDict { obj: usize, dict: usize },
    /// The exact class of an object.
    Class { obj: usize, class: usize },
    /// A class's version tag (CPython's method cache key: new whenever the class, or a class in
    /// its method resolution order, changes an attribute or its bases), which pins what a lookup
    /// through the class finds.
    TypeVersion { class: usize, tag: u32 },
}

/// What the conversions of a read consume, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    /// An object the read converted.
    Value(usize),
    /// The number of elements of a container the read walked.
    Count(usize),
}

/// Hashes an address (the recording's sets are keyed by object addresses only).
#[derive(Default)]
struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(29);
    }
}

type AddrBuild = BuildHasherDefault<AddrHasher>;

/// A full read being recorded on this thread.
struct Recording {
    facts: Vec<Fact>,
    slots: Vec<Slot>,
    /// Objects an earlier fact proves alive.
    alive: HashSet<usize, AddrBuild>,
    /// Dictionaries with a `Fact::Dict` already, and the tag it holds.
    tags: HashMap<usize, u64, AddrBuild>,
    /// Whether every observation could be kept.
    keep: bool,
    /// Whether the conversions check something at every call (a method dispatch).
    recheck: bool,
}

impl Recording {
    fn new(receiver: usize) -> Self {
        let mut alive = HashSet::default();
        alive.insert(receiver);
        Self {
            facts: vec![Fact::Receiver(receiver)],
            slots: Vec::new(),
            alive,
            tags: HashMap::default(),
            keep: true,
            recheck: false,
        }
    }

    fn dict(&mut self, dict: usize, tag: u64) {
        if tag == 0 || !self.alive.contains(&dict) {
            self.keep = false;
            return;
        }
        match self.tags.get(&dict) {
            Some(t) if *t == tag => {}
            // The dictionary changed during the read itself.
            Some(_) => self.keep = false,
            None => {
                self.tags.insert(dict, tag);
                self.facts.push(Fact::Dict { dict, tag });
            }
        }
    }
}

thread_local! {
    /// The recording of the `StateMemo::read` running a full read on this thread, or null.
    static RECORDING: Cell<*mut Recording> = const { Cell::new(std::ptr::null_mut()) };
}

/// A thread-local pointer set for a scope: the previous value comes back on drop (unwinding
/// too). The memo's recording and the lookup tape's replay are both made active this way.
pub(crate) struct Scoped<T: 'static> {
    key: &'static std::thread::LocalKey<Cell<*mut T>>,
    prev: *mut T,
}

impl<T: 'static> Scoped<T> {
    pub(crate) fn set(key: &'static std::thread::LocalKey<Cell<*mut T>>, p: *mut T) -> Self {
        Self {
            key,
            prev: key.with(|c| c.replace(p)),
        }
    }
}

impl<T: 'static> Drop for Scoped<T> {
    fn drop(&mut self) {
        self.key.with(|c| c.set(self.prev));
    }
}

/// Run `f` on this thread's active recording, if any.
fn with_recording(f: impl FnOnce(&mut Recording)) {
    let r = RECORDING.with(Cell::get);
    if r.is_null() {
        return;
    }
    // SAFETY: `r` points at the `Recording` on the stack of the `StateMemo::read` running on
    // this thread, which clears the pointer (through `Scoped`) before it returns; no other
    // reference to it is live while `f` runs, and `f` runs no Python code.
    f(unsafe { &mut *r });
}

/// A dictionary's version tag (CPython 3.11 and 3.12: new at every creation and change of any
/// dictionary), 0 where the interpreter keeps none that can be trusted (see [`tags_trusted`]).
pub(crate) fn dict_tag(dict: &Bound<'_, PyDict>) -> u64 {
    if !tags_trusted(dict.py()) {
        return 0;
    }
    // SAFETY: a live dict.
    unsafe { raw_tag(dict.as_ptr()) }
}

/// The tag of the dictionary at `dict`.
///
/// # Safety
/// `dict` is a live dict (or subclass) and [`tags_trusted`] holds.
unsafe fn raw_tag(dict: *mut pyo3::ffi::PyObject) -> u64 {
    // The tag follows `ma_used` in `PyDictObject` on every CPython that has one (3.11, 3.12;
    // the field is named by pyo3-ffi only on some of them, so it is found by offset).
    let at = std::mem::offset_of!(pyo3::ffi::PyDictObject, ma_used)
        + std::mem::size_of::<pyo3::ffi::Py_ssize_t>();
    // SAFETY: per the contract, the object starts with a `PyDictObject` whose 64-bit tag sits
    // at `at`.
    unsafe { dict.cast::<u8>().add(at).cast::<u64>().read_unaligned() }
}

extern "C" {
    /// CPython's own slot lookup for an object's instance dictionary (3.11 and 3.12 export it;
    /// pyo3-ffi leaves private functions out). A dictionary kept in the object's values is made
    /// into a real one first, as `PyObject_GenericGetDict` does; NULL when the type has none.
    fn _PyObject_GetDictPtr(obj: *mut pyo3::ffi::PyObject) -> *mut *mut pyo3::ffi::PyObject;
}

/// The address of `obj`'s instance dictionary, 0 when it has none: what
/// [`super::modules::instance_dict`] finds, without a new reference or a type check (a fact
/// compares it with the address a full read recorded).
///
/// # Safety
/// `obj` is a live object and the GIL is held.
unsafe fn instance_dict_address(obj: *mut pyo3::ffi::PyObject) -> usize {
    // SAFETY: per the contract.
    let slot = unsafe { _PyObject_GetDictPtr(obj) };
    if slot.is_null() {
        0
    } else {
        // SAFETY: a non-null slot of a live object holds its dictionary or NULL.
        (unsafe { *slot }) as usize
    }
}

/// Whether this interpreter's dictionary version tags change on every modification and are
/// new for every dictionary: CPython 3.11 and 3.12. 3.13 changed how instance dictionaries
/// share storage with their objects and 3.14 dropped the tag, so there nothing is replayed.
pub(crate) fn tags_trusted(py: Python<'_>) -> bool {
    static TRUSTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TRUSTED.get_or_init(|| {
        let v = py.version_info();
        ((3, 11)..(3, 13)).contains(&(v.major, v.minor))
    })
}

/// A lookup in `dict` (whose tag is `tag`) found `value` (the address; 0 when absent).
pub(crate) fn note_lookup(dict: &Bound<'_, PyDict>, tag: u64, value: usize) {
    with_recording(|r| {
        r.dict(dict.as_ptr() as usize, tag);
        if value != 0 {
            r.alive.insert(value);
        }
    });
}

/// The read depends on every entry of `dict` (its size, its values in order): `ordered` when
/// the order matters, which a tag pins only for an exact `dict` (an `OrderedDict` can be
/// reordered without a change of tag).
pub(crate) fn note_contents(dict: &Bound<'_, PyDict>, ordered: bool) {
    with_recording(|r| {
        if ordered && !dict.is_exact_instance_of::<PyDict>() {
            r.keep = false;
            return;
        }
        r.dict(dict.as_ptr() as usize, dict_tag(dict));
        if ordered {
            for (_, v) in dict.iter() {
                r.alive.insert(v.as_ptr() as usize);
            }
        }
    });
}

/// `obj`'s instance dictionary is `dict`.
pub(crate) fn note_instance_dict(obj: &Bound<'_, PyAny>, dict: &Bound<'_, PyDict>) {
    with_recording(|r| {
        let o = obj.as_ptr() as usize;
        if !r.alive.contains(&o) {
            r.keep = false;
            return;
        }
        let d = dict.as_ptr() as usize;
        r.facts.push(Fact::InstanceDict { obj: o, dict: d });
        r.alive.insert(d);
    });
}

/// The read depended on `obj`'s exact class.
pub(crate) fn note_class(obj: &Bound<'_, PyAny>) {
    with_recording(|r| {
        let o = obj.as_ptr() as usize;
        if !r.alive.contains(&o) {
            r.keep = false;
            return;
        }
        r.facts.push(Fact::Class {
            obj: o,
            class: obj.get_type().as_ptr() as usize,
        });
    });
}

/// A lookup of an attribute through `obj`'s class (its method resolution order) found `value`
/// (the address; 0 when absent), with the class's version tag `tag` after the lookup (0 when
/// the interpreter gave it none: not kept). The class is pinned through `obj`, and what the
/// lookup found through the tag (CPython gives a class a new tag whenever it or a base changes
/// an attribute or its bases), so the value stays alive while the facts hold.
pub(crate) fn note_class_lookup(obj: &Bound<'_, PyAny>, tag: u32, value: usize) {
    with_recording(|r| {
        let o = obj.as_ptr() as usize;
        if tag == 0 || !r.alive.contains(&o) {
            r.keep = false;
            return;
        }
        let class = obj.get_type().as_ptr() as usize;
        r.facts.push(Fact::Class { obj: o, class });
        r.facts.push(Fact::TypeVersion { class, tag });
        if value != 0 {
            r.alive.insert(value);
        }
    });
}

/// The read depended on an answer no fact pins (Python code it ran): not kept.
pub(crate) fn note_opaque() {
    with_recording(|r| r.keep = false);
}

/// The read compared `v` with a literal: kept only for a builtin scalar of exactly its type
/// (`bool`, `int`, `float`, `str`, `None`), whose `==` cannot change.
pub(crate) fn note_compared(v: &Bound<'_, PyAny>) {
    with_recording(|r| r.keep &= builtin_scalar(v));
}

/// Whether `v` is `None` or exactly a `bool`, `int`, `float` or `str`: immutable, with an `==`
/// that cannot change.
fn builtin_scalar(v: &Bound<'_, PyAny>) -> bool {
    use pyo3::types::{PyBool, PyFloat, PyInt, PyString};
    v.is_none()
        || v.is_exact_instance_of::<PyBool>()
        || v.is_exact_instance_of::<PyInt>()
        || v.is_exact_instance_of::<PyFloat>()
        || v.is_exact_instance_of::<PyString>()
}

/// `dict` lives as long as the process (it is held by a `static`): facts about it need no
/// earlier fact. Called by a plugin's checks before they look into such a dictionary (the
/// namespace of the module holding global hooks, say).
pub fn static_root(py: Python<'_>, dict: &'static Py<PyDict>) {
    let d = dict.bind(py).as_ptr() as usize;
    with_recording(|r| {
        r.alive.insert(d);
    });
}

/// The full read is about to convert `v` (generated readers call this before each conversion;
/// the next call's [`Values::value`] gives the same object back).
pub fn record_value(v: &Bound<'_, PyAny>) {
    with_recording(|r| {
        let p = v.as_ptr() as usize;
        if !r.alive.contains(&p) {
            r.keep = false;
            return;
        }
        r.slots.push(Slot::Value(p));
    });
}

/// The full read is about to check `v` with a check that runs at every call, a method
/// dispatch (the next call's [`Values::value`] gives it back, and its conversions always run).
pub fn record_dispatch(v: &Bound<'_, PyAny>) {
    record_value(v);
    with_recording(|r| r.recheck = true);
}

/// The full read walks a container of `n` elements ([`Values::count`] gives `n` back).
pub fn record_count(n: usize) {
    with_recording(|r| r.slots.push(Slot::Count(n)));
}

/// What a kept read recorded.
struct Kept {
    /// Unique in the process: names the states kept for this read ([`STATES`]).
    id: u64,
    facts: Vec<Fact>,
    slots: Vec<Slot>,
    recheck: bool,
}

/// What a plugin's conversion of a value (and its admission check) depends on, as bits: a
/// conversion of the same object gives the same result whenever it has the same stamp.
///
/// `repr(transparent)`: a slice of stamps is its words in order, so a plugin may fill one from C.
#[derive(Clone, Copy, Debug, Default, Eq)]
#[repr(transparent)]
pub struct Stamp(pub [u64; 8]);

impl PartialEq for Stamp {
    /// Word by word without branches (a derived comparison of the array calls `memcmp`, which
    /// costs more than the stamp it checks).
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.0.iter().zip(&other.0).fold(0, |d, (a, b)| d | (a ^ b)) == 0
    }
}

impl Stamp {
    /// Whether this is an [`immutable_stamp`] (its first word is 0; a plugin's own stamps start
    /// with a nonzero word): the same object has it for ever (a builtin immutable value cannot
    /// change, nor be given another class), so checking the object again can be skipped.
    pub fn is_immutable(&self) -> bool {
        self.0[0] == 0
    }
}

/// What a [`StampFn`] is asked for.
pub enum Stamping<'s> {
    /// The values' stamps, in order, into the cleared vector.
    Make(&'s mut Vec<Stamp>),
    /// Whether every value (the same objects, in the same order) still has the stamp that
    /// `Make` gave it, as an earlier call found them: a kept state's check, made at every call,
    /// which need not write the stamps anywhere.
    Check(&'s [Stamp]),
}

/// A plugin's stamps of the values a kept read converted (one call for all of them, so that
/// what they share is read once): `false` when one has none (the read's state is then not
/// kept), or, checking, when one differs. Called with the GIL held on objects the memo's facts
/// prove alive; it must not run Python code.
pub type StampFn = for<'py> fn(&[Bound<'py, PyAny>], Stamping<'_>) -> bool;

/// The stamp of a value whose conversion depends on nothing but the object itself: `None`,
/// and exact `bool`, `int`, `float` and `str` objects, and exact tuples of them (a kept read
/// found the same object, so it converts the same). `None` for anything else.
pub fn immutable_stamp(v: &Bound<'_, PyAny>) -> Option<Stamp> {
    fn immutable(v: &Bound<'_, PyAny>, depth: u8) -> bool {
        use pyo3::types::PyTuple;
        builtin_scalar(v)
            || (depth < 4
                && v.cast_exact::<PyTuple>()
                    .is_ok_and(|t| t.iter().all(|e| immutable(&e, depth + 1))))
    }
    immutable(v, 0).then(|| Stamp([0, v.get_type().as_ptr() as u64, 0, 0, 0, 0, 0, 0]))
}

/// The ids of kept reads.
static NEXT_KEPT: AtomicU64 = AtomicU64::new(1);

/// How many states one thread keeps (the oldest gives way).
const STATES_PER_THREAD: usize = 16;

/// A state a kept read's conversions gave on this thread, and the stamps of its values then.
struct KeptState {
    kept: u64,
    /// `None` when a value has no stamp: the read's state is never kept.
    stamps: Option<Vec<Stamp>>,
    /// Never dropped at thread exit (only when replaced): a plugin's handles may need its
    /// library, whose own thread-local state may be gone by then.
    state: ManuallyDrop<Box<dyn Any>>,
}

/// This thread's kept states, and the slot the next one takes when full.
struct States {
    kept: Vec<KeptState>,
    next: usize,
}

thread_local! {
    /// Per thread, so that a state is only ever copied and dropped on the thread that made it
    /// (a plugin's handles need not be `Send`).
    static STATES: RefCell<States> = const {
        RefCell::new(States {
            kept: Vec::new(),
            next: 0,
        })
    };
}

/// The objects of `k`'s value slots, borrowed for `py` (each kept alive for the call by `keep`).
///
/// # Safety
/// `k`'s facts hold (they prove every recorded value alive).
unsafe fn push_values<'py>(py: Python<'py>, k: &Kept, keep: &mut Vec<Bound<'py, PyAny>>) {
    for s in &k.slots {
        if let Slot::Value(p) = s {
            // SAFETY: per the contract.
            keep.push(unsafe { Bound::from_borrowed_ptr(py, *p as *mut pyo3::ffi::PyObject) });
        }
    }
}

/// A copy of the state kept for `k` on this thread when every value still has its stamp; the
/// values are pushed onto `keep` either way.
///
/// # Safety
/// `k`'s facts hold.
unsafe fn kept_state<'py, T: Clone + 'static>(
    py: Python<'py>,
    k: &Kept,
    stamp: StampFn,
    keep: &mut Vec<Bound<'py, PyAny>>,
) -> Option<T> {
    let start = keep.len();
    // SAFETY: per the contract.
    unsafe { push_values(py, k, keep) };
    STATES.with(|states| {
        let states = states.try_borrow().ok()?;
        let e = states.kept.iter().find(|e| e.kept == k.id)?;
        let stamps = e.stamps.as_ref()?;
        if stamps.len() != keep.len() - start || !stamp(&keep[start..], Stamping::Check(stamps)) {
            return None;
        }
        e.state.downcast_ref::<T>().cloned()
    })
}

/// Keep `state`, the state `k`'s conversions just gave on this thread, with its values' stamps.
///
/// # Safety
/// `k`'s facts hold.
unsafe fn keep_state<T: Clone + 'static>(py: Python<'_>, k: &Kept, stamp: StampFn, state: &T) {
    let mut values = Vec::with_capacity(k.slots.len());
    // SAFETY: per the contract.
    unsafe { push_values(py, k, &mut values) };
    let mut stamps = Vec::with_capacity(values.len());
    let stamps = stamp(&values, Stamping::Make(&mut stamps)).then_some(stamps);
    let entry = KeptState {
        kept: k.id,
        stamps,
        state: ManuallyDrop::new(Box::new(state.clone())),
    };
    STATES.with(|states| {
        let Ok(mut states) = states.try_borrow_mut() else {
            return;
        };
        let at = match states.kept.iter().position(|e| e.kept == k.id) {
            Some(i) => i,
            None if states.kept.len() < STATES_PER_THREAD => {
                states.kept.push(entry);
                return;
            }
            None => {
                let i = states.next;
                states.next = (i + 1) % STATES_PER_THREAD;
                i
            }
        };
        let old = std::mem::replace(&mut states.kept[at], entry);
        // Dropped after the borrow ends: a state's drop runs no Python code, but keep it
        // outside the cell all the same.
        drop(states);
        drop(ManuallyDrop::into_inner(old.state));
    });
}

impl Kept {
    /// Whether every fact still holds for a call on `receiver`, checked in recording order.
    fn holds(&self, receiver: &Bound<'_, PyAny>) -> bool {
        for fact in &self.facts {
            let ok = match *fact {
                Fact::Receiver(p) => receiver.as_ptr() as usize == p,
                // SAFETY (this arm and the next two): the recording kept a fact only about an
                // object that an earlier fact proved alive (the receiver, a static root, or a
                // value of a dictionary whose tag it recorded, or an instance dictionary it
                // recorded); every earlier fact has just been found to hold, so the object is
                // still there. Tags were trusted when the facts were recorded.
                Fact::Dict { dict, tag } => (unsafe { raw_tag(dict as *mut _) }) == tag,
                Fact::InstanceDict { obj, dict } => {
                    (unsafe { instance_dict_address(obj as *mut pyo3::ffi::PyObject) }) == dict
                }
                Fact::Class { obj, class } => {
                    (unsafe { pyo3::ffi::Py_TYPE(obj as *mut pyo3::ffi::PyObject) }) as usize
                        == class
                }
                // The class is alive: the `Class` fact before this one found it as an object's.
                Fact::TypeVersion { class, tag } => {
                    (unsafe { (*(class as *mut pyo3::ffi::PyTypeObject)).tp_version_tag }) == tag
                }
            };
            if !ok {
                return false;
            }
        }
        true
    }
}

/// How many receivers one method keeps a memo for (a process calling a few instances of one
/// class in turn does not record at every call).
const WAYS: usize = 4;

struct Ways {
    kept: [Option<Kept>; WAYS],
    /// The way the next new recording replaces.
    next: usize,
}

/// The memo of one compiled method (a `static` in the generated crate).
pub struct StateMemo {
    ways: Mutex<Ways>,
}

/// What a read gives: the state, or why the original must run.
pub type ReadResult<T> = PyResult<Result<T, String>>;

impl StateMemo {
    /// An empty memo.
    pub const fn new() -> Self {
        Self {
            ways: Mutex::new(Ways {
                kept: [None, None, None, None],
                next: 0,
            }),
        }
    }

    /// The state of a call on `receiver`: `fast` over the recorded objects when the facts of a
    /// kept read of this receiver all hold, otherwise `full`, recorded (and kept when it gives a
    /// state and every observation could be kept). When the memo is in use (a read re-entered
    /// through Python code it ran, or another thread), or the interpreter's dictionary tags
    /// cannot be trusted, `full` runs unrecorded.
    ///
    /// With `stamp`, the state a kept read's conversions gave is kept on this thread with the
    /// stamps of its values, and a call whose facts hold and whose values have the same stamps
    /// gets a copy of it instead of running `fast` (not for reads with a dispatch check).
    pub fn read<'py, T: Clone + 'static>(
        &self,
        receiver: &Bound<'py, PyAny>,
        keep: &mut Vec<Bound<'py, PyAny>>,
        stamp: Option<StampFn>,
        fast: impl FnOnce(&mut Values<'py, '_>, &mut Vec<Bound<'py, PyAny>>) -> ReadResult<T>,
        full: impl FnOnce(&mut Vec<Bound<'py, PyAny>>) -> ReadResult<T>,
    ) -> ReadResult<T> {
        let py = receiver.py();
        let locked = if tags_trusted(py) {
            self.ways.try_lock().ok()
        } else {
            None
        };
        let Some(mut ways) = locked else {
            let _off = Scoped::set(&RECORDING, std::ptr::null_mut());
            return full(keep);
        };
        let found = ways.kept.iter().position(|k| {
            k.as_ref().is_some_and(|k| {
                k.facts.first() == Some(&Fact::Receiver(receiver.as_ptr() as usize))
            })
        });
        if let Some(i) = found {
            if let Some(k) = ways.kept[i].as_ref().filter(|k| k.holds(receiver)) {
                // Each recorded value is kept alive for the call: one allocation, not a growing
                // vector's several.
                keep.reserve(k.slots.len());
                let stamp = stamp.filter(|_| !k.recheck);
                if let Some(stamp) = stamp {
                    let start = keep.len();
                    // SAFETY: `k`'s facts hold.
                    if let Some(state) = unsafe { kept_state::<T>(py, k, stamp, keep) } {
                        return Ok(Ok(state));
                    }
                    keep.truncate(start);
                }
                let mut values = Values {
                    py,
                    slots: &k.slots,
                    at: 0,
                };
                let out = fast(&mut values, keep)?;
                // A conversion that refused stops the read early; a state must use every value.
                if out.is_ok() && values.at != k.slots.len() {
                    return Err(out_of_step());
                }
                if let (Ok(state), Some(stamp)) = (&out, stamp) {
                    // SAFETY: `k`'s facts hold.
                    unsafe { keep_state(py, k, stamp, state) };
                }
                return Ok(out);
            }
            ways.kept[i] = None;
        }
        let mut rec = Recording::new(receiver.as_ptr() as usize);
        let out = {
            let _on = Scoped::set(&RECORDING, &mut rec);
            full(keep)
        };
        if rec.keep && matches!(out, Ok(Ok(_))) {
            let i = found.unwrap_or_else(|| {
                let i = ways.next;
                ways.next = (i + 1) % WAYS;
                i
            });
            let k = Kept {
                id: NEXT_KEPT.fetch_add(1, Ordering::Relaxed),
                facts: rec.facts,
                slots: rec.slots,
                recheck: rec.recheck,
            };
            if let (Ok(Ok(state)), Some(stamp)) = (&out, stamp.filter(|_| !k.recheck)) {
                if k.holds(receiver) {
                    // SAFETY: `k`'s facts hold.
                    unsafe { keep_state(py, &k, stamp, state) };
                }
            }
            ways.kept[i] = Some(k);
        }
        out
    }
}

impl Default for StateMemo {
    fn default() -> Self {
        Self::new()
    }
}

fn out_of_step() -> PyErr {
    PyRuntimeError::new_err(
        "rextio: internal error: a compiled method's state memo is out of step with its reader",
    )
}

/// The objects a kept read converted, given back in order to the conversions of the next call.
pub struct Values<'py, 'm> {
    py: Python<'py>,
    slots: &'m [Slot],
    at: usize,
}

impl<'py> Values<'py, '_> {
    /// The next object the read converted.
    pub fn value(&mut self) -> PyResult<Bound<'py, PyAny>> {
        match self.slots.get(self.at) {
            Some(Slot::Value(p)) => {
                self.at += 1;
                // SAFETY: the facts that held before this read prove the object is still a
                // value of the dictionary it was found in (see `Kept::holds`).
                Ok(unsafe { Bound::from_borrowed_ptr(self.py, *p as *mut pyo3::ffi::PyObject) })
            }
            _ => Err(out_of_step()),
        }
    }

    /// The number of elements of the next container the read walked.
    pub fn count(&mut self) -> PyResult<usize> {
        match self.slots.get(self.at) {
            Some(Slot::Count(n)) => {
                self.at += 1;
                Ok(*n)
            }
            _ => Err(out_of_step()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::modules::{as_float, non_empty_entry, ClassRef, ModView};
    use super::*;
    use pyo3::types::{PyModule, PyString};
    use std::ffi::CString;

    const SOURCE: &str = "
class Node:
    pass

class Other:
    pass

def tree(w):
    root = Node()
    root.child = Node()
    root.child.w = w
    root.hooks = {}
    return root
";

    /// The test module, made once (`NODE` keeps the class it imported first).
    fn module(py: Python<'_>) -> Bound<'_, PyModule> {
        static MODULE: pyo3::sync::PyOnceLock<Py<PyModule>> = pyo3::sync::PyOnceLock::new();
        MODULE
            .get_or_init(py, || {
                let code = CString::new(SOURCE).unwrap();
                PyModule::from_code(py, &code, c"rextio_memo_test.py", c"rextio_memo_test")
                    .unwrap()
                    .unbind()
            })
            .bind(py)
            .clone()
    }

    static NODE: ClassRef = ClassRef::new("rextio_memo_test.Node");

    /// A reader of `root.child.w` (a float) through an exact `Node` child, that also checks
    /// that `root.hooks` is empty, as generated readers do.
    fn read_w<'py>(root: &Bound<'py, PyAny>) -> ReadResult<f64> {
        Ok(find_w(root)?.and_then(|w| {
            record_value(&w);
            as_float(&w).ok_or_else(|| "not a float".to_owned())
        }))
    }

    /// `root.child.w` as `read_w` finds it, not yet recorded.
    fn find_w<'py>(root: &Bound<'py, PyAny>) -> ReadResult<Bound<'py, PyAny>> {
        let py = root.py();
        let Some(view) = ModView::of(root, &[])? else {
            return Ok(Err("no dict".into()));
        };
        if non_empty_entry(view.dict(), &PyString::new(py, "hooks"))? {
            return Ok(Err("hooks".into()));
        }
        let Some(child) = view.get(&PyString::new(py, "child"), 0)? else {
            return Ok(Err("no child".into()));
        };
        if !NODE.is_exact(&child)? {
            return Ok(Err("class".into()));
        }
        let Some(cview) = ModView::of(&child, &[])? else {
            return Ok(Err("no child dict".into()));
        };
        cview
            .get(&PyString::new(py, "w"), 0)
            .map(|w| w.ok_or_else(|| "no w".into()))
    }

    /// One call through `memo`: the value, and whether the full read ran.
    fn call(memo: &StateMemo, root: &Bound<'_, PyAny>) -> (Result<f64, String>, bool) {
        let full = Cell::new(false);
        let mut keep = Vec::new();
        let out = memo
            .read(
                root,
                &mut keep,
                None,
                |vals, _| Ok(as_float(&vals.value()?).ok_or_else(|| "not a float".to_owned())),
                |_| {
                    full.set(true);
                    read_w(root)
                },
            )
            .unwrap();
        (out, full.get())
    }

    /// A stamp of a list (what `first_float` converts): its length and the address of its
    /// first element, so that replacing the element in place changes it.
    fn list_stamp(v: &Bound<'_, PyAny>) -> Option<Stamp> {
        let l = v.cast::<pyo3::types::PyList>().ok()?;
        let first = l.get_item(0).ok()?;
        Some(Stamp([
            1,
            l.len() as u64,
            first.as_ptr() as u64,
            0,
            0,
            0,
            0,
            0,
        ]))
    }

    /// A [`StampFn`] from `make`, which writes the stamps: checking compares fresh ones.
    fn stamping(
        values: &[Bound<'_, PyAny>],
        what: Stamping<'_>,
        make: fn(&[Bound<'_, PyAny>], &mut Vec<Stamp>) -> bool,
    ) -> bool {
        match what {
            Stamping::Make(out) => make(values, out),
            Stamping::Check(expect) => {
                let mut now = Vec::new();
                make(values, &mut now) && now == expect
            }
        }
    }

    fn make_list_stamps(values: &[Bound<'_, PyAny>], out: &mut Vec<Stamp>) -> bool {
        out.clear();
        values
            .iter()
            .all(|v| list_stamp(v).map(|s| out.push(s)).is_some())
    }

    fn list_stamps(values: &[Bound<'_, PyAny>], what: Stamping<'_>) -> bool {
        stamping(values, what, make_list_stamps)
    }

    /// Stamps only lists of one element.
    fn single_stamps(values: &[Bound<'_, PyAny>], what: Stamping<'_>) -> bool {
        stamping(values, what, |values, out| {
            make_list_stamps(values, out) && out.iter().all(|s| s.0[1] == 1)
        })
    }

    /// `float(w[0])` for the list `w`.
    fn first_float(w: &Bound<'_, PyAny>) -> Result<f64, String> {
        w.get_item(0)
            .ok()
            .and_then(|v| as_float(&v))
            .ok_or_else(|| "not a float".to_owned())
    }

    /// One call through `memo` with stamps: the value, whether the full read ran, and whether
    /// the conversions ran (`fast` or `full`), with `dispatch` recording the value as a
    /// dispatch check's object.
    fn call_stamped(
        memo: &StateMemo,
        root: &Bound<'_, PyAny>,
        stamp: StampFn,
        dispatch: bool,
    ) -> (Result<f64, String>, bool, bool) {
        let (full, converted) = (Cell::new(false), Cell::new(false));
        let mut keep = Vec::new();
        let out = memo
            .read(
                root,
                &mut keep,
                Some(stamp),
                |vals, _| {
                    converted.set(true);
                    Ok(first_float(&vals.value()?))
                },
                |_| {
                    full.set(true);
                    converted.set(true);
                    Ok(find_w(root)?.and_then(|w| {
                        if dispatch {
                            record_dispatch(&w);
                        } else {
                            record_value(&w);
                        }
                        first_float(&w)
                    }))
                },
            )
            .unwrap();
        (out, full.get(), converted.get())
    }

    #[test]
    fn a_kept_state_is_used_while_its_values_keep_their_stamps() {
        with_tree(|py, m, _| {
            let w = pyo3::types::PyList::new(py, [1.5]).unwrap();
            let root = m.getattr("tree").unwrap().call1((w.clone(),)).unwrap();
            let memo = StateMemo::new();
            assert_eq!(
                call_stamped(&memo, &root, list_stamps, false),
                (Ok(1.5), true, true)
            );
            // Facts and stamps hold: the kept state, nothing converted.
            assert_eq!(
                call_stamped(&memo, &root, list_stamps, false),
                (Ok(1.5), false, false)
            );
            assert_eq!(
                call_stamped(&memo, &root, list_stamps, false),
                (Ok(1.5), false, false)
            );
            // Changed in place: no dictionary sees it, the stamp does.
            w.set_item(0, 2.5).unwrap();
            assert_eq!(
                call_stamped(&memo, &root, list_stamps, false),
                (Ok(2.5), false, true)
            );
            assert_eq!(
                call_stamped(&memo, &root, list_stamps, false),
                (Ok(2.5), false, false)
            );
            // A value without a stamp: converted at every call.
            w.append(0.0).unwrap();
            let single = single_stamps;
            assert_eq!(
                call_stamped(&memo, &root, single, false),
                (Ok(2.5), false, true)
            );
            assert_eq!(
                call_stamped(&memo, &root, single, false),
                (Ok(2.5), false, true)
            );
            // A refusal is never kept.
            w.set_item(0, "x").unwrap();
            let refused = (Err("not a float".to_owned()), false, true);
            assert_eq!(call_stamped(&memo, &root, list_stamps, false), refused);
            assert_eq!(call_stamped(&memo, &root, list_stamps, false), refused);
        });
    }

    #[test]
    fn a_read_with_a_dispatch_check_converts_at_every_call() {
        with_tree(|py, m, _| {
            let w = pyo3::types::PyList::new(py, [1.5]).unwrap();
            let root = m.getattr("tree").unwrap().call1((w,)).unwrap();
            let memo = StateMemo::new();
            assert_eq!(
                call_stamped(&memo, &root, list_stamps, true),
                (Ok(1.5), true, true)
            );
            assert_eq!(
                call_stamped(&memo, &root, list_stamps, true),
                (Ok(1.5), false, true)
            );
            assert_eq!(
                call_stamped(&memo, &root, list_stamps, true),
                (Ok(1.5), false, true)
            );
        });
    }

    #[test]
    fn builtin_values_are_stamped_by_identity_alone() {
        Python::initialize();
        Python::attach(|py| {
            let code = c"(1, 2.5, True, None, 'a', (3, (4,)))";
            let t = py.eval(code, None, None).unwrap();
            assert!(immutable_stamp(&t).is_some());
            for code in [c"[1]", c"(1, [2])", c"{}", c"object()"] {
                let v = py.eval(code, None, None).unwrap();
                assert_eq!(immutable_stamp(&v), None, "{code:?}");
            }
            // A subclass of a builtin may hold anything: no stamp.
            let sub = py
                .eval(c"type('F', (float,), {})(1.0)", None, None)
                .unwrap();
            assert_eq!(immutable_stamp(&sub), None);
        });
    }

    fn with_tree(test: impl FnOnce(Python<'_>, &Bound<'_, PyModule>, Bound<'_, PyAny>)) {
        Python::initialize();
        Python::attach(|py| {
            let m = module(py);
            let root = m.getattr("tree").unwrap().call1((1.5,)).unwrap();
            if !tags_trusted(py) {
                // Where tags cannot be trusted the memo keeps nothing: every call reads.
                let memo = StateMemo::new();
                assert_eq!(call(&memo, &root), (Ok(1.5), true));
                assert_eq!(call(&memo, &root), (Ok(1.5), true));
                return;
            }
            test(py, &m, root);
        });
    }

    #[test]
    fn a_kept_read_answers_until_a_dictionary_it_read_changes() {
        with_tree(|py, _, root| {
            let memo = StateMemo::new();
            assert_eq!(call(&memo, &root), (Ok(1.5), true));
            assert_eq!(call(&memo, &root), (Ok(1.5), false));
            let child = root.getattr("child").unwrap();
            child.setattr("w", 2.5).unwrap();
            assert_eq!(call(&memo, &root), (Ok(2.5), true));
            assert_eq!(call(&memo, &root), (Ok(2.5), false));
            // A hook dictionary filled in place is a change of that dictionary.
            let hooks = root.getattr("hooks").unwrap();
            hooks.set_item(0, py.None()).unwrap();
            assert_eq!(call(&memo, &root), (Err("hooks".into()), true));
            hooks.del_item(0).unwrap();
            assert_eq!(call(&memo, &root), (Ok(2.5), true));
            assert_eq!(call(&memo, &root), (Ok(2.5), false));
        });
    }

    #[test]
    fn a_class_or_an_instance_dictionary_swapped_in_place_is_seen() {
        with_tree(|py, m, root| {
            let memo = StateMemo::new();
            let child = root.getattr("child").unwrap();
            assert_eq!(call(&memo, &root), (Ok(1.5), true));
            child
                .setattr("__class__", m.getattr("Other").unwrap())
                .unwrap();
            assert_eq!(call(&memo, &root), (Err("class".into()), true));
            child
                .setattr("__class__", m.getattr("Node").unwrap())
                .unwrap();
            assert_eq!(call(&memo, &root), (Ok(1.5), true));
            assert_eq!(call(&memo, &root), (Ok(1.5), false));
            let d = PyDict::new(py);
            d.set_item("w", 4.0).unwrap();
            child.setattr("__dict__", d).unwrap();
            assert_eq!(call(&memo, &root), (Ok(4.0), true));
            assert_eq!(call(&memo, &root), (Ok(4.0), false));
        });
    }

    #[test]
    fn each_receiver_has_its_own_kept_read_and_refusals_are_not_kept() {
        with_tree(|_, m, root| {
            let memo = StateMemo::new();
            let tree = m.getattr("tree").unwrap();
            let others: Vec<_> = (0..WAYS)
                .map(|i| tree.call1((f64::from(u8::try_from(i).unwrap()),)).unwrap())
                .collect();
            assert_eq!(call(&memo, &root), (Ok(1.5), true));
            assert_eq!(call(&memo, &others[0]), (Ok(0.0), true));
            assert_eq!(call(&memo, &root), (Ok(1.5), false));
            assert_eq!(call(&memo, &others[0]), (Ok(0.0), false));
            // More receivers than ways: the oldest kept read gives way, answers stay right.
            for (i, o) in others.iter().enumerate() {
                let want = f64::from(u8::try_from(i).unwrap());
                assert_eq!(call(&memo, o).0, Ok(want));
            }
            assert_eq!(call(&memo, &root).0, Ok(1.5));
            // A read that refuses is not kept.
            root.getattr("child").unwrap().setattr("w", "x").unwrap();
            assert_eq!(call(&memo, &root), (Err("not a float".into()), true));
            assert_eq!(call(&memo, &root), (Err("not a float".into()), true));
        });
    }

    #[test]
    fn a_read_that_ran_python_no_tag_pins_is_not_kept() {
        with_tree(|py, _, root| {
            let memo = StateMemo::new();
            // `hooks` as a list: its truth is Python's answer, which no dictionary tag pins.
            root.setattr("hooks", pyo3::types::PyList::empty(py))
                .unwrap();
            assert_eq!(call(&memo, &root), (Ok(1.5), true));
            assert_eq!(call(&memo, &root), (Ok(1.5), true));
            root.getattr("hooks")
                .unwrap()
                .call_method1("append", (1,))
                .unwrap();
            assert_eq!(call(&memo, &root), (Err("hooks".into()), true));
        });
    }
}
