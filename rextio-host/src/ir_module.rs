//! The module-class part of the IR: how a compiled method reads its state from the live
//! instance. Reads run at every call, before the body, and either produce the state (a tuple of
//! the values the body uses) or the reason the original method must run instead.

use rextio_plugin_api::{Literal, ValueType};

/// What a compiled method adds to its function IR.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodIr {
    /// `module.Class`.
    pub class_qualname: String,
    /// The class's Python name.
    pub class_name: String,
    /// The plugin whose module base the class derives from.
    pub plugin: String,
    /// The reads producing the state (object 0 is the instance).
    pub reads: Vec<ReadOp>,
    /// The state's element types, in slot order (the state parameter's tuple type).
    pub slots: Vec<ValueType>,
    /// Its decorators (each one an enabled plugin took: they add nothing the function-scope
    /// guards do not, such as `@torch.no_grad()`) make the guards hold for the whole call: the
    /// boundary enters them before it reads the state and admits the values, as the decorated
    /// original would run everything under them.
    pub decorated: bool,
}

/// One step of reading a method's state.
#[derive(Debug, Clone, PartialEq)]
pub enum ReadOp {
    /// Object `dst` is attribute `attr` of object `src`, whose class must be exactly `class`;
    /// when `called`, calling it must go straight to its forward (the plugin's call check).
    Child {
        /// Source object.
        src: usize,
        /// New object.
        dst: usize,
        /// Attribute name.
        attr: String,
        /// Dotted class path.
        class: String,
        /// Whether the method calls it.
        called: bool,
        /// Its path from the instance, for messages (`blocks.ln`).
        path: String,
    },
    /// Attribute `attr` of object `src` must equal `lit`.
    Cond {
        /// Source object.
        src: usize,
        /// Attribute name.
        attr: String,
        /// Expected value.
        lit: Literal,
        /// Path of the attribute, for messages.
        path: String,
    },
    /// State slot `slot` is attribute `attr` of object `src`, of type `ty`.
    Value {
        /// Source object.
        src: usize,
        /// Attribute name.
        attr: String,
        /// The proven type.
        ty: ValueType,
        /// Slot index.
        slot: usize,
        /// Path of the attribute, for messages.
        path: String,
        /// Found as Python finds a class attribute (the instance dictionary, then the class's
        /// method resolution order) rather than in the instance dictionary and the plugin's
        /// stores.
        on_class: bool,
    },
    /// Calling method `name` on object `obj` must run `class`'s own `name` (a method calling
    /// another method of the instance, whose compiled body it runs): no class before `class` in
    /// the method resolution order of `obj`'s class (past `after`, for `super().name(...)` in
    /// class `after`) defines it, and the instance does not hold an attribute of that name.
    Dispatch {
        /// The object.
        obj: usize,
        /// The method's name.
        name: String,
        /// Dotted path of the class whose method was compiled.
        class: String,
        /// For `super()`: dotted path of the class the call is written in.
        after: Option<String>,
        /// Its path, for messages.
        path: String,
    },
    /// Container object `obj` must hold exactly `count` elements: a sequential container's
    /// call runs every element, and the method calls the `count` it was proven with.
    Count {
        /// The container object.
        obj: usize,
        /// The number of elements.
        count: usize,
        /// The names it holds them under, in the order its call and iteration visit them
        /// (`"0"`, `"1"`, ... or the names `__init__` gave): the elements the method reads by
        /// name are then the ones the container visits, in the same order.
        names: Vec<String>,
        /// Its path, for messages.
        path: String,
    },
    /// State slot `slot` is the number of elements container object `obj` holds, an int
    /// (`len(self.layers)`).
    Len {
        /// The container object.
        obj: usize,
        /// Slot index.
        slot: usize,
        /// Its path, for messages.
        path: String,
    },
    /// State slot `slot` is the state of compiled method `callee` read from object `src`.
    State {
        /// Source object.
        src: usize,
        /// The method's qualified name.
        callee: String,
        /// Slot index.
        slot: usize,
    },
    /// State slot `slot` holds, for each element of container object `src` (its elements in
    /// order, each exactly `class`, call-checked when `called`), the tuple read by `ops` from
    /// the element (object 0 there) with slot types `elem_slots`.
    List {
        /// The container object.
        src: usize,
        /// The elements' exact class.
        class: String,
        /// Whether the method calls the elements.
        called: bool,
        /// Reads on each element.
        ops: Vec<ReadOp>,
        /// The element tuple's slot types.
        elem_slots: Vec<ValueType>,
        /// Slot index.
        slot: usize,
        /// The container's path, for messages.
        path: String,
    },
}
