//! Analysis: type each module-level function, offer every call, method call and operator on
//! plugin-typed values to the registry (post-order, nested expressions included), and decide
//! the function's route. The output is a typed IR for native functions plus diagnostics.
//!
//! One pass, in four parts that share the per-function state `Fx`:
//! - this module: routes, signatures and annotations, the driver;
//! - `stmts`: statements to IR (assignments, `if`, `while`, `for ... in range`);
//! - `exprs`: typing of scalar expressions, literals, operators and comparisons;
//! - `sites`: calls, method calls and operators on plugin values offered to the registry;
//! - `flow`: definite assignment and return paths over the built IR.

mod classes;
mod exprs;
mod flow;
mod sites;
mod stmts;
#[cfg(test)]
mod tests;

pub use classes::{Attr, ClassInfo, MethodTable, Sub};
pub use sites::describe_site;

use crate::codes;
use crate::frontend::SourceModule;
use crate::ir::{CmpKind, Expr, ExprKind, FnIr, Param, ScalarOp, Stmt};
use crate::registry::{Registry, SiteResolution};
use rextio_plugin_api::{
    ClaimSite, ClaimedSite, Diagnostic, Keyword, Literal, Operand, Severity, SiteKind, Span,
    ValueType, NEG_TARGET,
};
use ruff_python_ast as ast;
use ruff_text_size::Ranged;
use std::collections::{BTreeMap, BTreeSet};

/// Where a function runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// Natively, through these plugins (id order).
    Native(Vec<String>),
    /// On its Python body.
    Fallback,
}

impl std::fmt::Display for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label())
    }
}

/// Compare with the report spelling (`"fallback-python"`, `"native-plugin:rextio-torch"`).
impl PartialEq<&str> for Route {
    fn eq(&self, other: &&str) -> bool {
        self.label() == *other
    }
}

impl serde::Serialize for Route {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.label())
    }
}

impl Route {
    /// The report spelling: `native-plugin:<id>[+<id>]` or `fallback-python`.
    pub fn label(&self) -> String {
        match self {
            Route::Native(ids) => format!("native-plugin:{}", ids.join("+")),
            Route::Fallback => "fallback-python".to_owned(),
        }
    }
}

/// One accepted claim, with its position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimRecord {
    /// Rule id.
    pub rule_id: String,
    /// Plugin id.
    pub plugin_id: String,
    /// Position.
    pub span: Span,
}

/// The analysis of one module-level function.
#[derive(Debug, Clone)]
pub struct FunctionAnalysis {
    /// `module.function`.
    pub qualname: String,
    /// Python name.
    pub name: String,
    /// For a method of a module class, the class's Python name.
    pub class: Option<String>,
    /// Position of the `def`.
    pub span: Span,
    /// The route.
    pub route: Route,
    /// Claims (empty for fallback functions: nothing is claimed that does not run natively).
    pub claims: Vec<ClaimRecord>,
    /// Diagnostics explaining the route.
    pub diagnostics: Vec<Diagnostic>,
    /// The typed IR of a native function.
    pub ir: Option<FnIr>,
    /// Project functions it calls natively (its route depends on theirs).
    pub callees: BTreeSet<String>,
}

/// The analysis of one module.
#[derive(Debug, Clone)]
pub struct ModuleAnalysis {
    /// Dotted name.
    pub module: String,
    /// Path relative to the project root.
    pub path: std::path::PathBuf,
    /// Functions in source order.
    pub functions: Vec<FunctionAnalysis>,
}

/// A project function's signature, from its annotations.
#[derive(Debug, Clone, PartialEq)]
pub struct Signature {
    /// Parameters in order.
    pub params: Vec<(String, ValueType)>,
    /// Return type.
    pub ret: ValueType,
}

/// Every module-level function of the project that has a fully supported signature, by
/// qualified name: what a native caller may call directly.
#[derive(Debug, Clone, Default)]
pub struct ProjectIndex {
    /// Qualified name -> signature.
    pub signatures: BTreeMap<String, Signature>,
    /// Qualified names of every module-level function (signature or not).
    pub functions: BTreeSet<String>,
    /// Every module's constants by qualified name (`svc.config.EPS`), so an imported constant
    /// is a constant too.
    pub constants: BTreeMap<String, crate::constants::ConstValue>,
    /// The module classes, by qualified name, as their `__init__` describes them.
    pub classes: BTreeMap<String, ClassInfo>,
}

fn qualname_of(module: &SourceModule, name: &str) -> String {
    if module.name.is_empty() {
        name.to_owned()
    } else {
        format!("{}.{name}", module.name)
    }
}

