//! Module classes: a class deriving from a module base an enabled plugin declares
//! (`torch.nn.Module`) is read statically, and its typed methods are analysed like functions
//! whose state comes from `self`.
//!
//! `__init__` stays Python. Each `self.name = value` at its top level is classified: a submodule
//! of a kind the plugin knows, a `Sequential` or `ModuleList` of such, an instance of another
//! module class of the project, a tensor attribute (its type from the plugin), or a scalar. A
//! method reading `self.a.b` gets a *state slot* for it: the method's first parameter is the
//! tuple of every value it reads, and [`crate::ir_module::ReadOp`]s say how the boundary reads
//! each one from the live instance at every call (checking each submodule's exact class, the
//! plugin's conditions and call checks on the way). Calls of submodules become ordinary plugin
//! sites (`self.fc(x)` is `F.linear(x, <self.fc.weight>, <self.fc.bias>)`), calls of project
//! module instances and of other methods become calls of their native bodies with their own
//! state, and `for block in self.blocks:` iterates the element states.

use super::*;
use crate::ir_module::{MethodIr, ReadOp};
use rextio_plugin_api::{
    CallPart, CtorArg, ModuleAnswer, ModuleCtor, ModuleSupport, SubmoduleCall, SubmoduleKind,
    CTOR_OPERATORS,
};
use std::cell::RefCell;

/// A module class of the project, as its `__init__` describes it.
#[derive(Debug, Clone)]
pub struct ClassInfo {
    /// `module.Class`.
    pub qualname: String,
    /// `Class`.
    pub name: String,
    /// The plugin whose base it derives from.
    pub plugin: String,
    /// That base, dotted.
    pub base: String,
    /// Attributes assigned in `__init__`: what each holds, or why it is not read.
    pub attrs: BTreeMap<String, Result<Attr, String>>,
    /// Names of the methods it defines itself (`__init__` excluded).
    pub methods: BTreeSet<String>,
    /// Names bound in its class body or a parent's (`SCALE = 0.5`), each with the class that
    /// binds it and what it holds: an int, float or bool literal, read at each call as Python
    /// finds it (the instance dictionary, then the class), or why it is not read.
    pub class_attrs: BTreeMap<String, (String, Result<ValueType, String>)>,
    /// The module class of the project it derives from, if any (its attributes and methods are
    /// this class's too, unless this class assigns or defines them again).
    pub parent: Option<String>,
    /// Its other bases (mixins beside the module base, its own or a parent's), dotted where
    /// they are imported: nothing they define is read.
    pub other_bases: Vec<String>,
}

/// What an attribute holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Attr {
    /// A value read at every call (a tensor, a scalar, `None`).
    Value(ValueType),
    /// A submodule.
    Sub(Sub),
}

/// A submodule.
#[derive(Debug, Clone, PartialEq)]
pub enum Sub {
    /// A kind the plugin knows.
    Kind(SubmoduleKind),
    /// An instance of a project module class (its qualified name).
    Project(String),
    /// A container calling its elements in order.
    Seq {
        /// Its class.
        class: String,
        /// The elements.
        items: Vec<Sub>,
        /// The elements' names when `__init__` gives them (`Sequential(OrderedDict(...))`);
        /// `None` for the positional names `"0"`, `"1"`, ...
        names: Option<Vec<String>>,
    },
    /// A container of named elements, each read by its name (`self.heads["cls"]`,
    /// `self.heads.cls`), never called or iterated.
    Dict {
        /// Its class.
        class: String,
        /// The elements.
        items: Vec<Sub>,
        /// Their names, in order.
        names: Vec<String>,
    },
    /// A container iterated by a method; every element has one kind.
    List {
        /// Its class.
        class: String,
        /// The elements' kind.
        elem: Box<Sub>,
        /// The length `__init__` states (see [`InitReader::stated_length`]); the list may be
        /// changed later, so this is only a hint.
        expect: Option<usize>,
    },
}

impl Sub {
    /// The key under which this container holds its element `i` in `_modules`: the name
    /// `__init__` gave it (`Sequential(OrderedDict(...))`), else its position.
    fn element_name(&self, i: usize) -> String {
        match self {
            Sub::Seq {
                names: Some(names), ..
            }
            | Sub::Dict { names, .. } => names.get(i).cloned().unwrap_or_else(|| i.to_string()),
            _ => i.to_string(),
        }
    }

    fn class(&self) -> &str {
        match self {
            Sub::Kind(k) => &k.class_path,
            Sub::Project(q) => q,
            Sub::Seq { class, .. } | Sub::List { class, .. } | Sub::Dict { class, .. } => class,
        }
    }
}

/// The first answer `found` gives for a base of `c` (resolved to its dotted path, in order)
/// and an enabled plugin that reads module classes (with its id and module support).
fn find_base<T>(
    module: &SourceModule,
    registry: &Registry,
    enabled: &[String],
    c: &ast::StmtClassDef,
    mut found: impl FnMut(&String, &str, ModuleSupport) -> Option<T>,
) -> Option<T> {
    let bases = c.arguments.as_ref().map(|a| &a.args[..]).unwrap_or(&[]);
    let empty = ProjectIndex::default();
    let fx = Fx::new(module, registry, enabled, &empty);
    for b in bases {
        let Some(path) = fx.dotted_global(b) else {
            continue;
        };
        for id in enabled {
            let Some(reg) = registry.plugin(id) else {
                continue;
            };
            if !reg.negotiated.module_classes {
                continue;
            }
            if let Some(support) = reg.plugin.module_support() {
                if let Some(answer) = found(id, &path, support) {
                    return Some(answer);
                }
            }
        }
    }
    None
}

/// The plugin and module base a class derives from, when it is a module class.
pub(super) fn class_base(
    module: &SourceModule,
    registry: &Registry,
    enabled: &[String],
    c: &ast::StmtClassDef,
) -> Option<(String, String, ModuleSupport)> {
    find_base(module, registry, enabled, c, |id, path, support| {
        support
            .bases
            .iter()
            .any(|b| b == path)
            .then(|| (id.clone(), path.to_owned(), support))
    })
}

/// The framework class `c` derives from when it is not a module class but one of the
/// framework's other classes next to its module base (`torch.nn.Sequential`, `torch.nn.Linear`:
/// a declared container, or a class of the package a declared base lives in), with that base
/// (`torch.nn.Module`). Such a class is not read: what the framework class does around the
/// user's methods (a `Sequential`'s own `forward`, a layer's parameters) is not followed.
pub(super) fn framework_base(
    module: &SourceModule,
    registry: &Registry,
    enabled: &[String],
    c: &ast::StmtClassDef,
) -> Option<(String, String)> {
    if class_base(module, registry, enabled, c).is_some() {
        return None;
    }
    find_base(module, registry, enabled, c, |_, path, support| {
        let base = support.bases.first()?;
        let container = [&support.sequential, &support.lists, &support.dicts]
            .iter()
            .any(|l| l.iter().any(|c| c == path));
        let beside = support.bases.iter().any(|b| {
            b.rsplit_once('.')
                .is_some_and(|(package, _)| path.starts_with(&format!("{package}.")))
        });
        (container || beside).then(|| (path.to_owned(), base.clone()))
    })
}

/// Read every module class of `module` (for the project index).
pub(super) fn read_classes(
    module: &SourceModule,
    registry: &Registry,
    enabled: &[String],
    project_classes: &BTreeSet<String>,
    out: &mut BTreeMap<String, ClassInfo>,
) {
    for s in &module.ast.body {
        let ast::Stmt::ClassDef(c) = s else { continue };
        let Some((plugin, base, support)) = class_base(module, registry, enabled, c) else {
            continue;
        };
        let info = read_class(
            module,
            registry,
            enabled,
            project_classes,
            c,
            (plugin, base, &support),
            None,
        );
        out.insert(info.qualname.clone(), info);
    }
}

/// Class `c` of `module`, deriving from `base` (of `plugin`) directly or through `parent`,
/// whose attributes are its own: those its own `__init__` assigns (if it defines one) over the
/// parent's.
fn read_class(
    module: &SourceModule,
    registry: &Registry,
    enabled: &[String],
    project_classes: &BTreeSet<String>,
    c: &ast::StmtClassDef,
    (plugin, base, support): (String, String, &ModuleSupport),
    parent: Option<&ClassInfo>,
) -> ClassInfo {
    let mut methods = BTreeSet::new();
    let mut init = None;
    let name = c.name.as_str().to_owned();
    let mut class_attrs = parent.map(|p| p.class_attrs.clone()).unwrap_or_default();
    // Class-body values are typed as `__init__`'s are, by the same reader before it reads
    // `__init__` (no parameters in scope yet): literals, the module's constants, and arithmetic
    // on them (`1.0 / 8`, `math.sqrt(64)`).
    let mut reader = InitReader {
        module,
        registry,
        enabled,
        plugin: &plugin,
        support,
        project_classes,
        params: BTreeMap::new(),
        int_defaults: BTreeMap::new(),
        self_name: String::new(),
        local_lists: BTreeMap::new(),
    };
    let class_value = |value: &ast::Expr, targets: usize| -> Result<ValueType, String> {
        if targets != 1 {
            return Err("bound together with other names".to_owned());
        }
        match reader.ctor_arg(value) {
            CtorArg::Value(Operand {
                ty: Some(t @ (ValueType::Int | ValueType::Float | ValueType::Bool)),
                ..
            }) => Ok(t),
            _ => Err(
                "not an int, float or bool (a literal, a module constant or arithmetic on them)"
                    .to_owned(),
            ),
        }
    };
    for s in &c.body {
        match s {
            ast::Stmt::FunctionDef(f) => {
                if f.name.as_str() == "__init__" {
                    init = Some(f);
                } else {
                    methods.insert(f.name.as_str().to_owned());
                }
            }
            ast::Stmt::Assign(a) => {
                for t in &a.targets {
                    if let ast::Expr::Name(n) = t {
                        let value = class_value(&a.value, a.targets.len());
                        class_attrs.insert(n.id.as_str().to_owned(), (name.clone(), value));
                    }
                }
            }
            ast::Stmt::AnnAssign(a) => {
                if let (ast::Expr::Name(n), Some(v)) = (&*a.target, a.value.as_deref()) {
                    class_attrs.insert(n.id.as_str().to_owned(), (name.clone(), class_value(v, 1)));
                }
            }
            _ => {}
        }
    }
    let mut attrs = parent.map(|p| p.attrs.clone()).unwrap_or_default();
    if let Some(f) = init {
        attrs.extend(reader.read(f));
    }
    let other_bases = match parent {
        Some(p) => p.other_bases.clone(),
        None => base_names(module, registry, enabled, c)
            .into_iter()
            .filter(|b| *b != base)
            .collect(),
    };
    ClassInfo {
        qualname: qualname_of(module, &name),
        name,
        plugin,
        base,
        attrs,
        methods,
        class_attrs,
        parent: parent.map(|p| p.qualname.clone()),
        other_bases,
    }
}

/// The bases of `c` as written, dotted where they are imported (the source text otherwise),
/// without `object`.
pub(super) fn base_names(
    module: &SourceModule,
    registry: &Registry,
    enabled: &[String],
    c: &ast::StmtClassDef,
) -> Vec<String> {
    let empty = ProjectIndex::default();
    let fx = Fx::new(module, registry, enabled, &empty);
    c.arguments
        .as_ref()
        .map(|a| &a.args[..])
        .unwrap_or(&[])
        .iter()
        .map(|b| {
            fx.dotted_global(b)
                .unwrap_or_else(|| module.source[b.range()].to_owned())
        })
        .filter(|b| b != "object" && b != "builtins.object")
        .collect()
}

/// The one module class of the project `c` derives from, when it derives from exactly one base
/// and `is_class` says that base is one.
pub(super) fn project_parent(
    module: &SourceModule,
    registry: &Registry,
    c: &ast::StmtClassDef,
    is_class: &dyn Fn(&str) -> bool,
) -> Option<String> {
    match c.arguments.as_ref().map(|a| &a.args[..]).unwrap_or(&[]) {
        [base] => base_class(module, registry, base, is_class),
        _ => None,
    }
}

