//! Run-time helpers of compiled module methods: reading attributes from the live instance,
//! exact class checks, literal conditions, and the per-method counters that say how often the
//! native body ran and why the original ran instead.

use super::memo::{self, dict_tag, Scoped};
use pyo3::exceptions::PyRuntimeWarning;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString, PyTuple};
use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

extern "C" {
    /// CPython's attribute lookup through a class's method resolution order (3.11 and 3.12
    /// export it; pyo3-ffi leaves private functions out): a borrowed reference or NULL, never
    /// an exception.
    fn _PyType_Lookup(
        t: *mut pyo3::ffi::PyTypeObject,
        name: *mut pyo3::ffi::PyObject,
    ) -> *mut pyo3::ffi::PyObject;
}

/// A class named by its dotted path (`torch.nn.Linear`, `pkg.blocks.Block`), imported on first
/// use and kept.
pub struct ClassRef {
    path: &'static str,
    cell: PyOnceLock<Py<PyAny>>,
}

impl ClassRef {
    /// A reference to the class at `path`.
    pub const fn new(path: &'static str) -> Self {
        Self {
            path,
            cell: PyOnceLock::new(),
        }
    }

    fn get<'py>(&self, py: Python<'py>) -> PyResult<&Bound<'py, PyAny>> {
        let obj = self.cell.get_or_try_init(py, || {
            let (module, name) = self
                .path
                .rsplit_once('.')
                .unwrap_or(("builtins", self.path));
            py.import(module)?.getattr(name).map(Bound::unbind)
        })?;
        Ok(obj.bind(py))
    }

    /// Whether `obj`'s class is exactly this class (a subclass may override what was proven).
    pub fn is_exact(&self, obj: &Bound<'_, PyAny>) -> PyResult<bool> {
        let class = self.get(obj.py())?;
        memo::note_class(obj);
        Ok(obj.get_type().is(class))
    }

    /// Whether calling method `name` on `obj` runs this class's compiled `name`, as a compiled
    /// method that calls `self.name(...)` (`after` is `None`) or `super().name(...)` in class
    /// `after` assumes: `name` is not in the instance dictionary, the first class defining
    /// `name` in the method resolution order of `obj`'s class (past `after`, when given) is this
    /// class, and what it holds there is `compiled`, the wrapper the binding put in its place
    /// (when it registered one: a method without a Python entry point of its own keeps its
    /// original there). `None` when it does, else the reason the original must run (a subclass
    /// overrides `name`, the instance holds an attribute of that name, the method was replaced
    /// on the class, `obj` is not an instance of this class).
    ///
    /// Checked at every call rather than kept by the state memo: reassigning a class's
    /// `__bases__` changes the answer without changing any dictionary.
    pub fn dispatch(
        &self,
        obj: &Bound<'_, PyAny>,
        name: &Bound<'_, PyString>,
        after: Option<&ClassRef>,
        compiled: &Original,
        path: &str,
    ) -> PyResult<Option<String>> {
        let py = obj.py();
        let class = self.get(py)?;
        if let Some(d) = instance_dict(obj) {
            if raw_lookup(&d, name)?.is_some() {
                return Ok(Some(format!(
                    "state: `{path}.{name}` is an attribute of the instance"
                )));
            }
        }
        let after = after.map(|a| a.get(py)).transpose()?;
        let ty = obj.get_type();
        let mut past = after.is_none();
        for base in ty.mro().iter() {
            if !past {
                past = after.is_some_and(|a| base.is(a));
                continue;
            }
            let found = match class_dict(&base) {
                Some(d) => raw_lookup(&d, name)?,
                None => None,
            };
            if base.is(class) {
                return Ok(match (found, compiled.get(py)) {
                    (None, _) => Some(format!("state: `{}` no longer defines `{name}`", self.path)),
                    (Some(f), Some(c)) if !f.is(&c) => Some(format!(
                        "state: `{}.{name}` was replaced after import",
                        self.path
                    )),
                    _ => None,
                });
            }
            if found.is_some() {
                let by = base
                    .cast::<pyo3::types::PyType>()
                    .map_or_else(|_| "?".to_owned(), type_name);
                return Ok(Some(format!(
                    "state: `{path}.{name}` is {by}'s, not the compiled {}'s",
                    self.path
                )));
            }
        }
        let found = type_name(&ty);
        Ok(Some(format!(
            "state: `{path}` is a {found}, whose `{name}` is not {}'s",
            self.path
        )))
    }

    /// The reason an object of another class sends the call to the original.
    pub fn mismatch(&self, obj: &Bound<'_, PyAny>, path: &str) -> String {
        let found = type_name(&obj.get_type());
        format!("state: `{path}` is a {found}, not exactly {}", self.path)
    }
}

