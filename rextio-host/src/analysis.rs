//! Analysis: type each module-level function, offer every call, method call and operator on
//! plugin-typed values to the registry (post-order, nested expressions included), and decide
//! the function's route. The output is a typed IR for native functions plus diagnostics.

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

    fn block(&mut self, body: &[ast::Stmt]) -> Vec<Stmt> {
        let mut out = Vec::new();
        for s in body {
            if let Ok(Some(st)) = self.stmt(s) {
                out.push(st);
            }
        }
        out
    }

    fn bind(&mut self, name: &str, ty: &ValueType, at: Span) -> R<()> {
        match self.types.get(name) {
            Some(prev) if prev != ty => {
                let msg = format!("`{name}` was {prev} and is re-bound to {ty}");
                Err(self.error(
                    codes::TYPE_CHANGE,
                    at,
                    msg,
                    Some("use a new name for the new value"),
                ))
            }
            Some(_) => Ok(()),
            None => {
                self.types.insert(name.to_owned(), ty.clone());
                self.order.push((name.to_owned(), ty.clone()));
                Ok(())
            }
        }
    }

    fn assign(&mut self, name: &str, value: &ast::Expr, at: Span) -> R<Stmt> {
        let v = match self.expr(value) {
            Ok(v) => v,
            Err(f) => {
                if !self.types.contains_key(name) {
                    self.poisoned.insert(name.to_owned());
                }
                return Err(f);
            }
        };
        self.bind(name, &v.ty, at)?;
        Ok(Stmt::Assign {
            name: name.to_owned(),
            value: v,
        })
    }

    fn stmt(&mut self, s: &ast::Stmt) -> R<Option<Stmt>> {
        let at = self.span(s);
        let unsupported = |fx: &mut Self, what: &str| {
            Err(fx.error(
                codes::UNSUPPORTED_STATEMENT,
                at,
                format!("{what} is not lowered"),
                None,
            ))
        };
        match s {
            ast::Stmt::Pass(_) => Ok(None),
            ast::Stmt::Expr(e) => match e.value.as_ref() {
                ast::Expr::StringLiteral(_) | ast::Expr::EllipsisLiteral(_) => Ok(None),
                _ => unsupported(self, "an expression statement (its effects would be lost)"),
            },
            ast::Stmt::Assign(a) => {
                let [ast::Expr::Name(n)] = a.targets.as_slice() else {
                    return unsupported(self, "assignment to anything but one plain name");
                };
                self.assign(n.id.as_str(), &a.value, at).map(Some)
            }
            ast::Stmt::AnnAssign(a) => {
                let (ast::Expr::Name(n), Some(value)) = (a.target.as_ref(), a.value.as_deref())
                else {
                    return unsupported(
                        self,
                        "an annotated assignment without a value or to a non-name",
                    );
                };
                let declared = self.annotation(&a.annotation);
                let st = self.assign(n.id.as_str(), value, at)?;
                if let (Some(d), Stmt::Assign { value, .. }) = (&declared, &st) {
                    if d != &value.ty {
                        let msg = format!(
                            "`{}` is annotated {d} but assigned {}",
                            n.id.as_str(),
                            value.ty
                        );
                        return Err(self.error(codes::TYPE_CHANGE, at, msg, None));
                    }
                }
                Ok(Some(st))
            }
            ast::Stmt::AugAssign(a) => {
                let ast::Expr::Name(n) = a.target.as_ref() else {
                    return unsupported(self, "augmented assignment to anything but a plain name");
                };
                let name = n.id.as_str();
                if let Some(ValueType::Plugin(_)) = self.types.get(name) {
                    return unsupported(self, "augmented assignment to a tensor (it updates the tensor in place in eager mode)");
                }
                let target = self.name(n)?;
                let value = self.expr(&a.value)?;
                let v = self.binop(target, a.op, value, at)?;
                self.bind(name, &v.ty, at)?;
                Ok(Some(Stmt::Assign {
                    name: name.to_owned(),
                    value: v,
                }))
            }
            ast::Stmt::If(i) => {
                let cond = self.condition(&i.test);
                let then = self.block(&i.body);
                let orelse = self.elif_chain(&i.elif_else_clauses);
                Ok(Some(Stmt::If {
                    cond: cond?,
                    then,
                    orelse,
                }))
            }
            ast::Stmt::While(w) => {
                if !w.orelse.is_empty() {
                    return unsupported(self, "a `while ... else` clause");
                }
                let cond = self.condition(&w.test);
                let body = self.block(&w.body);
                Ok(Some(Stmt::While { cond: cond?, body }))
            }
            ast::Stmt::For(f) => self.for_range(f, at).map(Some),
            ast::Stmt::Break(_) => Ok(Some(Stmt::Break)),
            ast::Stmt::Continue(_) => Ok(Some(Stmt::Continue)),
            ast::Stmt::Return(r) => {
                let Some(v) = r.value.as_deref() else {
                    return Err(self.error(
                        codes::RETURN_PATH,
                        at,
                        "`return` without a value returns None",
                        Some("return a value of the annotated type"),
                    ));
                };
                Ok(Some(Stmt::Return(self.expr(v)?)))
            }
            ast::Stmt::FunctionDef(_) | ast::Stmt::ClassDef(_) => {
                unsupported(self, "a nested definition")
            }
            ast::Stmt::With(_) => unsupported(self, "a `with` statement"),
            ast::Stmt::Try(_) => unsupported(self, "a `try` statement"),
            ast::Stmt::Raise(_) => unsupported(self, "a `raise` statement"),
            ast::Stmt::Assert(_) => unsupported(self, "an `assert` statement"),
            ast::Stmt::Import(_) | ast::Stmt::ImportFrom(_) => {
                unsupported(self, "an import inside a function")
            }
            ast::Stmt::Global(_) | ast::Stmt::Nonlocal(_) => {
                unsupported(self, "a `global`/`nonlocal` declaration")
            }
            ast::Stmt::Delete(_) => unsupported(self, "a `del` statement"),
            ast::Stmt::Match(_) => unsupported(self, "a `match` statement"),
            _ => unsupported(self, "this statement"),
        }
    }

    fn elif_chain(&mut self, clauses: &[ast::ElifElseClause]) -> Vec<Stmt> {
        let Some((first, rest)) = clauses.split_first() else {
            return Vec::new();
        };
        match &first.test {
            None => self.block(&first.body),
            Some(test) => {
                let cond = self.condition(test);
                let then = self.block(&first.body);
                let orelse = self.elif_chain(rest);
                match cond {
                    Ok(cond) => vec![Stmt::If { cond, then, orelse }],
                    Err(_) => Vec::new(),
                }
            }
        }
    }

    fn for_range(&mut self, f: &ast::StmtFor, at: Span) -> R<Stmt> {
        if f.is_async || !f.orelse.is_empty() {
            return Err(self.error(
                codes::UNSUPPORTED_STATEMENT,
                at,
                "`async for` and `for ... else` are not lowered",
                None,
            ));
        }
        let ast::Expr::Name(var) = f.target.as_ref() else {
            return Err(self.error(
                codes::NON_RANGE_FOR,
                at,
                "the loop target must be one plain name",
                None,
            ));
        };
        let range_call = match f.iter.as_ref() {
            ast::Expr::Call(c) => match c.func.as_ref() {
                ast::Expr::Name(n)
                    if n.id.as_str() == "range"
                        && !self.local_names.contains("range")
                        && !self.module.imports.contains_key("range") =>
                {
                    Some(c)
                }
                _ => None,
            },
            _ => None,
        };
        let Some(call) = range_call else {
            return Err(self.error(
                codes::NON_RANGE_FOR,
                at,
                "only `for name in range(...)` loops are lowered",
                Some("iterate over range(...) with int bounds"),
            ));
        };
        if !call.arguments.keywords.is_empty()
            || call.arguments.args.is_empty()
            || call.arguments.args.len() > 3
        {
            return Err(self.error(
                codes::NON_RANGE_FOR,
                at,
                "range() takes one to three positional int arguments",
                None,
            ));
        }
        let mut parts = Vec::new();
        for a in call.arguments.args.iter() {
            let e = self.expr(a)?;
            parts.push(self.coerce_int(e)?);
        }
        let lit = |v: i64, span| Expr {
            ty: ValueType::Int,
            kind: ExprKind::Lit(Literal::Int(v)),
            span,
        };
        let (start, stop, step) = match parts.len() {
            1 => (lit(0, at), parts.remove(0), lit(1, at)),
            2 => {
                let stop = parts.remove(1);
                (parts.remove(0), stop, lit(1, at))
            }
            _ => {
                let step = parts.remove(2);
                let stop = parts.remove(1);
                (parts.remove(0), stop, step)
            }
        };
        let name = var.id.as_str().to_owned();
        self.bind(&name, &ValueType::Int, at)?;
        let body = self.block(&f.body);
        Ok(Stmt::ForRange {
            var: name,
            start,
            stop,
            step,
            body,
        })
    }

    fn coerce_int(&mut self, e: Expr) -> R<Expr> {
        match e.ty {
            ValueType::Int => Ok(e),
            ValueType::Bool => Ok(Expr {
                ty: ValueType::Int,
                span: e.span,
                kind: ExprKind::Scalar(ScalarOp::BoolToInt, vec![e]),
            }),
            ref other => {
                let msg = format!("expected an int, found {other}");
                Err(self.error(codes::SCALAR_OPERATION, e.span, msg, None))
            }
        }
    }

    fn coerce_float(&mut self, e: Expr) -> R<Expr> {
        match e.ty {
            ValueType::Float => Ok(e),
            ValueType::Int | ValueType::Bool => {
                let span = e.span;
                let i = self.coerce_int(e)?;
                Ok(Expr {
                    ty: ValueType::Float,
                    span,
                    kind: ExprKind::Scalar(ScalarOp::IntToFloat, vec![i]),
                })
            }
            ref other => {
                let msg = format!("expected a number, found {other}");
                Err(self.error(codes::SCALAR_OPERATION, e.span, msg, None))
            }
        }
    }

    /// Truthiness of a condition as a bool expression.
    fn truthy(&mut self, e: Expr) -> R<Expr> {
        let span = e.span;
        let op = match &e.ty {
            ValueType::Bool => return Ok(e),
            ValueType::Int => ScalarOp::IntTruthy,
            ValueType::Float => ScalarOp::FloatTruthy,
            ValueType::Plugin(k) => {
                let msg = format!("condition depends on tensor data ({k}); tensor-data-dependent control flow stays on Python");
                return Err(self.error(codes::NON_SCALAR_CONDITION, span, msg, None));
            }
            other => {
                let msg = format!("condition of type {other} is not lowered");
                return Err(self.error(codes::NON_SCALAR_CONDITION, span, msg, None));
            }
        };
        Ok(Expr {
            ty: ValueType::Bool,
            span,
            kind: ExprKind::Scalar(op, vec![e]),
        })
    }

    fn condition(&mut self, e: &ast::Expr) -> R<Expr> {
        let v = self.expr(e)?;
        self.truthy(v)
    }

    fn name(&mut self, n: &ast::ExprName) -> R<Expr> {
        let at = self.span(n);
        let id = n.id.as_str();
        if self.local_names.contains(id) {
            if self.poisoned.contains(id) {
                return Err(Failed);
            }
            return match self.types.get(id) {
                Some(t) => Ok(Expr {
                    ty: t.clone(),
                    kind: ExprKind::Local(id.to_owned()),
                    span: at,
                }),
                None => Err(self.error(
                    codes::UNBOUND_NAME,
                    at,
                    format!("`{id}` is read before it is assigned"),
                    None,
                )),
            };
        }
        Err(self.error(
            codes::UNBOUND_NAME,
            at,
            format!("`{id}` is a global or builtin name; native functions read only their parameters and locals"),
            Some("pass the value as a parameter"),
        ))
    }

    fn literal(&mut self, e: &ast::Expr) -> Option<R<Literal>> {
        let at = self.span(e);
        Some(Ok(match e {
            ast::Expr::NumberLiteral(n) => match &n.value {
                ast::Number::Int(i) => match i.as_i64() {
                    Some(v) => Literal::Int(v),
                    None => {
                        return Some(Err(self.error(
                            codes::SCALAR_OPERATION,
                            at,
                            format!("int literal {i} does not fit in 64 bits"),
                            None,
                        )))
                    }
                },
                ast::Number::Float(f) => Literal::Float(*f),
                ast::Number::Complex { .. } => {
                    return Some(Err(self.error(
                        codes::SCALAR_OPERATION,
                        at,
                        "complex literals are not lowered",
                        None,
                    )))
                }
            },
            ast::Expr::BooleanLiteral(b) => Literal::Bool(b.value),
            ast::Expr::NoneLiteral(_) => Literal::None,
            ast::Expr::StringLiteral(s) => Literal::Str(s.value.to_str().to_owned()),
            ast::Expr::UnaryOp(u) if u.op == ast::UnaryOp::USub => match u.operand.as_ref() {
                ast::Expr::NumberLiteral(n) => match &n.value {
                    ast::Number::Int(i) => match i.as_i64().and_then(i64::checked_neg) {
                        Some(v) => Literal::Int(v),
                        None => {
                            return Some(Err(self.error(
                                codes::SCALAR_OPERATION,
                                at,
                                format!("int literal -{i} does not fit in 64 bits"),
                                None,
                            )))
                        }
                    },
                    ast::Number::Float(f) => Literal::Float(-f),
                    ast::Number::Complex { .. } => {
                        return Some(Err(self.error(
                            codes::SCALAR_OPERATION,
                            at,
                            "complex literals are not lowered",
                            None,
                        )))
                    }
                },
                _ => return None,
            },
            _ => return None,
        }))
    }

    fn expr(&mut self, e: &ast::Expr) -> R<Expr> {
        let at = self.span(e);
        if let Some(lit) = self.literal(e) {
            let lit = lit?;
            return Ok(Expr {
                ty: lit_type(&lit),
                kind: ExprKind::Lit(lit),
                span: at,
            });
        }
        match e {
            ast::Expr::Name(n) => self.name(n),
            ast::Expr::BinOp(b) => {
                let l = self.expr(&b.left);
                let r = self.expr(&b.right);
                self.binop(l?, b.op, r?, at)
            }
            ast::Expr::UnaryOp(u) => {
                let v = self.expr(&u.operand)?;
                self.unary(u.op, v, at)
            }
            ast::Expr::BoolOp(b) => {
                let mut vals = Vec::new();
                for v in &b.values {
                    vals.push(self.expr(v));
                }
                let mut out: Option<Expr> = None;
                for v in vals {
                    let v = v?;
                    if v.ty != ValueType::Bool {
                        let msg = format!("`and`/`or` on {} values returns an operand, not a bool; only bool operands are lowered", v.ty);
                        return Err(self.error(codes::SCALAR_OPERATION, v.span, msg, None));
                    }
                    let op = if b.op == ast::BoolOp::And {
                        ScalarOp::And
                    } else {
                        ScalarOp::Or
                    };
                    out = Some(match out {
                        None => v,
                        Some(prev) => Expr {
                            ty: ValueType::Bool,
                            span: at,
                            kind: ExprKind::Scalar(op, vec![prev, v]),
                        },
                    });
                }
                out.ok_or(Failed)
            }
            ast::Expr::Compare(c) => self.compare(c, at),
            ast::Expr::Call(c) => self.call(c, at),
            ast::Expr::Attribute(a) => Err(self.error(
                codes::UNSUPPORTED_EXPRESSION,
                at,
                format!("attribute read `.{}` is not lowered", a.attr.as_str()),
                None,
            )),
            ast::Expr::Subscript(_) => Err(self.error(
                codes::UNSUPPORTED_EXPRESSION,
                at,
                "subscripts are not lowered",
                None,
            )),
            _ => Err(self.error(
                codes::UNSUPPORTED_EXPRESSION,
                at,
                "this expression form is not lowered",
                None,
            )),
        }
    }

    fn unary(&mut self, op: ast::UnaryOp, v: Expr, at: Span) -> R<Expr> {
        if let ValueType::Plugin(k) = &v.ty {
            let msg = format!("unary operator on a plugin value ({k}) is not lowered");
            return Err(self.error(codes::UNSUPPORTED_EXPRESSION, at, msg, None));
        }
        match op {
            ast::UnaryOp::Not => {
                let b = self.truthy(v)?;
                Ok(Expr {
                    ty: ValueType::Bool,
                    span: at,
                    kind: ExprKind::Scalar(ScalarOp::Not, vec![b]),
                })
            }
            ast::UnaryOp::USub => match v.ty {
                ValueType::Float => Ok(Expr {
                    ty: ValueType::Float,
                    span: at,
                    kind: ExprKind::Scalar(ScalarOp::FloatNeg, vec![v]),
                }),
                _ => {
                    let i = self.coerce_int(v)?;
                    Ok(Expr {
                        ty: ValueType::Int,
                        span: at,
                        kind: ExprKind::Scalar(ScalarOp::IntNeg, vec![i]),
                    })
                }
            },
            ast::UnaryOp::UAdd => match v.ty {
                ValueType::Float | ValueType::Int => Ok(v),
                _ => self.coerce_int(v),
            },
            ast::UnaryOp::Invert => Err(self.error(
                codes::SCALAR_OPERATION,
                at,
                "bitwise `~` is not lowered",
                None,
            )),
        }
    }

    fn binop(&mut self, l: Expr, op: ast::Operator, r: Expr, at: Span) -> R<Expr> {
        let sym = op.as_str();
        if matches!(l.ty, ValueType::Plugin(_)) || matches!(r.ty, ValueType::Plugin(_)) {
            return self.site(
                SiteKind::BinOp,
                sym.to_owned(),
                None,
                vec![l, r],
                Vec::new(),
                at,
            );
        }
        if !is_scalar(&l.ty) || !is_scalar(&r.ty) {
            let msg = format!("`{sym}` on {} and {} is not lowered", l.ty, r.ty);
            return Err(self.error(codes::SCALAR_OPERATION, at, msg, None));
        }
        let float = l.ty == ValueType::Float || r.ty == ValueType::Float;
        use ast::Operator as O;
        let (sop, ty, as_float) = match (op, float) {
            (O::Add, false) => (ScalarOp::IntAdd, ValueType::Int, false),
            (O::Sub, false) => (ScalarOp::IntSub, ValueType::Int, false),
            (O::Mult, false) => (ScalarOp::IntMul, ValueType::Int, false),
            (O::FloorDiv, false) => (ScalarOp::IntFloorDiv, ValueType::Int, false),
            (O::Mod, false) => (ScalarOp::IntMod, ValueType::Int, false),
            (O::Div, false) => (ScalarOp::IntTrueDiv, ValueType::Float, false),
            (O::Add, true) => (ScalarOp::FloatAdd, ValueType::Float, true),
            (O::Sub, true) => (ScalarOp::FloatSub, ValueType::Float, true),
            (O::Mult, true) => (ScalarOp::FloatMul, ValueType::Float, true),
            (O::Div, true) => (ScalarOp::FloatDiv, ValueType::Float, true),
            _ => {
                let msg = format!("`{sym}` on {} and {} is not lowered", l.ty, r.ty);
                return Err(self.error(codes::SCALAR_OPERATION, at, msg, None));
            }
        };
        let (l, r) = if as_float {
            (self.coerce_float(l)?, self.coerce_float(r)?)
        } else {
            (self.coerce_int(l)?, self.coerce_int(r)?)
        };
        Ok(Expr {
            ty,
            span: at,
            kind: ExprKind::Scalar(sop, vec![l, r]),
        })
    }

    fn compare(&mut self, c: &ast::ExprCompare, at: Span) -> R<Expr> {
        let mut operands = vec![self.expr(&c.left)];
        for e in c.comparators.iter() {
            operands.push(self.expr(e));
        }
        let operands: Vec<Expr> = operands.into_iter().collect::<R<Vec<_>>>()?;
        let mut out: Option<Expr> = None;
        for (i, op) in c.ops.iter().enumerate() {
            let (l, r) = (operands[i].clone(), operands[i + 1].clone());
            let kind = match op {
                ast::CmpOp::Eq => CmpKind::Eq,
                ast::CmpOp::NotEq => CmpKind::Ne,
                ast::CmpOp::Lt => CmpKind::Lt,
                ast::CmpOp::LtE => CmpKind::Le,
                ast::CmpOp::Gt => CmpKind::Gt,
                ast::CmpOp::GtE => CmpKind::Ge,
                other => {
                    let msg = format!("`{}` comparisons are not lowered", other.as_str());
                    return Err(self.error(codes::SCALAR_OPERATION, at, msg, None));
                }
            };
            let cmp =
                if matches!(l.ty, ValueType::Plugin(_)) || matches!(r.ty, ValueType::Plugin(_)) {
                    self.site(
                        SiteKind::Compare,
                        kind.rust().to_owned(),
                        None,
                        vec![l, r],
                        Vec::new(),
                        at,
                    )?
                } else {
                    if !is_scalar(&l.ty) || !is_scalar(&r.ty) {
                        let msg = format!("comparison of {} and {} is not lowered", l.ty, r.ty);
                        return Err(self.error(codes::SCALAR_OPERATION, at, msg, None));
                    }
                    let (l, r) = if l.ty == ValueType::Float || r.ty == ValueType::Float {
                        (self.coerce_float(l)?, self.coerce_float(r)?)
                    } else if l.ty == ValueType::Bool && r.ty == ValueType::Bool {
                        (l, r)
                    } else {
                        (self.coerce_int(l)?, self.coerce_int(r)?)
                    };
                    Expr {
                        ty: ValueType::Bool,
                        span: at,
                        kind: ExprKind::Scalar(ScalarOp::Cmp(kind), vec![l, r]),
                    }
                };
            out = Some(match out {
                None => cmp,
                Some(prev) => Expr {
                    ty: ValueType::Bool,
                    span: at,
                    kind: ExprKind::Scalar(ScalarOp::And, vec![prev, cmp]),
                },
            });
        }
        out.ok_or(Failed)
    }

    fn call(&mut self, c: &ast::ExprCall, at: Span) -> R<Expr> {
        let (kind, target, receiver) = if let Some(path) = self.dotted_global(&c.func) {
            (SiteKind::Call, path, None)
        } else if let ast::Expr::Attribute(a) = c.func.as_ref() {
            let recv = self.expr(&a.value)?;
            (SiteKind::MethodCall, a.attr.as_str().to_owned(), Some(recv))
        } else {
            let what = match c.func.as_ref() {
                ast::Expr::Name(n) => format!("call to `{}`", n.id.as_str()),
                _ => "this call".to_owned(),
            };
            return Err(self.error(
                codes::UNSUPPORTED_EXPRESSION,
                at,
                format!("{what} is not lowered (only operations of enabled plugins are)"),
                None,
            ));
        };
        let mut args = Vec::new();
        let mut failed = false;
        for a in c.arguments.args.iter() {
            if matches!(a, ast::Expr::Starred(_)) {
                return Err(self.error(
                    codes::UNSUPPORTED_EXPRESSION,
                    at,
                    "starred arguments are not lowered",
                    None,
                ));
            }
            match self.expr(a) {
                Ok(v) => args.push(v),
                Err(_) => failed = true,
            }
        }
        let mut keywords = Vec::new();
        for k in c.arguments.keywords.iter() {
            let Some(name) = &k.arg else {
                return Err(self.error(
                    codes::UNSUPPORTED_EXPRESSION,
                    at,
                    "`**` arguments are not lowered",
                    None,
                ));
            };
            match self.expr(&k.value) {
                Ok(v) => keywords.push((name.as_str().to_owned(), v)),
                Err(_) => failed = true,
            }
        }
        if failed {
            return Err(Failed);
        }
        self.site(kind, target, receiver, args, keywords, at)
    }

    fn operand(e: &Expr) -> Operand {
        match &e.kind {
            ExprKind::Lit(l) => Operand::literal(l.clone()),
            _ => Operand::typed(e.ty.clone()),
        }
    }

    fn site(
        &mut self,
        kind: SiteKind,
        target: String,
        receiver: Option<Expr>,
        args: Vec<Expr>,
        keywords: Vec<(String, Expr)>,
        at: Span,
    ) -> R<Expr> {
        let site = ClaimSite {
            kind,
            target: target.clone(),
            receiver: receiver.as_ref().map(Self::operand),
            args: args.iter().map(Self::operand).collect(),
            keywords: keywords
                .iter()
                .map(|(n, e)| Keyword {
                    name: n.clone(),
                    value: Self::operand(e),
                })
                .collect(),
        };
        match self.registry.offer(&site, self.enabled) {
            SiteResolution::Claimed {
                plugin_id,
                rule_id,
                result_type,
            } => {
                self.claims.push(ClaimRecord {
                    rule_id: rule_id.clone(),
                    plugin_id: plugin_id.clone(),
                    span: at,
                });
                self.plugins.insert(plugin_id.clone());
                Ok(Expr {
                    ty: result_type.clone(),
                    span: at,
                    kind: ExprKind::Site {
                        claimed: Box::new(ClaimedSite {
                            site,
                            plugin_id,
                            rule_id,
                            result_type,
                        }),
                        receiver: receiver.map(Box::new),
                        args,
                        keywords,
                    },
                })
            }
            SiteResolution::Rejected { diagnostic, .. } => {
                self.diags.push(diagnostic.at(at));
                Err(Failed)
            }
            SiteResolution::Conflict(claims) => {
                let names: Vec<String> =
                    claims.iter().map(|(p, r)| format!("`{p}` ({r})")).collect();
                let msg = format!(
                    "`{}` is claimed by more than one plugin: {}",
                    describe_site(&site),
                    names.join(" and ")
                );
                Err(self.error(
                    codes::CLAIM_CONFLICT,
                    at,
                    msg,
                    Some("disable one of these plugins in rextio.toml"),
                ))
            }
            SiteResolution::NotCovered => {
                let msg = format!("no enabled plugin claims `{}`", describe_site(&site));
                Err(self.error(
                    codes::UNCLAIMED_SITE,
                    at,
                    msg,
                    Some("see `rextio capabilities` for the native surface"),
                ))
            }
        }
    }

    /// Definite assignment and return types over the typed body. Returns whether the block
    /// always diverges (returns, breaks or continues).
    fn flow(&mut self, body: &[Stmt], assigned: &mut BTreeSet<String>, ret: &ValueType) -> bool {
        for s in body {
            match s {
                Stmt::Assign { name, value } => {
                    self.uses(value, assigned);
                    assigned.insert(name.clone());
                }
                Stmt::If { cond, then, orelse } => {
                    self.uses(cond, assigned);
                    let mut a = assigned.clone();
                    let mut b = assigned.clone();
                    let da = self.flow(then, &mut a, ret);
                    let db = self.flow(orelse, &mut b, ret);
                    match (da, db) {
                        (true, true) => return true,
                        (true, false) => *assigned = b,
                        (false, true) => *assigned = a,
                        (false, false) => *assigned = a.intersection(&b).cloned().collect(),
                    }
                }
                Stmt::While { cond, body } => {
                    self.uses(cond, assigned);
                    let mut inner = assigned.clone();
                    self.flow(body, &mut inner, ret);
                }
                Stmt::ForRange {
                    var,
                    start,
                    stop,
                    step,
                    body,
                } => {
                    for e in [start, stop, step] {
                        self.uses(e, assigned);
                    }
                    let mut inner = assigned.clone();
                    inner.insert(var.clone());
                    self.flow(body, &mut inner, ret);
                }
                Stmt::Break | Stmt::Continue => return true,
                Stmt::Return(v) => {
                    self.uses(v, assigned);
                    if &v.ty != ret {
                        let msg =
                            format!("returns {} but the function is annotated -> {ret}", v.ty);
                        self.error(codes::RETURN_PATH, v.span, msg, None);
                    }
                    return true;
                }
            }
        }
        false
    }

    fn uses(&mut self, e: &Expr, assigned: &BTreeSet<String>) {
        if let ExprKind::Local(n) | ExprKind::Move(n) = &e.kind {
            if !assigned.contains(n) {
                let msg = format!("`{n}` may be read before it is assigned on some path");
                self.error(
                    codes::UNBOUND_NAME,
                    e.span,
                    msg,
                    Some("assign it on every path before this use"),
                );
            }
        }
        for c in e.children() {
            self.uses(c, assigned);
        }
    }
}