/// Index the project's module-level functions and their signatures.
pub fn index_project(
    modules: &[SourceModule],
    registry: &Registry,
    enabled: &[String],
) -> ProjectIndex {
    let mut index = ProjectIndex::default();
    let empty = ProjectIndex::default();
    let class_names = classes::module_class_names(modules, registry, enabled);
    for module in modules {
        classes::read_classes(module, registry, enabled, &class_names, &mut index.classes);
    }
    classes::read_derived_classes(modules, registry, enabled, &class_names, &mut index.classes);
    for module in modules {
        for (name, v) in &module.constants.values {
            index.constants.insert(qualname_of(module, name), v.clone());
        }
        for s in &module.ast.body {
            let ast::Stmt::FunctionDef(f) = s else {
                continue;
            };
            let q = qualname_of(module, f.name.as_str());
            index.functions.insert(q.clone());
            let fx = Fx::new(module, registry, enabled, &empty);
            let p = &f.parameters;
            if p.vararg.is_some() || p.kwarg.is_some() || !p.kwonlyargs.is_empty() {
                continue;
            }
            let params: Option<Vec<(String, ValueType)>> = p
                .posonlyargs
                .iter()
                .chain(p.args.iter())
                .map(|pd| {
                    if pd.default.is_some() {
                        return None;
                    }
                    let t = fx.annotation(pd.parameter.annotation.as_deref()?)?;
                    Some((pd.parameter.name.as_str().to_owned(), t))
                })
                .collect();
            let ret = f.returns.as_deref().and_then(|r| fx.annotation(r));
            if let (Some(params), Some(ret)) = (params, ret) {
                index.signatures.insert(q, Signature { params, ret });
            }
        }
    }
    index
}

/// Analyse every module of the project: module-level functions, and the methods of its module
/// classes (which may call methods of classes in other modules).
pub fn analyse_project(
    modules: &[SourceModule],
    registry: &Registry,
    enabled: &[String],
    index: &ProjectIndex,
) -> Vec<ModuleAnalysis> {
    let table = MethodTable::new(modules, registry, enabled, index);
    modules
        .iter()
        .map(|m| analyse_module_with(m, registry, enabled, index, &table))
        .collect()
}

/// Analyse every module-level function and module-class method of one module (calls into other
/// modules' classes are not followed: use [`analyse_project`]).
pub fn analyse_module(
    module: &SourceModule,
    registry: &Registry,
    enabled: &[String],
    index: &ProjectIndex,
) -> ModuleAnalysis {
    let table = MethodTable::new(std::slice::from_ref(module), registry, enabled, index);
    analyse_module_with(module, registry, enabled, index, &table)
}

fn analyse_module_with(
    module: &SourceModule,
    registry: &Registry,
    enabled: &[String],
    index: &ProjectIndex,
    table: &MethodTable<'_>,
) -> ModuleAnalysis {
    let mut functions = Vec::new();
    for s in &module.ast.body {
        match s {
            ast::Stmt::FunctionDef(f) => {
                functions.push(analyse_function(module, registry, enabled, index, f));
            }
            ast::Stmt::ClassDef(c) => {
                let q = qualname_of(module, c.name.as_str());
                if index.classes.contains_key(&q) {
                    functions.extend(classes::class_methods(module, table, c));
                } else if let Some((base, module_base)) =
                    classes::framework_base(module, registry, enabled, c)
                {
                    functions.extend(framework_class_methods(module, c, &base, &module_base));
                } else if let Some(methods) = derived_class_methods(module, registry, index, c) {
                    functions.extend(methods);
                } else {
                    functions.extend(unread_class_methods(module, registry, enabled, c));
                }
            }
            _ => {}
        }
    }
    ModuleAnalysis {
        module: module.name.clone(),
        path: module.rel_path.clone(),
        functions,
    }
}

/// A class deriving from a module class of the project and from another base is reported
/// method by method, on Python (RXT024): the method resolution order is not followed. (A class
/// with one base that is a project module class is read by `classes::read_derived_classes`.)
/// `None` when no base is a project module class.
fn derived_class_methods(
    module: &SourceModule,
    registry: &Registry,
    index: &ProjectIndex,
    c: &ast::StmtClassDef,
) -> Option<Vec<FunctionAnalysis>> {
    let bases = c.arguments.as_ref().map(|a| &a.args[..]).unwrap_or(&[]);
    let is_class = |q: &str| index.classes.contains_key(q);
    let parent = bases
        .iter()
        .find_map(|b| classes::base_class(module, registry, b, &is_class))?;
    let class = c.name.as_str();
    Some(methods_on_python(module, c, |name| {
        Diagnostic::error(
            codes::MODULE_CLASS,
            format!(
                "`{class}` derives from the project's module class `{parent}` and from another base; methods of classes with several bases are not compiled (the method resolution order is not followed), so `{class}.{name}` runs as Python"
            ),
        )
        .with_suggestion("derive from one module class, or keep the method in the parent class")
    }))
}

