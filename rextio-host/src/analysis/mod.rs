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

mod exprs;
mod flow;
mod sites;
mod stmts;
#[cfg(test)]
mod tests;

pub use sites::describe_site;

use crate::codes;
use crate::frontend::SourceModule;
use crate::ir::{CmpKind, Expr, ExprKind, FnIr, Param, ScalarOp, Stmt};
use crate::registry::{Registry, SiteResolution};
use rextio_plugin_api::{
    ClaimSite, ClaimedSite, Diagnostic, Keyword, Literal, Operand, Severity, SiteKind, Span,
    ValueType,
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

/// Analyse every module-level function of a module.
pub fn analyse_module(
    module: &SourceModule,
    registry: &Registry,
    enabled: &[String],
) -> ModuleAnalysis {
    let functions = module
        .ast
        .body
        .iter()
        .filter_map(|s| match s {
            ast::Stmt::FunctionDef(f) => Some(analyse_function(module, registry, enabled, f)),
            _ => None,
        })
        .collect();
    ModuleAnalysis {
        module: module.name.clone(),
        path: module.rel_path.clone(),
        functions,
    }
}

struct Fx<'a> {
    module: &'a SourceModule,
    registry: &'a Registry,
    enabled: &'a [String],
    diags: Vec<Diagnostic>,
    claims: Vec<ClaimRecord>,
    local_names: BTreeSet<String>,
    types: BTreeMap<String, ValueType>,
    order: Vec<(String, ValueType)>,
    params: BTreeSet<String>,
    poisoned: BTreeSet<String>,
    plugins: BTreeSet<String>,
}

/// Marker for an expression that failed (its diagnostic is already recorded).
struct Failed;
type R<T> = Result<T, Failed>;

const RESERVED_PARAM_NAMES: [&str; 5] = ["self", "super", "crate", "Self", "_"];

fn analyse_function(
    module: &SourceModule,
    registry: &Registry,
    enabled: &[String],
    f: &ast::StmtFunctionDef,
) -> FunctionAnalysis {
    let name = f.name.as_str().to_owned();
    let qualname = if module.name.is_empty() {
        name.clone()
    } else {
        format!("{}.{name}", module.name)
    };
    let mut fx = Fx {
        module,
        registry,
        enabled,
        diags: Vec::new(),
        claims: Vec::new(),
        local_names: BTreeSet::new(),
        types: BTreeMap::new(),
        order: Vec::new(),
        params: BTreeSet::new(),
        poisoned: BTreeSet::new(),
        plugins: BTreeSet::new(),
    };
    let span = module.span(f.range().start());
    let ir = fx.function(f, &qualname, &name);
    if let Some(ir) = &ir {
        // One function, one backend's values: types of two plugins would need a conversion
        // nobody proves.
        let owners: BTreeSet<String> = crate::target::used_types(ir)
            .iter()
            .map(|k| k.namespace().to_owned())
            .collect();
        if owners.len() > 1 {
            let names: Vec<String> = owners.iter().map(|o| format!("`{o}`")).collect();
            fx.diags.push(
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
    let fatal = fx.diags.iter().any(|d| d.severity == Severity::Error);
    let (route, ir, claims) = match ir {
        Some(ir) if !fatal && !fx.plugins.is_empty() => (
            Route::Native(fx.plugins.iter().cloned().collect()),
            Some(ir),
            fx.claims,
        ),
        Some(_) if !fatal => {
            fx.diags.push(
                Diagnostic {
                    code: codes::NOTHING_TO_LOWER.into(),
                    severity: Severity::Info,
                    message: format!(
                        "`{name}` uses no operation of an enabled plugin; it stays on Python"
                    ),
                    suggestion: None,
                    span: None,
                }
                .at(span),
            );
            (Route::Fallback, None, Vec::new())
        }
        _ => (Route::Fallback, None, Vec::new()),
    };
    FunctionAnalysis {
        qualname,
        name,
        span,
        route,
        claims,
        diagnostics: fx.diags,
        ir,
    }
}

fn collect_targets(body: &[ast::Stmt], out: &mut BTreeSet<String>) {
    for s in body {
        match s {
            ast::Stmt::Assign(a) => {
                for t in &a.targets {
                    if let ast::Expr::Name(n) = t {
                        out.insert(n.id.as_str().to_owned());
                    }
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
                if let ast::Expr::Name(n) = f.target.as_ref() {
                    out.insert(n.id.as_str().to_owned());
                }
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
        if !f.decorator_list.is_empty() || f.is_async || f.type_params.is_some() {
            let what = if f.is_async {
                "async"
            } else if f.type_params.is_some() {
                "generic"
            } else {
                "decorated"
            };
            self.error(
                codes::FUNCTION_KIND,
                at,
                format!("`{name}` is {what}; such functions stay on Python"),
                None,
            );
            return None;
        }
        let p = &f.parameters;
        if p.vararg.is_some() || p.kwarg.is_some() || !p.kwonlyargs.is_empty() {
            self.error(
                codes::PARAMETER_KIND,
                at,
                format!("`{name}` has *args, **kwargs or keyword-only parameters"),
                Some("use plain positional parameters"),
            );
        }
        let mut params = Vec::new();
        for pd in p.posonlyargs.iter().chain(p.args.iter()) {
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
                        self.error(
                            codes::PARAM_ANNOTATION,
                            pspan,
                            format!("annotation of parameter `{pname}` is not int, float, bool or a marker type of an enabled plugin"),
                            Some("import the marker type at module level, e.g. `from rextio_torch.types import TensorF32Cpu2D`"),
                        );
                    }
                    t
                }
            };
            self.params.insert(pname.clone());
            match ty {
                Some(ty) => {
                    self.types.insert(pname.clone(), ty.clone());
                    params.push(Param { name: pname, ty });
                }
                None => {
                    self.poisoned.insert(pname);
                }
            }
        }
        let ret = match f.returns.as_deref() {
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
                    self.error(codes::RETURN_ANNOTATION, rs, "return annotation is not int, float, bool or a marker type of an enabled plugin", None);
                }
                t
            }
        };
        collect_targets(&f.body, &mut self.local_names);
        self.local_names.extend(self.params.iter().cloned());
        let body = self.block(&f.body);
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
        })
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
        let path = self.dotted_global(e)?;
        let (_, ty) = self.registry.annotation(&path, self.enabled)?;
        Some(ValueType::Plugin(ty.key.clone()))
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
