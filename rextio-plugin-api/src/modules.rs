//! Module classes (API >= 1.11): how a plugin tells the host what a framework's module objects
//! are, so that methods of user classes (`class Scorer(nn.Module)`) compile like functions.
//!
//! The host reads a module class's `__init__` statically and asks the plugin about every value it
//! assigns to `self` ([`Plugin::module_kind`](crate::Plugin::module_kind)): a submodule of a known
//! kind (what it holds and what calling it computes, as an ordinary claim site), or a tensor
//! attribute. Nothing read from `__init__` is trusted at run time: a compiled method reads every
//! value it uses from the live object on each call, checks it against the type proven here
//! (exact class of each submodule, attribute types, the plugin's conditions and call checks) and
//! runs the original Python method when anything differs.

use crate::diagnostic::Diagnostic;
use crate::site::{Literal, Operand};
use crate::types::ValueType;
use serde::{Deserialize, Serialize};

/// What a plugin declares about its framework's module classes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModuleSupport {
    /// Dotted base classes that make a class a module class (`torch.nn.Module`).
    pub bases: Vec<String>,
    /// Container classes whose call applies their elements in order (`torch.nn.Sequential`).
    pub sequential: Vec<String>,
    /// Container classes a method iterates with `for m in self.items:` (`torch.nn.ModuleList`).
    pub lists: Vec<String>,
    /// Container classes holding named elements a method reads by a string literal key,
    /// `self.heads["cls"]`, or as an attribute, `self.heads.cls` (`torch.nn.ModuleDict`; API >=
    /// 1.15, empty by default).
    #[serde(default)]
    pub dicts: Vec<String>,
    /// Methods registering a named attribute, `self.<method>("name", value)` (`register_buffer`).
    pub register_methods: Vec<String>,
    /// The instance dictionaries attributes live in, searched in order after the instance
    /// `__dict__` (`_parameters`, `_buffers`, `_modules`).
    pub stores: Vec<String>,
    /// The stores (a subset of `stores`) that may hold a value of the plugin's types; the others
    /// are not searched for one (`_parameters`, `_buffers`).
    pub tensor_stores: Vec<String>,
    /// The stores that may hold a submodule (`_modules`).
    pub module_stores: Vec<String>,
    /// The instance dictionary a container keeps its elements in, in order (`_modules`).
    pub children_store: String,
    /// Rust path of `fn(&Bound<PyDict>) -> PyResult<Option<String>>`, given a submodule's
    /// instance dictionary: why calling it would not go straight to its forward (its hooks),
    /// `None` when it would. Called for every submodule a compiled method calls.
    pub call_check_fn: String,
    /// Rust path of `fn(Python<'_>) -> PyResult<Option<String>>`: why no submodule call would go
    /// straight to its forward (global hooks). Called once per call of a compiled method that
    /// calls submodules.
    pub global_check_fn: String,
    /// Rust path of `fn(&T) -> Option<String>` for values of this plugin's types a compiled method
    /// reads or receives: why the original must run instead (for example grad recording).
    pub admit_fn: String,
    /// Reason categories (the text before the first `:` of a reason) that warn once per class
    /// the first time they send a call to the original (`grad`).
    pub warn_categories: Vec<String>,
    /// Whether `call_check_fn` and `global_check_fn` read module state only through the
    /// helpers of `runtime::modules` (`lookup`, `non_empty_entry`), and dictionaries other than
    /// the ones those lookups reach only after `runtime::memo::static_root`. Then a compiled
    /// method keeps a memo of its read (`runtime::memo`): while no dictionary, instance
    /// dictionary or class the read saw has changed, the next call converts the same values
    /// without running the checks or the lookups again. `false` (the default) reads everything
    /// at every call.
    #[serde(default)]
    pub traced_checks: bool,
    /// Attributes every instance of a base class has, with their types (`training: bool` for
    /// `torch.nn.Module`, which its `__init__` sets). A method may read one as it reads the
    /// scalars `__init__` assigns: from the live object at every call, its type checked.
    #[serde(default)]
    pub base_attrs: Vec<(String, ValueType)>,
    /// How calling an instance reaches its compiled `forward` (API >= 1.16; `None`, the
    /// default, leaves calls to the base class's `__call__`).
    #[serde(default)]
    pub call_entry: Option<CallEntry>,
    /// Rust path of a `runtime::memo::StampFn` (API >= 1.19, used only for plugins declaring
    /// it; `None`, the default, keeps no state): what converting a value the state read found depends on (for a tensor: its
    /// storage, shape, dtype, device, and whether its admission would refuse it). With it and
    /// `traced_checks`, a compiled method keeps the state its conversions gave, and a call on
    /// an unchanged model whose values all have the same stamps uses it without converting.
    #[serde(default)]
    pub stamp_fn: Option<String>,
}

