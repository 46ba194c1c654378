//! One native function: its body, the PyO3 wrapper with the boundary conversions, guards and
//! the detached-body runner.

use super::*;

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
    /// The Rust identifier of the static the binding registers its wrapper in.
    pub bound: String,
    /// The class's `__call__` entry, when this is the method the base's `__call__` calls.
    pub entry: Option<EntryBinding>,
}

/// The `__call__` entry of a compiled method ([`rextio_plugin_api::CallEntry`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryBinding {
    /// The Rust identifier of the entry's `extern "C"` function (`runtime::entry::Entry::call`).
    pub rust_fn: String,
    /// The Rust identifier of its `runtime::entry::Entry` static.
    pub cell: String,
    /// The plugin's module base classes (dotted), whose `__call__` the entry stands in for.
    pub bases: Vec<String>,
    /// The attributes the base's `__call__` reaches through the instance.
    pub pinned: Vec<String>,
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
pub(super) fn render(items: TokenStream) -> LResult<String> {
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
    let (guards, guard_active) = scope_guards(ir, route_plugins, registry)?;
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
        // Parameters may be a run's targets too (`x = block(x)`); they are never owned
        // (see `crate::ownership`), so a region only reads them.
        local_types: ir
            .params
            .iter()
            .map(|p| (p.name.clone(), p.ty.clone()))
            .chain(ir.locals.iter().cloned())
            .collect(),
        reads: crate::ir::reads(&ir.body),
        regions: 0,
        calls_native: false,
    };
    let body_fn = format_ident!("__rx_body_{}", index);
    let py_fn = format_ident!("__rx_fn_{}", index);
    let body_item = body_item(&mut lx, ir, &body_fn)?;

    let wrap = boundary_out(registry, &ir.ret, quote!(__rx_out))?;
    let args: Vec<Ident> = ir.params.iter().map(|p| local_ident(&p.name)).collect();
    let call = match detached_runner(registry, &lx, &ir.qualname)? {
        Some(runner) => quote!(#runner(__rx_py, move || #body_fn(#(#args),*))),
        None => quote!(#body_fn(#(#args),*)),
    };
    let (items, method, original) = if let Some(m) = &ir.method {
        let (reader, boundary, stats, entry) =
            method::method_items(&mut lx, ir, m, index, &guards, call, wrap)?;
        // A method's reader is called by its callers' readers even when the method itself is
        // not exposed; its boundary only when it is.
        let items = if exposed {
            render(quote!(#body_item #reader #boundary))?
        } else {
            render(quote!(#body_item #reader))?
        };
        let binding = exposed.then(|| MethodBinding {
            class: m.class_name.clone(),
            self_name: ir.params[0].name.clone(),
            params: ir.params[1..].iter().map(|p| p.name.clone()).collect(),
            stats: stats.to_string(),
            bound: method::bound_cell(index).to_string(),
            entry,
        });
        (items, binding, None)
    } else {
        let original = format_ident!("__RX_ORIG_{}", index);
        let (wrapper_item, has_original) =
            function_boundary(&mut lx, ir, &py_fn, &original, &guards, call, wrap)?;
        let items = if exposed {
            render(quote!(#body_item #wrapper_item))?
        } else {
            render(body_item)?
        };
        (
            items,
            None,
            (exposed && has_original).then(|| original.to_string()),
        )
    };
    Ok(LoweredFunction {
        qualname: ir.qualname.clone(),
        name: ir.name.clone(),
        rust_fn: exposed.then(|| py_fn.to_string()),
        items,
        plugins: lx.plugins,
        rules: lx.rules,
        method,
        original,
    })
}

/// The `#[pyfunction]` of a free function: convert every argument (errors naming the function,
/// the parameter and its position), hold the function-scope guards around `call`, convert the
/// result with `wrap`. Whether its original Python function is kept (in static `original`), to
/// run instead inside an original module method when a plugin would not admit an input.
#[allow(clippy::too_many_arguments)]
fn function_boundary(
    lx: &mut Lx<'_>,
    ir: &FnIr,
    py_fn: &Ident,
    original: &Ident,
    guards: &[syn::Expr],
    call: TokenStream,
    wrap: TokenStream,
) -> LResult<(TokenStream, bool)> {
    // The boundary: convert inputs, hold the function-scope guards, convert the output.
    let mut params = vec![quote!(__rx_py: ::pyo3::Python<'py>)];
    let mut converts = Vec::new();
    let mut originals = Vec::new();
    let mut admits = Vec::new();
    let symbolic = symbolic_checks(lx, ir)?;
    for (position, p) in ir.params.iter().enumerate() {
        let a = argument(lx, &ir.qualname, p, position, &symbolic)?;
        params.push(a.param);
        converts.push(a.convert);
        originals.push(a.original);
        admits.extend(a.admit);
    }
    // Inside an original module method (which runs instead of its native body so that eager
    // semantics hold, autograd included), a native function whose plugin would not admit an
    // input runs its original too; so does one given a tracer's symbolic value.
    let has_original = !admits.is_empty() || !symbolic.is_empty();
    if has_original {
        let (before, after) = original_fallback(original, &originals, &admits);
        converts.insert(0, before);
        converts.push(after);
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
    Ok((wrapper_item, has_original))
}

/// One argument of a free function's boundary.
struct Argument {
    /// Its parameter (every argument arrives as a Python object).
    param: TokenStream,
    /// Its conversion to the native value.
    convert: TokenStream,
    /// The Python object again, for a call of the original.
    original: TokenStream,
    /// Whether its plugin would not admit the converted value, when the plugin can say.
    admit: Option<TokenStream>,
}

/// Parameter `p` (at `position`) of the function `qualname`: a refused argument's error names
/// the function, the parameter, its position and what was given (built only on that path). A
/// refused argument that one of the `symbolic` checks recognises runs the original instead.
fn argument(
    lx: &mut Lx<'_>,
    qualname: &str,
    p: &crate::ir::Param,
    position: usize,
    symbolic: &[syn::Path],
) -> LResult<Argument> {
    let raw = param_ident(&p.name).map_err(fail)?;
    let id = local_ident(&p.name);
    let pname = str_lit(&p.name);
    let qualname = str_lit(qualname);
    let refused = quote!(::rextio_plugin_api::runtime::boundary::argument_error(
        __rx_e, #raw, #qualname, #pname, #position
    ));
    let mut admit = None;
    // When the conversion fails, the original runs instead for a tracer's symbolic value (it
    // records what eager would run) and, inside an original module method, for an input the
    // native contract refuses (another dtype after `.double()`), as eager would.
    let mut reasons: Vec<TokenStream> = symbolic.iter().map(|c| quote!(#c(#raw))).collect();
    let convert = match &p.ty {
        ValueType::Plugin(k) => {
            let Some(t) = lx.registry.plugin_type(k) else {
                return Err(fail(format!("type `{k}` has no boundary")));
            };
            let extract: syn::Path = parse("boundary extractor", &t.extract_fn).map_err(fail)?;
            if let Some(admit_fn) = admit_fn(lx.registry, k.namespace())? {
                admit = Some(quote!(#admit_fn(&#id).is_some()));
                reasons.insert(0, quote!(__rx_in_original));
            }
            let fallback = run_original_if(&reasons);
            quote! {
                let #id = match #extract(#raw, #pname) {
                    ::std::result::Result::Ok(__rx_v) => __rx_v,
                    ::std::result::Result::Err(__rx_e) => {
                        #fallback
                        return ::std::result::Result::Err(#refused);
                    }
                };
            }
        }
        other => {
            // Scalars are converted here rather than by PyO3's signature, so that their
            // errors say where and what as tensors' do.
            let ty = lx.rust_type(other)?;
            let fallback = run_original_if(&reasons);
            quote! {
                let #id: #ty = match ::pyo3::types::PyAnyMethods::extract(#raw) {
                    ::std::result::Result::Ok(__rx_v) => __rx_v,
                    ::std::result::Result::Err(__rx_e) => {
                        #fallback
                        return ::std::result::Result::Err(#refused);
                    }
                };
            }
        }
    };
    Ok(Argument {
        param: quote!(#raw: &::pyo3::Bound<'py, ::pyo3::PyAny>),
        convert,
        original: quote!(#raw.clone()),
        admit,
    })
}

/// What a boundary that may run its original runs before its conversions (how to call the
/// original with the arguments and, with admission checks, whether it is inside an original
/// module method) and after them (the original when a plugin would not admit an input).
fn original_fallback(
    original: &Ident,
    originals: &[TokenStream],
    admits: &[TokenStream],
) -> (TokenStream, TokenStream) {
    let in_original = if admits.is_empty() {
        TokenStream::new()
    } else {
        quote!(let __rx_in_original = ::rextio_plugin_api::runtime::modules::in_original();)
    };
    let before = quote! {
        #in_original
        let __rx_run_original = || -> ::pyo3::PyResult<::std::option::Option<::pyo3::Py<::pyo3::PyAny>>> {
            match #original.get(__rx_py) {
                ::std::option::Option::Some(__rx_f) => {
                    let __rx_args = ::pyo3::types::PyTuple::new(__rx_py, [#(#originals),*])?;
                    ::rextio_plugin_api::runtime::modules::run_original(&__rx_f, __rx_args).map(::std::option::Option::Some)
                }
                ::std::option::Option::None => ::pyo3::PyResult::Ok(::std::option::Option::None),
            }
        };
    };
    let after = if admits.is_empty() {
        TokenStream::new()
    } else {
        run_original_if(&[quote!(__rx_in_original && (#(#admits)||*))])
    };
    (before, after)
}

/// Return the original's result when any of `reasons` holds (and the original is registered);
/// nothing when there is no reason.
fn run_original_if(reasons: &[TokenStream]) -> TokenStream {
    if reasons.is_empty() {
        return TokenStream::new();
    }
    quote! {
        if #(#reasons)||* {
            if let ::std::option::Option::Some(__rx_r) = __rx_run_original()? {
                return ::std::result::Result::Ok(__rx_r);
            }
        }
    }
}

/// The enter expressions of the function-scope guards the function's plugins hold around its
/// body, and the plugins that have one.
fn scope_guards(
    ir: &FnIr,
    route_plugins: &[String],
    registry: &Registry,
) -> LResult<(Vec<syn::Expr>, BTreeSet<String>)> {
    let mut guards = Vec::new();
    let mut active = BTreeSet::new();
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
            let e: syn::Expr = plugin_code(reg, "function-scope guard", &g.enter_expr)
                .map_err(|m| fail(format!("plugin `{id}`: {m}")))?;
            guards.push(e);
            active.insert(id.clone());
        }
    }
    Ok((guards, active))
}

/// The body function: owned, typed parameters; Python semantics; every error is a PyErr.
fn body_item(lx: &mut Lx<'_>, ir: &FnIr, body_fn: &Ident) -> LResult<TokenStream> {
    let ret_ty = lx.rust_type(&ir.ret)?;
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
    Ok(quote! {
        #[doc = #doc]
        fn #body_fn(#(#sig),*) -> ::pyo3::PyResult<#ret_ty> {
            #(#uses)*
            #(#decls)*
            #body
            #[allow(unreachable_code)]
            Err(::pyo3::exceptions::PyRuntimeError::new_err(#unreachable))
        }
    })
}

/// The symbolic-value checks ([`rextio_plugin_api::Plugin::symbolic_check`]) of the plugins
/// whose types the function's parameters have or whose sites its body lowers (API >= 1.17), in
/// plugin order.
fn symbolic_checks(lx: &Lx<'_>, ir: &FnIr) -> LResult<Vec<syn::Path>> {
    let mut plugins = lx.plugins.clone();
    for p in &ir.params {
        if let ValueType::Plugin(k) = &p.ty {
            plugins.insert(k.namespace().to_owned());
        }
    }
    let mut out = Vec::new();
    for id in &plugins {
        let Some(reg) = lx.registry.plugin(id) else {
            continue;
        };
        if !reg.negotiated.symbolic_check {
            continue;
        }
        if let Some(path) = reg.plugin.symbolic_check() {
            out.push(parse("symbolic-value check", &path).map_err(fail)?);
        }
    }
    Ok(out)
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
    let mut runner: Option<(
        rextio_plugin_api::syntax::Code,
        &crate::registry::Registered,
    )> = None;
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
            (Some(d), Some((r, _))) if &d.runner != r => return Ok(None),
            (Some(d), _) => runner = Some((d.runner, reg)),
        }
    }
    runner
        .map(|(r, reg)| {
            plugin_code(reg, "detached-body runner", &r)
                .map_err(|m| fail(format!("plugin `{}`: {m}", reg.plugin.id())))
        })
        .transpose()
}
