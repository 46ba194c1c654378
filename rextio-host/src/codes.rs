//! The host's diagnostic codes (`RXT0NN`), in one table. Codes are never reused.

use rextio_plugin_api::CodeDoc;

/// Parameter annotation missing or not in any enabled vocabulary.
pub const PARAM_ANNOTATION: &str = "RXT001";
/// Return annotation missing or unsupported.
pub const RETURN_ANNOTATION: &str = "RXT002";
/// A statement form the host does not lower.
pub const UNSUPPORTED_STATEMENT: &str = "RXT003";
/// An expression form the host does not lower.
pub const UNSUPPORTED_EXPRESSION: &str = "RXT004";
/// A site on plugin-typed values that no enabled plugin claims.
pub const UNCLAIMED_SITE: &str = "RXT005";
/// A local re-bound with a different type.
pub const TYPE_CHANGE: &str = "RXT006";
/// A name that may be used before assignment, or a global.
pub const UNBOUND_NAME: &str = "RXT007";
/// A condition that is not an int or bool.
pub const NON_SCALAR_CONDITION: &str = "RXT008";
/// A `for` loop that is not over `range(...)`.
pub const NON_RANGE_FOR: &str = "RXT009";
/// An unsupported parameter kind.
pub const PARAMETER_KIND: &str = "RXT010";
/// A return path that does not produce the annotated type.
pub const RETURN_PATH: &str = "RXT011";
/// A scalar operation or literal the host does not lower.
pub const SCALAR_OPERATION: &str = "RXT012";
/// Two plugins claimed one site.
pub const CLAIM_CONFLICT: &str = "RXT013";
/// A plugin could not lower a site it claimed.
pub const LOWERING_FAILED: &str = "RXT014";
/// Decorated, async or generic functions.
pub const FUNCTION_KIND: &str = "RXT015";
/// A function without plugin operations.
pub const NOTHING_TO_LOWER: &str = "RXT016";

/// The generated Rust of a function did not compile; the function was rebuilt on Python.
pub const NATIVE_COMPILE_FAILED: &str = "RXT017";
/// A plugin answered outside its declared rules or codes.
pub const PLUGIN_CONTRACT: &str = "RXT018";
/// A function needs a device capability the project's target does not authorise.
pub const DEVICE_NOT_AUTHORIZED: &str = "RXT019";
/// A function mixes values of two plugins' types.
pub const MIXED_BACKENDS: &str = "RXT020";
/// A native function calls a project function that stays on Python.
pub const CALLEE_NOT_NATIVE: &str = "RXT021";
/// A function that calls itself (directly or through others).
pub const RECURSION: &str = "RXT022";
/// A method of a module class uses an attribute or construct of `self` that is not compiled.
pub const MODULE_ATTRIBUTE: &str = "RXT023";
/// A module class whose methods are not compiled (it derives from another project class).
pub const MODULE_CLASS: &str = "RXT024";

