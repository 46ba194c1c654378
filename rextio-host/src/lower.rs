//! Lowering: the typed IR of a native function becomes Rust source. The host lowers scalar
//! control flow itself and asks each site's plugin for the expression of that site.

use crate::codes;
use crate::ir::{Expr, ExprKind, FnIr, ScalarOp, Stmt};
use crate::registry::Registry;
use rextio_plugin_api::{
    Diagnostic, FunctionScope, Literal, LoweredOperand, LoweringContext, ValueType,
};
use std::collections::BTreeSet;
use std::fmt::Write as _;

const RT: &str = "::rextio_plugin_api::runtime";

/// A native function as Rust items.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoweredFunction {
    /// `module.function`.
    pub qualname: String,
    /// The Python name.
    pub name: String,
    /// Identifier of the `#[pyfunction]`.
    pub rust_fn: String,
    /// The Rust items (body function + `#[pyfunction]` wrapper).
    pub items: String,
    /// Plugins whose sites it uses.
    pub plugins: BTreeSet<String>,
}

/// Rust identifier of a Python local.
pub fn local(name: &str) -> String {
    format!("l_{name}")
}

fn float_lit(v: f64) -> String {
    if v.is_nan() {
        "f64::NAN".to_owned()
    } else if v.is_infinite() {
        if v > 0.0 {
            "f64::INFINITY".to_owned()
        } else {
            "f64::NEG_INFINITY".to_owned()
        }
    } else {
        format!("{v:?}_f64")
    }
}

fn literal(l: &Literal) -> String {
    match l {
        Literal::Int(v) => format!("{v}_i64"),
        Literal::Float(v) => float_lit(*v),
        Literal::Bool(b) => b.to_string(),
        Literal::Str(s) => format!("{s:?}"),
        Literal::None => "()".to_owned(),
    }
}

struct Lx<'a> {
    registry: &'a Registry,
    guard_active: BTreeSet<String>,
    loop_var: u32,
    plugins: BTreeSet<String>,
}

/// Failure to lower: a diagnostic (RXT014) for the function.
type LResult<T> = Result<T, Diagnostic>;