/// A class rextio does not read at all (no module base, directly or through the project's
/// module classes: a plain class, a subclass of a third-party class such as a
/// `LightningModule`, or of a project class that is not a module class) is reported for each
/// method whose signature names a plugin's type, on Python (RXT024): those are the methods
/// written to be compiled. Its other methods (a configuration class's, an enum's) are not
/// reported, as they would not be if the class were read.
fn unread_class_methods(
    module: &SourceModule,
    registry: &Registry,
    enabled: &[String],
    c: &ast::StmtClassDef,
) -> Vec<FunctionAnalysis> {
    let empty = ProjectIndex::default();
    let fx = Fx::new(module, registry, enabled, &empty);
    let names_plugin_type = |f: &ast::StmtFunctionDef| {
        let p = &f.parameters;
        p.posonlyargs
            .iter()
            .chain(&p.args)
            .chain(&p.kwonlyargs)
            .filter_map(|a| a.parameter.annotation.as_deref())
            .chain(f.returns.as_deref())
            .any(|a| matches!(fx.annotation(a), Some(ValueType::Plugin(_))))
    };
    let typed: BTreeSet<&str> = c
        .body
        .iter()
        .filter_map(|s| match s {
            ast::Stmt::FunctionDef(f) if names_plugin_type(f) => Some(f.name.as_str()),
            _ => None,
        })
        .collect();
    if typed.iter().all(|m| *m == "__init__") {
        return Vec::new();
    }
    let module_bases: Vec<String> = enabled
        .iter()
        .filter_map(|id| registry.plugin(id))
        .filter(|reg| reg.negotiated.module_classes)
        .filter_map(|reg| reg.plugin.module_support()?.bases.first().cloned())
        .map(|b| format!("`{b}`"))
        .collect();
    let module_base = if module_bases.is_empty() {
        "a module base (no enabled plugin compiles classes)".to_owned()
    } else {
        module_bases.join(" or ")
    };
    let bases = classes::base_names(module, registry, enabled, c);
    let class = c.name.as_str();
    let what = if bases.is_empty() {
        format!("`{class}` is not a module class (it does not derive from {module_base})")
    } else {
        let bases: Vec<String> = bases.iter().map(|b| format!("`{b}`")).collect();
        format!(
            "`{class}` derives from {}, which rextio does not read (only classes deriving from {module_base}, directly or through the project's module classes, are)",
            bases.join(" and ")
        )
    };
    let mut out = methods_on_python(module, c, |name| {
        Diagnostic::error(
            codes::MODULE_CLASS,
            format!("{what}, so `{class}.{name}` runs as Python"),
        )
        .with_suggestion(format!(
            "derive `{class}` from {module_base}, or make `{name}` a module-level function"
        ))
    });
    out.retain(|f| typed.contains(f.name.as_str()));
    out
}

/// A class deriving from one of the framework's classes other than its module base
/// (`torch.nn.Sequential`, `torch.nn.Linear`) is reported method by method, on Python (RXT024):
/// what the framework class does around the methods is not read.
fn framework_class_methods(
    module: &SourceModule,
    c: &ast::StmtClassDef,
    base: &str,
    module_base: &str,
) -> Vec<FunctionAnalysis> {
    let class = c.name.as_str();
    methods_on_python(module, c, |name| {
        Diagnostic::error(
            codes::MODULE_CLASS,
            format!(
                "`{class}` derives from the framework's `{base}`, not from `{module_base}`; classes deriving from the framework's other classes are not read (what `{base}` does around their methods is not followed), so `{class}.{name}` runs as Python"
            ),
        )
        .with_suggestion(format!(
            "derive `{class}` from `{module_base}` and hold the `{base}` as an attribute"
        ))
    })
}

/// Every method of `c` but `__init__`, on Python with the one diagnostic `why` gives for its
/// name (placed at the method).
fn methods_on_python(
    module: &SourceModule,
    c: &ast::StmtClassDef,
    why: impl Fn(&str) -> Diagnostic,
) -> Vec<FunctionAnalysis> {
    let class = c.name.as_str();
    c.body
        .iter()
        .filter_map(|s| match s {
            ast::Stmt::FunctionDef(f) if f.name.as_str() != "__init__" => Some(f),
            _ => None,
        })
        .map(|f| {
            let name = f.name.as_str().to_owned();
            let span = module.span(f.range().start());
            let d = why(&name).at(span);
            FunctionAnalysis {
                qualname: qualname_of(module, &format!("{class}.{name}")),
                name,
                class: Some(class.to_owned()),
                span,
                route: Route::Fallback,
                claims: Vec::new(),
                diagnostics: vec![d],
                ir: None,
                callees: BTreeSet::new(),
            }
        })
        .collect()
}