/// A class's dotted name for messages (`pkg.model.Block`), `?` when it cannot be read.
fn type_name(t: &Bound<'_, pyo3::types::PyType>) -> String {
    t.fully_qualified_name()
        .map_or_else(|_| "?".to_owned(), |n| n.to_string())
}

/// The dictionary of class `cls` (its own entries, not its bases'): `None` for an object that
/// is not a class, and for a static built-in class whose dictionary the interpreter keeps
/// elsewhere (3.12); neither defines a project's methods.
pub(crate) fn class_dict<'py>(cls: &Bound<'py, PyAny>) -> Option<Bound<'py, PyDict>> {
    let t = cls.cast::<pyo3::types::PyType>().ok()?;
    // SAFETY: `t` is a live type object; `tp_dict` is NULL or a dictionary the type keeps alive,
    // of which we take our own reference.
    let raw = unsafe { (*t.as_type_ptr()).tp_dict };
    if raw.is_null() {
        return None;
    }
    // SAFETY: a borrowed, non-null reference (see above).
    let d = unsafe { Bound::from_borrowed_ptr(cls.py(), raw) };
    d.cast_into::<PyDict>().ok()
}

/// The instance dictionary of `obj` (without attribute lookup through its class, which for a
/// module class goes through its `__getattr__`), `None` when it has none.
pub fn instance_dict<'py>(obj: &Bound<'py, PyAny>) -> Option<Bound<'py, PyDict>> {
    let py = obj.py();
    // SAFETY: `obj` is a valid object; `PyObject_GenericGetDict` returns a new reference to its
    // instance dictionary, or NULL with an exception set when it has none.
    let raw = unsafe { pyo3::ffi::PyObject_GenericGetDict(obj.as_ptr(), std::ptr::null_mut()) };
    if raw.is_null() {
        // Clear the AttributeError: having no instance dict only means "not here".
        let _ = PyErr::take(py);
        return None;
    }
    // SAFETY: a new, non-null reference.
    let dict = unsafe { Bound::from_owned_ptr(py, raw) };
    dict.cast_into::<PyDict>().ok()
}

/// `dict[key]` for an interned string key, without PyO3's generic key conversion: one
/// `PyDict_GetItemWithError` (readers make dozens of these per call, so the wrapper's cost
/// showed), or, inside [`LookupTape::replay`], the answer the same lookup had on the previous
/// call when the dictionary has not changed since. `None` when absent.
pub fn lookup<'py>(
    dict: &Bound<'py, PyDict>,
    key: &Bound<'py, PyString>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let tag = dict_tag(dict);
    let found = tape_lookup(dict, key, tag)?;
    memo::note_lookup(dict, tag, found.as_ref().map_or(0, |v| v.as_ptr() as usize));
    Ok(found)
}