impl Lx<'_> {
    fn rust_type(&self, ty: &ValueType) -> LResult<String> {
        Ok(match ty {
            ValueType::Int => "i64".to_owned(),
            ValueType::Float => "f64".to_owned(),
            ValueType::Bool => "bool".to_owned(),
            ValueType::Plugin(k) => match self.registry.plugin_type(k) {
                Some(t) => t.rust_type.clone(),
                None => {
                    return Err(Diagnostic::error(
                        codes::LOWERING_FAILED,
                        format!("type `{k}` has no registered Rust type"),
                    ))
                }
            },
            other => {
                return Err(Diagnostic::error(
                    codes::LOWERING_FAILED,
                    format!("values of type {other} cannot be native locals"),
                ))
            }
        })
    }

    /// An expression in value position (assigned or returned): plugin-typed locals are cloned
    /// (a shallow handle copy) so both names stay usable.
    fn value(&mut self, e: &Expr) -> LResult<String> {
        match (&e.kind, &e.ty) {
            (ExprKind::Local(n), ValueType::Plugin(_)) => Ok(format!("{}.clone()", local(n))),
            _ => self.expr(e),
        }
    }

    fn expr(&mut self, e: &Expr) -> LResult<String> {
        Ok(match &e.kind {
            ExprKind::Local(n) | ExprKind::Move(n) => local(n),
            ExprKind::Lit(l) => literal(l),
            ExprKind::Scalar(op, xs) => {
                let a: Vec<String> = xs.iter().map(|x| self.expr(x)).collect::<LResult<_>>()?;
                let arg = |i: usize| a.get(i).cloned().unwrap_or_default();
                match op {
                    ScalarOp::IntAdd => format!("{RT}::int_add({}, {})?", arg(0), arg(1)),
                    ScalarOp::IntSub => format!("{RT}::int_sub({}, {})?", arg(0), arg(1)),
                    ScalarOp::IntMul => format!("{RT}::int_mul({}, {})?", arg(0), arg(1)),
                    ScalarOp::IntFloorDiv => format!("{RT}::int_floordiv({}, {})?", arg(0), arg(1)),
                    ScalarOp::IntMod => format!("{RT}::int_mod({}, {})?", arg(0), arg(1)),
                    ScalarOp::IntTrueDiv => format!("{RT}::int_truediv({}, {})?", arg(0), arg(1)),
                    ScalarOp::IntNeg => format!("{RT}::int_neg({})?", arg(0)),
                    ScalarOp::FloatAdd => format!("({} + {})", arg(0), arg(1)),
                    ScalarOp::FloatSub => format!("({} - {})", arg(0), arg(1)),
                    ScalarOp::FloatMul => format!("({} * {})", arg(0), arg(1)),
                    ScalarOp::FloatDiv => format!("{RT}::float_div({}, {})?", arg(0), arg(1)),
                    ScalarOp::FloatNeg => format!("(-{})", arg(0)),
                    ScalarOp::IntToFloat => format!("({} as f64)", arg(0)),
                    ScalarOp::BoolToInt => format!("i64::from({})", arg(0)),
                    ScalarOp::IntTruthy => format!("({} != 0)", arg(0)),
                    ScalarOp::FloatTruthy => format!("({} != 0.0)", arg(0)),
                    ScalarOp::Not => format!("(!{})", arg(0)),
                    ScalarOp::And => format!("({} && {})", arg(0), arg(1)),
                    ScalarOp::Or => format!("({} || {})", arg(0), arg(1)),
                    ScalarOp::Cmp(k) => format!("({} {} {})", arg(0), k.rust(), arg(1)),
                }
            }
            ExprKind::Site {
                claimed,
                receiver,
                args,
                keywords,
            } => {
                let receiver = match receiver {
                    Some(r) => Some(self.operand(r)?),
                    None => None,
                };
                let args = args
                    .iter()
                    .map(|a| self.operand(a))
                    .collect::<LResult<Vec<_>>>()?;
                let keywords = keywords
                    .iter()
                    .map(|(n, v)| Ok((n.clone(), self.operand(v)?)))
                    .collect::<LResult<Vec<_>>>()?;
                let Some(reg) = self.registry.plugin(&claimed.plugin_id) else {
                    return Err(Diagnostic::error(
                        codes::LOWERING_FAILED,
                        format!("plugin `{}` is not registered", claimed.plugin_id),
                    ));
                };
                let mut cx = LoweringContext::new(receiver, args, keywords);
                cx.function_scope_guard_active = self.guard_active.contains(&claimed.plugin_id);
                let lowered = reg.plugin.lower(claimed, &mut cx).map_err(|err| {
                    Diagnostic::error(
                        codes::LOWERING_FAILED,
                        format!(
                            "plugin `{}` could not lower a claimed site: {err}",
                            claimed.plugin_id
                        ),
                    )
                    .at(e.span)
                })?;
                self.plugins.insert(claimed.plugin_id.clone());
                format!("({})", lowered.expr)
            }
        })
    }

    fn operand(&mut self, e: &Expr) -> LResult<LoweredOperand> {
        let owned_temp = matches!(e.kind, ExprKind::Site { .. } | ExprKind::Move(_));
        Ok(LoweredOperand {
            expr: self.expr(e)?,
            owned_temp,
        })
    }

    fn block(&mut self, body: &[Stmt], indent: usize, out: &mut String) -> LResult<()> {
        let pad = "    ".repeat(indent);
        for s in body {
            match s {
                Stmt::Assign { name, value } => {
                    let v = self.value(value)?;
                    let _ = writeln!(out, "{pad}{} = {v};", local(name));
                }
                Stmt::If { cond, then, orelse } => {
                    let c = self.expr(cond)?;
                    let _ = writeln!(out, "{pad}if {c} {{");
                    self.block(then, indent + 1, out)?;
                    if orelse.is_empty() {
                        let _ = writeln!(out, "{pad}}}");
                    } else {
                        let _ = writeln!(out, "{pad}}} else {{");
                        self.block(orelse, indent + 1, out)?;
                        let _ = writeln!(out, "{pad}}}");
                    }
                }
                Stmt::While { cond, body } => {
                    let c = self.expr(cond)?;
                    let _ = writeln!(out, "{pad}while {c} {{");
                    self.block(body, indent + 1, out)?;
                    let _ = writeln!(out, "{pad}}}");
                }
                Stmt::ForRange {
                    var,
                    start,
                    stop,
                    step,
                    body,
                } => {
                    let (a, b, c) = (self.expr(start)?, self.expr(stop)?, self.expr(step)?);
                    self.loop_var += 1;
                    let it = format!("__rx_i{}", self.loop_var);
                    let _ = writeln!(out, "{pad}for {it} in {RT}::range({a}, {b}, {c})? {{");
                    let _ = writeln!(out, "{pad}    {} = {it};", local(var));
                    self.block(body, indent + 1, out)?;
                    let _ = writeln!(out, "{pad}}}");
                }
                Stmt::Break => {
                    let _ = writeln!(out, "{pad}break;");
                }
                Stmt::Continue => {
                    let _ = writeln!(out, "{pad}continue;");
                }
                Stmt::Return(v) => {
                    let v = self.expr(v)?;
                    let _ = writeln!(out, "{pad}return Ok({v});");
                }
            }
        }
        Ok(())
    }
}