struct Fx<'a> {
    module: &'a SourceModule,
    registry: &'a Registry,
    enabled: &'a [String],
    index: &'a ProjectIndex,
    /// Project functions this one calls natively.
    callees: BTreeSet<String>,
    diags: Vec<Diagnostic>,
    claims: Vec<ClaimRecord>,
    local_names: BTreeSet<String>,
    types: BTreeMap<String, ValueType>,
    order: Vec<(String, ValueType)>,
    params: BTreeSet<String>,
    poisoned: BTreeSet<String>,
    plugins: BTreeSet<String>,
    /// Hidden tuple locals made for unpacking assignments.
    unpack_count: u32,
    /// For a method of a module class: what it reads from `self`.
    method: Option<classes::MethodCx>,
    /// The project's methods, for calls between them.
    methods: Option<&'a MethodTable<'a>>,
    /// Locals bound by `name = <site>` to a tensor whose rule declares it fresh, each with
    /// whether it was read since (see [`Fx::site_operand`]). Emptied at every block boundary.
    fresh: BTreeMap<String, bool>,
    /// The fresh, unread locals the statement being analysed reads exactly once and then
    /// rebinds or returns: that one read is a private operand (granted once).
    consuming: BTreeSet<String>,
}

/// Marker for an expression that failed (its diagnostic is already recorded).
struct Failed;
type R<T> = Result<T, Failed>;

const RESERVED_PARAM_NAMES: [&str; 5] = ["self", "super", "crate", "Self", "_"];

fn analyse_function(
    module: &SourceModule,
    registry: &Registry,
    enabled: &[String],
    index: &ProjectIndex,
    f: &ast::StmtFunctionDef,
) -> FunctionAnalysis {
    let name = f.name.as_str().to_owned();
    let qualname = qualname_of(module, &name);
    let mut fx = Fx::new(module, registry, enabled, index);
    let span = module.span(f.range().start());
    let ir = fx.function(f, &qualname, &name);
    fx.into_analysis(ir, qualname, name, None, span)
}

impl Fx<'_> {
    /// The analysis of a function (or method) whose body `function` turned into `ir`.
    fn into_analysis(
        mut self,
        ir: Option<FnIr>,
        qualname: String,
        name: String,
        class: Option<String>,
        span: Span,
    ) -> FunctionAnalysis {
        if let Some(ir) = &ir {
            // One function, one backend's values: types of two plugins would need a
            // conversion nobody proves.
            let owners: BTreeSet<String> = crate::target::used_types(ir)
                .iter()
                .map(|k| k.namespace().to_owned())
                .collect();
            if owners.len() > 1 {
                let names: Vec<String> = owners.iter().map(|o| format!("`{o}`")).collect();
                self.diags.push(
                    Diagnostic::error(
                        codes::MIXED_BACKENDS,
                        format!(
                            "`{name}` mixes values of {}; a native function uses one backend",
                            names.join(" and ")
                        ),
                    )
                    .with_suggestion("split it into one function per backend")
                    .at(span),
                );
            }
        }
        let fatal = self.diags.iter().any(|d| d.severity == Severity::Error);
        // A function that analysed cleanly is a candidate: its route is settled by
        // `propagate_routes`, which also decides whether it has anything to run natively.
        let (route, ir, claims) = match ir {
            Some(ir) if !fatal => (
                Route::Native(self.plugins.iter().cloned().collect()),
                Some(ir),
                self.claims,
            ),
            _ => (Route::Fallback, None, Vec::new()),
        };
        let callees = if ir.is_some() {
            self.callees
        } else {
            BTreeSet::new()
        };
        FunctionAnalysis {
            qualname,
            name,
            class,
            span,
            route,
            claims,
            diagnostics: self.diags,
            ir,
            callees,
        }
    }
}

/// Make routes agree across calls, to a fixed point. Candidates are the functions that analysed
/// cleanly (they have IR). A candidate that calls a function without IR stays on Python
/// (RXT021, naming the callee and why); recursion stays on Python (RXT022); a caller's plugins
/// include its callees' (their guards and runtime crates). A candidate left with no plugin at
/// all has nothing to run natively on its own (RXT016) and keeps its Python entry point, but its
/// body stays available to native callers (a scalar helper).
pub fn propagate_routes(analyses: &mut [ModuleAnalysis]) {
    demote_recursion(analyses);
    while routes_step(analyses) {}
    demote_pluginless(analyses);
}

/// A function demoted to Python with diagnostic `d`.
fn demote(f: &mut FunctionAnalysis, d: Diagnostic) {
    f.diagnostics.push(d.at(f.span));
    f.route = Route::Fallback;
    f.claims.clear();
    f.ir = None;
    f.callees.clear();
}