/// [`lookup`] without the memo's note: through the active tape when there is one.
fn tape_lookup<'py>(
    dict: &Bound<'py, PyDict>,
    key: &Bound<'py, PyString>,
    tag: u64,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let active = ACTIVE_TAPE.with(Cell::get);
    if active.is_null() || tag == 0 {
        return raw_lookup(dict, key);
    }
    let (d, k) = (dict.as_ptr() as usize, key.as_ptr() as usize);
    // SAFETY: `active` points at the `Replay` on the stack of the `LookupTape::replay` call
    // running on this thread (it clears the pointer before returning); no reference into it
    // is held across the lookup below, which may run Python code.
    let known = unsafe {
        let r = &*active;
        let entries: &Vec<TapeEntry> = &*r.entries;
        entries
            .get(r.at)
            .filter(|e| e.dict == d && e.key == k && e.tag == tag)
            .map(|e| e.value)
    };
    let value = match known {
        Some(v) => v,
        None => {
            let found = raw_lookup(dict, key)?;
            let value = found.as_ref().map_or(0, |v| v.as_ptr() as usize);
            // SAFETY: as above; this thread's replay is still the active one (a nested replay
            // restores it before returning).
            unsafe {
                let r = &mut *active;
                let entries = &mut *r.entries;
                entries.truncate(r.at);
                entries.push(TapeEntry {
                    dict: d,
                    key: k,
                    tag,
                    value,
                });
            }
            // SAFETY: as above.
            unsafe { (*active).at += 1 };
            return Ok(found);
        }
    };
    // SAFETY: as above.
    unsafe { (*active).at += 1 };
    if value == 0 {
        return Ok(None);
    }
    // SAFETY: the entry was recorded from this very dictionary (same address, same version
    // tag: tags are unique across every dictionary's creation and modification), so the
    // dictionary still holds this value and keeps it alive; taking our own reference.
    Ok(Some(unsafe {
        Bound::from_borrowed_ptr(dict.py(), value as *mut pyo3::ffi::PyObject)
    }))
}

/// One `PyDict_GetItemWithError`.
pub(crate) fn raw_lookup<'py>(
    dict: &Bound<'py, PyDict>,
    key: &Bound<'py, PyString>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = dict.py();
    // SAFETY: both are valid objects and `dict` is a dict; the call returns a borrowed
    // reference, or NULL (with an exception set only on an error).
    let raw = unsafe { pyo3::ffi::PyDict_GetItemWithError(dict.as_ptr(), key.as_ptr()) };
    if raw.is_null() {
        // SAFETY: reading this thread's error indicator, with the GIL held.
        if unsafe { pyo3::ffi::PyErr_Occurred() }.is_null() {
            return Ok(None);
        }
        return Err(PyErr::fetch(py));
    }
    // SAFETY: a borrowed, non-null reference that `dict` keeps alive; taking our own reference.
    Ok(Some(unsafe { Bound::from_borrowed_ptr(py, raw) }))
}

#[derive(Clone, Copy)]
struct TapeEntry {
    dict: usize,
    key: usize,
    tag: u64,
    /// The value's address, 0 when the key was absent.
    value: usize,
}

/// The tape being replayed on this thread and how far.
struct Replay {
    entries: *mut Vec<TapeEntry>,
    at: usize,
}

thread_local! {
    /// The [`Replay`] of the `LookupTape::replay` call running on this thread, or null.
    static ACTIVE_TAPE: Cell<*mut Replay> = const { Cell::new(std::ptr::null_mut()) };
}

/// The dictionary lookups one compiled method's reader made on its last call, in order, each
/// with the dictionary's version tag: while a model is unchanged, the next call's reader asks
/// the same questions of the same dictionaries, and [`lookup`] answers each from the tape after
/// comparing three words instead of hashing. Any change to a dictionary it read (a new
/// submodule or parameter, an attribute set or deleted) changes that dictionary's tag, and from
/// there the lookups are made again and re-recorded. What is not a lookup is read at every full
/// read: tensor metadata, classes, and the sizes of hook dictionaries (registering a hook
/// changes the hook dictionary, not the dictionary that holds it). A warm call whose
/// [`StateMemo`](super::memo::StateMemo) facts hold makes no full read at all.
pub struct LookupTape {
    entries: Mutex<Vec<TapeEntry>>,
}

impl LookupTape {
    /// An empty tape.
    pub const fn new() -> Self {
        Self {
            entries: Mutex::new(Vec::new()),
        }
    }

    /// Run `read` with this tape answering its lookups. When the tape is already in use (a
    /// reader re-entered through Python code it ran, or another thread), `read` runs with
    /// every lookup made.
    pub fn replay<T>(&self, read: impl FnOnce() -> T) -> T {
        let Ok(mut entries) = self.entries.try_lock() else {
            let _active = Scoped::set(&ACTIVE_TAPE, std::ptr::null_mut());
            return read();
        };
        let mut replay = Replay {
            entries: &mut *entries,
            at: 0,
        };
        let out = {
            let _active = Scoped::set(&ACTIVE_TAPE, &mut replay);
            read()
        };
        entries.truncate(replay.at);
        out
    }
}

