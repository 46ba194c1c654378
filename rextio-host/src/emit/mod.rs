//! The emitter: the one place generated code is made: Rust and the generated crate's manifest
//! here, the Python binding blocks in [`python`].
//!
//! Rust is built as syntax (`quote` token streams), never pasted as text: every plugin
//! expression, type, boundary function and guard is parsed with `syn` before it is used, so a
//! plugin answer that is not Rust is a lowering error for its function, not a broken crate. Every
//! identifier or literal that comes from user source goes through [`local_ident`],
//! [`param_ident`], [`str_lit`], [`int_lit`] or [`float_lit`]. Items are pretty-printed with
//! `prettyplease`; each function's text is rendered on its own so that compiler diagnostics can
//! be mapped back to the function they fall in ([`GeneratedCrate::function_at_line`]).

use crate::codes;
use crate::ir::{CmpKind, Expr, ExprKind, FnIr, ScalarOp, Stmt};
use crate::registry::Registry;
use proc_macro2::{Ident, Literal as LitTok, Span as PmSpan, TokenStream};
use quote::{format_ident, quote};
use rextio_plugin_api::{
    CrateDependency, CrateSource, DeviceAuthorization, Diagnostic, FunctionScope, Literal,
    LoweredOperand, LoweringContext, RegionContext, ValueType,
};
use std::collections::{BTreeMap, BTreeSet};

mod method;
pub mod python;
mod region;

/// PyO3 version of generated crates: the exact version this host was built and tested with, read
/// from the workspace lock file (the one source of that pin).
pub fn pyo3_pin() -> String {
    locked_version("pyo3").map_or_else(|| "=0.30.1".to_owned(), |v| format!("={v}"))
}

/// The workspace lock file, seeding generated crates so they resolve the versions this host was
/// tested with.
const WORKSPACE_LOCK: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.lock"));

/// The locked version of a registry package in the workspace lock file.
fn locked_version(name: &str) -> Option<String> {
    let lock: toml::Table = toml::from_str(WORKSPACE_LOCK).ok()?;
    let packages = lock.get("package")?.as_array()?;
    packages
        .iter()
        .filter_map(|p| p.as_table())
        .filter(|p| p.get("name").and_then(|n| n.as_str()) == Some(name))
        .filter(|p| p.get("source").is_some())
        .find_map(|p| p.get("version")?.as_str().map(str::to_owned))
}

/// A native function as Rust items.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoweredFunction {
    /// `module.function`.
    pub qualname: String,
    /// The Python name.
    pub name: String,
    /// Identifier of the `#[pyfunction]`; `None` for a body only native callers call.
    pub rust_fn: Option<String>,
    /// The Rust items (body function + `#[pyfunction]` wrapper), pretty-printed.
    pub items: String,
    /// Plugins whose sites it uses.
    pub plugins: BTreeSet<String>,
    /// For a compiled method: how the Python wrapper binds it to its class.
    pub method: Option<MethodBinding>,
    /// The Rust identifier of the static holding the function's original Python function, when
    /// its boundary may run it (inside an original module method, where eager semantics such as
    /// autograd recording apply).
    pub original: Option<String>,
    /// The rules of its sites, as `(plugin, rule)`, for diagnostics about this function.
    pub rules: BTreeSet<(String, String)>,
}

/// How a compiled method is bound over the original in its class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodBinding {
    /// The class's Python name.
    pub class: String,
    /// The instance parameter's name.
    pub self_name: String,
    /// The other parameters' names.
    pub params: Vec<String>,
    /// The Rust identifier of its counters.
    pub stats: String,
}

/// The Rust identifier of a Python local: `l_<name>` for ASCII names; other names are encoded
/// injectively under `lu_` (`_` as `__`, any other character as `_x<hex>_`).
pub fn local_ident(name: &str) -> Ident {
    let ascii = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if ascii {
        return format_ident!("l_{}", name);
    }
    let mut enc = String::from("lu_");
    for c in name.chars() {
        match c {
            '_' => enc.push_str("__"),
            c if c.is_ascii_alphanumeric() => enc.push(c),
            c => enc.push_str(&format!("_x{:x}_", u32::from(c))),
        }
    }
    Ident::new(&enc, PmSpan::call_site())
}

/// The Rust identifier of a Python parameter. PyO3 takes the Python keyword name from it, so it
/// must spell the Python name exactly: a raw identifier of an ASCII Python name. Names Rust cannot
/// spell that way (`self`, `crate`, `super`, `Self`, non-ASCII) are refused.
pub fn param_ident(name: &str) -> Result<Ident, String> {
    let ok = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !matches!(name, "_" | "self" | "Self" | "crate" | "super");
    if !ok {
        return Err(format!(
            "parameter `{name}` cannot be spelled as a Rust keyword-argument name"
        ));
    }
    syn::parse_str::<Ident>(&format!("r#{name}")).map_err(|e| format!("parameter `{name}`: {e}"))
}

/// A Rust string literal of arbitrary text.
pub fn str_lit(s: &str) -> LitTok {
    LitTok::string(s)
}