/// The class a base expression names, when `is_class` says it is one: a class of the module by
/// its name, or a dotted path through the module's imports.
pub(super) fn base_class(
    module: &SourceModule,
    registry: &Registry,
    base: &ast::Expr,
    is_class: &dyn Fn(&str) -> bool,
) -> Option<String> {
    if let ast::Expr::Name(n) = base {
        let own = qualname_of(module, n.id.as_str());
        if is_class(&own) {
            return Some(own);
        }
    }
    let empty = ProjectIndex::default();
    let path = Fx::new(module, registry, &[], &empty).dotted_global(base)?;
    is_class(&path).then_some(path)
}

/// Read every class deriving from another module class of the project (one base), parents
/// first: the parent's plugin and base, the parent's attributes overlaid with the ones the
/// class's own `__init__` assigns (when it defines one; the parent's are set by its
/// `super().__init__(...)`, and every read is checked at run time anyway), and the methods it
/// defines itself. Inherited methods are the parent's, compiled once for every instance.
pub(super) fn read_derived_classes(
    modules: &[SourceModule],
    registry: &Registry,
    enabled: &[String],
    project_classes: &BTreeSet<String>,
    out: &mut BTreeMap<String, ClassInfo>,
) {
    loop {
        let mut added = false;
        for module in modules {
            for s in &module.ast.body {
                let ast::Stmt::ClassDef(c) = s else { continue };
                let qualname = qualname_of(module, c.name.as_str());
                if out.contains_key(&qualname) {
                    continue;
                }
                let known = |q: &str| out.contains_key(q);
                let Some(parent) = project_parent(module, registry, c, &known) else {
                    continue;
                };
                let p = out[&parent].clone();
                let Some(support) = registry
                    .plugin(&p.plugin)
                    .and_then(|r| r.plugin.module_support())
                else {
                    continue;
                };
                let info = read_class(
                    module,
                    registry,
                    enabled,
                    project_classes,
                    c,
                    (p.plugin.clone(), p.base.clone(), &support),
                    Some(&p),
                );
                out.insert(qualname, info);
                added = true;
            }
        }
        if !added {
            return;
        }
    }
}

/// The qualified names of the project's module classes (before reading them, so that a class
/// may hold instances of classes defined after it or in other modules).
pub(super) fn module_class_names(
    modules: &[SourceModule],
    registry: &Registry,
    enabled: &[String],
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for module in modules {
        for s in &module.ast.body {
            if let ast::Stmt::ClassDef(c) = s {
                if class_base(module, registry, enabled, c).is_some() {
                    out.insert(qualname_of(module, c.name.as_str()));
                }
            }
        }
    }
    // Classes deriving from those, parents first.
    loop {
        let mut added = Vec::new();
        for module in modules {
            for s in &module.ast.body {
                let ast::Stmt::ClassDef(c) = s else { continue };
                let q = qualname_of(module, c.name.as_str());
                let known = |q: &str| out.contains(q);
                if !out.contains(&q) && project_parent(module, registry, c, &known).is_some() {
                    added.push(q);
                }
            }
        }
        if added.is_empty() {
            return out;
        }
        out.extend(added);
    }
}

struct InitReader<'a> {
    module: &'a SourceModule,
    registry: &'a Registry,
    enabled: &'a [String],
    plugin: &'a str,
    support: &'a ModuleSupport,
    project_classes: &'a BTreeSet<String>,
    /// `__init__` parameters with the type of their annotation or default.
    params: BTreeMap<String, Option<ValueType>>,
    /// `__init__` parameters whose default is an int literal, with it.
    int_defaults: BTreeMap<String, i64>,
    self_name: String,
    /// Lists built in local variables of `__init__` so far (`layers = []`, then appends), as
    /// the statement being read finds them.
    local_lists: BTreeMap<String, LocalList>,
}

/// A list a local variable of `__init__` holds, followed through the statements at its top
/// level.
#[derive(Debug, Clone)]
enum LocalList {
    /// Its elements, in order.
    Known(Vec<ast::Expr>),
    /// Why it is not followed.
    Unknown(String),
}

/// The most elements a container `__init__` builds may be written out with (a comprehension
/// unpacked into a `Sequential`, a list followed through `__init__`).
const MAX_WRITTEN_OUT: usize = 64;