impl Default for LookupTape {
    fn default() -> Self {
        Self::new()
    }
}

/// Whether `dict[key]` is present and truthy (a hook dictionary with entries): a dict's size
/// is read directly, anything else through `bool()`.
pub fn non_empty_entry(dict: &Bound<'_, PyDict>, key: &Bound<'_, PyString>) -> PyResult<bool> {
    match lookup(dict, key)? {
        None => Ok(false),
        Some(v) if v.is_none() => Ok(false),
        Some(v) => match v.cast::<PyDict>() {
            Ok(d) => {
                memo::note_contents(d, false);
                Ok(!d.is_empty())
            }
            Err(_) => {
                memo::note_opaque();
                v.is_truthy()
            }
        },
    }
}

/// The most attribute stores a [`ModView`] holds.
pub const MAX_STORES: usize = 4;

/// A module object with its instance dictionary, and its attribute stores looked up on first
/// use, for the several attributes a compiled method reads from it.
pub struct ModView<'py> {
    obj: Bound<'py, PyAny>,
    dict: Bound<'py, PyDict>,
    names: [Option<Bound<'py, PyString>>; MAX_STORES],
    stores: [std::cell::OnceCell<Option<Bound<'py, PyDict>>>; MAX_STORES],
}

impl<'py> ModView<'py> {
    /// The view of `obj` with the stores named (in lookup order; at most [`MAX_STORES`]);
    /// `None` when it has no instance dictionary.
    pub fn of(obj: &Bound<'py, PyAny>, stores: &[&Bound<'py, PyString>]) -> PyResult<Option<Self>> {
        let Some(dict) = instance_dict(obj) else {
            memo::note_opaque();
            return Ok(None);
        };
        memo::note_instance_dict(obj, &dict);
        let mut names: [Option<Bound<'py, PyString>>; MAX_STORES] = Default::default();
        for (slot, name) in names.iter_mut().zip(stores) {
            *slot = Some((*name).clone());
        }
        Ok(Some(Self {
            obj: obj.clone(),
            dict,
            names,
            stores: Default::default(),
        }))
    }

    /// The object.
    pub fn obj(&self) -> &Bound<'py, PyAny> {
        &self.obj
    }

    /// Its instance dictionary.
    pub fn dict(&self) -> &Bound<'py, PyDict> {
        &self.dict
    }

    /// Store `i`, looked up once.
    fn store(&self, i: usize) -> PyResult<Option<&Bound<'py, PyDict>>> {
        let (Some(cell), Some(Some(name))) = (self.stores.get(i), self.names.get(i)) else {
            return Ok(None);
        };
        if let Some(found) = cell.get() {
            return Ok(found.as_ref());
        }
        let found = match lookup(&self.dict, name)? {
            Some(d) => d.cast_into::<PyDict>().ok(),
            None => None,
        };
        Ok(cell.get_or_init(|| found).as_ref())
    }

    /// Attribute `name`: the instance dictionary, then the stores whose bit is set in `mask`
    /// (bit `i`: store `i`), in order.
    pub fn get(
        &self,
        name: &Bound<'py, PyString>,
        mask: u8,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        if let Some(v) = lookup(&self.dict, name)? {
            return Ok(Some(v));
        }
        for i in 0..MAX_STORES {
            if mask & (1 << i) == 0 {
                continue;
            }
            if let Some(d) = self.store(i)? {
                if let Some(v) = lookup(d, name)? {
                    return Ok(Some(v));
                }
            }
        }
        Ok(None)
    }

    /// Attribute `name` as Python finds a class attribute (`SCALE = 0.5` in a class body): the
    /// instance dictionary, then the class's method resolution order (`None` when neither has
    /// it). The lookup through the class is noted for the state memo with the class's version
    /// tag, so that assigning the attribute on the class (or on a base) is seen by the next call.
    pub fn class_get(&self, name: &Bound<'py, PyString>) -> PyResult<Option<Bound<'py, PyAny>>> {
        if let Some(v) = lookup(&self.dict, name)? {
            return Ok(Some(v));
        }
        let ty = self.obj.get_type();
        let t = ty.as_type_ptr();
        // SAFETY: `t` is a live class and `name` a str; `_PyType_Lookup` reads the class
        // dictionaries of the method resolution order (keyed by str: no Python `__eq__` runs),
        // clears any error it meets, and returns a borrowed reference (or NULL), of which we
        // take our own below. It gives the class a version tag when it can.
        let found = unsafe { _PyType_Lookup(t, name.as_ptr()) };
        // SAFETY: `t` is live; the field is plain data.
        let tag = unsafe { (*t).tp_version_tag };
        memo::note_class_lookup(&self.obj, tag, found as usize);
        if found.is_null() {
            return Ok(None);
        }
        // SAFETY: a live object found in a class dictionary, referenced anew here.
        Ok(Some(unsafe {
            Bound::from_borrowed_ptr(self.obj.py(), found)
        }))
    }

    /// Whether store `i` holds exactly the keys `names`, in that order (a container's element
    /// names: what its call and iteration visit, in order); `None` without that store.
    pub fn element_names_are(&self, i: usize, names: &[&str]) -> PyResult<Option<bool>> {
        let Some(d) = self.store(i)? else {
            return Ok(None);
        };
        memo::note_contents(d, true);
        if d.len() != names.len() {
            return Ok(Some(false));
        }
        for ((k, _), want) in d.iter().zip(names) {
            match k.cast::<PyString>() {
                Ok(k) if k.to_str()? == *want => {}
                _ => return Ok(Some(false)),
            }
        }
        Ok(Some(true))
    }

    /// The values of store `i` in order (a container's elements); `None` without that store.
    pub fn elements(&self, i: usize) -> PyResult<Option<Vec<Bound<'py, PyAny>>>> {
        Ok(self.store(i)?.map(|d| {
            memo::note_contents(d, true);
            d.iter().map(|(_, v)| v).collect()
        }))
    }
}