/// Recursion: every candidate that can reach itself through calls stays on Python (RXT022).
fn demote_recursion(analyses: &mut [ModuleAnalysis]) {
    let graph: BTreeMap<String, BTreeSet<String>> = analyses
        .iter()
        .flat_map(|m| &m.functions)
        .filter(|f| f.ir.is_some())
        .map(|f| (f.qualname.clone(), f.callees.clone()))
        .collect();
    let reaches_itself = |start: &str| {
        let mut stack: Vec<&str> = graph
            .get(start)
            .map(|c| c.iter().map(String::as_str).collect())
            .unwrap_or_default();
        let mut seen = BTreeSet::new();
        while let Some(n) = stack.pop() {
            if n == start {
                return true;
            }
            if seen.insert(n) {
                if let Some(c) = graph.get(n) {
                    stack.extend(c.iter().map(String::as_str));
                }
            }
        }
        false
    };
    let recursive: BTreeSet<String> = graph
        .keys()
        .filter(|q| reaches_itself(q))
        .cloned()
        .collect();
    for f in analyses.iter_mut().flat_map(|m| m.functions.iter_mut()) {
        if recursive.contains(&f.qualname) {
            let d = Diagnostic::error(
                codes::RECURSION,
                format!(
                    "`{}` is recursive (it can call itself through native calls); recursion stays on Python",
                    f.name
                ),
            );
            demote(f, d);
        }
    }
}

/// One round of making routes agree across calls: a candidate takes its callees' plugins, or is
/// demoted (RXT021) when a callee stays on Python. Whether anything changed.
fn routes_step(analyses: &mut [ModuleAnalysis]) -> bool {
    // qualname -> (plugins when it is a candidate, why it is not).
    let state: BTreeMap<String, (Option<Vec<String>>, Option<String>)> = analyses
        .iter()
        .flat_map(|m| &m.functions)
        .map(|f| {
            let ids = match (&f.ir, &f.route) {
                (Some(_), Route::Native(ids)) => Some(ids.clone()),
                (Some(_), Route::Fallback) => Some(Vec::new()),
                (None, _) => None,
            };
            let why = f
                .diagnostics
                .iter()
                .find(|d| d.severity == Severity::Error)
                .map(|d| format!("{}: {}", d.code, d.message));
            (f.qualname.clone(), (ids, why))
        })
        .collect();
    let mut changed = false;
    for f in analyses.iter_mut().flat_map(|m| m.functions.iter_mut()) {
        if f.ir.is_none() {
            continue;
        }
        let mut ids: BTreeSet<String> = match &f.route {
            Route::Native(ids) => ids.iter().cloned().collect(),
            Route::Fallback => BTreeSet::new(),
        };
        let mut blocked = None;
        for c in &f.callees {
            match state.get(c) {
                Some((Some(cids), _)) => ids.extend(cids.iter().cloned()),
                Some((None, why)) => {
                    blocked = Some((c.clone(), why.clone().unwrap_or_default()));
                    break;
                }
                None => {
                    blocked = Some((c.clone(), "it is not a function of this project".into()));
                    break;
                }
            }
        }
        if let Some((callee, why)) = blocked {
            let d = Diagnostic::error(
                codes::CALLEE_NOT_NATIVE,
                format!(
                    "`{}` calls `{callee}`, which stays on Python ({why})",
                    f.name
                ),
            )
            .with_suggestion("make the callee native, or keep the caller in Python");
            demote(f, d);
            changed = true;
            continue;
        }
        let route = Route::Native(ids.into_iter().collect());
        if matches!(&f.route, Route::Native(old) if Route::Native(old.clone()) == route) {
            continue;
        }
        if matches!(f.route, Route::Fallback) && route == Route::Native(Vec::new()) {
            continue;
        }
        f.route = route;
        changed = true;
    }
    changed
}

/// Candidates without any plugin have nothing to run natively on their own (RXT016): they keep
/// their Python entry point, their bodies stay available to native callers.
fn demote_pluginless(analyses: &mut [ModuleAnalysis]) {
    for f in analyses.iter_mut().flat_map(|m| m.functions.iter_mut()) {
        if f.ir.is_some() && f.route == Route::Native(Vec::new()) {
            f.route = Route::Fallback;
            f.claims.clear();
            if !f
                .diagnostics
                .iter()
                .any(|d| d.code == codes::NOTHING_TO_LOWER)
            {
                f.diagnostics.push(
                    Diagnostic {
                        code: codes::NOTHING_TO_LOWER.into(),
                        severity: Severity::Info,
                        message: format!(
                            "`{}` uses no operation of an enabled plugin; it stays on Python (native callers call its body directly)",
                            f.name
                        ),
                        suggestion: None,
                        span: None,
                    }
                    .at(f.span),
                );
            }
        }
    }
}

