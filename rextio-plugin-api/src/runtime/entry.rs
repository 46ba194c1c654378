//! The `__call__` a compiled module class gets ([`crate::CallEntry`]): `model(x)` reaches the
//! compiled method without the base class's Python `__call__` in between when that `__call__`
//! would do nothing but call it, and goes through the base's `__call__` otherwise.
//!
//! The generated crate defines, per compiled method, a `METH_FASTCALL | METH_KEYWORDS`
//! function that calls [`Entry::call`]; the Python binding hands the class to
//! [`Entry::install`], which makes that function the class's `__call__` (a method descriptor)
//! only where the class would otherwise inherit the base's `__call__` unchanged. At each call
//! the entry either runs the compiled method straight away, or makes the call the class would
//! have made without it: the next `__call__` in the instance's method resolution order.

use super::memo;
use super::modules::{class_dict, instance_dict, raw_lookup, Original};
use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PySuper, PyTuple, PyType};
use std::ffi::CStr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// What [`Entry::install`] found and put in place.
struct Installed {
    /// The class the entry is installed on.
    class: Py<PyType>,
    /// The base's `__call__` the class inherited before (the function object).
    base_call: Py<PyAny>,
    /// The original (uncompiled) method.
    original: Py<PyAny>,
    /// The pinned attributes (see [`crate::CallEntry::pinned`]) and what the class resolved
    /// each to at installation.
    pinned: Vec<(Py<PyString>, Py<PyAny>)>,
}

/// The `__call__` entry of one compiled method (a `static` in the generated crate).
pub struct Entry {
    /// How many positional arguments the method takes after `self`.
    arity: usize,
    /// The method's name.
    method: &'static str,
    method_key: PyOnceLock<Py<PyString>>,
    installed: PyOnceLock<Installed>,
    verified: Verified,
}

/// The docstring (with its text signature) of every installed `__call__`.
const CALL_DOC: &CStr = c"__call__($self, /, *args, **kwargs)\n--\n\nCall the instance: the compiled method directly where the base class's __call__ would do nothing else, that __call__ otherwise (rextio).";

/// A check of the plugin's, given the instance and its instance dictionary: why the base's
/// `__call__` would do more than call the method.
pub type EntryCheck =
    for<'py> fn(&Bound<'py, PyAny>, &Bound<'py, PyDict>) -> PyResult<Option<String>>;

/// A class whose method resolution [`Entry::direct`] last verified, by address and version
/// tag: CPython gives a class a new tag whenever its dictionary or any base's changes, or its
/// bases are reassigned, and never reuses one (3.11 and 3.12; see [`memo::tags_trusted`]).
struct Verified {
    class: AtomicUsize,
    tag: AtomicU64,
}

impl Verified {
    /// The valid version tag of `ty`, `None` when it has none or tags are not trusted.
    fn tag_of(ty: &Bound<'_, PyType>) -> Option<u64> {
        if !memo::tags_trusted(ty.py()) {
            return None;
        }
        // SAFETY: a live type object; reading two plain fields with the GIL held.
        let (flags, tag) = unsafe {
            let t = ty.as_type_ptr();
            ((*t).tp_flags, (*t).tp_version_tag)
        };
        (flags & pyo3::ffi::Py_TPFLAGS_VALID_VERSION_TAG != 0 && tag != 0).then_some(u64::from(tag))
    }

    fn holds(&self, ty: &Bound<'_, PyType>) -> bool {
        ty.as_ptr() as usize == self.class.load(Ordering::Relaxed)
            && Self::tag_of(ty).is_some_and(|t| t == self.tag.load(Ordering::Relaxed))
    }

    fn set(&self, ty: &Bound<'_, PyType>) {
        if let Some(tag) = Self::tag_of(ty) {
            self.tag.store(tag, Ordering::Relaxed);
            self.class.store(ty.as_ptr() as usize, Ordering::Relaxed);
        }
    }
}

impl Entry {
    /// The entry of method `method`, taking `arity` positional arguments after `self`.
    pub const fn new(arity: usize, method: &'static str) -> Self {
        Self {
            arity,
            method,
            method_key: PyOnceLock::new(),
            installed: PyOnceLock::new(),
            verified: Verified {
                class: AtomicUsize::new(0),
                tag: AtomicU64::new(0),
            },
        }
    }