/// An attribute that must be a Python `int` (not a `bool`) within 64 bits.
pub fn as_int(v: &Bound<'_, PyAny>) -> Option<i64> {
    if v.is_instance_of::<PyBool>() || !v.is_instance_of::<PyInt>() {
        return None;
    }
    v.extract::<i64>().ok()
}

/// An attribute that must be a Python `float`.
pub fn as_float(v: &Bound<'_, PyAny>) -> Option<f64> {
    v.cast::<PyFloat>().ok().map(|f| f.value())
}

/// An attribute that must be a Python `bool`.
pub fn as_bool(v: &Bound<'_, PyAny>) -> Option<bool> {
    v.cast::<PyBool>().ok().map(|b| b.is_true())
}

/// The elements of an attribute that must be a tuple of `n` elements.
pub fn as_tuple<'py>(v: &Bound<'py, PyAny>, n: usize) -> Option<Vec<Bound<'py, PyAny>>> {
    let t = v.cast::<PyTuple>().ok()?;
    (t.len() == n).then(|| t.iter().collect())
}

/// Whether an attribute equals a bool literal (Python `==`).
pub fn eq_bool(v: &Bound<'_, PyAny>, b: bool) -> PyResult<bool> {
    memo::note_compared(v);
    v.eq(PyBool::new(v.py(), b))
}

/// Whether an attribute equals an int literal (Python `==`).
pub fn eq_int(v: &Bound<'_, PyAny>, i: i64) -> PyResult<bool> {
    memo::note_compared(v);
    v.eq(i)
}

/// Whether an attribute equals a float literal (Python `==`).
pub fn eq_float(v: &Bound<'_, PyAny>, f: f64) -> PyResult<bool> {
    memo::note_compared(v);
    v.eq(f)
}

/// Whether an attribute equals a string literal (Python `==`).
pub fn eq_str(v: &Bound<'_, PyAny>, s: &str) -> PyResult<bool> {
    memo::note_compared(v);
    v.eq(PyString::new(v.py(), s))
}

/// Classes already warned about (one warning per class and process).
static WARNED: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());