fn collect_targets(body: &[ast::Stmt], out: &mut BTreeSet<String>) {
    for s in body {
        match s {
            ast::Stmt::Assign(a) => {
                for t in &a.targets {
                    target_names(t, out);
                }
            }
            ast::Stmt::AugAssign(a) => {
                if let ast::Expr::Name(n) = a.target.as_ref() {
                    out.insert(n.id.as_str().to_owned());
                }
            }
            ast::Stmt::AnnAssign(a) => {
                if let ast::Expr::Name(n) = a.target.as_ref() {
                    out.insert(n.id.as_str().to_owned());
                }
            }
            ast::Stmt::For(f) => {
                target_names(&f.target, out);
                collect_targets(&f.body, out);
                collect_targets(&f.orelse, out);
            }
            ast::Stmt::While(w) => {
                collect_targets(&w.body, out);
                collect_targets(&w.orelse, out);
            }
            ast::Stmt::If(i) => {
                collect_targets(&i.body, out);
                for c in &i.elif_else_clauses {
                    collect_targets(&c.body, out);
                }
            }
            _ => {}
        }
    }
}

/// The names an assignment or loop target binds: a plain name, or the plain names of a tuple
/// or list target.
fn target_names(t: &ast::Expr, out: &mut BTreeSet<String>) {
    match t {
        ast::Expr::Name(n) => {
            out.insert(n.id.as_str().to_owned());
        }
        ast::Expr::Tuple(ast::ExprTuple { elts, .. })
        | ast::Expr::List(ast::ExprList { elts, .. }) => {
            for e in elts {
                if let ast::Expr::Name(n) = e {
                    out.insert(n.id.as_str().to_owned());
                }
            }
        }
        _ => {}
    }
}

fn lit_type(l: &Literal) -> ValueType {
    match l {
        Literal::Int(_) => ValueType::Int,
        Literal::Float(_) => ValueType::Float,
        Literal::Bool(_) => ValueType::Bool,
        Literal::Str(_) => ValueType::Str,
        Literal::None => ValueType::NoneType,
    }
}

fn is_scalar(t: &ValueType) -> bool {
    matches!(t, ValueType::Int | ValueType::Float | ValueType::Bool)
}

impl<'a> Fx<'a> {
    fn new(
        module: &'a SourceModule,
        registry: &'a Registry,
        enabled: &'a [String],
        index: &'a ProjectIndex,
    ) -> Self {
        Fx {
            module,
            registry,
            enabled,
            index,
            callees: BTreeSet::new(),
            diags: Vec::new(),
            claims: Vec::new(),
            local_names: BTreeSet::new(),
            types: BTreeMap::new(),
            order: Vec::new(),
            params: BTreeSet::new(),
            poisoned: BTreeSet::new(),
            plugins: BTreeSet::new(),
            unpack_count: 0,
            method: None,
            methods: None,
            fresh: BTreeMap::new(),
            consuming: BTreeSet::new(),
        }
    }
}