    /// Make `entry` (the generated `METH_FASTCALL | METH_KEYWORDS` function) the `__call__` of
    /// `class`, as a method descriptor of the class (like a method of
    /// a built-in type: no Python frame between `model(x)` and the native code), when `class`
    /// defines none itself and inherits the `__call__` of one of `bases` (dotted class paths)
    /// unchanged; `original` is the method as the user wrote it, `pinned` the attributes the
    /// base's `__call__` reaches through the instance. Returns whether it did (the first
    /// installation wins; a class that defines or inherits another `__call__` keeps it).
    pub fn install(
        &self,
        class: &Bound<'_, PyType>,
        original: &Bound<'_, PyAny>,
        entry: ffi::PyCFunctionFastWithKeywords,
        bases: &[&str],
        pinned: &[&str],
    ) -> PyResult<bool> {
        let py = class.py();
        if self.installed.get(py).is_some() {
            return Ok(false);
        }
        let name = pyo3::intern!(py, "__call__");
        if class_dict(class.as_any())
            .map(|d| raw_lookup(&d, name))
            .transpose()?
            .flatten()
            .is_some()
        {
            return Ok(false);
        }
        let inherited = class.getattr(name)?;
        let mut base_call = None;
        for path in bases {
            let (module, attr) = path.rsplit_once('.').unwrap_or(("builtins", path));
            let Ok(base) = py.import(module).and_then(|m| m.getattr(attr)) else {
                continue;
            };
            let Ok(base) = base.cast_into::<PyType>() else {
                continue;
            };
            if class.is_subclass(&base)? && base.getattr(name)?.is(&inherited) {
                base_call = Some(inherited.clone());
                break;
            }
        }
        let Some(base_call) = base_call else {
            return Ok(false);
        };
        let mut pins = Vec::with_capacity(pinned.len());
        for p in pinned {
            let key = PyString::intern(py, p);
            let value = class.getattr(&key)?;
            pins.push((key.unbind(), value.unbind()));
        }
        // The definition lives as long as the process: the descriptor points at it.
        let def: &'static mut ffi::PyMethodDef = Box::leak(Box::new(ffi::PyMethodDef {
            ml_name: c"__call__".as_ptr(),
            ml_meth: ffi::PyMethodDefPointer {
                PyCFunctionFastWithKeywords: entry,
            },
            ml_flags: ffi::METH_FASTCALL | ffi::METH_KEYWORDS,
            ml_doc: CALL_DOC.as_ptr(),
        }));
        // SAFETY: `class` is a live type and `def` a valid, static method definition whose
        // function has the calling convention its flags name; a new reference or NULL with
        // an exception set comes back.
        let descr = unsafe {
            Bound::from_owned_ptr_or_err(py, ffi::PyDescr_NewMethod(class.as_type_ptr(), def))?
        };
        class.setattr(name, descr)?;
        let _ = self.installed.set(
            py,
            Installed {
                class: class.clone().unbind(),
                base_call: base_call.unbind(),
                original: original.clone().unbind(),
                pinned: pins,
            },
        );
        Ok(true)
    }

    /// The body of a generated entry: CPython calls it as `__call__(slf, *args, **kwargs)`
    /// in the `METH_FASTCALL | METH_KEYWORDS` convention (`args` holds `nargs` positional
    /// values, then one per name in the tuple `kwnames`). Runs `run(py, original, slf, args)`
    /// when [`Entry::direct`] allows it, else [`Entry::delegate`]; every error (and a panic)
    /// becomes a Python exception.
    ///
    /// # Safety
    /// Called by CPython, with the GIL held, with the arguments of that convention.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn call<F>(
        &self,
        slf: *mut ffi::PyObject,
        args: *const *mut ffi::PyObject,
        nargs: ffi::Py_ssize_t,
        kwnames: *mut ffi::PyObject,
        bound: &Original,
        check: EntryCheck,
        run: F,
    ) -> *mut ffi::PyObject
    where
        F: for<'py> FnOnce(
            Python<'py>,
            &Bound<'py, PyAny>,
            &Bound<'py, PyAny>,
            &[Bound<'py, PyAny>],
        ) -> PyResult<Py<PyAny>>,
    {
        // SAFETY: CPython holds the GIL for this thread while it calls a method.
        let py = unsafe { Python::assume_attached() };
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            // SAFETY: per the convention, `slf` is a live object, `args` holds `nargs`
            // positional values followed by one per keyword name, all borrowed for the call.
            let slf = unsafe { Bound::from_borrowed_ptr(py, slf) };
            let nkw = if kwnames.is_null() {
                0
            } else {
                // SAFETY: a non-null `kwnames` is a tuple.
                unsafe { ffi::PyTuple_GET_SIZE(kwnames) }
            };
            let total = usize::try_from(nargs.max(0) + nkw.max(0)).unwrap_or(0);
            let all: Vec<Bound<'_, PyAny>> = (0..total)
                // SAFETY: as above, `args[i]` for `i < nargs + len(kwnames)` is live.
                .map(|i| unsafe { Bound::from_borrowed_ptr(py, *args.add(i)) })
                .collect();
            let positional = usize::try_from(nargs.max(0)).unwrap_or(0);
            let (pos, kw) = all.split_at(positional.min(all.len()));
            if kw.is_empty() {
                if pos.len() == self.arity {
                    if let Some(original) = self.direct(&slf, bound, check)? {
                        return run(py, &original, &slf, pos);
                    }
                }
                return self.delegate(&slf, &PyTuple::new(py, pos)?, None);
            }
            // Keyword arguments always take the base's `__call__` (rare, so built here).
            let kwargs = PyDict::new(py);
            // SAFETY: a non-null `kwnames` (there are keyword values) is a tuple of strings.
            let names = unsafe { Bound::from_borrowed_ptr(py, kwnames) };
            for (name, value) in names.try_iter()?.zip(kw) {
                kwargs.set_item(name?, value)?;
            }
            self.delegate(&slf, &PyTuple::new(py, pos)?, Some(&kwargs))
        }));
        let result = match outcome {
            Ok(r) => r,
            Err(payload) => {
                let msg = payload
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic in a compiled `__call__`".to_owned());
                Err(pyo3::panic::PanicException::new_err(msg))
            }
        };
        match result {
            Ok(obj) => obj.into_ptr(),
            Err(e) => {
                e.restore(py);
                std::ptr::null_mut()
            }
        }
    }

    /// The original method, when a call of `slf` with exactly the method's positional
    /// arguments may run the compiled method directly: the method resolving on `slf` to the
    /// wrapper the binding put in the class (`bound`), the `__call__` past the class still the
    /// base's it replaced, and `check` finding nothing. `None` sends the call to
    /// [`Entry::delegate`].
    fn direct<'py>(
        &self,
        slf: &Bound<'py, PyAny>,
        bound: &Original,
        check: EntryCheck,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = slf.py();
        let method = self
            .method_key
            .get_or_init(py, || PyString::intern(py, self.method).unbind())
            .bind(py);
        let (Some(installed), Some(wrapper)) = (self.installed.get(py), bound.get(py)) else {
            return Ok(None);
        };
        let ty = slf.get_type();
        if !self.verified.holds(&ty) {
            // Looking the name up through the class gives it a valid version tag; it is kept
            // only when nothing changed the class while its resolution was checked.
            ty.getattr(method)?;
            let before = Verified::tag_of(&ty);
            if !resolves(&ty, installed, method, &wrapper)? {
                return Ok(None);
            }
            if before.is_some() && Verified::tag_of(&ty) == before {
                self.verified.set(&ty);
            }
        }
        // `self.method` must be the compiled wrapper, and the pinned attributes the class's:
        // no instance attribute of those names.
        let Some(dict) = instance_dict(slf) else {
            return Ok(None);
        };
        if raw_lookup(&dict, method)?.is_some() {
            return Ok(None);
        }
        for (key, _) in &installed.pinned {
            if raw_lookup(&dict, key.bind(py))?.is_some() {
                return Ok(None);
            }
        }
        if check(slf, &dict)?.is_some() {
            return Ok(None);
        }
        Ok(Some(installed.original.bind(py).clone()))
    }

    /// Make the call the class would make without its entry: the next `__call__` in the method
    /// resolution order of `slf`'s class after the class the entry is on (`super().__call__`),
    /// or, for an object that is not an instance of it, the base's `__call__` it replaced.
    fn delegate<'py>(
        &self,
        slf: &Bound<'py, PyAny>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let Some(installed) = self.installed.get(py) else {
            return Err(PyRuntimeError::new_err(
                "rextio: a compiled `__call__` ran before its class was bound",
            ));
        };
        let class = installed.class.bind(py);
        let call = pyo3::intern!(py, "__call__");
        if slf.is_instance(class)? {
            let next = PySuper::new(class, slf)?.getattr(call)?;
            return next.call(args, kwargs).map(Bound::unbind);
        }
        let mut all = Vec::with_capacity(args.len() + 1);
        all.push(slf.clone());
        all.extend(args.iter());
        installed
            .base_call
            .bind(py)
            .call(PyTuple::new(py, all)?, kwargs)
            .map(Bound::unbind)
    }
}