/// How often a compiled method ran natively, and why the original ran instead.
pub struct MethodStats {
    qualname: &'static str,
    class: &'static str,
    native: AtomicU64,
    fallbacks: Mutex<BTreeMap<String, u64>>,
}

impl MethodStats {
    /// Counters of method `qualname` of class `class` (qualified names).
    pub const fn new(qualname: &'static str, class: &'static str) -> Self {
        Self {
            qualname,
            class,
            native: AtomicU64::new(0),
            fallbacks: Mutex::new(BTreeMap::new()),
        }
    }

    /// The native body is about to run.
    pub fn native(&self) {
        self.native.fetch_add(1, Ordering::Relaxed);
    }

    /// The original method runs instead, for `why` (`category: detail`): counted, warned once
    /// per class when the category is one of `warn`, then `original` called with `args`.
    pub fn fallback<'py>(
        &self,
        py: Python<'py>,
        why: String,
        warn: &[&str],
        original: &Bound<'py, PyAny>,
        args: Bound<'py, PyTuple>,
    ) -> PyResult<Py<PyAny>> {
        let category = why.split(':').next().unwrap_or("").trim().to_owned();
        let message = format!(
            "rextio: `{}` runs its original Python method: {why}",
            self.qualname
        );
        if let Ok(mut f) = self.fallbacks.lock() {
            *f.entry(why).or_default() += 1;
        }
        if warn.contains(&category.as_str()) {
            let first = WARNED
                .lock()
                .map(|mut w| w.insert(self.class))
                .unwrap_or(false);
            if first {
                let text = std::ffi::CString::new(message.replace('\0', " ")).unwrap_or_default();
                PyErr::warn(py, &py.get_type::<PyRuntimeWarning>(), &text, 1)?;
            }
        }
        run_original(original, args)
    }
}

/// `{qualname: {"native": n, reason: n, ...}}` for every compiled method.
pub fn stats_dict(py: Python<'_>, all: &[&MethodStats]) -> PyResult<Py<PyAny>> {
    let out = PyDict::new(py);
    for s in all {
        let d = PyDict::new(py);
        d.set_item("native", s.native.load(Ordering::Relaxed))?;
        if let Ok(f) = s.fallbacks.lock() {
            for (why, n) in f.iter() {
                d.set_item(why, *n)?;
            }
        }
        out.set_item(s.qualname, d)?;
    }
    Ok(out.into_any().unbind())
}

thread_local! {
    /// How many original module methods this thread is running (see [`run_original`]).
    static ORIGINAL_DEPTH: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Whether this thread is inside an original module method that ran instead of its native body.
/// Native functions called from there follow eager where their own contract would differ (for
/// rextio-torch: record autograd instead of returning tensors without grad).
pub fn in_original() -> bool {
    ORIGINAL_DEPTH.with(|d| d.get() > 0)
}

struct DepthGuard;

impl DepthGuard {
    fn enter() -> Self {
        ORIGINAL_DEPTH.with(|d| d.set(d.get().saturating_add(1)));
        DepthGuard
    }
}

impl Drop for DepthGuard {
    fn drop(&mut self) {
        ORIGINAL_DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// Call an original Python method or function with `args`, marking this thread as inside an
/// original run for the duration (errors included).
pub fn run_original<'py>(f: &Bound<'py, PyAny>, args: Bound<'py, PyTuple>) -> PyResult<Py<PyAny>> {
    let _depth = DepthGuard::enter();
    f.call1(args).map(Bound::unbind)
}

/// Where a native function keeps its original Python function, registered when the wrapper
/// module binds it.
pub struct Original(PyOnceLock<Py<PyAny>>);

impl Original {
    /// Not registered yet.
    pub const fn new() -> Self {
        Self(PyOnceLock::new())
    }

    /// Register the original (the first registration wins).
    pub fn set(&self, py: Python<'_>, f: Py<PyAny>) {
        let _ = self.0.set(py, f);
    }

    /// The original, once registered.
    pub fn get<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyAny>> {
        self.0.get(py).map(|f| f.bind(py).clone())
    }
}

impl Default for Original {
    fn default() -> Self {
        Self::new()
    }
}