/// Lower one native function. `index` makes its Rust identifiers unique in the crate.
pub fn lower_function(
    ir: &FnIr,
    route_plugins: &[String],
    registry: &Registry,
    index: usize,
) -> Result<LoweredFunction, Diagnostic> {
    let mut moved = ir.clone();
    crate::ownership::mark_moves(&mut moved);
    let ir = &moved;
    let mut guards = Vec::new();
    let mut guard_active = BTreeSet::new();
    for id in route_plugins {
        let Some(reg) = registry.plugin(id) else {
            return Err(Diagnostic::error(
                codes::LOWERING_FAILED,
                format!("plugin `{id}` is not registered"),
            ));
        };
        if !reg.negotiated.function_scope_guard {
            continue;
        }
        let scope = FunctionScope {
            qualname: ir.qualname.clone(),
            rules: Vec::new(),
        };
        if let Some(g) = reg.plugin.function_scope_guard(&scope) {
            guards.push(g.enter_expr);
            guard_active.insert(id.clone());
        }
    }
    let mut lx = Lx {
        registry,
        guard_active,
        loop_var: 0,
        plugins: BTreeSet::new(),
    };
    let ret_ty = lx.rust_type(&ir.ret)?;
    let body_fn = format!("__rx_body_{index}");
    let py_fn = format!("__rx_fn_{index}");
    let mut out = String::new();

    // The body: owned, typed parameters; Python semantics; every error is a PyErr.
    let mut sig = Vec::new();
    for p in &ir.params {
        sig.push(format!("mut {}: {}", local(&p.name), lx.rust_type(&p.ty)?));
    }
    let _ = writeln!(out, "/// Native body of `{}`.", ir.qualname);
    let _ = writeln!(
        out,
        "fn {body_fn}({}) -> ::pyo3::PyResult<{ret_ty}> {{",
        sig.join(", ")
    );
    for (name, ty) in &ir.locals {
        let _ = writeln!(out, "    let mut {}: {};", local(name), lx.rust_type(ty)?);
    }
    lx.block(&ir.body, 1, &mut out)?;
    let _ = writeln!(out, "    #[allow(unreachable_code)]");
    let _ = writeln!(
        out,
        "    Err(::pyo3::exceptions::PyRuntimeError::new_err(\"rextio: native `{}` reached its end without returning\"))",
        ir.qualname
    );
    let _ = writeln!(out, "}}\n");

    // The boundary: convert inputs, hold the function-scope guards, convert the output.
    let mut params = vec!["__rx_py: ::pyo3::Python<'py>".to_owned()];
    let mut converts = Vec::new();
    for p in &ir.params {
        let raw = format!("r#{}", p.name);
        match &p.ty {
            ValueType::Plugin(k) => {
                let Some(t) = registry.plugin_type(k) else {
                    return Err(Diagnostic::error(
                        codes::LOWERING_FAILED,
                        format!("type `{k}` has no boundary"),
                    ));
                };
                params.push(format!("{raw}: &::pyo3::Bound<'py, ::pyo3::PyAny>"));
                converts.push(format!(
                    "    let {} = {}({raw}, {:?})?;",
                    local(&p.name),
                    t.extract_fn,
                    p.name
                ));
            }
            other => {
                params.push(format!("{raw}: {}", lx.rust_type(other)?));
                converts.push(format!("    let {} = {raw};", local(&p.name)));
            }
        }
    }
    let wrap = match &ir.ret {
        ValueType::Plugin(k) => match registry.plugin_type(k) {
            Some(t) => format!("{}(__rx_py, __rx_out)", t.wrap_fn),
            None => {
                return Err(Diagnostic::error(
                    codes::LOWERING_FAILED,
                    format!("type `{k}` has no boundary"),
                ))
            }
        },
        _ => "::pyo3::IntoPyObjectExt::into_py_any(__rx_out, __rx_py)".to_owned(),
    };
    let args: Vec<String> = ir.params.iter().map(|p| local(&p.name)).collect();
    let _ = writeln!(out, "#[::pyo3::pyfunction]");
    let _ = writeln!(out, "#[pyo3(name = {:?})]", ir.name);
    let _ = writeln!(
        out,
        "fn {py_fn}<'py>({}) -> ::pyo3::PyResult<::pyo3::Py<::pyo3::PyAny>> {{",
        params.join(", ")
    );
    for c in converts {
        let _ = writeln!(out, "{c}");
    }
    let _ = writeln!(out, "    let __rx_out = {{");
    for (i, g) in guards.iter().enumerate() {
        let _ = writeln!(out, "        let __rx_guard_{i} = {g};");
    }
    let _ = writeln!(out, "        {body_fn}({})", args.join(", "));
    let _ = writeln!(out, "    }}?;");
    let _ = writeln!(out, "    {wrap}");
    let _ = writeln!(out, "}}");

    Ok(LoweredFunction {
        qualname: ir.qualname.clone(),
        name: ir.name.clone(),
        rust_fn: py_fn,
        items: out,
        plugins: lx.plugins,
    })
}