impl Fx<'_> {
    fn span(&self, node: &impl Ranged) -> Span {
        self.module.span(node.range().start())
    }

    fn error(
        &mut self,
        code: &str,
        at: Span,
        message: impl Into<String>,
        suggestion: Option<&str>,
    ) -> Failed {
        let mut d = Diagnostic::error(code, message).at(at);
        d.suggestion = suggestion.map(str::to_owned);
        self.diags.push(d);
        Failed
    }

    fn function(&mut self, f: &ast::StmtFunctionDef, qualname: &str, name: &str) -> Option<FnIr> {
        let at = self.span(f);
        self.function_kind(f, at, name)?;
        self.decorators(f, name)?;
        let mut params = self.parameters(f, at, name)?;
        let ret = self.return_type(f, at, name);
        collect_targets(&f.body, &mut self.local_names);
        self.local_names.extend(self.params.iter().cloned());
        let mut body = self.block(&f.body);
        let mut method_ir = None;
        if self.method.is_some() {
            // Every decorator was taken by a plugin (`decorators` above), or this is not reached.
            let decorated = !f.decorator_list.is_empty();
            let (state, prologue, ir) = self.finish_method(at, decorated)?;
            params.insert(0, state);
            body.splice(0..0, prologue);
            method_ir = Some(ir);
        }
        let ret = ret?;
        if self.diags.iter().any(|d| d.severity == Severity::Error) {
            return None;
        }
        // Definite assignment and return paths, on the typed body.
        let mut assigned: BTreeSet<String> = params.iter().map(|p| p.name.clone()).collect();
        let diverges = self.flow(&body, &mut assigned, &ret);
        if !diverges {
            self.error(
                codes::RETURN_PATH,
                at,
                format!("`{name}` may reach its end without returning (Python would return None)"),
                Some("end every path with `return <value>`"),
            );
        }
        let locals = self
            .order
            .iter()
            .filter(|(n, _)| !self.params.contains(n))
            .cloned()
            .collect();
        Some(FnIr {
            qualname: qualname.to_owned(),
            name: name.to_owned(),
            params,
            ret,
            locals,
            body,
            method: method_ir,
        })
    }

    /// Async and generic functions stay on Python.
    fn function_kind(&mut self, f: &ast::StmtFunctionDef, at: Span, name: &str) -> Option<()> {
        if f.is_async || f.type_params.is_some() {
            let what = if f.is_async { "async" } else { "generic" };
            self.error(
                codes::FUNCTION_KIND,
                at,
                format!("`{name}` is {what}; such functions stay on Python"),
                None,
            );
            return None;
        }
        Some(())
    }

    /// Every decorator must be one an enabled plugin takes (recorded as its claim); any other
    /// may replace the function, which then stays on Python.
    fn decorators(&mut self, f: &ast::StmtFunctionDef, name: &str) -> Option<()> {
        for d in &f.decorator_list {
            let dat = self.span(&d.expression);
            let (target, called) = match &d.expression {
                ast::Expr::Call(c)
                    if c.arguments.args.is_empty() && c.arguments.keywords.is_empty() =>
                {
                    (self.dotted_global(&c.func), true)
                }
                ast::Expr::Call(_) => (None, true),
                other => (self.dotted_global(other), false),
            };
            let taken = match &target {
                Some(path) => match self.registry.decorator(path, called, self.enabled) {
                    Ok(t) => t,
                    Err(msg) => {
                        self.error(codes::PLUGIN_CONTRACT, dat, msg, None);
                        return None;
                    }
                },
                None => None,
            };
            match taken {
                Some((plugin_id, rule_id)) => {
                    self.claims.push(ClaimRecord {
                        rule_id,
                        plugin_id: plugin_id.clone(),
                        span: dat,
                    });
                    self.plugins.insert(plugin_id);
                }
                None => {
                    let shown =
                        target.map_or_else(|| "this decorator".to_owned(), |p| format!("`@{p}`"));
                    self.error(
                        codes::FUNCTION_KIND,
                        dat,
                        format!("`{name}` is decorated with {shown}, which may replace the function; it stays on Python"),
                        Some("only decorators an enabled plugin proves harmless (such as torch's grad-mode decorators) keep a function native"),
                    );
                    return None;
                }
            }
        }
        Some(())
    }

    /// The typed parameters (a method's instance taken out first: its state is read at the
    /// boundary). Each problem is reported, and the rest still read, so one check reports them
    /// all; `None` only for a method without an instance parameter.
    fn parameters(&mut self, f: &ast::StmtFunctionDef, at: Span, name: &str) -> Option<Vec<Param>> {
        let p = &f.parameters;
        if p.vararg.is_some() || p.kwarg.is_some() || !p.kwonlyargs.is_empty() {
            self.error(
                codes::PARAMETER_KIND,
                at,
                format!("`{name}` has *args, **kwargs or keyword-only parameters"),
                Some("use plain positional parameters"),
            );
        }
        let mut positional: Vec<&ast::ParameterWithDefault> =
            p.posonlyargs.iter().chain(p.args.iter()).collect();
        if self.method.is_some() {
            if positional.is_empty() {
                self.error(
                    codes::PARAMETER_KIND,
                    at,
                    format!("method `{name}` has no `self` parameter (a static method?)"),
                    None,
                );
                return None;
            }
            let first = positional.remove(0);
            let self_name = first.parameter.name.as_str().to_owned();
            self.method_self(&self_name);
            self.params.insert(self_name);
        }
        Some(
            positional
                .into_iter()
                .filter_map(|pd| self.parameter(pd))
                .collect(),
        )
    }

    /// One positional parameter: no default, a usable name, an annotation this analysis reads.
    /// `None` (reported) when its type is unknown: the parameter is then poisoned, so what
    /// reads it is not analysed further.
    fn parameter(&mut self, pd: &ast::ParameterWithDefault) -> Option<Param> {
        let pname = pd.parameter.name.as_str().to_owned();
        let pspan = self.span(&pd.parameter);
        if pd.default.is_some() {
            self.error(
                codes::PARAMETER_KIND,
                pspan,
                format!("parameter `{pname}` has a default value"),
                Some("remove the default, or keep the function in Python"),
            );
        }
        if RESERVED_PARAM_NAMES.contains(&pname.as_str()) || !pname.is_ascii() {
            self.error(
                codes::PARAMETER_KIND,
                pspan,
                format!("parameter name `{pname}` cannot be used by a native function"),
                Some("rename the parameter"),
            );
        }
        let ty = match pd.parameter.annotation.as_deref() {
            None => {
                self.error(
                    codes::PARAM_ANNOTATION,
                    pspan,
                    format!("parameter `{pname}` has no annotation"),
                    Some("annotate it with int, float, bool or a plugin marker type"),
                );
                None
            }
            Some(a) => {
                let t = self.annotation(a);
                if t.is_none() {
                    let help = self.marker_help(a);
                    self.error(
                        codes::PARAM_ANNOTATION,
                        pspan,
                        format!("annotation of parameter `{pname}` is not int, float, bool or a marker type of an enabled plugin"),
                        Some(&help),
                    );
                }
                t
            }
        };
        self.params.insert(pname.clone());
        match ty {
            Some(ty) => {
                self.types.insert(pname.clone(), ty.clone());
                Some(Param { name: pname, ty })
            }
            None => {
                self.poisoned.insert(pname);
                None
            }
        }
    }

    /// The return type, or `None` (reported) when the annotation is missing or not readable.
    fn return_type(&mut self, f: &ast::StmtFunctionDef, at: Span, name: &str) -> Option<ValueType> {
        match f.returns.as_deref() {
            None => {
                self.error(
                    codes::RETURN_ANNOTATION,
                    at,
                    format!("`{name}` has no return annotation"),
                    Some("annotate the return type"),
                );
                None
            }
            Some(r) => {
                let t = self.annotation(r);
                if t.is_none() {
                    let rs = self.span(r);
                    let help = self.marker_help(r);
                    self.error(codes::RETURN_ANNOTATION, rs, "return annotation is not int, float, bool or a marker type of an enabled plugin", Some(&help));
                }
                t
            }
        }
    }

    /// Resolve an annotation expression.
    fn annotation(&self, e: &ast::Expr) -> Option<ValueType> {
        // A string annotation (`x: "TensorF32Cpu2D"`) means the expression it spells.
        if let ast::Expr::StringLiteral(s) = e {
            let parsed = ruff_python_parser::parse_expression(s.value.to_str()).ok()?;
            return self.annotation(&parsed.into_syntax().body);
        }
        if let ast::Expr::Name(n) = e {
            let id = n.id.as_str();
            if !self.module.imports.contains_key(id) {
                match id {
                    "int" => return Some(ValueType::Int),
                    "float" => return Some(ValueType::Float),
                    "bool" => return Some(ValueType::Bool),
                    _ => {}
                }
            }
        }
        // `tuple[A, B]` / `typing.Tuple[A, B]`: a fixed-length tuple of supported types.
        if let ast::Expr::Subscript(sub) = e {
            let is_tuple = match sub.value.as_ref() {
                ast::Expr::Name(n) if n.id.as_str() == "tuple" => {
                    !self.module.imports.contains_key("tuple")
                }
                other => self.dotted_global(other).as_deref() == Some("typing.Tuple"),
            };
            if !is_tuple {
                return None;
            }
            let items: Vec<&ast::Expr> = match sub.slice.as_ref() {
                ast::Expr::Tuple(t) => t.elts.iter().collect(),
                one => vec![one],
            };
            if items
                .iter()
                .any(|i| matches!(i, ast::Expr::EllipsisLiteral(_)))
            {
                return None;
            }
            let tys = items
                .into_iter()
                .map(|i| self.annotation(i))
                .collect::<Option<Vec<_>>>()?;
            if tys.iter().any(|t| matches!(t, ValueType::Tuple(_))) {
                return None;
            }
            return Some(ValueType::Tuple(tys));
        }
        let path = self.dotted_global(e)?;
        let (_, ty) = self.registry.annotation(&path, self.enabled)?;
        Some(ValueType::Plugin(ty.key.clone()))
    }

    /// What to write instead of annotation `a`, which no enabled plugin reads
    /// ([`Registry::marker_help`]).
    fn marker_help(&self, a: &ast::Expr) -> String {
        self.registry
            .marker_help(self.dotted_global(a).as_deref(), self.enabled)
    }

    /// A dotted path through module-level imports (`F.linear` -> `torch.nn.functional.linear`).
    fn dotted_global(&self, e: &ast::Expr) -> Option<String> {
        match e {
            ast::Expr::Name(n) => {
                let id = n.id.as_str();
                if self.local_names.contains(id) {
                    return None;
                }
                self.module.imports.get(id).cloned()
            }
            ast::Expr::Attribute(a) => Some(format!(
                "{}.{}",
                self.dotted_global(&a.value)?,
                a.attr.as_str()
            )),
            _ => None,
        }
    }
}