/// Whether identifier `name` occurs as a whole word in `text` (a conservative test of whether
/// a statement mentions a local: a string containing the word counts too).
fn mentions(text: &str, name: &str) -> bool {
    let ident = |c: char| c == '_' || c.is_alphanumeric();
    text.match_indices(name).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + name.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

impl InitReader<'_> {
    fn read(&mut self, f: &ast::StmtFunctionDef) -> BTreeMap<String, Result<Attr, String>> {
        let mut attrs: BTreeMap<String, Result<Attr, String>> = BTreeMap::new();
        let p = &f.parameters;
        let mut all = p
            .posonlyargs
            .iter()
            .chain(p.args.iter())
            .chain(p.kwonlyargs.iter());
        let Some(first) = all.next() else {
            return attrs;
        };
        self.self_name = first.parameter.name.as_str().to_owned();
        let empty = ProjectIndex::default();
        let fx = Fx::new(self.module, self.registry, self.enabled, &empty);
        for pd in all {
            let ty = pd
                .parameter
                .annotation
                .as_deref()
                .and_then(|a| fx.annotation(a))
                .filter(is_scalar);
            let default = pd.default.as_deref().and_then(|d| self.literal(d));
            let ty = ty.or_else(|| default.as_ref().map(lit_type).filter(is_scalar));
            let name = pd.parameter.name.as_str().to_owned();
            if let Some(Literal::Int(n)) = default {
                self.int_defaults.insert(name.clone(), n);
            }
            self.params.insert(name, ty);
        }
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for s in &f.body {
            self.follow_lists(s);
            match s {
                ast::Stmt::Assign(a) => {
                    let [target] = a.targets.as_slice() else {
                        continue;
                    };
                    let Some(name) = self.self_attr(target) else {
                        continue;
                    };
                    *seen.entry(name.clone()).or_default() += 1;
                    let value = match self.empty_list(&a.value) {
                        Some(class) => self.appended_list(&name, class, &f.body),
                        None => self.classify(&a.value),
                    };
                    attrs.insert(name, value);
                }
                ast::Stmt::AnnAssign(a) => {
                    let (Some(name), Some(v)) = (self.self_attr(&a.target), a.value.as_deref())
                    else {
                        continue;
                    };
                    *seen.entry(name.clone()).or_default() += 1;
                    attrs.insert(name, self.classify(v));
                }
                ast::Stmt::Expr(e) => {
                    if let Some((name, value)) = self.registration(&e.value) {
                        *seen.entry(name.clone()).or_default() += 1;
                        attrs.insert(name, value);
                    }
                }
                other => {
                    // Assignments inside blocks make the attribute depend on a branch.
                    let mut inner = BTreeSet::new();
                    self.nested_targets(std::slice::from_ref(other), &mut inner);
                    for n in inner {
                        *seen.entry(n.clone()).or_default() += 2;
                        attrs.insert(n, Err("it is assigned inside a block of `__init__`".into()));
                    }
                }
            }
        }
        for (n, count) in seen {
            if count > 1 {
                attrs.insert(
                    n,
                    Err("it is assigned more than once in `__init__`, or inside a block".into()),
                );
            }
        }
        attrs
    }

    /// Follow the local lists of `__init__` through statement `s` (at its top level):
    /// `name = [...]` starts one; `name.append(m)`, `name.extend([...])` and `name += [...]`
    /// add to it, also directly in the body of a `for _ in range(n)` loop with `n` stated
    /// (written out `n` times); any other statement that mentions a followed list stops
    /// following it. A container built from the list (`nn.Sequential(*name)`) reads it as it
    /// is at that statement.
    fn follow_lists(&mut self, s: &ast::Stmt) {
        const HOW: &str = "(rextio follows `name = [...]`, then `name.append(m)`, `name.extend([...])` and `name += [...]` at the top level of `__init__` or directly in a `for _ in range(n)` loop with `n` stated; a list comprehension over such a `range(n)` counts as a list display)";
        if let ast::Stmt::Assign(a) = s {
            if let [ast::Expr::Name(n)] = a.targets.as_slice() {
                let name = n.id.as_str().to_owned();
                let list = match self.list_elements(&a.value) {
                    Some(elts) if !self.mentions_lists(a.value.as_ref()) => LocalList::Known(elts),
                    _ => LocalList::Unknown(format!(
                        "`{name}` is assigned something other than a list display {HOW}"
                    )),
                };
                // A followed list the value mentions may now be reached under another name.
                self.stop_following(s, HOW);
                self.local_lists.insert(name, list);
                return;
            }
            // A container built from a list only reads it.
            if a.targets.len() == 1
                && self.self_attr(&a.targets[0]).is_some()
                && self.only_unpacks_lists(&a.value)
            {
                return;
            }
        }
        if let Some(ops) = self.list_ops(s) {
            for (name, elts) in ops {
                self.extend_list(&name, &elts);
            }
            return;
        }
        if let ast::Stmt::For(f) = s {
            // Every pass runs the whole body: no statement of it may leave the loop early, and
            // the loop variable is not a followed list.
            let control = |b: &ast::Stmt| {
                ["break", "continue", "return", "raise", "yield"]
                    .iter()
                    .any(|w| mentions(self.text(b), w))
            };
            let mut ops = Vec::new();
            let mut plain = f.orelse.is_empty() && !self.mentions_lists(f.target.as_ref());
            for b in &f.body {
                match self.list_ops(b) {
                    Some(o) => ops.extend(o),
                    None => plain &= !self.mentions_lists(b) && !control(b),
                }
            }
            if let (Some(n), true) = (self.stated_length(&f.iter), plain) {
                for _ in 0..n {
                    for (name, elts) in &ops {
                        self.extend_list(name, elts);
                    }
                }
                return;
            }
        }
        self.stop_following(s, HOW);
    }

    /// Stop following every list statement `s` mentions.
    fn stop_following(&mut self, s: &ast::Stmt, how: &str) {
        let text = self.text(s).to_owned();
        for (name, list) in self.local_lists.iter_mut() {
            if mentions(&text, name) && matches!(list, LocalList::Known(_)) {
                *list = LocalList::Unknown(format!(
                    "`{name}` is changed by a statement rextio does not follow {how}"
                ));
            }
        }
    }

    /// Add `elts` to followed list `name` (when it is followed).
    fn extend_list(&mut self, name: &str, elts: &[ast::Expr]) {
        let Some(list) = self.local_lists.get_mut(name) else {
            return;
        };
        if let LocalList::Known(items) = list {
            items.extend(elts.iter().cloned());
            if items.len() > MAX_WRITTEN_OUT {
                *list =
                    LocalList::Unknown(format!("`{name}` grows past {MAX_WRITTEN_OUT} elements"));
            }
        }
    }

    /// Statement `s` as additions to followed lists: `name.append(m)`, `name.extend([...])`,
    /// `name += [...]` (whose elements mention no followed list). `None` when it is not one.
    fn list_ops(&self, s: &ast::Stmt) -> Option<Vec<(String, Vec<ast::Expr>)>> {
        let followed = |n: &str| self.local_lists.contains_key(n);
        match s {
            ast::Stmt::Expr(e) => {
                let ast::Expr::Call(c) = e.value.as_ref() else {
                    return None;
                };
                let ast::Expr::Attribute(a) = c.func.as_ref() else {
                    return None;
                };
                let ast::Expr::Name(n) = a.value.as_ref() else {
                    return None;
                };
                if !followed(n.id.as_str()) || !c.arguments.keywords.is_empty() {
                    return None;
                }
                let elts = match (a.attr.as_str(), c.arguments.args.as_ref()) {
                    ("append", [m]) => vec![m.clone()],
                    ("extend", [l]) => self.list_elements(l)?,
                    _ => return None,
                };
                if elts.iter().any(|e| self.mentions_lists(e)) {
                    return None;
                }
                Some(vec![(n.id.as_str().to_owned(), elts)])
            }
            ast::Stmt::AugAssign(a) if a.op == ast::Operator::Add => {
                let ast::Expr::Name(n) = a.target.as_ref() else {
                    return None;
                };
                if !followed(n.id.as_str()) || self.mentions_lists(a.value.as_ref()) {
                    return None;
                }
                Some(vec![(
                    n.id.as_str().to_owned(),
                    self.list_elements(&a.value)?,
                )])
            }
            _ => None,
        }
    }

    /// The elements of a list display, or `n` copies of a list comprehension's element over
    /// `range(n)` with `n` stated (at most [`MAX_WRITTEN_OUT`]).
    fn list_elements(&self, e: &ast::Expr) -> Option<Vec<ast::Expr>> {
        match e {
            ast::Expr::List(l) => Some(l.elts.clone()),
            ast::Expr::ListComp(lc)
                if lc.generators.len() == 1
                    && lc.generators[0].ifs.is_empty()
                    && !lc.generators[0].is_async =>
            {
                let n = self
                    .stated_length(&lc.generators[0].iter)
                    .filter(|n| *n <= MAX_WRITTEN_OUT)?;
                Some(vec![(*lc.elt).clone(); n])
            }
            _ => None,
        }
    }

    /// Whether the source of `node` (an expression or a statement) mentions a followed list.
    fn mentions_lists(&self, node: &impl Ranged) -> bool {
        let text = self.text(node);
        self.local_lists.keys().any(|n| mentions(text, n))
    }

    /// The source text of `node` ("" when its range is not in the source).
    fn text(&self, node: &impl Ranged) -> &str {
        self.module
            .source
            .get(node.range().to_std_range())
            .unwrap_or("")
    }

    /// Whether `e` uses followed lists only as `*name` or as the one argument of a call
    /// (`nn.Sequential(*layers)`, `nn.ModuleList(blocks)`), which read the list.
    fn only_unpacks_lists(&self, e: &ast::Expr) -> bool {
        let ast::Expr::Call(c) = e else {
            return !self.mentions_lists(e);
        };
        let container = self.resolve(&c.func).is_some_and(|t| {
            self.support.sequential.contains(&t) || self.support.lists.contains(&t)
        });
        if !container {
            return !self.mentions_lists(e);
        }
        if self.mentions_lists(c.func.as_ref())
            || c.arguments
                .keywords
                .iter()
                .any(|k| self.mentions_lists(&k.value))
        {
            return false;
        }
        c.arguments.args.iter().all(|a| match a {
            ast::Expr::Starred(st) => match st.value.as_ref() {
                ast::Expr::Name(_) => true,
                other => !self.mentions_lists(other),
            },
            ast::Expr::Name(_) if c.arguments.args.len() == 1 => true,
            other => !self.mentions_lists(other),
        })
    }

    /// The elements the local list `n` holds at this statement, or why a container that
    /// `verb` it ("unpacks", "is given") is not read.
    fn followed_list(&self, n: &ast::ExprName, verb: &str) -> Result<&[ast::Expr], Why> {
        let name = n.id.as_str();
        match self.local_lists.get(name) {
            Some(LocalList::Known(items)) => Ok(items),
            Some(LocalList::Unknown(why)) => Err(Why::Predicate(format!(
                "{verb} `{name}`, which is not followed: {why}"
            ))),
            None => Err(Why::Predicate(format!(
                "{verb} `{name}`, which is not a list built in `__init__`"
            ))),
        }
    }

    /// `nn.ModuleList()` or `nn.ModuleList([])`: the list class.
    fn empty_list(&self, e: &ast::Expr) -> Option<String> {
        let ast::Expr::Call(c) = e else {
            return None;
        };
        let empty = match c.arguments.args.as_ref() {
            [] => true,
            [ast::Expr::List(l)] => l.elts.is_empty(),
            _ => false,
        };
        if !empty || !c.arguments.keywords.is_empty() {
            return None;
        }
        let target = self.resolve(&c.func)?;
        self.support
            .lists
            .contains(&target)
            .then(|| self.support.lists[0].clone())
    }

    /// `self.name = nn.ModuleList()` filled in `__init__` by `self.name.append(<submodule>)`
    /// (at its top level, or in loops and branches): a module list whose elements are all the
    /// one kind every append gives. The method checks each live element's exact class and state
    /// at every call, so the list may be changed anyhow later. Its length is stated (a hint for
    /// writing loops out, checked at every call) when every append is at the top level or
    /// directly in a top-level `for _ in range(n)` whose `n` is known.
    fn appended_list(&self, name: &str, class: String, body: &[ast::Stmt]) -> Result<Attr, String> {
        let mut appends = Vec::new();
        let mut expect = Some(0usize);
        for s in body {
            let before = appends.len();
            self.appends(name, std::slice::from_ref(s), &mut appends);
            let added = appends.len() - before;
            if added == 0 {
                continue;
            }
            // Appends the length can be counted from: the statement itself, or the statements
            // directly in a `for _ in range(n)` loop's body with `n` known.
            let counted = match s {
                ast::Stmt::For(f) if f.orelse.is_empty() => {
                    let direct = f
                        .body
                        .iter()
                        .filter(|s| self.append_of(name, s).is_some())
                        .count();
                    self.stated_length(&f.iter)
                        .filter(|_| direct == added)
                        .and_then(|n| n.checked_mul(direct))
                }
                s if self.append_of(name, s).is_some() => Some(1),
                _ => None,
            };
            expect = expect.zip(counted).and_then(|(e, c)| e.checked_add(c));
        }
        let what = format!("it is assigned `{class}()` and filled by `self.{name}.append(...)`");
        let mut elem: Option<Sub> = None;
        for e in appends {
            let s = match self.value_of(e) {
                Ok(Attr::Sub(s)) => s,
                Ok(Attr::Value(_)) => {
                    return Err(format!(
                        "{what}, which appends a value that is not a submodule"
                    ))
                }
                Err(w) => return Err(format!("{what}, which appends {w}")),
            };
            match &elem {
                Some(prev) if prev != &s => {
                    return Err(format!(
                        "{what} with submodules of different kinds (a compiled loop needs one kind)"
                    ))
                }
                _ => elem = Some(s),
            }
        }
        let Some(elem) = elem else {
            return Err(format!(
                "it is assigned an empty `{class}()`, and `__init__` appends nothing to it"
            ));
        };
        Ok(Attr::Sub(Sub::List {
            class,
            elem: Box::new(elem),
            expect,
        }))
    }

    /// The argument of `self.<name>.append(<arg>)` when `s` is that statement.
    fn append_of<'e>(&self, name: &str, s: &'e ast::Stmt) -> Option<&'e ast::Expr> {
        let ast::Stmt::Expr(e) = s else { return None };
        let ast::Expr::Call(c) = e.value.as_ref() else {
            return None;
        };
        let ast::Expr::Attribute(a) = c.func.as_ref() else {
            return None;
        };
        match (c.arguments.args.as_ref(), c.arguments.keywords.is_empty()) {
            ([arg], true)
                if a.attr.as_str() == "append"
                    && self.self_attr(&a.value).as_deref() == Some(name) =>
            {
                Some(arg)
            }
            _ => None,
        }
    }

    /// Every `self.<name>.append(<arg>)` in `body`, nested blocks included.
    fn appends<'e>(&self, name: &str, body: &'e [ast::Stmt], out: &mut Vec<&'e ast::Expr>) {
        for s in body {
            if let Some(arg) = self.append_of(name, s) {
                out.push(arg);
                continue;
            }
            match s {
                ast::Stmt::If(i) => {
                    self.appends(name, &i.body, out);
                    for c in &i.elif_else_clauses {
                        self.appends(name, &c.body, out);
                    }
                }
                ast::Stmt::For(f) => {
                    self.appends(name, &f.body, out);
                    self.appends(name, &f.orelse, out);
                }
                ast::Stmt::While(w) => {
                    self.appends(name, &w.body, out);
                    self.appends(name, &w.orelse, out);
                }
                ast::Stmt::With(w) => self.appends(name, &w.body, out),
                ast::Stmt::Try(t) => {
                    self.appends(name, &t.body, out);
                    self.appends(name, &t.orelse, out);
                    self.appends(name, &t.finalbody, out);
                    for h in &t.handlers {
                        let ast::ExceptHandler::ExceptHandler(h) = h;
                        self.appends(name, &h.body, out);
                    }
                }
                _ => {}
            }
        }
    }

    fn self_attr(&self, e: &ast::Expr) -> Option<String> {
        match e {
            ast::Expr::Attribute(a) => match a.value.as_ref() {
                ast::Expr::Name(n) if n.id.as_str() == self.self_name => {
                    Some(a.attr.as_str().to_owned())
                }
                _ => None,
            },
            _ => None,
        }
    }

    fn nested_targets(&self, body: &[ast::Stmt], out: &mut BTreeSet<String>) {
        for s in body {
            match s {
                ast::Stmt::Assign(a) => {
                    for t in &a.targets {
                        if let Some(n) = self.self_attr(t) {
                            out.insert(n);
                        }
                    }
                }
                ast::Stmt::AnnAssign(a) => {
                    if let Some(n) = self.self_attr(&a.target) {
                        out.insert(n);
                    }
                }
                ast::Stmt::AugAssign(a) => {
                    if let Some(n) = self.self_attr(&a.target) {
                        out.insert(n);
                    }
                }
                ast::Stmt::Expr(e) => {
                    if let Some((n, _)) = self.registration(&e.value) {
                        out.insert(n);
                    }
                }
                ast::Stmt::If(i) => {
                    self.nested_targets(&i.body, out);
                    for c in &i.elif_else_clauses {
                        self.nested_targets(&c.body, out);
                    }
                }
                ast::Stmt::For(f) => {
                    self.nested_targets(&f.body, out);
                    self.nested_targets(&f.orelse, out);
                }
                ast::Stmt::While(w) => {
                    self.nested_targets(&w.body, out);
                    self.nested_targets(&w.orelse, out);
                }
                ast::Stmt::With(w) => self.nested_targets(&w.body, out),
                ast::Stmt::Try(t) => {
                    self.nested_targets(&t.body, out);
                    self.nested_targets(&t.orelse, out);
                    self.nested_targets(&t.finalbody, out);
                    for h in &t.handlers {
                        let ast::ExceptHandler::ExceptHandler(h) = h;
                        self.nested_targets(&h.body, out);
                    }
                }
                _ => {}
            }
        }
    }

    /// `self.register_buffer("name", value, ...)`.
    fn registration(&self, e: &ast::Expr) -> Option<(String, Result<Attr, String>)> {
        let ast::Expr::Call(c) = e else { return None };
        let ast::Expr::Attribute(a) = c.func.as_ref() else {
            return None;
        };
        if !matches!(a.value.as_ref(), ast::Expr::Name(n) if n.id.as_str() == self.self_name)
            || !self
                .support
                .register_methods
                .iter()
                .any(|m| m == a.attr.as_str())
        {
            return None;
        }
        let name = match c.arguments.args.first() {
            Some(ast::Expr::StringLiteral(s)) => s.value.to_str().to_owned(),
            _ => return None,
        };
        let value = match c.arguments.args.get(1) {
            Some(v) => self.classify(v).and_then(|a| match a {
                Attr::Value(t) => Ok(Attr::Value(t)),
                Attr::Sub(_) => Err("a submodule is registered as a buffer".into()),
            }),
            None => Err("its value is not given positionally".into()),
        };
        Some((name, value))
    }

    fn resolve(&self, e: &ast::Expr) -> Option<String> {
        match e {
            ast::Expr::Name(n) => {
                let id = n.id.as_str();
                if self.params.contains_key(id) || id == self.self_name {
                    return None;
                }
                if let Some(p) = self.module.imports.get(id) {
                    return Some(p.clone());
                }
                let own = qualname_of(self.module, id);
                self.project_classes.contains(&own).then_some(own)
            }
            ast::Expr::Attribute(a) => Some(format!("{}.{}", self.resolve(&a.value)?, a.attr)),
            _ => None,
        }
    }

    /// The literal `e` spells (constants of the module folded), if any.
    fn literal(&self, e: &ast::Expr) -> Option<Literal> {
        let empty = ProjectIndex::default();
        let mut fx = Fx::new(self.module, self.registry, self.enabled, &empty);
        fx.literal(e)?.ok()
    }

    fn ctor_arg(&self, e: &ast::Expr) -> CtorArg {
        if let Some(l) = self.literal(e) {
            return CtorArg::Value(Operand::literal(l));
        }
        match e {
            ast::Expr::Name(n) => {
                if let Some(ty) = self.params.get(n.id.as_str()) {
                    return match ty {
                        Some(t) => CtorArg::Value(Operand::typed(t.clone())),
                        None => CtorArg::Value(Operand::unknown()),
                    };
                }
                if let Some(v) = self.module.constants.values.get(n.id.as_str()) {
                    return CtorArg::Value(Fx::operand(&super::exprs::const_expr(
                        v,
                        Span { line: 0, column: 0 },
                    )));
                }
                CtorArg::Other
            }
            ast::Expr::Tuple(t) => {
                let items: Vec<Option<ValueType>> = t
                    .elts
                    .iter()
                    .map(|x| match self.ctor_arg(x) {
                        CtorArg::Value(o) => o.ty,
                        _ => None,
                    })
                    .collect();
                match items.into_iter().collect::<Option<Vec<_>>>() {
                    Some(tys) => CtorArg::Value(Operand::typed(ValueType::Tuple(tys))),
                    None => CtorArg::Other,
                }
            }
            ast::Expr::Call(c) => match self.ctor(c) {
                // `math.sqrt(d)` of a number is a float (a scale such as `1 / math.sqrt(d)`).
                Some(ctor)
                    if ctor.target == "math.sqrt"
                        && ctor.keywords.is_empty()
                        && matches!(ctor.args.as_slice(), [CtorArg::Value(o)]
                            if matches!(o.ty, Some(ValueType::Int | ValueType::Float))) =>
                {
                    CtorArg::Value(Operand::typed(ValueType::Float))
                }
                Some(ctor) => CtorArg::Call(ctor),
                None => CtorArg::Other,
            },
            ast::Expr::BinOp(b) => {
                if let Some(ty) = self.number_arithmetic(b) {
                    return CtorArg::Value(Operand::typed(ty));
                }
                let symbol = match b.op {
                    ast::Operator::Add => "+",
                    ast::Operator::Sub => "-",
                    ast::Operator::Mult => "*",
                    ast::Operator::Div => "/",
                    _ => return CtorArg::Other,
                };
                let Some((_, target)) = CTOR_OPERATORS.iter().find(|(s, _)| *s == symbol) else {
                    return CtorArg::Other;
                };
                self.operator(target, &[&b.left, &b.right])
            }
            ast::Expr::UnaryOp(u) if u.op == ast::UnaryOp::USub => {
                match self.ctor_arg(&u.operand) {
                    // `-d` of a number is a number of its type (its value is not known here:
                    // a negated literal is folded as a literal above).
                    CtorArg::Value(Operand {
                        ty: Some(ty @ (ValueType::Int | ValueType::Float)),
                        ..
                    }) => CtorArg::Value(Operand::typed(ty)),
                    _ => self.operator(NEG_TARGET, &[&u.operand]),
                }
            }
            _ => CtorArg::Other,
        }
    }

    fn ctor(&self, c: &ast::ExprCall) -> Option<ModuleCtor> {
        let target = self.resolve(&c.func)?;
        let args = c.arguments.args.iter().map(|a| self.ctor_arg(a)).collect();
        let keywords = c
            .arguments
            .keywords
            .iter()
            .map(|k| {
                let name = k.arg.as_ref().map_or("**", |a| a.as_str()).to_owned();
                (name, self.ctor_arg(&k.value))
            })
            .collect();
        Some(ModuleCtor {
            target,
            args,
            keywords,
        })
    }

    /// The type of arithmetic on ints and floats (`hidden * 4`, `1.0 / width`, `2 * 3.0 - 1`):
    /// float when an operand is a float or the operator is `/`, else int, as in Python. Only the
    /// type is needed: a method reads the live value at every call and checks its type.
    /// `**` is read with a float operand only (`d ** -0.5`): a float, or for a negative base a
    /// complex number, which the check at every call refuses; `int ** int` is an int or a
    /// float depending on the exponent's sign, and is not read.
    fn number_arithmetic(&self, b: &ast::ExprBinOp) -> Option<ValueType> {
        let number = |e: &ast::Expr| match self.ctor_arg(e) {
            CtorArg::Value(o) => match o.ty {
                Some(t @ (ValueType::Int | ValueType::Float)) => Some(t),
                _ => None,
            },
            _ => None,
        };
        let (l, r) = (number(&b.left)?, number(&b.right)?);
        let any_float = l == ValueType::Float || r == ValueType::Float;
        match b.op {
            ast::Operator::Div => Some(ValueType::Float),
            ast::Operator::Add
            | ast::Operator::Sub
            | ast::Operator::Mult
            | ast::Operator::FloorDiv
            | ast::Operator::Mod => Some(if any_float {
                ValueType::Float
            } else {
                ValueType::Int
            }),
            ast::Operator::Pow => any_float.then_some(ValueType::Float),
            _ => None,
        }
    }

    /// Arithmetic on a constructor call, offered as a call of its `operator` function (see
    /// [`CTOR_OPERATORS`]); arithmetic on values alone is not a constructor.
    fn operator(&self, target: &str, operands: &[&ast::Expr]) -> CtorArg {
        let args: Vec<CtorArg> = operands.iter().map(|e| self.ctor_arg(e)).collect();
        if !args.iter().any(|a| matches!(a, CtorArg::Call(_))) {
            return CtorArg::Other;
        }
        CtorArg::Call(ModuleCtor {
            target: target.to_owned(),
            args,
            keywords: Vec::new(),
        })
    }

    /// The length a comprehension's `range(n)` gives, where `n` is an int literal or an
    /// `__init__` parameter with an int-literal default (what the model has when built with
    /// its defaults).
    fn stated_length(&self, iter: &ast::Expr) -> Option<usize> {
        let ast::Expr::Call(c) = iter else {
            return None;
        };
        let ast::Expr::Name(f) = c.func.as_ref() else {
            return None;
        };
        if f.id.as_str() != "range"
            || c.arguments.args.len() != 1
            || !c.arguments.keywords.is_empty()
        {
            return None;
        }
        let n = match &c.arguments.args[0] {
            ast::Expr::Name(n) => *self.int_defaults.get(n.id.as_str())?,
            other => match self.literal(other)? {
                Literal::Int(n) => n,
                _ => return None,
            },
        };
        usize::try_from(n).ok()
    }

    /// What an attribute's value holds, or why it is not read (a sentence).
    fn classify(&self, e: &ast::Expr) -> Result<Attr, String> {
        self.value_of(e)
            .map_err(|what| format!("it is assigned {what}"))
    }

    /// What a value in `__init__` holds, or a noun phrase naming it and why it is not read
    /// (``"`X(...)`, which has keyword arguments"``), so that a refused element of a container
    /// reads as part of the container's reason.
    fn value_of(&self, e: &ast::Expr) -> Result<Attr, String> {
        match self.ctor_arg(e) {
            CtorArg::Value(o) => match o.ty {
                Some(t @ (ValueType::Int | ValueType::Float | ValueType::Bool | ValueType::NoneType)) => {
                    Ok(Attr::Value(t))
                }
                _ => Err("a value whose type is not known from `__init__` (annotate the parameter it comes from as int, float or bool)".into()),
            },
            CtorArg::Call(ctor) => {
                let shown = self.shown(&ctor, e);
                self.module_value(&ctor, e).map_err(|why| match why {
                    Why::Predicate(p) => format!("{shown}, which {p}"),
                    Why::Refused(s) => format!("{shown}: {s}"),
                })
            }
            CtorArg::Other => Err(self.framework_instance(e).unwrap_or_else(|| {
                "an expression rextio does not read (it reads submodule constructors, tensor factory calls and scalars)".into()
            })),
        }
    }

    /// What a message says of `Name(...)` when `Name` is a class of this module deriving from
    /// the framework's other classes ([`framework_base`]), which is not read.
    fn framework_instance(&self, e: &ast::Expr) -> Option<String> {
        let ast::Expr::Call(call) = e else {
            return None;
        };
        let ast::Expr::Name(n) = call.func.as_ref() else {
            return None;
        };
        let name = n.id.as_str();
        let c = self.module.ast.body.iter().find_map(|s| match s {
            ast::Stmt::ClassDef(c) if c.name.as_str() == name => Some(c),
            _ => None,
        })?;
        let (base, module_base) = framework_base(self.module, self.registry, self.enabled, c)?;
        Some(format!(
            "`{name}(...)`, an instance of `{name}`, which derives from the framework's `{base}`: classes deriving from the framework's other classes are not read (derive `{name}` from `{module_base}` and hold the `{base}` as an attribute)"
        ))
    }

    /// A constructor call as a message shows it: its resolved path (`torch.nn.Linear(...)`), or
    /// the source text of arithmetic on one.
    fn shown(&self, ctor: &ModuleCtor, e: &ast::Expr) -> String {
        if !matches!(e, ast::Expr::BinOp(_) | ast::Expr::UnaryOp(_)) {
            return format!("`{}(...)`", ctor.target);
        }
        let text = self
            .module
            .source
            .get(e.range().to_std_range())
            .unwrap_or("");
        let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if text.is_empty() || text.chars().count() > 80 {
            format!("arithmetic on a constructor call (`{}`)", ctor.target)
        } else {
            format!("`{text}`")
        }
    }

    /// The submodules `*value` passes to a `Sequential`: a list or tuple display's elements, or
    /// `n` copies of a comprehension's element over `range(n)` with `n` stated (a literal, or an
    /// `__init__` parameter's default; the call checks the live count, so a model built with
    /// another `n` runs the original).
    fn unpacked(&self, value: &ast::Expr) -> Result<Vec<Sub>, Why> {
        match value {
            ast::Expr::List(ast::ExprList { elts, .. })
            | ast::Expr::Tuple(ast::ExprTuple { elts, .. }) => {
                elts.iter().map(|e| self.element(e)).collect()
            }
            ast::Expr::ListComp(lc)
                if lc.generators.len() == 1
                    && lc.generators[0].ifs.is_empty()
                    && !lc.generators[0].is_async =>
            {
                match self.stated_length(&lc.generators[0].iter) {
                    Some(n) if n <= MAX_WRITTEN_OUT => {
                        let elem = self.element(&lc.elt)?;
                        Ok(vec![elem; n])
                    }
                    _ => Err(Why::Predicate(format!(
                        "unpacks a comprehension whose length is not stated (`range(n)` of an int literal or of an `__init__` parameter's default, at most {MAX_WRITTEN_OUT})"
                    ))),
                }
            }
            ast::Expr::Name(n) => self
                .followed_list(n, "unpacks")?
                .iter()
                .map(|e| self.element(e))
                .collect(),
            _ => Err(Why::Predicate(
                "unpacks something other than a list display, a comprehension or a list built in `__init__`".into(),
            )),
        }
    }

    /// The names and submodules of `OrderedDict([("name", module), ...])` (a list or tuple
    /// display of pairs) or `OrderedDict(name=module, ...)`, in order: what `Sequential` holds
    /// under those names. Names are string literals, each once, non-empty and without a `.`
    /// (what `add_module` accepts).
    fn named_elements(&self, od: &ast::ExprCall) -> Result<(Vec<String>, Vec<Sub>), Why> {
        let mut pairs: Vec<(String, &ast::Expr)> = Vec::new();
        match (&od.arguments.args[..], &od.arguments.keywords[..]) {
            ([], kws) if !kws.is_empty() => {
                for k in kws.iter() {
                    let Some(name) = k.arg.as_ref() else {
                        return Err(Why::Predicate(
                            "unpacks a mapping into its `OrderedDict` (`**`)".into(),
                        ));
                    };
                    pairs.push((name.as_str().to_owned(), &k.value));
                }
            }
            ([ast::Expr::List(ast::ExprList { elts, .. })
            | ast::Expr::Tuple(ast::ExprTuple { elts, .. })], []) => {
                for e in elts.iter() {
                    let pair = match e {
                        ast::Expr::Tuple(ast::ExprTuple { elts, .. })
                        | ast::Expr::List(ast::ExprList { elts, .. }) => elts,
                        _ => {
                            return Err(Why::Predicate(
                                "gives its `OrderedDict` an element that is not a `(name, module)` pair".into(),
                            ))
                        }
                    };
                    let [ast::Expr::StringLiteral(name), value] = &pair[..] else {
                        return Err(Why::Predicate(
                            "gives its `OrderedDict` an element that is not a `(\"name\", module)` pair with a string literal name".into(),
                        ));
                    };
                    pairs.push((name.value.to_str().to_owned(), value));
                }
            }
            _ => {
                return Err(Why::Predicate(
                    "is given an `OrderedDict` that is not one list of `(\"name\", module)` pairs or keyword arguments".into(),
                ))
            }
        }
        if pairs.is_empty() {
            return Err(Why::Predicate("is given an empty `OrderedDict`".into()));
        }
        self.named(pairs)
    }

    /// The names and submodules of a dict display with string literal keys, in order (what
    /// `ModuleDict` holds under those names).
    fn dict_elements(&self, d: &ast::ExprDict) -> Result<(Vec<String>, Vec<Sub>), Why> {
        let mut pairs: Vec<(String, &ast::Expr)> = Vec::new();
        for item in d.items.iter() {
            let Some(ast::Expr::StringLiteral(name)) = &item.key else {
                return Err(Why::Predicate(
                    "is given a dict whose keys are not all string literals (or that unpacks `**`)"
                        .into(),
                ));
            };
            pairs.push((name.value.to_str().to_owned(), &item.value));
        }
        if pairs.is_empty() {
            return Err(Why::Predicate("is given an empty dict".into()));
        }
        self.named(pairs)
    }

    /// Names (each once, non-empty and without a `.`, what `add_module` accepts) and their
    /// submodules, in order.
    fn named(&self, pairs: Vec<(String, &ast::Expr)>) -> Result<(Vec<String>, Vec<Sub>), Why> {
        let mut names = Vec::with_capacity(pairs.len());
        let mut items = Vec::with_capacity(pairs.len());
        for (name, value) in pairs {
            if name.is_empty() || name.contains('.') {
                return Err(Why::Predicate(format!(
                    "names a module `{name}`, which `add_module` refuses"
                )));
            }
            if names.contains(&name) {
                return Err(Why::Predicate(format!(
                    "names two modules `{name}` (the mapping keeps one)"
                )));
            }
            items.push(self.element(value)?);
            names.push(name);
        }
        Ok((names, items))
    }

    /// An element of a container: a submodule, or why not (a predicate of the container).
    fn element(&self, e: &ast::Expr) -> Result<Sub, Why> {
        match self.value_of(e) {
            Ok(Attr::Sub(s)) => Ok(s),
            Ok(Attr::Value(_)) => Err(Why::Predicate(
                "holds a value that is not a submodule".into(),
            )),
            Err(what) => Err(Why::Predicate(format!("holds {what}"))),
        }
    }

    fn module_value(&self, ctor: &ModuleCtor, e: &ast::Expr) -> Result<Attr, Why> {
        if self.project_classes.contains(&ctor.target) {
            return Ok(Attr::Sub(Sub::Project(ctor.target.clone())));
        }
        // Arithmetic on a constructor (`operator.mul`) is the plugin's to read.
        let ast::Expr::Call(call) = e else {
            return self.plugin_value(ctor);
        };
        if self.support.sequential.contains(&ctor.target) {
            if !call.arguments.keywords.is_empty() {
                return Err(Why::Predicate("has keyword arguments".into()));
            }
            if let [ast::Expr::Call(od)] = &call.arguments.args[..] {
                if self.resolve(&od.func).as_deref() == Some("collections.OrderedDict") {
                    let (names, items) = self.named_elements(od)?;
                    return Ok(Attr::Sub(Sub::Seq {
                        class: self.support.sequential[0].clone(),
                        items,
                        names: Some(names),
                    }));
                }
            }
            let mut items = Vec::new();
            for a in call.arguments.args.iter() {
                match a {
                    ast::Expr::Starred(st) => items.extend(self.unpacked(&st.value)?),
                    a => items.push(self.element(a)?),
                }
            }
            return Ok(Attr::Sub(Sub::Seq {
                class: self.support.sequential[0].clone(),
                items,
                names: None,
            }));
        }
        if self.support.dicts.contains(&ctor.target) {
            let (names, items) = match (&call.arguments.args[..], &call.arguments.keywords[..]) {
                ([ast::Expr::Dict(d)], []) => self.dict_elements(d)?,
                ([ast::Expr::Call(od)], [])
                    if self.resolve(&od.func).as_deref() == Some("collections.OrderedDict") =>
                {
                    self.named_elements(od)?
                }
                _ => return Err(Why::Predicate(
                    "is not given one dict display with string literal keys or one `OrderedDict`"
                        .into(),
                )),
            };
            return Ok(Attr::Sub(Sub::Dict {
                class: self.support.dicts[0].clone(),
                items,
                names,
            }));
        }
        if self.support.lists.contains(&ctor.target) {
            let (elems, expect): (Vec<&ast::Expr>, _) = match call.arguments.args.first() {
                Some(ast::Expr::List(l)) if call.arguments.args.len() == 1 => {
                    (l.elts.iter().collect(), Some(l.elts.len()))
                }
                Some(ast::Expr::Name(n)) if call.arguments.args.len() == 1 => {
                    let items = self.followed_list(n, "is given")?;
                    (items.iter().collect(), Some(items.len()))
                }
                Some(ast::Expr::ListComp(lc))
                    if call.arguments.args.len() == 1
                        && lc.generators.len() == 1
                        && lc.generators[0].ifs.is_empty()
                        && !lc.generators[0].is_async =>
                {
                    (vec![&lc.elt], self.stated_length(&lc.generators[0].iter))
                }
                _ => {
                    return Err(Why::Predicate(
                        "is not given one list literal or list comprehension of submodules".into(),
                    ))
                }
            };
            let mut elem: Option<Sub> = None;
            for e in elems {
                let s = self.element(e)?;
                match &elem {
                    Some(prev) if prev != &s => {
                        return Err(Why::Predicate(
                            "holds submodules of different kinds (a compiled loop needs one kind)"
                                .into(),
                        ))
                    }
                    _ => elem = Some(s),
                }
            }
            let Some(elem) = elem else {
                return Err(Why::Predicate("is empty".into()));
            };
            return Ok(Attr::Sub(Sub::List {
                class: self.support.lists[0].clone(),
                elem: Box::new(elem),
                expect,
            }));
        }
        self.plugin_value(ctor)
    }

    /// What the plugin says a constructor call holds.
    fn plugin_value(&self, ctor: &ModuleCtor) -> Result<Attr, Why> {
        let Some(reg) = self.registry.plugin(self.plugin) else {
            return Err(Why::Predicate("belongs to no registered plugin".into()));
        };
        match reg.plugin.module_kind(ctor) {
            ModuleAnswer::Submodule(k) => Ok(Attr::Sub(Sub::Kind(k))),
            ModuleAnswer::Tensor(t) => Ok(Attr::Value(t)),
            ModuleAnswer::Rejected(d) => Err(Why::Refused(format!("{} ({})", d.message, d.code))),
            ModuleAnswer::NotCovered => Err(Why::Predicate(format!(
                "is not a submodule or tensor `{}` reads",
                self.plugin
            ))),
        }
    }
}