/// Whether, in the method resolution order of `ty`, the class the entry is on comes, past it
/// the first `__call__` is still the one it replaced, the pinned attributes resolve as they did
/// at installation, and the first `method` is the compiled wrapper (no subclass overrides it).
fn resolves(
    ty: &Bound<'_, PyType>,
    installed: &Installed,
    method: &Bound<'_, PyString>,
    wrapper: &Bound<'_, PyAny>,
) -> PyResult<bool> {
    let py = ty.py();
    let mro = ty.mro();
    let class = installed.class.bind(py);
    let Some(at) = mro.iter().position(|t| t.is(class)) else {
        return Ok(false);
    };
    let call = pyo3::intern!(py, "__call__");
    if !first_definer(&mro, at + 1, call)?.is_some_and(|f| f.is(installed.base_call.bind(py))) {
        return Ok(false);
    }
    for (key, value) in &installed.pinned {
        if !first_definer(&mro, 0, key.bind(py))?.is_some_and(|f| f.is(value.bind(py))) {
            return Ok(false);
        }
    }
    Ok(first_definer(&mro, 0, method)?.is_some_and(|f| f.is(wrapper)))
}

/// The value of `name` in the first class of `mro`, from index `from` on, whose own dictionary
/// holds it; `None` when none does.
fn first_definer<'py>(
    mro: &Bound<'py, PyTuple>,
    from: usize,
    name: &Bound<'py, PyString>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    for t in mro.iter().skip(from) {
        if let Some(d) = class_dict(&t) {
            if let Some(v) = raw_lookup(&d, name)? {
                return Ok(Some(v));
            }
        }
    }
    Ok(None)
}