/// The code table printed by `rextio explain`.
pub const CODES: &[CodeDoc] = &[
    CodeDoc { code: PARAM_ANNOTATION, summary: "parameter annotation missing or unsupported", explanation: "Every parameter of a native function needs an annotation the host understands: `int`, `float`, `bool`, or a marker type of an enabled plugin (for example `rextio_torch.types.TensorF32Cpu2D`), spelled through a module-level import. String annotations are not resolved.\n\nAnnotate the parameter, or leave the function in Python." },
    CodeDoc { code: RETURN_ANNOTATION, summary: "return annotation missing or unsupported", explanation: "A native function needs a return annotation of `int`, `float`, `bool` or an enabled plugin's marker type, so the boundary conversion of its result is known statically." },
    CodeDoc { code: UNSUPPORTED_STATEMENT, summary: "statement form not lowered", explanation: "The host lowers assignments to plain names, augmented assignments to plain names (`h += v`: on a plugin's value it is the site of operator `+=`, whose plugin decides what the framework's in-place update means, for example only on a tensor the function made that nothing else refers to), `if/elif/else`, `while`, `for ... in range(...)`, `break`, `continue`, `return`, `pass` and docstrings. Other statements (`with`, `try`, nested `def`, tuple targets, augmented assignment to an attribute or item, expression statements with effects, loop `else` clauses) keep the function on Python." },
    CodeDoc { code: UNSUPPORTED_EXPRESSION, summary: "expression form not lowered", explanation: "Attribute reads (`x.shape`), subscripts, comprehensions, lambdas, calls to Python functions or builtins, and unary operators on tensors other than `-t` (offered to the plugin as `operator.neg(t)`) are not lowered. A list literal is lowered only as a direct argument of a plugin operation (`torch.cat([a, b])`, offered to the plugin as a tuple); bound to a name, returned, nested or passed to another function it is not, since a list may be mutated or grow (bind a tuple instead). The function keeps its Python body." },
    CodeDoc { code: UNCLAIMED_SITE, summary: "no enabled plugin claims this operation", explanation: "The call, method call or operator works on plugin-typed values, but no enabled plugin claims it with these operand types. Check `rextio capabilities` for the native surface, and `[plugins] enabled` in rextio.toml." },
    CodeDoc { code: TYPE_CHANGE, summary: "local re-bound with a different type", explanation: "Native locals have one static type. Assigning a value of another type (an int where a float was, a rank-1 tensor where a rank-2 tensor was) keeps the function on Python. Use a new name for the new value." },
    CodeDoc { code: UNBOUND_NAME, summary: "name may be unbound, or is a global", explanation: "A local is read on a path where it may not have been assigned yet (for example only assigned inside a loop or one branch of an `if`), or the name is a module global, which may change at run time. Assign it on every path before use, or pass the value as a parameter." },
    CodeDoc { code: NON_SCALAR_CONDITION, summary: "condition is not an int or bool", explanation: "`if` and `while` conditions must be int, float or bool expressions. Conditions on tensor data are tensor-data-dependent control flow and stay on Python." },
    CodeDoc { code: NON_RANGE_FOR, summary: "for loop is not over range()", explanation: "Only `for name in range(stop)`, `range(start, stop)` and `range(start, stop, step)` with int arguments are lowered." },
    CodeDoc { code: PARAMETER_KIND, summary: "unsupported parameter kind", explanation: "Native functions take plain positional-or-keyword parameters without defaults. `*args`, `**kwargs`, keyword-only parameters, defaults and the names `self`, `super`, `crate`, `Self` and `_` keep the function on Python." },
    CodeDoc { code: RETURN_PATH, summary: "a path does not return the annotated type", explanation: "Every path through a native function must end in `return <value>` whose type equals the return annotation. Falling off the end returns None in Python, and an int returned from a `-> float` function stays an int in Python, so both keep the function on Python." },
    CodeDoc { code: SCALAR_OPERATION, summary: "scalar operation or literal not lowered", explanation: "Ints are lowered as checked 64-bit integers with Python's floor division and modulo; floats as f64. Literals outside 64 bits, `**`, bitwise operators, float `//` and `%`, `is`/`in` comparisons and `and`/`or` on non-bool values keep the function on Python." },
    CodeDoc { code: CLAIM_CONFLICT, summary: "two plugins claim one site", explanation: "Two enabled plugins both claimed the same site. The host refuses to pick one; the function stays on Python. Disable one of the plugins in rextio.toml or report the overlap to their authors." },
    CodeDoc { code: LOWERING_FAILED, summary: "a claimed site could not be lowered", explanation: "The plugin claimed the site but refused to lower it: its claim no longer matches what lowering sees. This is a plugin bug; the function stays on Python so nothing unproven runs natively." },
    CodeDoc { code: FUNCTION_KIND, summary: "decorated, async or generic function", explanation: "Decorators can replace a function, `async def` returns a coroutine, and type parameters are not lowered; such functions stay on Python. The exception is a decorator an enabled plugin proves harmless for its native code: rextio-torch takes `@torch.no_grad()`, `@torch.no_grad`, `@torch.inference_mode()` and `@torch.inference_mode`, whose contract (outputs never require grad, the caller's grad mode restored) its native functions already keep." },
    CodeDoc { code: NOTHING_TO_LOWER, summary: "function has no plugin operations", explanation: "The function uses no operation of an enabled plugin, so there is nothing to run natively; it stays on Python. This is informational." },
    CodeDoc { code: NATIVE_COMPILE_FAILED, summary: "the function's generated Rust did not compile", explanation: "A plugin lowered every site of the function, but rustc rejected the generated code that falls inside this function. The host rebuilt the crate with the function on its Python body, so the rest of the project stays native; the diagnostic names the plugins and rules used in the function and rustc's first error. This is a plugin bug: report it to the plugin's authors. `rextio build --strict` makes it an error instead." },
    CodeDoc { code: DEVICE_NOT_AUTHORIZED, summary: "device capability not authorised", explanation: "The function uses types a plugin lowers only on an accelerator (for example CUDA tensors), and the plugin names the device capability it needs. Such code is lowered only when the project's `[target]` selects a device provider that authorised exactly that capability in its preflight on this machine. The diagnostic names the capability and the provider's status and stable reason code (for example `driver-missing` on a machine without a GPU driver). Configure `[target]` in rextio.toml (device_provider, device_capability, [target.device_options]), run on a machine where the preflight is ready, or use CPU types; the function stays on Python meanwhile." },
    CodeDoc { code: MIXED_BACKENDS, summary: "function mixes values of two backends", explanation: "A native function runs on one backend's runtime: its tensors are, say, all libtorch tensors or all TensorFlow eager tensors. A function whose parameters, locals or results have types of two plugins (for example a `rextio_torch.types.TensorF32Cpu2D` and a `rextio_tensorflow.types.TensorF32Cpu2D`) would need a conversion no plugin proves, so it stays on Python. Split it into one function per backend; plugins without types of their own (scalar helpers) may be combined with either." },
    CodeDoc { code: CALLEE_NOT_NATIVE, summary: "calls a function that stays on Python", explanation: "A native function may call another function of the project (in its module, or imported with `from .layers import block`, `from pkg.layers import block` or `import pkg.layers as L`) directly in Rust, with no Python round trip, but only when that function is native too. The callee named in the diagnostic stays on Python for the reason shown (its own first diagnostic), so the caller does as well: routes are decided together, to a fixed point. Fix the callee, and its callers follow. A call whose arguments do not match the callee's annotated parameter types exactly, or whose callee has unannotated parameters, defaults, *args or **kwargs, is reported the same way." },
    CodeDoc { code: RECURSION, summary: "recursive function", explanation: "A function that can call itself, directly or through other native functions, stays on Python: its depth is data-dependent and a native stack overflow would abort the interpreter instead of raising RecursionError. Write the recursion as a loop." },
    CodeDoc { code: PLUGIN_CONTRACT, summary: "a plugin answered outside its declared contract", explanation: "Every claim must name one of the plugin's declared native rules and every rejection must carry one of its documented diagnostic codes, so that reports, certification and `rextio explain` can account for it. The plugin did neither, so the registry ignored its answer; `rextio check` and `rextio build` stop with an error naming the plugin. This is a plugin bug: report it to the plugin's authors, or disable the plugin in rextio.toml." },
    CodeDoc { code: MODULE_ATTRIBUTE, summary: "a method uses an attribute or construct of self that is not compiled", explanation: "A method of a module class (a class deriving from a base an enabled plugin declares, such as `torch.nn.Module` through any import alias) is compiled like a function whose weights come from `self`; its typed parameters and return follow the rules of functions, and `self` is its first parameter. `__init__` stays Python and is read statically: each `self.name = ...` at its top level (not inside `if`, loops, `with` or `try`, and assigned once) is a submodule the plugin knows (`rextio explain RXTP-TORCH-031`), a `Sequential` of submodules (also unpacking a list display, a comprehension over `range(n)` with `n` stated, or a list built in `__init__`, or given one `OrderedDict` of `(\"name\", module)` pairs), a `ModuleDict` given a dict display with string literal keys or one `OrderedDict` (its elements read by a string literal key, `self.heads[\"cls\"]`, or as attributes, `self.heads.cls`), a `ModuleList` built from a list literal, a comprehension (`[Block(w) for _ in range(n)]`) or a list built in `__init__` (a local `name = [...]` grown by `append`, `extend` and `+=` at the top level or directly in a `for _ in range(n)` loop with `n` stated), or created empty and filled by `self.name.append(Block(w))` in `__init__`, whose elements are all one kind, an instance of another module class of the project, a tensor made by a factory call, alone or with `+ - * /` and a Python number (`nn.Parameter(torch.randn(d) * 0.02)`, `self.register_buffer(\"name\", torch.ones(d))`, `self.register_parameter(\"name\", nn.Parameter(...))`), or an int, float, bool or None (a literal, an `__init__` parameter annotated or defaulted as one, or arithmetic on those). A method reading any other attribute, calling a submodule with other than its one input, calling a container that is not sequential, iterating something other than a module list (directly, through `enumerate`, or, written out per element and so only with the length `__init__` states, through `zip` or in a comprehension passed to an operation), taking `len()` of anything but a module list or `Sequential`, indexing one by other than an int literal (or from the end when `__init__` does not state its length; `self.layers[i]` is lowered inside `for i in range(len(self.layers)):`), or using `self` as a value stays on Python; the message names the attribute. At run time a compiled method reads every value it uses from the live object at each call and runs the original method when anything differs from what was proven: a submodule's exact class, the number, names and order of the modules a `Sequential` holds, an attribute's type, dtype or rank, a condition such as eval mode for dropout, a hook on a submodule or a global module hook, grad recording, or, for a method calling another method of `self` (or of its parent through `super()`), an instance whose class resolves that method to another function than the compiled one (a subclass overriding it) or that holds an attribute of its name." },
    CodeDoc { code: MODULE_CLASS, summary: "methods of a module class with several bases are not compiled", explanation: "A class deriving from one module class of the project is compiled like its parent: it has the parent's attributes (its own `__init__` may assign more, or assign some again), it inherits the parent's methods (compiled once, for every instance), and its own methods may call inherited ones (`self.helper(x)`, which checks the instance's class at run time) and the parent's (`super().forward(x)`). A class deriving from a project module class and another base (a mixin, a second module class) is reported method by method and runs as Python: which base answers an attribute or method depends on the method resolution order, which is not followed. Derive from one module class to compile its methods." },
];