/// Why a constructor call in `__init__` is not read.
enum Why {
    /// A predicate of the call ("has keyword arguments"): read after "which".
    Predicate(String),
    /// A plugin's refusal, a sentence of its own with its code.
    Refused(String),
}

/// A compiled method's signature as its callers see it.
#[derive(Debug, Clone)]
pub(super) struct MethodSig {
    /// The state parameter's type.
    pub state: ValueType,
    /// The other parameters' types.
    pub params: Vec<ValueType>,
    /// The return type.
    pub ret: ValueType,
}

/// Every method of the project's module classes, analysed on first use (a caller needs its
/// callee's state type), each once.
pub struct MethodTable<'a> {
    modules: &'a [SourceModule],
    registry: &'a Registry,
    enabled: &'a [String],
    index: &'a ProjectIndex,
    results: RefCell<BTreeMap<String, FunctionAnalysis>>,
    in_progress: RefCell<BTreeSet<String>>,
}

impl<'a> MethodTable<'a> {
    /// A table over the project's modules.
    pub fn new(
        modules: &'a [SourceModule],
        registry: &'a Registry,
        enabled: &'a [String],
        index: &'a ProjectIndex,
    ) -> Self {
        Self {
            modules,
            registry,
            enabled,
            index,
            results: RefCell::new(BTreeMap::new()),
            in_progress: RefCell::new(BTreeSet::new()),
        }
    }