/// What the base class's `__call__` does when nothing is registered on the instance: it calls
/// one method with the same arguments (`torch.nn.Module.__call__` calls `forward`). With this,
/// the host gives each class whose `method` is compiled a `__call__` of its own that makes the
/// same call without the base's Python code in between, and hands every call the check finds
/// something in to the base's `__call__` unchanged: so `model(x)` behaves exactly as it would
/// through the base, hooks and all, and costs less on the path that matters.
///
/// The generated `__call__` is installed only on a class that defines none itself and
/// inherits the base's, and at every call it goes to the compiled method only when the call
/// passes exactly the method's positional arguments, the class's method resolution still leads
/// to the compiled wrapper (not an instance attribute, nor a subclass's override) and, past
/// the class, to the base's `__call__` it found at import (a patched base goes to the patch),
/// and `check_fn` finds nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallEntry {
    /// The method the base's `__call__` calls (`forward`).
    pub method: String,
    /// Other attributes the base's `__call__` reaches through the instance (`_call_impl`):
    /// each must still resolve on the instance's class to what the class inherited at import,
    /// and not be an attribute of the instance, for the entry to call `method` directly.
    #[serde(default)]
    pub pinned: Vec<String>,
    /// Rust path of `fn(&Bound<PyAny>, &Bound<PyDict>) -> PyResult<Option<String>>`, given the
    /// instance and its instance dictionary: why the base's `__call__` would do more than call
    /// `method` (hooks on the instance or global ones, a per-instance compiled call, a tracer),
    /// `None` when it would only call it.
    pub check_fn: String,
}

/// Arithmetic in an `__init__` value, as the host offers it to [`crate::Plugin::module_kind`]:
/// `a <op> b` is a [`ModuleCtor`] whose target is the `operator` function Python defines the
/// operator by and whose two arguments are the operands, so `nn.Parameter(torch.randn(d) * 0.02)`
/// reaches the plugin whole; `-a` is [`crate::NEG_TARGET`] with one argument. Other operators are
/// [`CtorArg::Other`]. A plugin that does not know a target answers `NotCovered`, as for any call.
pub const CTOR_OPERATORS: &[(&str, &str)] = &[
    ("+", "operator.add"),
    ("-", "operator.sub"),
    ("*", "operator.mul"),
    ("/", "operator.truediv"),
];

/// One argument of a constructor call in `__init__`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum CtorArg {
    /// A value the host could type (a literal, an annotated `__init__` parameter, a constant).
    Value(Operand),
    /// A nested call (`torch.zeros(d)` inside `nn.Parameter(...)`).
    Call(ModuleCtor),
    /// Anything else.
    Other,
}

/// A call assigned to an attribute in `__init__` (`nn.Linear(20, width, bias=False)`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModuleCtor {
    /// Resolved dotted path of the callee.
    pub target: String,
    /// Positional arguments.
    pub args: Vec<CtorArg>,
    /// Keyword arguments in source order.
    pub keywords: Vec<(String, CtorArg)>,
}

impl ModuleCtor {
    /// A keyword argument by name.
    pub fn keyword(&self, name: &str) -> Option<&CtorArg> {
        self.keywords
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    }
    /// Positional argument `i`, or else keyword `name`.
    pub fn arg(&self, i: usize, name: &str) -> Option<&CtorArg> {
        self.args.get(i).or_else(|| self.keyword(name))
    }
}

/// A plugin's answer about one constructor call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ModuleAnswer {
    /// A submodule of a known kind.
    Submodule(SubmoduleKind),
    /// A tensor attribute (`nn.Parameter(torch.zeros(d))`, a buffer's value) of this type.
    Tensor(ValueType),
    /// Recognised, but this form is not supported (the diagnostic says why).
    Rejected(Diagnostic),
    /// Not this plugin's.
    NotCovered,
}

/// A submodule kind: what it holds, what must hold at call time, and what calling it computes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubmoduleKind {
    /// The exact class an instance must have at call time (`torch.nn.Linear`).
    pub class_path: String,
    /// Attributes read from the instance at every call, with the type they must have there
    /// ([`ValueType::NoneType`]: must be `None`).
    pub attrs: Vec<(String, ValueType)>,
    /// Attributes that must equal a literal at call time (`training == False` for dropout,
    /// a constructor's literal `dim`); otherwise the original method runs.
    pub conditions: Vec<(String, Literal)>,
    /// What a call computes.
    pub call: SubmoduleCall,
}

/// What calling a submodule with one input computes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum SubmoduleCall {
    /// The input itself (`nn.Identity`, dropout in eval mode).
    Identity,
    /// A call site offered to the plugins like any other.
    Site {
        /// Dotted callee (`torch.nn.functional.linear`).
        target: String,
        /// Positional operands.
        args: Vec<CallPart>,
        /// Keyword operands.
        keywords: Vec<(String, CallPart)>,
    },
}

/// One operand of a submodule's call site.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum CallPart {
    /// The submodule's input.
    Input,
    /// One of the kind's attributes.
    Attr(String),
    /// A literal.
    Lit(Literal),
}