/// A Rust `i64` expression with the exact value.
pub fn int_lit(v: i64) -> TokenStream {
    if v == i64::MIN {
        quote!(i64::MIN)
    } else if v < 0 {
        let abs = LitTok::i64_suffixed(-v);
        quote!((-#abs))
    } else {
        let lit = LitTok::i64_suffixed(v);
        quote!(#lit)
    }
}

/// A Rust `f64` expression with the exact value (NaN, infinities and `-0.0` included).
pub fn float_lit(v: f64) -> TokenStream {
    if v.is_nan() {
        quote!(f64::NAN)
    } else if v.is_infinite() {
        if v > 0.0 {
            quote!(f64::INFINITY)
        } else {
            quote!(f64::NEG_INFINITY)
        }
    } else if v.is_sign_negative() {
        let abs = LitTok::f64_suffixed(-v);
        quote!((-#abs))
    } else {
        let lit = LitTok::f64_suffixed(v);
        quote!(#lit)
    }
}

fn literal(l: &Literal) -> TokenStream {
    match l {
        Literal::Int(v) => int_lit(*v),
        Literal::Float(v) => float_lit(*v),
        Literal::Bool(b) => quote!(#b),
        Literal::Str(s) => {
            let s = str_lit(s);
            quote!(#s)
        }
        Literal::None => quote!(()),
    }
}

/// Parse a fragment a plugin (or a plugin's type record) supplied.
fn parse<T: syn::parse::Parse>(what: &str, text: &str) -> Result<T, String> {
    syn::parse_str::<T>(text).map_err(|e| format!("{what} `{text}` is not valid Rust: {e}"))
}

fn fail(message: impl Into<String>) -> Diagnostic {
    Diagnostic::error(codes::LOWERING_FAILED, message)
}

struct Lx<'a> {
    registry: &'a Registry,
    callees: &'a BTreeMap<String, usize>,
    authorization: Option<DeviceAuthorization>,
    guard_active: BTreeSet<String>,
    loop_var: u32,
    plugins: BTreeSet<String>,
    rules: BTreeSet<(String, String)>,
    uses: Vec<syn::ItemUse>,
    /// The function's qualified name.
    qualname: String,
    /// Locals' types (region targets must be plugin-typed locals).
    local_types: BTreeMap<String, ValueType>,
    /// Reads of each local in the whole function (region outputs are the locals read outside).
    reads: BTreeMap<String, usize>,
    /// Regions lowered so far (unique names).
    regions: u32,
    /// Whether the body calls another native function (whose plugins this body does not see).
    calls_native: bool,
}

/// Failure to lower: a diagnostic (RXT014) for the function.
type LResult<T> = Result<T, Diagnostic>;

fn runtime_fn(name: &str) -> TokenStream {
    let f = Ident::new(name, PmSpan::call_site());
    quote!(::rextio_plugin_api::runtime::#f)
}

impl Lx<'_> {
    fn rust_type(&self, ty: &ValueType) -> LResult<TokenStream> {
        Ok(match ty {
            ValueType::Int => quote!(i64),
            ValueType::Float => quote!(f64),
            ValueType::Bool => quote!(bool),
            ValueType::Plugin(k) => match self.registry.plugin_type(k) {
                Some(t) => {
                    let ty: syn::Type = parse("Rust type", &t.rust_type).map_err(fail)?;
                    quote!(#ty)
                }
                None => return Err(fail(format!("type `{k}` has no registered Rust type"))),
            },
            ValueType::Tuple(items) => {
                let tys = items
                    .iter()
                    .map(|t| self.rust_type(t))
                    .collect::<LResult<Vec<_>>>()?;
                quote!((#(#tys,)*))
            }
            ValueType::List(item) => {
                let t = self.rust_type(item)?;
                quote!(::std::vec::Vec<#t>)
            }
            other => {
                return Err(fail(format!(
                    "values of type {other} cannot be native locals"
                )))
            }
        })
    }

    /// An expression in value position (assigned or returned): plugin-typed locals are cloned
    /// (a shallow handle copy) so both names stay usable.
    fn value(&mut self, e: &Expr) -> LResult<TokenStream> {
        match (&e.kind, &e.ty) {
            (
                ExprKind::Local(n),
                ValueType::Plugin(_) | ValueType::Tuple(_) | ValueType::List(_),
            ) => {
                let id = local_ident(n);
                Ok(quote!(#id.clone()))
            }
            _ => self.expr(e),
        }
    }

    fn scalar(&mut self, op: ScalarOp, xs: &[Expr]) -> LResult<TokenStream> {
        let a: Vec<TokenStream> = xs.iter().map(|x| self.expr(x)).collect::<LResult<_>>()?;
        let arity = match op {
            ScalarOp::IntNeg
            | ScalarOp::FloatNeg
            | ScalarOp::IntToFloat
            | ScalarOp::BoolToInt
            | ScalarOp::IntTruthy
            | ScalarOp::FloatTruthy
            | ScalarOp::Not
            | ScalarOp::IntAbs
            | ScalarOp::FloatAbs
            | ScalarOp::FloatSqrt
            | ScalarOp::FloatExp
            | ScalarOp::FloatLog => 1,
            _ => 2,
        };
        let [x, y] = match (arity, a.as_slice()) {
            (1, [x]) => [x.clone(), TokenStream::new()],
            (2, [x, y]) => [x.clone(), y.clone()],
            _ => {
                return Err(fail(format!(
                    "scalar operation {op:?} has {} operands",
                    a.len()
                )))
            }
        };
        let checked = |name: &str| {
            let f = runtime_fn(name);
            quote!(#f(#x, #y)?)
        };
        Ok(match op {
            ScalarOp::IntAdd => checked("int_add"),
            ScalarOp::IntSub => checked("int_sub"),
            ScalarOp::IntMul => checked("int_mul"),
            ScalarOp::IntFloorDiv => checked("int_floordiv"),
            ScalarOp::IntMod => checked("int_mod"),
            ScalarOp::IntTrueDiv => checked("int_truediv"),
            ScalarOp::FloatDiv => checked("float_div"),
            ScalarOp::IntNeg
            | ScalarOp::IntAbs
            | ScalarOp::FloatSqrt
            | ScalarOp::FloatExp
            | ScalarOp::FloatLog => {
                let f = runtime_fn(match op {
                    ScalarOp::IntNeg => "int_neg",
                    ScalarOp::IntAbs => "int_abs",
                    ScalarOp::FloatSqrt => "float_sqrt",
                    ScalarOp::FloatExp => "float_exp",
                    _ => "float_log",
                });
                quote!(#f(#x)?)
            }
            ScalarOp::FloatAbs => quote!((#x).abs()),
            // Python keeps the first operand unless the second compares strictly better.
            ScalarOp::IntMin | ScalarOp::FloatMin => {
                quote!({ let (__rx_a, __rx_b) = (#x, #y); if __rx_b < __rx_a { __rx_b } else { __rx_a } })
            }
            ScalarOp::IntMax | ScalarOp::FloatMax => {
                quote!({ let (__rx_a, __rx_b) = (#x, #y); if __rx_b > __rx_a { __rx_b } else { __rx_a } })
            }
            ScalarOp::FloatAdd => quote!((#x + #y)),
            ScalarOp::FloatSub => quote!((#x - #y)),
            ScalarOp::FloatMul => quote!((#x * #y)),
            ScalarOp::FloatNeg => quote!((-#x)),
            ScalarOp::IntToFloat => quote!((#x as f64)),
            ScalarOp::BoolToInt => quote!(i64::from(#x)),
            ScalarOp::IntTruthy => quote!((#x != 0)),
            ScalarOp::FloatTruthy => quote!((#x != 0.0)),
            ScalarOp::Not => quote!((!#x)),
            ScalarOp::And => quote!((#x && #y)),
            ScalarOp::Or => quote!((#x || #y)),
            ScalarOp::Cmp(k) => match k {
                CmpKind::Eq => quote!((#x == #y)),
                CmpKind::Ne => quote!((#x != #y)),
                CmpKind::Lt => quote!((#x < #y)),
                CmpKind::Le => quote!((#x <= #y)),
                CmpKind::Gt => quote!((#x > #y)),
                CmpKind::Ge => quote!((#x >= #y)),
            },
        })
    }

    fn expr(&mut self, e: &Expr) -> LResult<TokenStream> {
        Ok(match &e.kind {
            ExprKind::Local(n) | ExprKind::Move(n) => {
                let id = local_ident(n);
                quote!(#id)
            }
            ExprKind::Lit(l) => literal(l),
            ExprKind::Scalar(op, xs) => self.scalar(*op, xs)?,
            ExprKind::Tuple(xs) => {
                let items = xs
                    .iter()
                    .map(|x| self.value(x))
                    .collect::<LResult<Vec<_>>>()?;
                quote!((#(#items,)*))
            }
            ExprKind::TupleGet(t, i) => {
                let inner = self.expr(t)?;
                let idx = proc_macro2::Literal::usize_unsuffixed(*i);
                if matches!(
                    e.ty,
                    ValueType::Plugin(_) | ValueType::Tuple(_) | ValueType::List(_)
                ) {
                    quote!((#inner).#idx.clone())
                } else {
                    quote!((#inner).#idx)
                }
            }
            ExprKind::Call { callee, args } => {
                let Some(index) = self.callees.get(callee) else {
                    return Err(
                        fail(format!("`{callee}` is not a native function of this build"))
                            .at(e.span),
                    );
                };
                let f = format_ident!("__rx_body_{}", index);
                self.calls_native = true;
                let args = args
                    .iter()
                    .map(|a| self.value(a))
                    .collect::<LResult<Vec<_>>>()?;
                quote!(#f(#(#args),*)?)
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
                    return Err(fail(format!(
                        "plugin `{}` is not registered",
                        claimed.plugin_id
                    )));
                };
                let mut cx = LoweringContext::new(receiver, args, keywords);
                cx.function_scope_guard_active = self.guard_active.contains(&claimed.plugin_id);
                if let Some(auth) = &self.authorization {
                    cx.target = auth.capability.clone();
                    cx.device_authorization = Some(auth.clone());
                }
                let lowered = reg.plugin.lower(claimed, &mut cx).map_err(|err| {
                    fail(format!(
                        "plugin `{}` could not lower a claimed site: {err}",
                        claimed.plugin_id
                    ))
                    .at(e.span)
                })?;
                let parsed: syn::Expr = parse("expression", &lowered.expr).map_err(|m| {
                    fail(format!(
                        "plugin `{}` lowered rule `{}` to code that does not parse: {m}",
                        claimed.plugin_id, claimed.rule_id
                    ))
                    .at(e.span)
                })?;
                for u in &lowered.uses {
                    let item: syn::ItemUse = parse("use item", u).map_err(|m| {
                        fail(format!(
                            "plugin `{}` (rule `{}`): {m}",
                            claimed.plugin_id, claimed.rule_id
                        ))
                        .at(e.span)
                    })?;
                    if !self.uses.contains(&item) {
                        self.uses.push(item);
                    }
                }
                self.plugins.insert(claimed.plugin_id.clone());
                self.rules
                    .insert((claimed.plugin_id.clone(), claimed.rule_id.clone()));
                quote!((#parsed))
            }
        })
    }

    fn operand(&mut self, e: &Expr) -> LResult<LoweredOperand> {
        let owned_temp = matches!(e.kind, ExprKind::Site { .. } | ExprKind::Move(_));
        Ok(LoweredOperand {
            expr: self.expr(e)?.to_string(),
            owned_temp,
        })
    }

    fn block(&mut self, body: &[Stmt]) -> LResult<TokenStream> {
        let mut out = TokenStream::new();
        let mut i = 0;
        while i < body.len() {
            let (len, plugin) = region::run_at(&body[i..], &self.local_types);
            if let (true, Some(plugin)) = (len > 0, plugin) {
                let run = &body[i..i + len];
                out.extend(self.run(plugin, run)?);
                i += len;
                continue;
            }
            out.extend(self.stmt(&body[i])?);
            i += 1;
        }
        Ok(out)
    }

    /// Statements one by one, each site through `lower`.
    fn per_site(&mut self, body: &[Stmt]) -> LResult<TokenStream> {
        let mut out = TokenStream::new();
        for s in body {
            out.extend(self.stmt(s)?);
        }
        Ok(out)
    }

    /// A run of one plugin's claims: the plugin's fused lowering with the per-site statements
    /// as its run-time fallback, or the per-site statements alone when the plugin declines.
    fn run(&mut self, plugin: &str, run: &[Stmt]) -> LResult<TokenStream> {
        let Some(reg) = self.registry.plugin(plugin) else {
            return Err(fail(format!("plugin `{plugin}` is not registered")));
        };
        if !reg.negotiated.region_lowering {
            return self.per_site(run);
        }
        let qualname = self.qualname.clone();
        let reads = std::mem::take(&mut self.reads);
        let formed = region::form(&qualname, run, &reads, &mut |e: &Expr| {
            Ok(self.expr(e)?.to_string())
        });
        self.reads = reads;
        let formed = formed?;
        let cx = RegionContext {
            target: self
                .authorization
                .as_ref()
                .map_or_else(|| "cpu".to_owned(), |a| a.capability.clone()),
            device_authorization: self.authorization.clone(),
        };
        let lowered = reg
            .plugin
            .lower_region(&formed.region, &cx)
            .map_err(|err| {
                fail(format!(
                    "plugin `{plugin}` could not lower a region of `{qualname}`: {err}"
                ))
            })?;
        let fallback = self.per_site(run)?;
        let Some(lowered) = lowered else {
            return Ok(fallback);
        };
        let fused: syn::Expr = parse("region expression", &lowered.expr).map_err(|m| {
            fail(format!(
                "plugin `{plugin}` lowered a region of `{qualname}` to code that does not parse: {m}"
            ))
        })?;
        for u in &lowered.uses {
            let item: syn::ItemUse = parse("use item", u)
                .map_err(|m| fail(format!("plugin `{plugin}` (region): {m}")))?;
            if !self.uses.contains(&item) {
                self.uses.push(item);
            }
        }
        self.regions += 1;
        let slot = format_ident!("__rx_region_{}", self.regions);
        let outs: Vec<Ident> = (0..formed.region.outputs.len())
            .map(|i| format_ident!("__rx_out_{}_{}", self.regions, i))
            .collect();
        let mut assigns = TokenStream::new();
        for (out, names) in outs.iter().zip(&formed.assigns) {
            for (j, name) in names.iter().enumerate() {
                let id = local_ident(name);
                // Every name but the last shares the handle.
                if j + 1 < names.len() || formed.returns.is_some_and(|r| outs[r] == *out) {
                    assigns.extend(quote!(#id = #out.clone();));
                } else {
                    assigns.extend(quote!(#id = #out;));
                }
            }
        }
        if let Some(r) = formed.returns {
            let out = &outs[r];
            assigns.extend(quote!(return Ok(#out);));
        }
        Ok(quote! {
            let #slot = #fused;
            if let ::std::option::Option::Some((#(#outs,)*)) = #slot {
                #assigns
            } else {
                #fallback
            }
        })
    }

    fn stmt(&mut self, s: &Stmt) -> LResult<TokenStream> {
        Ok({
            match s {
                Stmt::Assign { name, value } => {
                    let v = self.value(value)?;
                    let id = local_ident(name);
                    quote!(#id = #v;)
                }
                Stmt::If { cond, then, orelse } => {
                    let c = self.expr(cond)?;
                    let t = self.block(then)?;
                    if orelse.is_empty() {
                        quote!(if #c { #t })
                    } else {
                        let o = self.block(orelse)?;
                        quote!(if #c { #t } else { #o })
                    }
                }
                Stmt::While { cond, body } => {
                    let c = self.expr(cond)?;
                    let b = self.block(body)?;
                    quote!(while #c { #b })
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
                    let it = format_ident!("__rx_i{}", self.loop_var);
                    let v = local_ident(var);
                    let range = runtime_fn("range");
                    let inner = self.block(body)?;
                    quote!(for #it in #range(#a, #b, #c)? { #v = #it; #inner })
                }
                Stmt::ForEach { var, seq, body } => {
                    let s = self.expr(seq)?;
                    self.loop_var += 1;
                    let it = format_ident!("__rx_e{}", self.loop_var);
                    let v = local_ident(var);
                    let inner = self.block(body)?;
                    quote!(for #it in #s.iter() { #v = #it.clone(); #inner })
                }
                Stmt::Break => quote!(break;),
                Stmt::Continue => quote!(continue;),
                Stmt::Return(v) => {
                    let v = self.expr(v)?;
                    quote!(return Ok(#v);)
                }
            }
        })
    }
}

/// Code converting the native result `value` of type `ty` to a Python object
/// (`PyResult<Py<PyAny>>`): the plugin's wrapper for its types, PyO3 for scalars, and a Python
/// tuple of converted elements for tuples.
fn boundary_out(registry: &Registry, ty: &ValueType, value: TokenStream) -> LResult<TokenStream> {
    Ok(match ty {
        ValueType::Plugin(k) => match registry.plugin_type(k) {
            Some(t) => {
                let w: syn::Path = parse("boundary wrapper", &t.wrap_fn).map_err(fail)?;
                quote!(#w(__rx_py, #value))
            }
            None => return Err(fail(format!("type `{k}` has no boundary"))),
        },
        ValueType::Tuple(items) => {
            let names: Vec<Ident> = (0..items.len())
                .map(|i| format_ident!("__rx_item_{}", i))
                .collect();
            let converted = items
                .iter()
                .zip(&names)
                .map(|(t, n)| boundary_out(registry, t, quote!(#n)))
                .collect::<LResult<Vec<_>>>()?;
            quote!({
                let (#(#names,)*) = #value;
                let __rx_items: ::std::vec::Vec<::pyo3::Py<::pyo3::PyAny>> = ::std::vec![#(#converted?),*];
                ::pyo3::types::PyTuple::new(__rx_py, __rx_items)
                    .map(|t| ::pyo3::IntoPyObjectExt::into_py_any(t, __rx_py))?
            })
        }
        _ => quote!(::pyo3::IntoPyObjectExt::into_py_any(#value, __rx_py)),
    })
}

/// Pretty-print items as Rust source.
fn render(items: TokenStream) -> LResult<String> {
    let file: syn::File = syn::parse2(items)
        .map_err(|e| fail(format!("internal: generated items do not parse: {e}")))?;
    Ok(prettyplease::unparse(&file))
}

/// Lower one native function. `index` makes its Rust identifiers unique in the crate;
/// `callees` gives the index of every native function it may call.
pub fn lower_function(
    ir: &FnIr,
    route_plugins: &[String],
    registry: &Registry,
    authorization: Option<&DeviceAuthorization>,
    callees: &BTreeMap<String, usize>,
    index: usize,
    exposed: bool,
) -> Result<LoweredFunction, Diagnostic> {
    let mut moved = ir.clone();
    crate::ownership::mark_moves(&mut moved);
    let ir = &moved;
    let mut guards = Vec::new();
    let mut guard_active = BTreeSet::new();
    for id in route_plugins {
        let Some(reg) = registry.plugin(id) else {
            return Err(fail(format!("plugin `{id}` is not registered")));
        };
        if !reg.negotiated.function_scope_guard {
            continue;
        }
        let scope = FunctionScope {
            qualname: ir.qualname.clone(),
            rules: Vec::new(),
        };
        if let Some(g) = reg.plugin.function_scope_guard(&scope) {
            let e: syn::Expr = parse("function-scope guard", &g.enter_expr)
                .map_err(|m| fail(format!("plugin `{id}`: {m}")))?;
            guards.push(e);
            guard_active.insert(id.clone());
        }
    }
    let mut lx = Lx {
        registry,
        callees,
        authorization: authorization.cloned(),
        guard_active,
        loop_var: 0,
        plugins: BTreeSet::new(),
        rules: BTreeSet::new(),
        uses: Vec::new(),
        qualname: ir.qualname.clone(),
        local_types: ir.locals.iter().cloned().collect(),
        reads: region::reads(&ir.body),
        regions: 0,
        calls_native: false,
    };
    let ret_ty = lx.rust_type(&ir.ret)?;
    let body_fn = format_ident!("__rx_body_{}", index);
    let py_fn = format_ident!("__rx_fn_{}", index);

    // The body: owned, typed parameters; Python semantics; every error is a PyErr.
    let mut sig = Vec::new();
    for p in &ir.params {
        let (id, ty) = (local_ident(&p.name), lx.rust_type(&p.ty)?);
        sig.push(quote!(mut #id: #ty));
    }
    let mut decls = Vec::new();
    for (name, ty) in &ir.locals {
        let (id, ty) = (local_ident(name), lx.rust_type(ty)?);
        decls.push(quote!(let mut #id: #ty;));
    }
    let body = lx.block(&ir.body)?;
    let uses = &lx.uses;
    let doc = str_lit(&format!(" Native body of `{}`.", ir.qualname));
    let unreachable = str_lit(&format!(
        "rextio: native `{}` reached its end without returning",
        ir.qualname
    ));
    let body_item = quote! {
        #[doc = #doc]
        fn #body_fn(#(#sig),*) -> ::pyo3::PyResult<#ret_ty> {
            #(#uses)*
            #(#decls)*
            #body
            #[allow(unreachable_code)]
            Err(::pyo3::exceptions::PyRuntimeError::new_err(#unreachable))
        }
    };

    let wrap = boundary_out(registry, &ir.ret, quote!(__rx_out))?;
    let args: Vec<Ident> = ir.params.iter().map(|p| local_ident(&p.name)).collect();
    let call = match detached_runner(registry, &lx, &ir.qualname)? {
        Some(runner) => quote!(#runner(__rx_py, move || #body_fn(#(#args),*))),
        None => quote!(#body_fn(#(#args),*)),
    };
    if let Some(m) = &ir.method {
        let (reader, boundary, stats) =
            method::method_items(&mut lx, ir, m, index, &guards, call, wrap)?;
        // A method's reader is called by its callers' readers even when the method itself is
        // not exposed; its boundary only when it is.
        let items = if exposed {
            render(quote!(#body_item #reader #boundary))?
        } else {
            render(quote!(#body_item #reader))?
        };
        return Ok(LoweredFunction {
            qualname: ir.qualname.clone(),
            name: ir.name.clone(),
            rust_fn: exposed.then(|| py_fn.to_string()),
            items,
            plugins: lx.plugins,
            rules: lx.rules,
            method: exposed.then(|| MethodBinding {
                class: m.class_name.clone(),
                self_name: ir.params[0].name.clone(),
                params: ir.params[1..].iter().map(|p| p.name.clone()).collect(),
                stats: stats.to_string(),
            }),
            original: None,
        });
    }
    // The boundary: convert inputs, hold the function-scope guards, convert the output.
    let mut params = vec![quote!(__rx_py: ::pyo3::Python<'py>)];
    let mut converts = Vec::new();
    let mut originals = Vec::new();
    let mut admits = Vec::new();
    let qualname = str_lit(&ir.qualname);
    for (position, p) in ir.params.iter().enumerate() {
        let raw = param_ident(&p.name).map_err(fail)?;
        let id = local_ident(&p.name);
        let pname = str_lit(&p.name);
        // A refused argument's error names the function, the parameter, its position and what
        // was given; the message is built only on this failure path.
        let refused = quote!(::rextio_plugin_api::runtime::boundary::argument_error(
            __rx_e, #raw, #qualname, #pname, #position
        ));
        // Every argument arrives as a Python object and is converted below.
        params.push(quote!(#raw: &::pyo3::Bound<'py, ::pyo3::PyAny>));
        originals.push(quote!(#raw.clone()));
        match &p.ty {
            ValueType::Plugin(k) => {
                let Some(t) = registry.plugin_type(k) else {
                    return Err(fail(format!("type `{k}` has no boundary")));
                };
                let extract: syn::Path =
                    parse("boundary extractor", &t.extract_fn).map_err(fail)?;
                if let Some(admit) = admit_fn(registry, k.namespace())? {
                    admits.push(quote!(#admit(&#id).is_some()));
                    // Inside an original module method, an input the native contract refuses
                    // (another dtype after `.double()`) runs the original, as eager would.
                    converts.push(quote! {
                        let #id = match #extract(#raw, #pname) {
                            ::std::result::Result::Ok(__rx_v) => __rx_v,
                            ::std::result::Result::Err(__rx_e) => {
                                if __rx_in_original {
                                    if let ::std::option::Option::Some(__rx_r) = __rx_run_original()? {
                                        return ::std::result::Result::Ok(__rx_r);
                                    }
                                }
                                return ::std::result::Result::Err(#refused);
                            }
                        };
                    });
                } else {
                    converts.push(quote! {
                        let #id = match #extract(#raw, #pname) {
                            ::std::result::Result::Ok(__rx_v) => __rx_v,
                            ::std::result::Result::Err(__rx_e) => {
                                return ::std::result::Result::Err(#refused);
                            }
                        };
                    });
                }
            }
            other => {
                // Scalars are converted here rather than by PyO3's signature, so that their
                // errors say where and what as tensors' do.
                let ty = lx.rust_type(other)?;
                converts.push(quote! {
                    let #id: #ty = match ::pyo3::types::PyAnyMethods::extract(#raw) {
                        ::std::result::Result::Ok(__rx_v) => __rx_v,
                        ::std::result::Result::Err(__rx_e) => {
                            return ::std::result::Result::Err(#refused);
                        }
                    };
                });
            }
        }
    }
    // Inside an original module method (which runs instead of its native body so that eager
    // semantics hold, autograd included), a native function whose plugin would not admit an
    // input runs its original too.
    let original = format_ident!("__RX_ORIG_{}", index);
    let has_original = !admits.is_empty();
    if has_original {
        converts.insert(
            0,
            quote! {
                let __rx_in_original = ::rextio_plugin_api::runtime::modules::in_original();
                let __rx_run_original = || -> ::pyo3::PyResult<::std::option::Option<::pyo3::Py<::pyo3::PyAny>>> {
                    match #original.get(__rx_py) {
                        ::std::option::Option::Some(__rx_f) => {
                            let __rx_args = ::pyo3::types::PyTuple::new(__rx_py, [#(#originals),*])?;
                            ::rextio_plugin_api::runtime::modules::run_original(&__rx_f, __rx_args).map(::std::option::Option::Some)
                        }
                        ::std::option::Option::None => ::pyo3::PyResult::Ok(::std::option::Option::None),
                    }
                };
            },
        );
        converts.push(quote! {
            if __rx_in_original && (#(#admits)||*) {
                if let ::std::option::Option::Some(__rx_r) = __rx_run_original()? {
                    return ::std::result::Result::Ok(__rx_r);
                }
            }
        });
    }
    let guard_names: Vec<Ident> = (0..guards.len())
        .map(|i| format_ident!("__rx_guard_{}", i))
        .collect();
    let pyname = str_lit(&ir.name);
    let original_item = if has_original {
        quote!(static #original: ::rextio_plugin_api::runtime::modules::Original = ::rextio_plugin_api::runtime::modules::Original::new();)
    } else {
        TokenStream::new()
    };
    let wrapper_item = quote! {
        #original_item

        #[::pyo3::pyfunction]
        #[pyo3(name = #pyname)]
        fn #py_fn<'py>(#(#params),*) -> ::pyo3::PyResult<::pyo3::Py<::pyo3::PyAny>> {
            #(#converts)*
            let __rx_out = {
                #(let #guard_names = #guards;)*
                #call
            }?;
            #wrap
        }
    };
    let items = if exposed {
        render(quote!(#body_item #wrapper_item))?
    } else {
        render(body_item)?
    };
    Ok(LoweredFunction {
        qualname: ir.qualname.clone(),
        name: ir.name.clone(),
        rust_fn: exposed.then(|| py_fn.to_string()),
        items,
        plugins: lx.plugins,
        rules: lx.rules,
        method: None,
        original: (exposed && has_original).then(|| original.to_string()),
    })
}

/// The admission check of a plugin's values (its module support), when it declares one.
fn admit_fn(registry: &Registry, plugin: &str) -> LResult<Option<syn::Path>> {
    let Some(reg) = registry.plugin(plugin) else {
        return Ok(None);
    };
    if !reg.negotiated.module_classes {
        return Ok(None);
    }
    reg.plugin
        .module_support()
        .map(|s| parse("module admission check", &s.admit_fn).map_err(fail))
        .transpose()
}

/// The runner that executes this body and may release the GIL inside it: only when every plugin
/// whose sites the body lowered offers the same one (API >= 1.10) and the body calls no other
/// native function (a callee's plugins are not known here); `None` calls the body directly.
fn detached_runner(registry: &Registry, lx: &Lx<'_>, qualname: &str) -> LResult<Option<syn::Path>> {
    if lx.calls_native || lx.plugins.is_empty() {
        return Ok(None);
    }
    let mut runner: Option<String> = None;
    for id in &lx.plugins {
        let Some(reg) = registry.plugin(id) else {
            return Err(fail(format!("plugin `{id}` is not registered")));
        };
        if !reg.negotiated.detached_body {
            return Ok(None);
        }
        let scope = FunctionScope {
            qualname: qualname.to_owned(),
            rules: lx
                .rules
                .iter()
                .filter(|(p, _)| p == id)
                .map(|(_, r)| r.clone())
                .collect(),
        };
        match (reg.plugin.detached_body(&scope), &runner) {
            (None, _) => return Ok(None),
            (Some(d), Some(r)) if &d.runner != r => return Ok(None),
            (Some(d), _) => runner = Some(d.runner),
        }
    }
    runner
        .map(|r| parse("detached-body runner", &r).map_err(fail))
        .transpose()
}

/// A native function placed in the extension module.
#[derive(Debug, Clone)]
pub struct Placed {
    /// Dotted module of the original.
    pub module: String,
    /// The lowered function.
    pub function: LoweredFunction,
    /// Attribute name in the extension module.
    pub key: String,
}

/// The generated crate's files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedCrate {
    /// Cargo package name.
    pub package: String,
    /// Library (and Python extension module) name.
    pub lib_name: String,
    /// `Cargo.toml`.
    pub cargo_toml: String,
    /// `Cargo.lock` seed.
    pub cargo_lock: String,
    /// `src/lib.rs`.
    pub lib_rs: String,
    /// 1-based inclusive line ranges of each placed function's items in `lib_rs`, with its
    /// qualified name.
    pub function_lines: Vec<(String, u32, u32)>,
}

impl GeneratedCrate {
    /// The qualified name of the function whose items contain `line` of `src/lib.rs`.
    pub fn function_at_line(&self, line: u32) -> Option<&str> {
        self.function_lines
            .iter()
            .find(|(_, a, b)| (*a..=*b).contains(&line))
            .map(|(q, _, _)| q.as_str())
    }
}

/// Identifier-safe form of a project name.
pub fn sanitize(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() {
        "project".to_owned()
    } else {
        s
    }
}

/// The extension module name of a project: its name plus a digest of its root, so two
/// checkouts sharing one cargo target directory never overwrite each other's library.
pub fn extension_name(project: &str, root: &std::path::Path) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(root.to_string_lossy().as_bytes());
    let short: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("_rextio_native_{}_{short}", sanitize(project))
}

fn dep_table(d: &CrateDependency) -> toml::Table {
    let mut t = toml::Table::new();
    match &d.source {
        CrateSource::Registry(v) => t.insert("version".into(), v.clone().into()),
        CrateSource::Path(p) => t.insert("path".into(), p.clone().into()),
        // `generate_crate` refuses embedded sources that were not written out first.
        CrateSource::Embedded(_) => None,
    };
    if !d.features.is_empty() {
        let f: Vec<toml::Value> = d.features.iter().map(|f| f.clone().into()).collect();
        t.insert("features".into(), f.into());
    }
    t
}

fn table(pairs: Vec<(&str, toml::Value)>) -> toml::Value {
    toml::Value::Table(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

/// The generated crate's `Cargo.toml`, through the `toml` serializer; `deps` include the plugin
/// API's runtime (see [`crate::vendor`]).
fn cargo_toml(package: &str, lib_name: &str, deps: &[CrateDependency]) -> String {
    let mut dependencies = toml::Table::new();
    dependencies.insert(
        "pyo3".into(),
        table(vec![
            ("version", pyo3_pin().into()),
            (
                "features",
                vec![toml::Value::from("extension-module")].into(),
            ),
        ]),
    );
    for d in deps {
        dependencies.insert(d.name.clone(), toml::Value::Table(dep_table(d)));
    }
    let manifest = table(vec![
        (
            "package",
            table(vec![
                ("name", package.into()),
                ("version", "0.0.0".into()),
                ("edition", "2021".into()),
                ("publish", false.into()),
            ]),
        ),
        (
            "lib",
            table(vec![
                ("name", lib_name.into()),
                ("crate-type", vec![toml::Value::from("cdylib")].into()),
                ("path", "src/lib.rs".into()),
            ]),
        ),
        ("dependencies", toml::Value::Table(dependencies)),
        (
            "profile",
            table(vec![(
                "release",
                table(vec![("opt-level", 3.into()), ("debug", false.into())]),
            )]),
        ),
        ("workspace", table(vec![])),
    ]);
    let body = toml::to_string_pretty(&manifest).unwrap_or_default();
    format!(
        "# Generated by rextio {}; do not edit.\n{body}",
        env!("CARGO_PKG_VERSION")
    )
}

/// A plugin's step of the module init: `(plugin id, Rust expression of type PyResult<()>)`.
pub type InitStep = (String, String);

/// Generate the crate for a project. `inits` run, in order, when the module is imported.
pub fn generate_crate(
    lib_name: &str,
    placed: &[Placed],
    deps: &[CrateDependency],
    inits: &[InitStep],
) -> Result<GeneratedCrate, Diagnostic> {
    if let Some(d) = deps
        .iter()
        .find(|d| matches!(d.source, CrateSource::Embedded(_)))
    {
        return Err(fail(format!(
            "internal: the embedded sources of `{}` were not written out before generation",
            d.name
        )));
    }
    let lib_name = lib_name.to_owned();
    let package = lib_name.trim_start_matches('_').replace('_', "-");
    let mut lib = format!(
        "// Generated by rextio {}; do not edit.\n#![allow(unused, non_snake_case, unused_mut, unused_assignments, unreachable_code, clippy::all)]\n\n",
        env!("CARGO_PKG_VERSION")
    );
    let mut function_lines = Vec::new();
    for p in placed {
        let start = lib.lines().count() as u32 + 1;
        lib.push_str(&p.function.items);
        lib.push('\n');
        let end = lib.lines().count() as u32;
        function_lines.push((p.function.qualname.clone(), start, end));
    }
    let module = Ident::new(&lib_name, PmSpan::call_site());
    let adds = placed.iter().filter_map(|p| {
        let key = str_lit(&p.key);
        let f = Ident::new(p.function.rust_fn.as_deref()?, PmSpan::call_site());
        Some(quote!(m.add(#key, ::pyo3::wrap_pyfunction!(#f, m)?)?;))
    });
    // Every compiled method's counters, for `__rextio_method_stats__()`.
    let stats: Vec<Ident> = placed
        .iter()
        .filter_map(|p| p.function.method.as_ref())
        .map(|m| Ident::new(&m.stats, PmSpan::call_site()))
        .collect();
    let stats_fn = (!stats.is_empty()).then(|| {
        quote! {
            #[::pyo3::pyfunction]
            #[pyo3(name = "__rx_method_stats")]
            fn __rx_method_stats(py: ::pyo3::Python<'_>) -> ::pyo3::PyResult<::pyo3::Py<::pyo3::PyAny>> {
                ::rextio_plugin_api::runtime::modules::stats_dict(py, &[#(&#stats),*])
            }
        }
    });
    let originals: Vec<TokenStream> = placed
        .iter()
        .filter_map(|p| {
            let o = Ident::new(p.function.original.as_deref()?, PmSpan::call_site());
            let key = str_lit(&p.key);
            Some(quote!(#key => #o.set(py, f),))
        })
        .collect();
    let originals_fn = (!originals.is_empty()).then(|| {
        quote! {
            #[::pyo3::pyfunction]
            #[pyo3(name = "__rx_set_original")]
            fn __rx_set_original(py: ::pyo3::Python<'_>, key: &str, f: ::pyo3::Py<::pyo3::PyAny>) {
                match key {
                    #(#originals)*
                    _ => {}
                }
            }
        }
    });
    let originals_add = originals_fn.is_some().then(
        || quote!(m.add("__rx_set_original", ::pyo3::wrap_pyfunction!(__rx_set_original, m)?)?;),
    );
    let stats_add = stats_fn.is_some().then(
        || quote!(m.add("__rx_method_stats", ::pyo3::wrap_pyfunction!(__rx_method_stats, m)?)?;),
    );
    let mut steps = Vec::new();
    for (plugin, text) in inits {
        let e: syn::Expr =
            parse("module init", text).map_err(|m| fail(format!("plugin `{plugin}`: {m}")))?;
        let what = str_lit(&format!(
            "rextio: plugin `{plugin}` could not initialise: {{}}"
        ));
        steps.push(quote! {
            {
                let py = m.py();
                let step: ::pyo3::PyResult<()> = #e;
                if let Err(err) = step {
                    // Python sees an ImportError whatever the plugin raised, so the wrapper's
                    // REXTIO_NATIVE_MODE handling applies.
                    let msg = if err.is_instance_of::<::pyo3::exceptions::PyImportError>(py) {
                        err.to_string()
                    } else {
                        format!(#what, err)
                    };
                    return Err(::pyo3::exceptions::PyImportError::new_err(msg));
                }
            }
        });
    }
    lib.push_str(&render(quote! {
        #stats_fn

        #originals_fn

        #[::pyo3::pymodule]
        fn #module(m: &::pyo3::Bound<'_, ::pyo3::types::PyModule>) -> ::pyo3::PyResult<()> {
            use ::pyo3::types::PyModuleMethods as _;
            #(#steps)*
            #(#adds)*
            #stats_add
            #originals_add
            Ok(())
        }
    })?);
    Ok(GeneratedCrate {
        cargo_toml: cargo_toml(&package, &lib_name, deps),
        package,
        lib_name,
        cargo_lock: WORKSPACE_LOCK.to_owned(),
        lib_rs: lib,
        function_lines,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_identifiers_are_injective_and_valid() {
        let names = ["x", "x_1", "_", "__", "ß", "a_x64_", "aé", "a_xe9_", "Ω_Ω"];
        let ids: Vec<String> = names.iter().map(|n| local_ident(n).to_string()).collect();
        let set: BTreeSet<&String> = ids.iter().collect();
        assert_eq!(set.len(), names.len(), "{ids:?}");
        for id in &ids {
            assert!(syn::parse_str::<Ident>(id).is_ok(), "{id}");
        }
        assert_eq!(local_ident("hidden").to_string(), "l_hidden");
    }

    #[test]
    fn parameters_keep_their_python_spelling_or_are_refused() {
        assert_eq!(param_ident("x").unwrap().to_string(), "r#x");
        assert_eq!(param_ident("match").unwrap().to_string(), "r#match");
        for bad in ["self", "Self", "crate", "super", "_", "ß", ""] {
            assert!(param_ident(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn literals_keep_exact_values() {
        assert_eq!(float_lit(-0.0).to_string(), "(- 0f64)");
        assert_eq!(float_lit(f64::NAN).to_string(), "f64 :: NAN");
        assert_eq!(int_lit(i64::MIN).to_string(), "i64 :: MIN");
        assert_eq!(int_lit(-3).to_string(), "(- 3i64)");
        let s = str_lit("a\"b\\c\n").to_string();
        assert_eq!(
            syn::parse_str::<syn::LitStr>(&s).unwrap().value(),
            "a\"b\\c\n"
        );
    }

    #[test]
    fn cargo_manifest_is_valid_toml_with_pinned_pyo3() {
        let text = cargo_toml("p", "_p", &[]);
        let parsed: toml::Table = toml::from_str(&text).unwrap();
        let pyo3 = &parsed["dependencies"]["pyo3"]["version"];
        assert!(pyo3.as_str().unwrap().starts_with('='), "{pyo3}");
        assert_eq!(pyo3.as_str().unwrap(), pyo3_pin());
        assert_eq!(parsed["lib"]["crate-type"][0].as_str(), Some("cdylib"));
    }
}