    /// The analysis of method `qualname` (`module.Class.method`).
    pub(super) fn analysis(&self, qualname: &str) -> Option<FunctionAnalysis> {
        if let Some(a) = self.results.borrow().get(qualname) {
            return Some(a.clone());
        }
        let (class_q, method) = qualname.rsplit_once('.')?;
        let class = self.index.classes.get(class_q)?;
        let module_name = class_q.rsplit_once('.').map_or("", |(m, _)| m);
        let module = self.modules.iter().find(|m| m.name == module_name)?;
        let f = module.ast.body.iter().find_map(|s| match s {
            ast::Stmt::ClassDef(c) if c.name.as_str() == class.name => {
                c.body.iter().find_map(|s| match s {
                    ast::Stmt::FunctionDef(f) if f.name.as_str() == method => Some(f),
                    _ => None,
                })
            }
            _ => None,
        })?;
        if !self.in_progress.borrow_mut().insert(qualname.to_owned()) {
            return None;
        }
        let a = analyse_method(module, self, class, f);
        self.in_progress.borrow_mut().remove(qualname);
        self.results
            .borrow_mut()
            .insert(qualname.to_owned(), a.clone());
        Some(a)
    }

    /// The signature of a compiled method, or why it stays on Python.
    pub(super) fn signature(&self, qualname: &str) -> Result<MethodSig, String> {
        if self.in_progress.borrow().contains(qualname) {
            return Err("it calls itself through other methods; recursion stays on Python".into());
        }
        let Some(a) = self.analysis(qualname) else {
            return Err("it is not a method of a module class of the project".into());
        };
        let Some(ir) = &a.ir else {
            let why = a
                .diagnostics
                .iter()
                .find(|d| d.severity == Severity::Error)
                .map_or_else(String::new, |d| format!("{}: {}", d.code, d.message));
            return Err(why);
        };
        let mut params = ir.params.iter().map(|p| p.ty.clone());
        let state = params.next().ok_or("internal: a method without state")?;
        Ok(MethodSig {
            state,
            params: params.collect(),
            ret: ir.ret.clone(),
        })
    }
}

/// Analyse one method of a module class.
fn analyse_method(
    module: &SourceModule,
    table: &MethodTable<'_>,
    class: &ClassInfo,
    f: &ast::StmtFunctionDef,
) -> FunctionAnalysis {
    let name = f.name.as_str().to_owned();
    let qualname = format!("{}.{name}", class.qualname);
    let span = module.span(f.range().start());
    let support = table
        .registry
        .plugin(&class.plugin)
        .and_then(|r| r.plugin.module_support());
    let mut fx = Fx::new(module, table.registry, table.enabled, table.index);
    fx.methods = Some(table);
    let ir = match support {
        Some(_) => {
            fx.method = Some(MethodCx::new(class.clone()));
            fx.function(f, &qualname, &name)
        }
        None => None,
    };
    fx.into_analysis(ir, qualname, name, Some(class.name.clone()), span)
}

/// The methods of one module class of `module`, in source order (`__init__` excluded).
pub(super) fn class_methods(
    module: &SourceModule,
    table: &MethodTable<'_>,
    c: &ast::StmtClassDef,
) -> Vec<FunctionAnalysis> {
    let q = qualname_of(module, c.name.as_str());
    c.body
        .iter()
        .filter_map(|s| match s {
            ast::Stmt::FunctionDef(f) if f.name.as_str() != "__init__" => {
                table.analysis(&format!("{q}.{}", f.name.as_str()))
            }
            _ => None,
        })
        .collect()
}

/// One read context: the instance (context 0), or the element of a module list a loop
/// iterates (its reads run once per element).
#[derive(Debug)]
pub(super) struct ReadCx {
    root: Sub,
    label: String,
    ops: Vec<ReadOp>,
    slots: Vec<(String, ValueType)>,
    /// Path -> (object, index of its `Child` op).
    objs: BTreeMap<String, (usize, usize)>,
    next_obj: usize,
    values: BTreeMap<(usize, String), String>,
    states: BTreeMap<(usize, String), String>,
    conds: BTreeSet<(usize, String)>,
    root_called: bool,
    /// The dispatches already checked on the instance, as (`after`, name).
    dispatched: BTreeSet<(Option<String>, String)>,
}

