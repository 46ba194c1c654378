//! Compiled methods of module classes: the reader that takes a method's state from the live
//! instance at every call (or says why the original must run), and the boundary that runs the
//! native body or answers `NotImplemented` so that the Python wrapper calls the original.

use super::function::EntryBinding;
use super::{fail, local_ident, param_ident, parse, str_lit, LResult, Lx};
use crate::ir::FnIr;
use crate::ir_module::{MethodIr, ReadOp};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};
use rextio_plugin_api::{Literal, ModuleSupport, ValueType};

fn rt(name: &str) -> TokenStream {
    let f = Ident::new(name, proc_macro2::Span::call_site());
    quote!(::rextio_plugin_api::runtime::modules::#f)
}

fn memo_rt(name: &str) -> TokenStream {
    let f = Ident::new(name, proc_macro2::Span::call_site());
    quote!(::rextio_plugin_api::runtime::memo::#f)
}

fn obj(i: usize) -> Ident {
    format_ident!("__rx_o{}", i)
}

/// The plugin's attribute stores as interned Python strings (`__rx_py` in scope).
fn interned_stores(support: &ModuleSupport) -> Vec<TokenStream> {
    support
        .stores
        .iter()
        .map(|s| {
            let s = str_lit(s);
            quote!(::pyo3::intern!(__rx_py, #s))
        })
        .collect()
}

fn view(i: usize) -> Ident {
    format_ident!("__rx_m{}", i)
}

fn slot(i: usize) -> Ident {
    format_ident!("__rx_s{}", i)
}

/// The static holding the wrapper that the Python binding put in place of compiled method
/// `index` in its class (`__RX_BOUND_<index>`, registered through `__rx_set_bound`; never for a
/// method without a Python entry point, whose class keeps its original).
pub(super) fn bound_cell(index: usize) -> Ident {
    format_ident!("__RX_BOUND_{}", index)
}

/// `return Ok(Err(<reason>))` from a reader.
fn refuse(reason: TokenStream) -> TokenStream {
    quote!(return ::pyo3::PyResult::Ok(::std::result::Result::Err(#reason)))
}

/// `match <lookup>? { Some(v) => v, None => refuse }`: a lookup of attribute `path`, which
/// sends the call to the original when it finds nothing.
fn found_or_refuse(lookup: TokenStream, path: &str) -> TokenStream {
    let msg = str_lit(&format!("state: `{path}` is missing"));
    let missing = refuse(quote!(::std::string::String::from(#msg)));
    quote! {
        match #lookup? {
            ::std::option::Option::Some(__rx_v) => __rx_v,
            ::std::option::Option::None => { #missing; }
        }
    }
}

struct Reader<'l, 'a> {
    lx: &'l mut Lx<'a>,
    support: &'l ModuleSupport,
    call_check: syn::Path,
    admit: syn::Path,
}

impl Reader<'_, '_> {
    fn class_check(&self, o: &Ident, class: &str, path: &str) -> TokenStream {
        let class = str_lit(class);
        let path = str_lit(path);
        let no = refuse(quote!(__RX_CLASS.mismatch(&#o, #path)));
        let class_ref = rt("ClassRef");
        quote! {
            {
                static __RX_CLASS: #class_ref = #class_ref::new(#class);
                if !__RX_CLASS.is_exact(&#o)? {
                    #no;
                }
            }
        }
    }

    /// Refuses unless calling `name` on `__rx_dispatch_obj` (past `after` for `super()`) runs
    /// `class`'s compiled method.
    fn dispatch_check(
        &self,
        name: &str,
        class: &str,
        after: Option<&str>,
        path: &str,
    ) -> LResult<TokenStream> {
        let callee = format!("{class}.{name}");
        let Some(index) = self.lx.callees.get(&callee) else {
            return Err(fail(format!(
                "`{callee}` is not a native method of this build"
            )));
        };
        let compiled = bound_cell(*index);
        let class_ref = rt("ClassRef");
        let (class, name, path) = (str_lit(class), str_lit(name), str_lit(path));
        let after = match after {
            Some(a) => {
                let a = str_lit(a);
                quote! {
                    {
                        static __RX_AFTER: #class_ref = #class_ref::new(#a);
                        ::std::option::Option::Some(&__RX_AFTER)
                    }
                }
            }
            None => quote!(::std::option::Option::None),
        };
        let no = refuse(quote!(__rx_why));
        Ok(quote! {
            static __RX_CLASS: #class_ref = #class_ref::new(#class);
            let __rx_name = ::pyo3::intern!(__rx_dispatch_obj.py(), #name);
            if let ::std::option::Option::Some(__rx_why) =
                __RX_CLASS.dispatch(__rx_dispatch_obj, __rx_name, #after, &#compiled, #path)?
            {
                #no;
            }
        })
    }

    fn call_check(&self, o: usize, path: &str) -> TokenStream {
        let check = &self.call_check;
        let view = view(o);
        let path = str_lit(&format!(" (`{path}`)"));
        let no = refuse(quote!(::std::format!("{}{}", __rx_why, #path)));
        quote! {
            if let ::std::option::Option::Some(__rx_why) = #check(#view.dict())? {
                #no;
            }
        }
    }

    fn mask(&self, names: &[String]) -> u8 {
        self.support
            .stores
            .iter()
            .enumerate()
            .filter(|(_, s)| names.contains(s))
            .fold(0u8, |m, (i, _)| m | (1 << i))
    }

    /// `match <view of src>.get(attr, mask)? { Some(v) => v, None => refuse }`.
    fn attr(&self, src: usize, attr: &str, path: &str, mask: u8) -> TokenStream {
        let (view, name) = (view(src), str_lit(attr));
        found_or_refuse(
            quote!(#view.get(::pyo3::intern!(__rx_py, #name), #mask)),
            path,
        )
    }

    /// Attribute `attr` of object `src` as Python finds a class attribute (the instance
    /// dictionary, then the class's method resolution order), refusing when neither has it.
    fn class_attr(&self, src: usize, attr: &str, path: &str) -> TokenStream {
        let (view, name) = (view(src), str_lit(attr));
        found_or_refuse(
            quote!(#view.class_get(::pyo3::intern!(__rx_py, #name))),
            path,
        )
    }

    /// The view of object `o` (`__rx_m<o>`), refusing an object without instance dictionary.
    fn make_view(&self, o: usize, path: &str) -> TokenStream {
        let (obj, view) = (obj(o), view(o));
        let mv = rt("ModView");
        let stores = interned_stores(self.support);
        let msg = str_lit(&format!("state: `{path}` has no instance dictionary"));
        let no = refuse(quote!(::std::string::String::from(#msg)));
        quote! {
            let #view = match #mv::of(&#obj, &[#(#stores),*])? {
                ::std::option::Option::Some(__rx_view) => __rx_view,
                ::std::option::Option::None => { #no; }
            };
        }
    }

    /// Code converting `__rx_v` (a Python object) to a value of `ty`, refusing otherwise.
    fn convert(&mut self, ty: &ValueType, path: &str) -> LResult<TokenStream> {
        let bad = |what: &str| {
            let msg = str_lit(&format!("state: `{path}` is not {what}"));
            refuse(quote!(::std::string::String::from(#msg)))
        };
        Ok(match ty {
            ValueType::Int | ValueType::Float | ValueType::Bool => {
                let (f, what) = match ty {
                    ValueType::Int => ("as_int", "an int"),
                    ValueType::Float => ("as_float", "a float"),
                    _ => ("as_bool", "a bool"),
                };
                let (f, no) = (rt(f), bad(what));
                quote!(match #f(&__rx_v) { ::std::option::Option::Some(x) => x, ::std::option::Option::None => { #no; } })
            }
            ValueType::Tuple(items) => {
                let f = rt("as_tuple");
                let n = items.len();
                let no = bad(&format!("a tuple of {n}"));
                let mut parts = Vec::new();
                for (i, t) in items.iter().enumerate() {
                    let inner = self.convert(t, &format!("{path}[{i}]"))?;
                    parts.push(quote!({ let __rx_v = __rx_items[#i].clone(); #inner }));
                }
                quote! {
                    {
                        let __rx_items = match #f(&__rx_v, #n) {
                            ::std::option::Option::Some(x) => x,
                            ::std::option::Option::None => { #no; }
                        };
                        (#(#parts,)*)
                    }
                }
            }
            ValueType::Plugin(k) => {
                let Some(t) = self.lx.registry.plugin_type(k) else {
                    return Err(fail(format!("type `{k}` has no boundary")));
                };
                let extract: syn::Path =
                    parse("boundary extractor", &t.extract_fn).map_err(fail)?;
                let admit = &self.admit;
                let pname = str_lit(path);
                let prefix = str_lit(&format!("state: `{path}`: "));
                let no = refuse(quote!(::std::format!("{}{}", #prefix, __rx_e)));
                let no_admit = refuse(quote!(__rx_why));
                quote! {
                    match #extract(&__rx_v, #pname) {
                        ::std::result::Result::Ok(__rx_t) => {
                            if let ::std::option::Option::Some(__rx_why) = #admit(&__rx_t) {
                                #no_admit;
                            }
                            // The tensor is borrowed from this object: keep it alive for the call.
                            __rx_keep.push(__rx_v);
                            __rx_t
                        }
                        ::std::result::Result::Err(__rx_e) => { #no; }
                    }
                }
            }
            other => {
                return Err(fail(format!(
                    "a module attribute of type {other} is not read"
                )))
            }
        })
    }

    fn cond(&self, lit: &Literal) -> TokenStream {
        match lit {
            Literal::Bool(b) => {
                let f = rt("eq_bool");
                quote!(#f(&__rx_v, #b)?)
            }
            Literal::Int(i) => {
                let f = rt("eq_int");
                let i = super::int_lit(*i);
                quote!(#f(&__rx_v, #i)?)
            }
            Literal::Float(x) => {
                let f = rt("eq_float");
                let x = super::float_lit(*x);
                quote!(#f(&__rx_v, #x)?)
            }
            Literal::Str(s) => {
                let f = rt("eq_str");
                let s = str_lit(s);
                quote!(#f(&__rx_v, #s)?)
            }
            Literal::None => quote!(__rx_v.is_none()),
        }
    }

    fn ops(&mut self, ops: &[ReadOp]) -> LResult<Vec<TokenStream>> {
        ops.iter().map(|op| self.op(op)).collect()
    }

    /// The code of one read step.
    fn op(&mut self, op: &ReadOp) -> LResult<TokenStream> {
        Ok(match op {
            ReadOp::Child {
                src,
                dst,
                attr,
                class,
                called,
                path,
            } => self.child(*src, *dst, attr, class, *called, path),
            ReadOp::Dispatch {
                obj: o,
                name,
                class,
                after,
                path,
            } => {
                let v = view(*o);
                let check = self.dispatch_check(name, class, after.as_deref(), path)?;
                // The fast path checks the same object again (the memo's values), at every call.
                let record = if self.support.traced_checks {
                    let f = memo_rt("record_dispatch");
                    quote!(#f(__rx_dispatch_obj);)
                } else {
                    TokenStream::new()
                };
                quote! {
                    {
                        let __rx_dispatch_obj = #v.obj();
                        #record
                        #check
                    }
                }
            }
            ReadOp::Cond {
                src,
                attr,
                lit,
                path,
            } => self.condition(*src, attr, lit, path),
            ReadOp::Value {
                src,
                attr,
                ty,
                slot: i,
                path,
                on_class,
            } => self.value(*src, attr, ty, *i, path, *on_class)?,
            ReadOp::Count {
                obj,
                count,
                names,
                path,
            } => self.count(*obj, *count, names, path)?,
            ReadOp::Len { obj, slot: i, path } => self.len(*obj, *i, path)?,
            ReadOp::State {
                src,
                callee,
                slot: i,
            } => {
                let Some(index) = self.lx.callees.get(callee) else {
                    return Err(fail(format!(
                        "`{callee}` is not a native method of this build"
                    )));
                };
                let read = format_ident!("__rx_read_{}", index);
                let (s, id) = (view(*src), slot(*i));
                let no = refuse(quote!(__rx_why));
                quote! {
                    let #id = match #read(&#s, __rx_keep)? {
                        ::std::result::Result::Ok(__rx_state) => __rx_state,
                        ::std::result::Result::Err(__rx_why) => { #no; }
                    };
                }
            }
            ReadOp::List {
                src,
                class,
                called,
                ops,
                elem_slots,
                slot: i,
                path,
            } => self.list(*src, class, *called, ops, elem_slots.len(), *i, path)?,
        })
    }

    /// A submodule read from `src` into object `dst`, its class checked and its view made
    /// (and its call checked when the method calls it).
    fn child(
        &mut self,
        src: usize,
        dst: usize,
        attr: &str,
        class: &str,
        called: bool,
        path: &str,
    ) -> TokenStream {
        let d = obj(dst);
        let get = self.attr(src, attr, path, self.mask(&self.support.module_stores));
        let class = self.class_check(&d, class, path);
        let make = self.make_view(dst, path);
        let call = if called {
            self.call_check(dst, path)
        } else {
            TokenStream::new()
        };
        quote! {
            let #d = #get;
            #class
            #make
            #call
        }
    }

    /// A condition on a live attribute: the literal `__init__` gave it, or the original runs.
    fn condition(&mut self, src: usize, attr: &str, lit: &Literal, path: &str) -> TokenStream {
        let get = self.attr(src, attr, path, u8::MAX);
        let test = self.cond(lit);
        let shown = match lit {
            Literal::Bool(true) => "True".to_owned(),
            Literal::Bool(false) => "False".to_owned(),
            Literal::Int(i) => i.to_string(),
            Literal::Float(x) => format!("{x:?}"),
            Literal::Str(s) => format!("{s:?}"),
            Literal::None => "None".to_owned(),
        };
        let msg = str_lit(&format!("{attr}: `{path}` is not {shown}"));
        let no = refuse(quote!(::std::string::String::from(#msg)));
        quote! {
            {
                let __rx_v = #get;
                if !(#test) {
                    #no;
                }
            }
        }
    }

    /// A value (tensor, number) read into state slot `i` and converted to its type.
    fn value(
        &mut self,
        src: usize,
        attr: &str,
        ty: &ValueType,
        i: usize,
        path: &str,
        on_class: bool,
    ) -> LResult<TokenStream> {
        let get = if on_class {
            self.class_attr(src, attr, path)
        } else {
            let mask = match ty {
                ValueType::Plugin(_) => self.mask(&self.support.tensor_stores),
                _ => u8::MAX,
            };
            self.attr(src, attr, path, mask)
        };
        let conv = self.convert(ty, path)?;
        let record = if self.support.traced_checks {
            let f = memo_rt("record_value");
            quote!(#f(&__rx_v);)
        } else {
            TokenStream::new()
        };
        let id = slot(i);
        Ok(quote! {
            let #id = {
                let __rx_v = #get;
                #record
                #conv
            };
        })
    }

    /// `let __rx_items = <the elements of container object `obj`>;`, or the original runs when
    /// it has no elements store.
    /// The index of the plugin's children store among its stores.
    fn children_store(&self) -> LResult<usize> {
        self.support
            .stores
            .iter()
            .position(|x| *x == self.support.children_store)
            .ok_or_else(|| fail("the plugin's children store is not one of its stores"))
    }

    fn items(&self, obj: usize, path: &str) -> LResult<TokenStream> {
        let s = view(obj);
        let store = self.children_store()?;
        let missing = str_lit(&format!("state: `{path}` holds no elements store"));
        let no = refuse(quote!(::std::string::String::from(#missing)));
        Ok(quote! {
            let __rx_items = match #s.elements(#store)? {
                ::std::option::Option::Some(x) => x,
                ::std::option::Option::None => { #no; }
            };
        })
    }

    /// The memo's record of `__rx_items`' length (a count the fast path reads back), when the
    /// plugin's checks are traced.
    fn record_count(&self) -> TokenStream {
        if self.support.traced_checks {
            let f = memo_rt("record_count");
            quote!(#f(__rx_items.len());)
        } else {
            TokenStream::new()
        }
    }

    /// Container object `obj` holds exactly `count` elements, or the original runs.
    fn count(
        &mut self,
        obj: usize,
        count: usize,
        names: &[String],
        path: &str,
    ) -> LResult<TokenStream> {
        let items = self.items(obj, path)?;
        let prefix = str_lit(&format!("state: `{path}` holds "));
        let suffix = str_lit(&format!(" modules, not {count}"));
        let no = refuse(quote!(
            ::std::format!("{}{}{}", #prefix, __rx_items.len(), #suffix)
        ));
        let s = view(obj);
        let store = self.children_store()?;
        let shown = names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let moved = str_lit(&format!(
            "state: `{path}` does not hold its modules under the names {shown} in that order"
        ));
        let no_order = refuse(quote!(::std::string::String::from(#moved)));
        let names = names.iter().map(|n| str_lit(n));
        Ok(quote! {
            {
                #items
                if __rx_items.len() != #count {
                    #no;
                }
                if #s.element_names_are(#store, &[#(#names),*])? != ::std::option::Option::Some(true) {
                    #no_order;
                }
            }
        })
    }

    /// The number of elements container object `obj` holds, into int state slot `i`.
    fn len(&mut self, obj: usize, i: usize, path: &str) -> LResult<TokenStream> {
        let items = self.items(obj, path)?;
        let record = self.record_count();
        let id = slot(i);
        Ok(quote! {
            let #id = {
                #items
                #record
                __rx_items.len() as i64
            };
        })
    }

    /// A module list read into state slot `i`: each element's class checked, its view made,
    /// its own reads (`ops`, into `elems` slots) run, and their values collected per element.
    #[allow(clippy::too_many_arguments)]
    fn list(
        &mut self,
        src: usize,
        class: &str,
        called: bool,
        ops: &[ReadOp],
        elems: usize,
        i: usize,
        path: &str,
    ) -> LResult<TokenStream> {
        let items = self.items(src, path)?;
        let o0 = obj(0);
        let elem = format!("{path}[i]");
        let class = self.class_check(&o0, class, &elem);
        let make = self.make_view(0, &elem);
        let call = if called {
            self.call_check(0, &elem)
        } else {
            TokenStream::new()
        };
        let inner = self.ops(ops)?;
        let elems: Vec<Ident> = (0..elems).map(slot).collect();
        let id = slot(i);
        let record = self.record_count();
        Ok(quote! {
            let #id = {
                #items
                #record
                let mut __rx_list = ::std::vec::Vec::with_capacity(__rx_items.len());
                for #o0 in __rx_items {
                    #class
                    #make
                    #call
                    #(#inner)*
                    __rx_list.push((#(#elems,)*));
                }
                ::std::rc::Rc::<[_]>::from(__rx_list)
            };
        })
    }
}

impl Reader<'_, '_> {
    /// The conversions of `ops` alone, over the values a kept full read recorded (the state
    /// memo's fast path, `__rx_fast_<index>`): submodules, classes, conditions and checks are
    /// what the memo's facts already proved, values are converted (and admitted) again.
    fn fast_ops(&mut self, ops: &[ReadOp]) -> LResult<Vec<TokenStream>> {
        let mut out = Vec::new();
        for op in ops {
            match op {
                // The container's elements store is a dictionary the memo's facts pin.
                ReadOp::Child { .. } | ReadOp::Cond { .. } | ReadOp::Count { .. } => {}
                // Dispatch is checked at every call (see `ClassRef::dispatch`).
                ReadOp::Dispatch {
                    name,
                    class,
                    after,
                    path,
                    ..
                } => {
                    let check = self.dispatch_check(name, class, after.as_deref(), path)?;
                    out.push(quote! {
                        {
                            let __rx_dispatch_obj = &__rx_vals.value()?;
                            #check
                        }
                    });
                }
                ReadOp::Value {
                    ty, slot: i, path, ..
                } => {
                    let conv = self.convert(ty, path)?;
                    let id = slot(*i);
                    out.push(quote! {
                        let #id = {
                            let __rx_v = __rx_vals.value()?;
                            #conv
                        };
                    });
                }
                ReadOp::State {
                    callee, slot: i, ..
                } => {
                    let Some(index) = self.lx.callees.get(callee) else {
                        return Err(fail(format!(
                            "`{callee}` is not a native method of this build"
                        )));
                    };
                    let fast = format_ident!("__rx_fast_{}", index);
                    let id = slot(*i);
                    let no = refuse(quote!(__rx_why));
                    out.push(quote! {
                        let #id = match #fast(__rx_vals, __rx_keep)? {
                            ::std::result::Result::Ok(__rx_state) => __rx_state,
                            ::std::result::Result::Err(__rx_why) => { #no; }
                        };
                    });
                }
                ReadOp::Len { slot: i, .. } => {
                    let id = slot(*i);
                    out.push(quote! {
                        let #id = __rx_vals.count()? as i64;
                    });
                }
                ReadOp::List {
                    ops,
                    elem_slots,
                    slot: i,
                    ..
                } => {
                    let inner = self.fast_ops(ops)?;
                    let elems: Vec<Ident> = (0..elem_slots.len()).map(slot).collect();
                    let id = slot(*i);
                    out.push(quote! {
                        let #id = {
                            let __rx_n = __rx_vals.count()?;
                            let mut __rx_list = ::std::vec::Vec::with_capacity(__rx_n);
                            for _ in 0..__rx_n {
                                #(#inner)*
                                __rx_list.push((#(#elems,)*));
                            }
                            ::std::rc::Rc::<[_]>::from(__rx_list)
                        };
                    });
                }
            }
        }
        Ok(out)
    }
}

/// The reader of method `ir` (`__rx_read_<index>`) and its boundary (`__rx_fn_<index>`).
pub(super) fn method_items(
    lx: &mut Lx<'_>,
    ir: &FnIr,
    m: &MethodIr,
    index: usize,
    guards: &[syn::Expr],
    call: TokenStream,
    wrap: TokenStream,
) -> LResult<(TokenStream, TokenStream, Ident, Option<EntryBinding>)> {
    let Some(reg) = lx.registry.plugin(&m.plugin) else {
        return Err(fail(format!("plugin `{}` is not registered", m.plugin)));
    };
    let Some(support) = reg.plugin.module_support() else {
        return Err(fail(format!(
            "plugin `{}` declares no module support",
            m.plugin
        )));
    };
    let call_check: syn::Path = parse("module call check", &support.call_check_fn).map_err(fail)?;
    let admit: syn::Path = parse("module admission check", &support.admit_fn).map_err(fail)?;
    let mut reader = Reader {
        lx,
        support: &support,
        call_check,
        admit: admit.clone(),
    };
    let reader_item = reader_items(&mut reader, ir, m, index)?;

    // The boundary: read the state (or run the original), convert the inputs, run the body.
    let lx = reader.lx;
    let stats = format_ident!("__RX_STATS_{}", index);
    let stats_ty = rt("MethodStats");
    let warn: Vec<_> = support.warn_categories.iter().map(|c| str_lit(c)).collect();
    let fallback = |why: TokenStream| {
        quote! {
            return #stats.fallback(__rx_py, #why, &[#(#warn),*], __rx_orig, __rx_original_args(__rx_py)?)
        }
    };
    let state = local_ident(&ir.params[0].name);
    // The original runs, for the reason in `__rx_why`.
    let to_original = fallback(quote!(__rx_why));
    let no_dict = "state: the instance has no instance dictionary";
    let (params, converts, originals) = input_conversions(lx, ir, &admit, &fallback)?;
    // A stamp function of a plugin older than its `Stamping` signature is not called.
    let stamp_fn = support
        .stamp_fn
        .as_deref()
        .filter(|_| reg.negotiated.state_stamps);
    let (read_state, read_state_call) = state_read(&support, stamp_fn, index, no_dict)?;
    let guard_names: Vec<Ident> = (0..guards.len())
        .map(|i| format_ident!("__rx_guard_{}", i))
        .collect();
    let guard_lets = quote!(#(let #guard_names = #guards;)*);
    // A decorated method (`@torch.no_grad()`) runs wholly under its guards, as its original
    // would: the state read and the admission of every value see them too.
    let (whole_call, body_only) = if m.decorated {
        (guard_lets, TokenStream::new())
    } else {
        (TokenStream::new(), guard_lets)
    };
    let pyname = str_lit(&ir.name);
    let qualname = str_lit(&ir.qualname);
    let class = str_lit(&m.class_qualname);
    let py_fn = format_ident!("__rx_fn_{}", index);
    let boundary = quote! {
        static #stats: #stats_ty = #stats_ty::new(#qualname, #class);

        #[::pyo3::pyfunction]
        #[pyo3(name = #pyname)]
        fn #py_fn<'py>(#(#params),*) -> ::pyo3::PyResult<::pyo3::Py<::pyo3::PyAny>> {
            // The original's arguments, built only when the original runs.
            let __rx_original_args = |__rx_py: ::pyo3::Python<'py>| -> ::pyo3::PyResult<::pyo3::Bound<'py, ::pyo3::types::PyTuple>> {
                ::pyo3::types::PyTuple::new(__rx_py, [#(#originals),*])
            };
            let mut __rx_keep: ::std::vec::Vec<::pyo3::Bound<'py, ::pyo3::PyAny>> = ::std::vec::Vec::new();
            #whole_call
            #read_state
            let #state = match #read_state_call? {
                ::std::result::Result::Ok(__rx_state) => __rx_state,
                ::std::result::Result::Err(__rx_why) => { #to_original; }
            };
            #(#converts)*
            #stats.native();
            let __rx_out = {
                #body_only
                #call
            }?;
            let __rx_result = #wrap;
            drop(__rx_keep);
            __rx_result
        }
    };
    let (entry_item, entry) = match entry_item(&support, ir, index)? {
        Some((item, binding)) => (item, Some(binding)),
        None => (TokenStream::new(), None),
    };
    let boundary = quote!(#boundary #entry_item);
    Ok((reader_item, boundary, stats, entry))
}

/// The `__call__` entry of method `ir` (`__rx_entry_<index>`, in `__RX_ENTRY_<index>`) when it
/// is the method the plugin's base `__call__` calls (`forward`): given the instance and the
/// call's arguments, it runs the boundary `__rx_fn_<index>` directly when the base's `__call__`
/// would only have called the method, and delegates to that `__call__` otherwise (see
/// `runtime::entry`).
fn entry_item(
    support: &ModuleSupport,
    ir: &FnIr,
    index: usize,
) -> LResult<Option<(TokenStream, EntryBinding)>> {
    let Some(entry) = support.call_entry.as_ref().filter(|e| e.method == ir.name) else {
        return Ok(None);
    };
    let check: syn::Path = parse("module entry check", &entry.check_fn).map_err(fail)?;
    let cell = format_ident!("__RX_ENTRY_{}", index);
    let entry_fn = format_ident!("__rx_entry_{}", index);
    let py_fn = format_ident!("__rx_fn_{}", index);
    let bound = bound_cell(index);
    let entry_ty = quote!(::rextio_plugin_api::runtime::entry::Entry);
    let arity = ir.params.len() - 1;
    let args = (0..arity).map(|i| quote!(&__rx_a[#i]));
    let method = str_lit(&ir.name);
    let doc = str_lit(&format!(" The `__call__` entry of `{}`.", ir.qualname));
    let item = quote! {
        static #cell: #entry_ty = #entry_ty::new(#arity, #method);

        #[doc = #doc]
        unsafe extern "C" fn #entry_fn(
            __rx_slf: *mut ::pyo3::ffi::PyObject,
            __rx_args: *const *mut ::pyo3::ffi::PyObject,
            __rx_nargs: ::pyo3::ffi::Py_ssize_t,
            __rx_kwnames: *mut ::pyo3::ffi::PyObject,
        ) -> *mut ::pyo3::ffi::PyObject {
            // SAFETY: CPython calls this as the `METH_FASTCALL | METH_KEYWORDS` method that
            // `Entry::install` made of it, with the GIL held.
            unsafe {
                #cell.call(
                    __rx_slf,
                    __rx_args,
                    __rx_nargs,
                    __rx_kwnames,
                    &#bound,
                    #check,
                    |__rx_py, __rx_orig, __rx_self, __rx_a| #py_fn(__rx_py, __rx_orig, __rx_self, #(#args),*),
                )
            }
        }
    };
    Ok(Some((
        item,
        EntryBinding {
            rust_fn: entry_fn.to_string(),
            cell: cell.to_string(),
            bases: support.bases.clone(),
            pinned: entry.pinned.clone(),
        },
    )))
}

/// The method's readers: `__rx_read_<index>` (the full read of the live instance) and, for a
/// plugin with traced checks, `__rx_fast_<index>` (the values a kept read recorded).
fn reader_items(
    reader: &mut Reader<'_, '_>,
    ir: &FnIr,
    m: &MethodIr,
    index: usize,
) -> LResult<TokenStream> {
    let support = reader.support;
    let ops = reader.ops(&m.reads)?;
    let state_ty = reader.lx.rust_type(&ValueType::Tuple(m.slots.clone()))?;
    let slots: Vec<Ident> = (0..m.slots.len()).map(slot).collect();
    let read_fn = format_ident!("__rx_read_{}", index);
    let m0 = view(0);
    let mv = rt("ModView");
    let bound = bound_cell(index);
    let original_ty = rt("Original");
    let doc = str_lit(&format!(
        " State of `{}` read from the live instance.",
        ir.qualname
    ));
    let reader_item = quote! {
        // The compiled wrapper in the class, checked by callers' dispatch checks.
        static #bound: #original_ty = #original_ty::new();

        #[doc = #doc]
        #[allow(clippy::all, unused_variables)]
        fn #read_fn<'py>(
            #m0: &#mv<'py>,
            __rx_keep: &mut ::std::vec::Vec<::pyo3::Bound<'py, ::pyo3::PyAny>>,
        ) -> ::pyo3::PyResult<::std::result::Result<#state_ty, ::std::string::String>> {
            let __rx_py = #m0.obj().py();
            #(#ops)*
            ::pyo3::PyResult::Ok(::std::result::Result::Ok((#(#slots,)*)))
        }
    };
    let fast_fn = format_ident!("__rx_fast_{}", index);
    let fast_item = if support.traced_checks {
        let fast_ops = reader.fast_ops(&m.reads)?;
        let values = memo_rt("Values");
        let fast_doc = str_lit(&format!(
            " State of `{}` from the values its kept read recorded.",
            ir.qualname
        ));
        quote! {
            #[doc = #fast_doc]
            #[allow(clippy::all, unused_variables)]
            fn #fast_fn<'py>(
                __rx_vals: &mut #values<'py, '_>,
                __rx_keep: &mut ::std::vec::Vec<::pyo3::Bound<'py, ::pyo3::PyAny>>,
            ) -> ::pyo3::PyResult<::std::result::Result<#state_ty, ::std::string::String>> {
                #(#fast_ops)*
                ::pyo3::PyResult::Ok(::std::result::Result::Ok((#(#slots,)*)))
            }
        }
    } else {
        TokenStream::new()
    };
    Ok(quote! {
        #reader_item
        #fast_item
    })
}

/// The boundary's parameters (`py`, the original, `self`, then one Python object per input),
/// the conversion of each input (an input the compiled types refuse runs the original, through
/// `fallback`), and the original's arguments.
#[allow(clippy::type_complexity)]
fn input_conversions(
    lx: &mut Lx<'_>,
    ir: &FnIr,
    admit: &syn::Path,
    fallback: &dyn Fn(TokenStream) -> TokenStream,
) -> LResult<(Vec<TokenStream>, Vec<TokenStream>, Vec<TokenStream>)> {
    let mut params = vec![
        quote!(__rx_py: ::pyo3::Python<'py>),
        quote!(__rx_orig: &::pyo3::Bound<'py, ::pyo3::PyAny>),
        quote!(__rx_self: &::pyo3::Bound<'py, ::pyo3::PyAny>),
    ];
    let mut converts = Vec::new();
    let mut originals = vec![quote!(__rx_self.clone())];
    for p in &ir.params[1..] {
        let raw = param_ident(&p.name).map_err(fail)?;
        let id = local_ident(&p.name);
        // Every input arrives as a Python object; one the compiled types refuse runs the
        // original (Python would take it), with the reason.
        params.push(quote!(#raw: &::pyo3::Bound<'py, ::pyo3::PyAny>));
        originals.push(quote!(#raw.clone()));
        let prefix = str_lit(&format!("input: `{}`: ", p.name));
        match &p.ty {
            ValueType::Plugin(k) => {
                let Some(t) = lx.registry.plugin_type(k) else {
                    return Err(fail(format!("type `{k}` has no boundary")));
                };
                let extract: syn::Path =
                    parse("boundary extractor", &t.extract_fn).map_err(fail)?;
                let pname = str_lit(&p.name);
                let no = fallback(quote!(__rx_why));
                let bad = fallback(quote!(::std::format!("{}{}", #prefix, __rx_e)));
                // An input outside the compiled types (another rank or dtype, None) runs the
                // original: eager's answer, or eager's own error.
                converts.push(quote! {
                    let #id = match #extract(#raw, #pname) {
                        ::std::result::Result::Ok(__rx_v) => __rx_v,
                        ::std::result::Result::Err(__rx_e) => { #bad; }
                    };
                    if let ::std::option::Option::Some(__rx_why) = #admit(&#id) {
                        #no;
                    }
                });
            }
            other => {
                let ty = lx.rust_type(other)?;
                let bad = fallback(quote!(
                    ::std::format!("{}{}", #prefix, ::pyo3::PyErr::from(__rx_e))
                ));
                converts.push(quote! {
                    let #id: #ty = match ::pyo3::types::PyAnyMethods::extract(#raw) {
                        ::std::result::Result::Ok(__rx_v) => __rx_v,
                        ::std::result::Result::Err(__rx_e) => { #bad; }
                    };
                });
            }
        }
    }
    Ok((params, converts, originals))
}

/// The statics of the state read and the expression that reads it: through the memo when the
/// plugin traces its checks, else the full read (each through the method's lookup tape).
fn state_read(
    support: &ModuleSupport,
    stamp_fn: Option<&str>,
    index: usize,
    no_dict: &str,
) -> LResult<(TokenStream, TokenStream)> {
    let read_fn = format_ident!("__rx_read_{}", index);
    let fast_fn = format_ident!("__rx_fast_{}", index);
    let mv = rt("ModView");
    let tape = format_ident!("__RX_TAPE_{}", index);
    let tape_ty = rt("LookupTape");
    let global_check: syn::Path =
        parse("module global check", &support.global_check_fn).map_err(fail)?;
    let stores = interned_stores(support);
    // The full read: every lookup goes through the method's tape (answered without hashing
    // while the dictionaries are unchanged since the last call).
    let full_read = quote! {
        |__rx_keep: &mut ::std::vec::Vec<::pyo3::Bound<'py, ::pyo3::PyAny>>| -> ::pyo3::PyResult<::std::result::Result<_, ::std::string::String>> {
            #tape.replay(|| {
                if let ::std::option::Option::Some(__rx_why) = #global_check(__rx_py)? {
                    return ::pyo3::PyResult::Ok(::std::result::Result::Err(__rx_why));
                }
                let __rx_self_view = match #mv::of(__rx_self, &[#(#stores),*])? {
                    ::std::option::Option::Some(__rx_view) => __rx_view,
                    ::std::option::Option::None => {
                        return ::pyo3::PyResult::Ok(::std::result::Result::Err(::std::string::String::from(#no_dict)));
                    }
                };
                #read_fn(&__rx_self_view, __rx_keep)
            })
        }
    };
    let (read_state, read_state_call) = if support.traced_checks {
        // A call on an unchanged model checks the memo's facts and converts the values its
        // last full read recorded.
        let memo = format_ident!("__RX_MEMO_{}", index);
        let memo_ty = memo_rt("StateMemo");
        // With the plugin's stamps, the state itself is kept while its values are unchanged.
        let stamp = match stamp_fn {
            Some(f) => {
                let f: syn::Path = parse("module value stamp", f).map_err(fail)?;
                let ty = memo_rt("StampFn");
                quote!(::std::option::Option::Some(#f as #ty))
            }
            None => quote!(::std::option::Option::None),
        };
        (
            quote! {
                static #tape: #tape_ty = #tape_ty::new();
                static #memo: #memo_ty = #memo_ty::new();
            },
            quote! {
                #memo.read(__rx_self, &mut __rx_keep, #stamp, #fast_fn, #full_read)
            },
        )
    } else {
        (
            quote!(static #tape: #tape_ty = #tape_ty::new();),
            quote!((#full_read)(&mut __rx_keep)),
        )
    };
    Ok((read_state, read_state_call))
}