/// A short rendering of a site for messages: `torch.softmax(rank-2, dim=int)`.
pub fn describe_site(site: &ClaimSite) -> String {
    let op = |o: &Operand| match (&o.literal, &o.ty) {
        (Some(Literal::Int(v)), _) => v.to_string(),
        (Some(Literal::Float(v)), _) => format!("{v:?}"),
        (Some(Literal::Bool(v)), _) => {
            if *v {
                "True".into()
            } else {
                "False".into()
            }
        }
        (Some(Literal::Str(s)), _) => format!("{s:?}"),
        (Some(Literal::None), _) => "None".into(),
        (None, Some(t)) => t.to_string(),
        (None, None) => "?".into(),
    };
    let mut parts: Vec<String> = site.args.iter().map(op).collect();
    parts.extend(
        site.keywords
            .iter()
            .map(|k| format!("{}={}", k.name, op(&k.value))),
    );
    match site.kind {
        SiteKind::Call => format!("{}({})", site.target, parts.join(", ")),
        SiteKind::MethodCall => {
            let recv = site.receiver.as_ref().map(op).unwrap_or_default();
            format!("({recv}).{}({})", site.target, parts.join(", "))
        }
        SiteKind::BinOp | SiteKind::Compare => {
            let l = site.args.first().map(op).unwrap_or_default();
            let r = site.args.get(1).map(op).unwrap_or_default();
            format!("{l} {} {r}", site.target)
        }
    }
}