impl ReadCx {
    fn new(root: Sub, label: String) -> Self {
        Self {
            root,
            label,
            ops: Vec::new(),
            slots: Vec::new(),
            objs: BTreeMap::new(),
            next_obj: 1,
            values: BTreeMap::new(),
            states: BTreeMap::new(),
            conds: BTreeSet::new(),
            root_called: false,
            dispatched: BTreeSet::new(),
        }
    }
}

/// The module-class state of a method being analysed.
#[derive(Debug)]
pub(super) struct MethodCx {
    class: ClassInfo,
    self_name: String,
    ctxs: Vec<ReadCx>,
    aliases: BTreeMap<String, usize>,
    /// Names bound to one module object while a comprehension over a container is written out.
    node_aliases: BTreeMap<String, Node>,
    /// `container[i]` inside `for i in range(len(container)):`: the loop's element variable,
    /// keyed by the container ([`Node::index_key`]) and the index name.
    pub(super) index_aliases: BTreeMap<(usize, usize, String), String>,
}

impl MethodCx {
    fn new(class: ClassInfo) -> Self {
        let root = Sub::Project(class.qualname.clone());
        Self {
            class,
            self_name: String::new(),
            ctxs: vec![ReadCx::new(root, "self".into())],
            aliases: BTreeMap::new(),
            node_aliases: BTreeMap::new(),
            index_aliases: BTreeMap::new(),
        }
    }
}

/// A module object reached from `self` or a loop variable.
#[derive(Debug, Clone)]
pub(super) struct Node {
    ctx: usize,
    obj: usize,
    sub: Sub,
    /// Path from the context's root (`blocks`, `head.0`), empty for the root.
    path: String,
}

impl Node {
    /// Whether it is a module list.
    pub(super) fn is_list(&self) -> bool {
        matches!(self.sub, Sub::List { .. })
    }

    /// The key of `self[index]` in [`MethodCx::index_aliases`].
    pub(super) fn index_key(&self, index: &str) -> (usize, usize, String) {
        (self.ctx, self.obj, index.to_owned())
    }
}

/// What an expression rooted at `self` (or a loop variable over a module list) denotes.
pub(super) enum Member {
    /// A module object.
    Module(Node),
    /// A value (its slot local).
    Value(Expr),
    /// A method of the instance's class, unbound.
    Method(String),
    /// `super().name`: method `name` as `class` (a parent of the method's class) defines it.
    Super {
        /// The class defining the method.
        class: String,
        /// The method.
        name: String,
    },
}

/// `base.attr` as a message shows it, or `base[k]` for a container's element (keyed `"0"`..).
fn shown_join(base: &str, attr: &str) -> String {
    if !attr.is_empty() && attr.bytes().all(|b| b.is_ascii_digit()) {
        format!("{base}[{attr}]")
    } else {
        join(base, attr)
    }
}

fn join(path: &str, attr: &str) -> String {
    if path.is_empty() {
        attr.to_owned()
    } else {
        format!("{path}.{attr}")
    }
}