/// Values of `N` keys of one dictionary, looked up again only when the dictionary or its
/// version tag differs from the last lookup's (a `static` per call site; for the checks that
/// run on every call of a compiled `__call__`, outside any state read: nothing is noted for
/// the state memo).
///
/// An equal tag on the same dictionary means the same entries (the tags of CPython 3.11 and
/// 3.12 are new at every creation and change of any dictionary, see
/// [`memo::tags_trusted`]), so the values found last time are still there, kept alive by the
/// dictionary. Elsewhere every call looks the keys up.
pub struct DictCache<const N: usize> {
    seen: std::sync::Mutex<Option<Seen<N>>>,
}

#[derive(Clone, Copy)]
struct Seen<const N: usize> {
    dict: usize,
    tag: u64,
    /// Addresses of the values, 0 for an absent key.
    values: [usize; N],
}

impl<const N: usize> DictCache<N> {
    /// An empty cache.
    pub const fn new() -> Self {
        Self {
            seen: std::sync::Mutex::new(None),
        }
    }

    /// `dict[key]` for each of `keys` (`None` when absent).
    pub fn get<'py>(
        &self,
        dict: &Bound<'py, PyDict>,
        keys: [&Bound<'py, PyString>; N],
    ) -> PyResult<[Option<Bound<'py, PyAny>>; N]> {
        let py = dict.py();
        let tag = memo::dict_tag(dict);
        let d = dict.as_ptr() as usize;
        let hit = match self.seen.try_lock() {
            Ok(seen) => seen.filter(|s| tag != 0 && s.dict == d && s.tag == tag),
            Err(_) => None,
        };
        if let Some(s) = hit {
            // SAFETY: each value was found in this very dictionary, whose tag is unchanged
            // since, so it still holds (and keeps alive) each one; taking our own references.
            return Ok(s
                .values
                .map(|v| (v != 0).then(|| unsafe { Bound::from_borrowed_ptr(py, v as *mut _) })));
        }
        let mut found: [Option<Bound<'py, PyAny>>; N] = std::array::from_fn(|_| None);
        for (slot, key) in found.iter_mut().zip(keys) {
            *slot = raw_lookup(dict, key)?;
        }
        // Kept only when no lookup changed the dictionary (a key's `__eq__` could).
        if tag != 0 && memo::dict_tag(dict) == tag {
            if let Ok(mut seen) = self.seen.try_lock() {
                *seen = Some(Seen {
                    dict: d,
                    tag,
                    values: std::array::from_fn(|i| {
                        found[i].as_ref().map_or(0, |v| v.as_ptr() as usize)
                    }),
                });
            }
        }
        Ok(found)
    }
}

impl<const N: usize> Default for DictCache<N> {
    fn default() -> Self {
        Self::new()
    }
}