impl Fx<'_> {
    /// Set up a method's analysis: its first parameter is `self` (the state).
    pub(super) fn method_self(&mut self, name: &str) {
        if let Some(m) = self.method.as_mut() {
            m.self_name = name.to_owned();
        }
    }

    fn shown(&self, node: &Node) -> String {
        let label = self
            .method
            .as_ref()
            .map_or("self", |m| m.ctxs[node.ctx].label.as_str())
            .split('#')
            .next()
            .unwrap_or("self")
            .to_owned();
        node.path
            .split('.')
            .filter(|c| !c.is_empty())
            .fold(label, |shown, c| shown_join(&shown, c))
    }

    fn attr_error(&mut self, at: Span, message: String) -> Failed {
        self.error(codes::MODULE_ATTRIBUTE, at, message, None)
    }

    /// What `e` denotes when it is rooted at `self` or at a loop variable over a module list;
    /// `None` when it is not.
    pub(super) fn member(&mut self, e: &ast::Expr) -> Option<R<Member>> {
        let m = self.method.as_ref()?;
        let at = self.span(e);
        match e {
            ast::Expr::Name(n) => {
                let id = n.id.as_str();
                if id == m.self_name {
                    let root = m.ctxs[0].root.clone();
                    return Some(Ok(Member::Module(Node {
                        ctx: 0,
                        obj: 0,
                        sub: root,
                        path: String::new(),
                    })));
                }
                if let Some(node) = m.node_aliases.get(id) {
                    return Some(Ok(Member::Module(node.clone())));
                }
                let ctx = *m.aliases.get(id)?;
                let root = m.ctxs[ctx].root.clone();
                Some(Ok(Member::Module(Node {
                    ctx,
                    obj: 0,
                    sub: root,
                    path: String::new(),
                })))
            }
            ast::Expr::Subscript(sub) => {
                let base = match self.member(&sub.value)? {
                    Ok(Member::Module(node)) => node,
                    Ok(_) => return None,
                    Err(f) => return Some(Err(f)),
                };
                if let ast::Expr::Name(i) = sub.slice.as_ref() {
                    let m = self.method.as_ref()?;
                    if let Some(var) = m.index_aliases.get(&base.index_key(i.id.as_str())) {
                        let ctx = *m.aliases.get(var)?;
                        return Some(Ok(Member::Module(Node {
                            ctx,
                            obj: 0,
                            sub: m.ctxs[ctx].root.clone(),
                            path: String::new(),
                        })));
                    }
                }
                Some(self.item_of(base, &sub.slice, at))
            }
            ast::Expr::Attribute(a) if self.is_super_call(&a.value) => {
                Some(self.super_member(a.attr.as_str(), at))
            }
            ast::Expr::Attribute(a) => {
                let base = match self.member(&a.value)? {
                    Ok(Member::Module(node)) => node,
                    Ok(Member::Value(_)) => return None,
                    Ok(Member::Method(name) | Member::Super { name, .. }) => {
                        return Some(Err(self.attr_error(
                            at,
                            format!("`self.{name}.{}` reads an attribute of a method", a.attr),
                        )))
                    }
                    Err(f) => return Some(Err(f)),
                };
                Some(self.attr_of(base, a.attr.as_str(), at))
            }
            _ => None,
        }
    }

    /// The class defining method `name` for an instance of `class`: `class` itself, or the
    /// nearest of its parents that defines it.
    fn defining_class(&self, class: &str, name: &str) -> Option<String> {
        let mut at = self.index.classes.get(class)?;
        loop {
            if at.methods.contains(name) {
                return Some(at.qualname.clone());
            }
            at = self.index.classes.get(at.parent.as_deref()?)?;
        }
    }

    /// `super()` or `super(Class, self)` in a method.
    fn is_super_call(&self, e: &ast::Expr) -> bool {
        let ast::Expr::Call(c) = e else { return false };
        let ast::Expr::Name(f) = c.func.as_ref() else {
            return false;
        };
        let Some(m) = self.method.as_ref() else {
            return false;
        };
        let explicit = match c.arguments.args.as_ref() {
            [] => true,
            [ast::Expr::Name(cls), ast::Expr::Name(obj)] => {
                cls.id.as_str() == m.class.name && obj.id.as_str() == m.self_name
            }
            _ => false,
        };
        f.id.as_str() == "super"
            && explicit
            && c.arguments.keywords.is_empty()
            && !self.local_names.contains("super")
            && !self.module.imports.contains_key("super")
    }

    /// `super().name`: the parent's method `name` (defined by it or by one of its parents).
    fn super_member(&mut self, name: &str, at: Span) -> R<Member> {
        let (class, parent) = match self.method.as_ref() {
            Some(m) => (m.class.name.clone(), m.class.parent.clone()),
            None => return Err(Failed),
        };
        let Some(parent) = parent else {
            return Err(self.attr_error(
                at,
                format!("`super().{name}` of `{class}`, which derives from the framework's base directly, is not lowered"),
            ));
        };
        match self.defining_class(&parent, name) {
            Some(defining) => Ok(Member::Super {
                class: defining,
                name: name.to_owned(),
            }),
            None => Err(self.attr_error(
                at,
                format!("`super().{name}`: `{parent}` and its parents define no method `{name}` of the project"),
            )),
        }
    }

    /// `container[k]` for an int literal `k`: the element a `ModuleList` or `Sequential` keeps
    /// under the key `str(k)` (both number their elements from 0, renumbering on deletion and
    /// insertion). Counting from the end (`k < 0`) needs the length `__init__` gives, and the
    /// call checks the live count; an index past the end stays Python (eager raises IndexError).
    fn item_of(&mut self, node: Node, index: &ast::Expr, at: Span) -> R<Member> {
        if let Sub::Dict { .. } = node.sub {
            // `ModuleDict.__getitem__` is `_modules[key]`: the element of that name.
            return match self.literal(index) {
                Some(Ok(Literal::Str(key))) => self.attr_of(node, &key, at),
                _ => {
                    let shown = self.shown(&node);
                    Err(self.attr_error(
                        at,
                        format!(
                            "`{shown}[...]` reads a module dict by other than a string literal key"
                        ),
                    ))
                }
            };
        }
        match (self.literal(index), index) {
            (Some(Ok(Literal::Int(k))), _) => self.item_at(node, k, at),
            (_, ast::Expr::Name(i)) => {
                let shown = self.shown(&node);
                Err(self.attr_error(
                    at,
                    format!("`{shown}[{i}]` is indexed by a variable, which is lowered only as the element of `for {i} in range(len({shown})):`", i = i.id.as_str()),
                ))
            }
            _ => {
                let shown = self.shown(&node);
                Err(self.attr_error(
                    at,
                    format!("`{shown}[...]` is indexed by other than an int literal"),
                ))
            }
        }
    }

    /// The element at index `k` of a container (see [`Fx::item_of`]).
    fn item_at(&mut self, node: Node, k: i64, at: Span) -> R<Member> {
        let shown = self.shown(&node);
        let (elem, len) = match &node.sub {
            Sub::List { elem, expect, .. } => ((**elem).clone(), *expect),
            Sub::Seq { items, .. } => {
                let i = if k < 0 { k + items.len() as i64 } else { k };
                match usize::try_from(i).ok().and_then(|i| items.get(i)) {
                    Some(item) => (item.clone(), Some(items.len())),
                    None => {
                        return Err(self.attr_error(
                            at,
                            format!("`{shown}[{k}]` is past the end of its {} modules (eager raises IndexError)", items.len()),
                        ))
                    }
                }
            }
            _ => {
                return Err(self.attr_error(
                    at,
                    format!("`{shown}` is indexed, but it is not a module list or a Sequential"),
                ))
            }
        };
        let i = if k < 0 {
            let Some(n) = len else {
                return Err(self.attr_error(
                    at,
                    format!("`{shown}[{k}]` counts from the end of a module list whose length `__init__` does not state"),
                ));
            };
            let i = k + n as i64;
            if i < 0 {
                return Err(self.attr_error(
                    at,
                    format!("`{shown}[{k}]` is past the start of its {n} modules (eager raises IndexError)"),
                ));
            }
            // The element counted from the end is the one at `n + k` only while there are `n`.
            self.count_check(&node, n, &shown);
            i
        } else {
            k
        };
        let attr = usize::try_from(i).map_or_else(|_| i.to_string(), |i| node.sub.element_name(i));
        let obj = self.child(&node, &attr, &elem, false);
        Ok(Member::Module(Node {
            ctx: node.ctx,
            obj,
            sub: elem,
            path: join(&node.path, &attr),
        }))
    }

    /// `[f(m) for m in <container>]` as a direct argument of a plugin operation
    /// (`torch.cat([t(x) for t in self.towers], dim=1)`): written out once per element, in
    /// order, as the tuple such a list literal is offered as. The container's length must be
    /// stated (a `ModuleList` whose length `__init__` gives, or a `Sequential`), and the call
    /// checks the live count. `None` when `lc` is not a comprehension over a module container.
    pub(super) fn module_comprehension(
        &mut self,
        lc: &ast::ExprListComp,
        at: Span,
    ) -> Option<R<Expr>> {
        let [g] = lc.generators.as_slice() else {
            return None;
        };
        let ast::Expr::Name(var) = &g.target else {
            return None;
        };
        if !g.ifs.is_empty() || g.is_async {
            return None;
        }
        let node = match self.member(&g.iter)? {
            Ok(Member::Module(node)) => node,
            Ok(_) => return None,
            Err(f) => return Some(Err(f)),
        };
        let var = var.id.as_str();
        if self.local_names.contains(var) {
            // Inside the comprehension the name is the element, while the function's local of
            // that name is what a read of it would find here.
            return Some(Err(self.attr_error(
                at,
                format!("the comprehension's name `{var}` is also a local of the method; use another name"),
            )));
        }
        Some(self.written_out(node, var, &lc.elt, at))
    }

    /// The length of a container a loop or comprehension is written out over: a `ModuleList`'s
    /// stated length or a `Sequential`'s item count, checked at every call.
    pub(super) fn stated_count(&mut self, node: &Node, at: Span) -> R<usize> {
        let shown = self.shown(node);
        let n = match &node.sub {
            Sub::List {
                expect: Some(n), ..
            } => *n,
            Sub::Seq { items, .. } => items.len(),
            Sub::List { expect: None, .. } => {
                return Err(self.attr_error(
                    at,
                    format!("`{shown}` is written out once per element here, so it needs the length `__init__` states"),
                ))
            }
            _ => {
                return Err(self.attr_error(
                    at,
                    format!("`{shown}` is iterated, but it is not a module list or a Sequential"),
                ))
            }
        };
        self.count_check(node, n, &shown);
        Ok(n)
    }

    /// The read checks that container `node` holds exactly `count` elements (once per
    /// container; every caller states the same count, the one `__init__` gives it).
    fn count_check(&mut self, node: &Node, count: usize, shown: &str) {
        let cx = self.cx(node.ctx);
        if !cx
            .ops
            .iter()
            .any(|op| matches!(op, ReadOp::Count { obj, .. } if *obj == node.obj))
        {
            let names = (0..count).map(|i| node.sub.element_name(i)).collect();
            let cx = self.cx(node.ctx);
            cx.ops.push(ReadOp::Count {
                obj: node.obj,
                count,
                names,
                path: shown.to_owned(),
            });
        }
    }

    /// Element `k` of a container, as a module node.
    pub(super) fn element_at(&mut self, node: Node, k: usize, at: Span) -> R<Node> {
        match self.item_at(node, k as i64, at)? {
            Member::Module(elem) => Ok(elem),
            _ => Err(Failed),
        }
    }

    /// Bind `name` to a module node (or unbind it), returning what it was bound to.
    pub(super) fn bind_node(&mut self, name: &str, node: Option<Node>) -> Option<Node> {
        let m = self.method.as_mut()?;
        match node {
            Some(n) => m.node_aliases.insert(name.to_owned(), n),
            None => m.node_aliases.remove(name),
        }
    }

    fn written_out(&mut self, node: Node, var: &str, elt: &ast::Expr, at: Span) -> R<Expr> {
        let n = self.stated_count(&node, at)?;
        let mut items = Vec::with_capacity(n);
        for k in 0..n {
            let elem = self.element_at(node.clone(), k, at)?;
            let prev = self.bind_node(var, Some(elem));
            let v = self.expr(elt);
            self.bind_node(var, prev);
            items.push(v?);
        }
        Ok(Expr {
            ty: ValueType::Tuple(items.iter().map(|i| i.ty.clone()).collect()),
            kind: ExprKind::Tuple(items),
            span: at,
        })
    }

    /// The type of `attr` when every instance of `plugin`'s module base has it
    /// ([`ModuleSupport::base_attrs`]).
    fn base_attr(&self, plugin: &str, attr: &str) -> Option<ValueType> {
        let support = self.registry.plugin(plugin)?.plugin.module_support()?;
        support
            .base_attrs
            .into_iter()
            .find(|(n, _)| n == attr)
            .map(|(_, t)| t)
    }

    fn attr_of(&mut self, node: Node, attr: &str, at: Span) -> R<Member> {
        let path = join(&node.path, attr);
        let shown = shown_join(&self.shown(&node), attr);
        // A named element of a `Sequential` or `ModuleDict` (`self.body.fc`, `self.heads.cls`),
        // found by its name as `Module.__getattr__` finds it in `_modules`.
        let named = match &node.sub {
            Sub::Seq {
                items,
                names: Some(names),
                ..
            }
            | Sub::Dict { items, names, .. } => names
                .iter()
                .position(|n| n == attr)
                .and_then(|i| items.get(i))
                .cloned(),
            _ => None,
        };
        if let Some(sub) = named {
            let obj = self.child(&node, attr, &sub, false);
            return Ok(Member::Module(Node {
                ctx: node.ctx,
                obj,
                sub,
                path,
            }));
        }
        match &node.sub {
            Sub::Project(q) => {
                let Some(class) = self.index.classes.get(q) else {
                    return Err(self.attr_error(
                        at,
                        format!("`{shown}`: `{q}` is not a module class of the project"),
                    ));
                };
                match class.attrs.get(attr).cloned() {
                    Some(Ok(Attr::Value(ty))) => Ok(Member::Value(self.value_slot(&node, attr, ty, at, false))),
                    Some(Ok(Attr::Sub(sub))) => {
                        let obj = self.child(&node, attr, &sub, false);
                        Ok(Member::Module(Node { ctx: node.ctx, obj, sub, path }))
                    }
                    Some(Err(why)) => Err(self.attr_error(
                        at,
                        format!("`{shown}` is not compiled: {why}"),
                    )),
                    None if self.defining_class(q, attr).is_some() => {
                        Ok(Member::Method(attr.to_owned()))
                    }
                    None => match self.base_attr(&class.plugin, attr) {
                        Some(ty) => Ok(Member::Value(self.value_slot(&node, attr, ty, at, false))),
                        None => match class.class_attrs.get(attr).cloned() {
                            Some((_, Ok(ty))) => {
                                Ok(Member::Value(self.value_slot(&node, attr, ty, at, true)))
                            }
                            Some((owner, Err(why))) => Err(self.attr_error(
                                at,
                                format!(
                                    "`{shown}` is a class attribute (bound in the body of `{owner}`) that is {why}; compiled methods read an int, float or bool there, or what `{}.__init__` assigns",
                                    class.name
                                ),
                            )),
                            None if !class.other_bases.is_empty() => Err(self.attr_error(
                                at,
                                format!(
                                    "`{shown}` is neither assigned in `{}.__init__` (at its top level) nor a method of `{}`; it may come from {}, a base rextio does not read, so its value is not known",
                                    class.name,
                                    class.name,
                                    class
                                        .other_bases
                                        .iter()
                                        .map(|b| format!("`{b}`"))
                                        .collect::<Vec<_>>()
                                        .join(" or ")
                                ),
                            )),
                            None => Err(self.attr_error(
                                at,
                                format!("`{shown}` is not assigned in `{}.__init__` (at its top level), so its value is not known", class.name),
                            )),
                        },
                    },
                }
            }
            Sub::Kind(k) => match k.attrs.iter().find(|(n, _)| n == attr) {
                Some((_, ty)) => {
                    let ty = ty.clone();
                    Ok(Member::Value(self.value_slot(&node, attr, ty, at, false)))
                }
                None => Err(self.attr_error(
                    at,
                    format!(
                        "`{shown}` is not an attribute of `{}` that compiled methods read",
                        k.class_path
                    ),
                )),
            },
            Sub::Seq { .. } | Sub::List { .. } => Err(self.attr_error(
                at,
                format!("`{shown}` reads an attribute of a container; index or call it instead"),
            )),
            Sub::Dict { names, .. } => Err(self.attr_error(
                at,
                format!(
                    "`{shown}` is not one of the modules the dict holds ({}); read an element by its name",
                    names.join(", ")
                ),
            )),
        }
    }

    fn cx(&mut self, ctx: usize) -> &mut ReadCx {
        let m = self.method.as_mut();
        // A member is only made while a method is analysed.
        #[allow(clippy::expect_used)]
        let m = m.expect("module read outside a method");
        &mut m.ctxs[ctx]
    }

    /// The object of attribute `attr` of `node`, a submodule `sub` (read once per path).
    fn child(&mut self, node: &Node, attr: &str, sub: &Sub, called: bool) -> usize {
        let path = join(&node.path, attr);
        let shown = shown_join(&self.shown(node), attr);
        let cx = self.cx(node.ctx);
        if let Some(&(obj, op)) = cx.objs.get(&path) {
            if called {
                if let ReadOp::Child { called: c, .. } = &mut cx.ops[op] {
                    *c = true;
                }
            }
            return obj;
        }
        let obj = cx.next_obj;
        cx.next_obj += 1;
        cx.objs.insert(path, (obj, cx.ops.len()));
        cx.ops.push(ReadOp::Child {
            src: node.obj,
            dst: obj,
            attr: attr.to_owned(),
            class: sub.class().to_owned(),
            called,
            path: shown,
        });
        obj
    }

    fn mark_called(&mut self, node: &Node) {
        if node.obj == 0 {
            self.cx(node.ctx).root_called = true;
            return;
        }
        let cx = self.cx(node.ctx);
        if let Some(&(_, op)) = cx.objs.get(&node.path) {
            if let ReadOp::Child { called, .. } = &mut cx.ops[op] {
                *called = true;
            }
        }
    }

    /// `len(<module list or Sequential>)`: an int slot read at every call (the list may change
    /// after `__init__`).
    pub(super) fn module_len(&mut self, node: Node, at: Span) -> R<Expr> {
        let shown = self.shown(&node);
        if !matches!(node.sub, Sub::List { .. } | Sub::Seq { .. }) {
            return Err(self.attr_error(
                at,
                format!("`len({shown})` is lowered only for a module list or a Sequential"),
            ));
        }
        let key = (node.obj, "#len".to_owned());
        let int = |local: String| Expr {
            ty: ValueType::Int,
            kind: ExprKind::Local(local),
            span: at,
        };
        if let Some(local) = self.cx(node.ctx).values.get(&key).cloned() {
            return Ok(int(local));
        }
        let label = self.cx(node.ctx).label.clone();
        let local = format!("{label}.{}#len", node.path);
        let slot = self.new_slot(node.ctx, local.clone(), ValueType::Int, at)?;
        let cx = self.cx(node.ctx);
        cx.values.insert(key, local.clone());
        cx.ops.push(ReadOp::Len {
            obj: node.obj,
            slot,
            path: shown,
        });
        Ok(int(local))
    }

    fn new_slot(&mut self, ctx: usize, local: String, ty: ValueType, at: Span) -> R<usize> {
        self.bind(&local, &ty, at)?;
        let cx = self.cx(ctx);
        cx.slots.push((local, ty));
        Ok(cx.slots.len() - 1)
    }

    fn value_slot(
        &mut self,
        node: &Node,
        attr: &str,
        ty: ValueType,
        at: Span,
        on_class: bool,
    ) -> Expr {
        let key = (node.obj, attr.to_owned());
        let shown = shown_join(&self.shown(node), attr);
        let label = self.cx(node.ctx).label.clone();
        if let Some(local) = self.cx(node.ctx).values.get(&key).cloned() {
            return Expr {
                ty,
                kind: ExprKind::Local(local),
                span: at,
            };
        }
        let local = format!("{label}.{}", join(&node.path, attr));
        if let Ok(slot) = self.new_slot(node.ctx, local.clone(), ty.clone(), at) {
            let cx = self.cx(node.ctx);
            cx.values.insert(key, local.clone());
            cx.ops.push(ReadOp::Value {
                src: node.obj,
                attr: attr.to_owned(),
                ty: ty.clone(),
                slot,
                path: shown,
                on_class,
            });
        }
        Expr {
            ty,
            kind: ExprKind::Local(local),
            span: at,
        }
    }

    fn module_condition(&mut self, node: &Node, attr: &str, lit: &Literal) {
        let shown = shown_join(&self.shown(node), attr);
        let cx = self.cx(node.ctx);
        if cx.conds.insert((node.obj, attr.to_owned())) {
            cx.ops.push(ReadOp::Cond {
                src: node.obj,
                attr: attr.to_owned(),
                lit: lit.clone(),
                path: shown,
            });
        }
    }

    /// `callee(args)` where the callee is rooted at `self` or a loop variable.
    pub(super) fn member_call(&mut self, member: Member, c: &ast::ExprCall, at: Span) -> R<Expr> {
        if !c.arguments.keywords.is_empty() {
            return Err(self.attr_error(
                at,
                "calls of submodules and methods take positional arguments only".into(),
            ));
        }
        let mut args = Vec::new();
        let mut failed = false;
        for a in c.arguments.args.iter() {
            match self.expr(a) {
                Ok(v) => args.push(v),
                Err(_) => failed = true,
            }
        }
        if failed {
            return Err(Failed);
        }
        match member {
            Member::Value(v) => Err(self.attr_error(
                at,
                format!(
                    "calling the {} value `{}` is not lowered",
                    v.ty,
                    match &v.kind {
                        ExprKind::Local(n) => n.as_str(),
                        _ => "?",
                    }
                ),
            )),
            Member::Method(name) => {
                let root = self.root_node();
                let class = self
                    .method
                    .as_ref()
                    .map(|m| m.class.qualname.clone())
                    .unwrap_or_default();
                // `self.other(x)` dispatches on the instance's class: the state read checks that
                // it reaches the method compiled here.
                let defining = self.defining_class(&class, &name).unwrap_or(class);
                self.check_dispatch(None, &defining, &name);
                self.method_call(&root, &defining, &name, args, at)
            }
            Member::Super { class, name } => {
                // `super().name(x)` follows the instance's method resolution order past the
                // method's class: the state read checks that it reaches `class`'s method.
                let root = self.root_node();
                let after = self.method.as_ref().map(|m| m.class.qualname.clone());
                self.check_dispatch(after, &class, &name);
                self.method_call(&root, &class, &name, args, at)
            }
            Member::Module(node) => self.call_node(node, args, at),
        }
    }

    /// Has the state read check (once per call form) that calling `name` on the instance, past
    /// class `after` for `super()`, reaches `defining`'s compiled method.
    fn check_dispatch(&mut self, after: Option<String>, defining: &str, name: &str) {
        let cx = self.cx(0);
        if cx.dispatched.insert((after.clone(), name.to_owned())) {
            cx.ops.push(ReadOp::Dispatch {
                obj: 0,
                name: name.to_owned(),
                class: defining.to_owned(),
                after,
                path: "self".into(),
            });
        }
    }

    /// The instance itself, as the method's first context sees it.
    fn root_node(&self) -> Node {
        Node {
            ctx: 0,
            obj: 0,
            sub: self
                .method
                .as_ref()
                .map_or(Sub::Project(String::new()), |m| m.ctxs[0].root.clone()),
            path: String::new(),
        }
    }

    fn call_node(&mut self, node: Node, args: Vec<Expr>, at: Span) -> R<Expr> {
        let shown = self.shown(&node);
        if node.ctx == 0 && node.obj == 0 {
            // `self(x)` goes through `Module.__call__`, whose hooks on the model itself a
            // native call of `forward` would skip.
            return Err(self.error(
                codes::MODULE_ATTRIBUTE,
                at,
                "calling `self` inside its own method is not lowered (it runs the hooks of the model itself)",
                Some("call `self.forward(x)` where the model's own hooks need not run"),
            ));
        }
        self.mark_called(&node);
        match node.sub.clone() {
            Sub::Project(q) => {
                let defining = self.defining_class(&q, "forward").unwrap_or(q);
                self.method_call(&node, &defining, "forward", args, at)
            }
            Sub::Kind(kind) => {
                let [input] = <[Expr; 1]>::try_from(args).map_err(|args| {
                    self.attr_error(at, format!("`{shown}` is called with {} arguments; a `{}` takes one", args.len(), kind.class_path))
                })?;
                for (attr, lit) in &kind.conditions {
                    self.module_condition(&node, attr, lit);
                }
                let ty_of = |n: &str| kind.attrs.iter().find(|(a, _)| a == n).map(|(_, t)| t.clone());
                let part = |fx: &mut Self, p: &CallPart| -> R<Expr> {
                    Ok(match p {
                        CallPart::Input => input.clone(),
                        CallPart::Lit(l) => Expr { ty: lit_type(l), kind: ExprKind::Lit(l.clone()), span: at },
                        CallPart::Attr(n) => match ty_of(n) {
                            Some(t) => fx.value_slot(&node, n, t, at, false),
                            None => {
                                return Err(fx.error(
                                    codes::PLUGIN_CONTRACT,
                                    at,
                                    format!("plugin kind `{}` calls with attribute `{n}` it does not declare", kind.class_path),
                                    None,
                                ))
                            }
                        },
                    })
                };
                match &kind.call {
                    SubmoduleCall::Identity => Ok(input.clone()),
                    SubmoduleCall::Site { target, args, keywords } => {
                        let mut xs = Vec::new();
                        for a in args {
                            xs.push(part(self, a)?);
                        }
                        let mut kws = Vec::new();
                        for (k, a) in keywords {
                            kws.push((k.clone(), part(self, a)?));
                        }
                        self.site(SiteKind::Call, target.clone(), None, xs, kws, at)
                    }
                }
            }
            Sub::Seq { items, .. } => {
                let [mut x] = <[Expr; 1]>::try_from(args).map_err(|args| {
                    self.attr_error(at, format!("`{shown}` is called with {} arguments; a sequential container takes one", args.len()))
                })?;
                self.count_check(&node, items.len(), &shown);
                for (i, item) in items.iter().enumerate() {
                    let attr = node.sub.element_name(i);
                    let obj = self.child(&node, &attr, item, true);
                    let child = Node {
                        ctx: node.ctx,
                        obj,
                        sub: item.clone(),
                        path: join(&node.path, &attr),
                    };
                    x = self.call_node(child, vec![x], at)?;
                }
                Ok(x)
            }
            Sub::List { .. } => Err(self.attr_error(
                at,
                format!("`{shown}` is a module list, which is not callable; iterate it with `for m in {shown}:`"),
            )),
            Sub::Dict { .. } => Err(self.attr_error(
                at,
                format!("`{shown}` is a module dict, which is not callable; call one of its modules, `{shown}[\"name\"](x)`"),
            )),
        }
    }

    fn method_call(
        &mut self,
        node: &Node,
        class: &str,
        method: &str,
        args: Vec<Expr>,
        at: Span,
    ) -> R<Expr> {
        let callee = format!("{class}.{method}");
        let shown = self.shown(node);
        let sig = match self.methods.map(|t| t.signature(&callee)) {
            Some(Ok(sig)) => sig,
            Some(Err(why)) => {
                return Err(self.error(
                    codes::CALLEE_NOT_NATIVE,
                    at,
                    format!("`{shown}` calls `{callee}`, which stays on Python ({why})"),
                    Some("make the callee native, or keep the caller in Python"),
                ))
            }
            None => return Err(self.attr_error(at, format!("`{callee}` cannot be analysed here"))),
        };
        if args.len() != sig.params.len() {
            return Err(self.error(
                codes::CALLEE_NOT_NATIVE,
                at,
                format!(
                    "`{callee}` takes {} arguments, {} given (Python raises TypeError)",
                    sig.params.len(),
                    args.len()
                ),
                None,
            ));
        }
        for (a, t) in args.iter().zip(&sig.params) {
            if &a.ty != t {
                return Err(self.error(
                    codes::CALLEE_NOT_NATIVE,
                    a.span,
                    format!(
                        "an argument of `{callee}` is {} but the parameter is annotated {t}",
                        a.ty
                    ),
                    Some("pass a value of exactly the annotated type"),
                ));
            }
        }
        let key = (node.obj, callee.clone());
        let state_local = match self.cx(node.ctx).states.get(&key).cloned() {
            Some(l) => l,
            None => {
                let label = self.cx(node.ctx).label.clone();
                let local = format!("{label}.{}#{method}", node.path);
                let slot = self.new_slot(node.ctx, local.clone(), sig.state.clone(), at)?;
                let cx = self.cx(node.ctx);
                cx.states.insert(key, local.clone());
                cx.ops.push(ReadOp::State {
                    src: node.obj,
                    callee: callee.clone(),
                    slot,
                });
                local
            }
        };
        self.callees.insert(callee.clone());
        let mut all = vec![Expr {
            ty: sig.state,
            kind: ExprKind::Local(state_local),
            span: at,
        }];
        all.extend(args);
        Ok(Expr {
            ty: sig.ret,
            kind: ExprKind::Call { callee, args: all },
            span: at,
        })
    }

    /// `for var in <module list>:` (the loop's form already checked by [`Fx::for_range`]): the
    /// body runs once per element, with the element's state.
    pub(super) fn for_modules(
        &mut self,
        f: &ast::StmtFor,
        var: &str,
        node: Node,
        at: Span,
    ) -> R<Stmt> {
        let Sub::List { elem, expect, .. } = node.sub.clone() else {
            let shown = self.shown(&node);
            return Err(self.attr_error(
                at,
                format!("`for ... in {shown}` iterates something that is not a module list"),
            ));
        };
        let var = var.to_owned();
        let shown = self.shown(&node);
        let Some(m) = self.method.as_mut() else {
            return Err(Failed);
        };
        let k = m.ctxs.len();
        let class = elem.class().to_owned();
        m.ctxs.push(ReadCx::new(*elem, format!("{var}#{k}")));
        let prev = m.aliases.insert(var.clone(), k);
        let body = self.block(&f.body);
        let Some(m) = self.method.as_mut() else {
            return Err(Failed);
        };
        match prev {
            Some(p) => m.aliases.insert(var.clone(), p),
            None => m.aliases.remove(&var),
        };
        let cx = std::mem::replace(
            &mut m.ctxs[k],
            ReadCx::new(Sub::Project(String::new()), String::new()),
        );
        let elem_tys: Vec<ValueType> = cx.slots.iter().map(|(_, t)| t.clone()).collect();
        let elem_ty = ValueType::Tuple(elem_tys.clone());
        let elem_local = format!("{var}#{k}");
        self.bind(&elem_local, &elem_ty, at)?;
        let list_ty = ValueType::List(Box::new(elem_ty.clone()));
        let parent_label = self.cx(node.ctx).label.clone();
        let list_local = format!("{parent_label}.{}[]", node.path);
        let slot = self.new_slot(node.ctx, list_local.clone(), list_ty.clone(), at)?;
        self.cx(node.ctx).ops.push(ReadOp::List {
            src: node.obj,
            class,
            called: cx.root_called,
            ops: cx.ops,
            elem_slots: elem_tys,
            slot,
            path: shown,
        });
        let mut full = Vec::new();
        for (i, (local, ty)) in cx.slots.into_iter().enumerate() {
            full.push(Stmt::Assign {
                name: local,
                value: Expr {
                    ty,
                    kind: ExprKind::TupleGet(
                        Box::new(Expr {
                            ty: elem_ty.clone(),
                            kind: ExprKind::Local(elem_local.clone()),
                            span: at,
                        }),
                        i,
                    ),
                    span: at,
                },
            });
        }
        full.extend(body);
        Ok(Stmt::ForEach {
            var: elem_local,
            seq: Expr {
                ty: list_ty,
                kind: ExprKind::Local(list_local),
                span: at,
            },
            body: full,
            expect,
        })
    }

    /// After a method's body: its state parameter, the statements unpacking it, and its
    /// method IR.
    pub(super) fn finish_method(
        &mut self,
        at: Span,
        decorated: bool,
    ) -> Option<(Param, Vec<Stmt>, MethodIr)> {
        let m = self.method.as_mut()?;
        let cx = std::mem::replace(
            &mut m.ctxs[0],
            ReadCx::new(Sub::Project(String::new()), String::new()),
        );
        let tys: Vec<ValueType> = cx.slots.iter().map(|(_, t)| t.clone()).collect();
        let state_ty = ValueType::Tuple(tys.clone());
        let self_name = m.self_name.clone();
        let ir = MethodIr {
            class_qualname: m.class.qualname.clone(),
            class_name: m.class.name.clone(),
            plugin: m.class.plugin.clone(),
            reads: cx.ops,
            slots: tys,
            decorated,
        };
        self.types.insert(self_name.clone(), state_ty.clone());
        let prologue = cx
            .slots
            .into_iter()
            .enumerate()
            .map(|(i, (local, ty))| Stmt::Assign {
                name: local,
                value: Expr {
                    ty,
                    kind: ExprKind::TupleGet(
                        Box::new(Expr {
                            ty: state_ty.clone(),
                            kind: ExprKind::Local(self_name.clone()),
                            span: at,
                        }),
                        i,
                    ),
                    span: at,
                },
            })
            .collect();
        Some((
            Param {
                name: self_name,
                ty: state_ty,
            },
            prologue,
            ir,
        ))
    }
}
