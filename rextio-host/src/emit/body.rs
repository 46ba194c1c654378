//! The lowering visitor: a function's IR statements and expressions as Rust, plugin sites
//! through their plugins, regions through [`super::region`].

use super::*;
use proc_macro2::Span as PmSpan;

pub(super) struct Lx<'a> {
    pub(super) registry: &'a Registry,
    pub(super) callees: &'a BTreeMap<String, usize>,
    pub(super) authorization: Option<DeviceAuthorization>,
    pub(super) guard_active: BTreeSet<String>,
    pub(super) loop_var: u32,
    pub(super) plugins: BTreeSet<String>,
    pub(super) rules: BTreeSet<(String, String)>,
    pub(super) uses: Vec<syn::ItemUse>,
    /// The function's qualified name.
    pub(super) qualname: String,
    /// Locals' types (region targets must be plugin-typed locals).
    pub(super) local_types: BTreeMap<String, ValueType>,
    /// Reads of each local in the whole function (region outputs are the locals read outside).
    pub(super) reads: BTreeMap<String, usize>,
    /// Regions lowered so far (unique names).
    pub(super) regions: u32,
    /// Whether the body calls another native function (whose plugins this body does not see).
    pub(super) calls_native: bool,
}

fn runtime_fn(name: &str) -> TokenStream {
    let f = Ident::new(name, PmSpan::call_site());
    quote!(::rextio_plugin_api::runtime::#f)
}

impl Lx<'_> {
    pub(super) fn rust_type(&self, ty: &ValueType) -> LResult<TokenStream> {
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
            // A module's list of submodules, read once per state and never changed by a body:
            // shared, so that copying it (each call's state, each read of the attribute) copies
            // a pointer rather than allocating.
            ValueType::List(item) => {
                let t = self.rust_type(item)?;
                quote!(::std::rc::Rc<[#t]>)
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
    pub(super) fn value(&mut self, e: &Expr) -> LResult<TokenStream> {
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

    pub(super) fn scalar(&mut self, op: ScalarOp, xs: &[Expr]) -> LResult<TokenStream> {
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

    pub(super) fn expr(&mut self, e: &Expr) -> LResult<TokenStream> {
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
            ExprKind::ListLen(t) => {
                let inner = self.expr(t)?;
                quote!(((#inner).len() as i64))
            }
            ExprKind::ListGet(t, i) => {
                let inner = self.expr(t)?;
                let idx = proc_macro2::Literal::usize_unsuffixed(*i);
                let item = runtime_fn("list_item");
                quote!(#item(&(#inner), #idx)?)
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
                let what = format!("rule `{}`", claimed.rule_id);
                let parsed = self.splice(reg, &what, &lowered.expr, &lowered.uses)?;
                self.plugins.insert(claimed.plugin_id.clone());
                self.rules
                    .insert((claimed.plugin_id.clone(), claimed.rule_id.clone()));
                quote!((#parsed))
            }
        })
    }

    /// A plugin's lowered code as one expression, its `use` items recorded (see
    /// [`plugin_code`] for what each plugin may return).
    fn splice(
        &mut self,
        reg: &Registered,
        what: &str,
        expr: &Code,
        uses: &[Code],
    ) -> LResult<syn::Expr> {
        let id = reg.plugin.id();
        let refuse = |m: String| {
            fail(format!(
                "plugin `{id}` lowered {what} to code that does not parse: {m}"
            ))
        };
        let parsed: syn::Expr = plugin_code(reg, "expression", expr).map_err(refuse)?;
        for u in uses {
            let item: syn::ItemUse = plugin_code(reg, "use item", u).map_err(refuse)?;
            if !self.uses.contains(&item) {
                self.uses.push(item);
            }
        }
        Ok(parsed)
    }

    pub(super) fn operand(&mut self, e: &Expr) -> LResult<LoweredOperand> {
        let owned_temp = matches!(e.kind, ExprKind::Site { .. } | ExprKind::Move(_));
        Ok(LoweredOperand::new(self.expr(e)?, owned_temp))
    }

    pub(super) fn block(&mut self, body: &[Stmt]) -> LResult<TokenStream> {
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
    pub(super) fn per_site(&mut self, body: &[Stmt]) -> LResult<TokenStream> {
        let mut out = TokenStream::new();
        for s in body {
            out.extend(self.stmt(s)?);
        }
        Ok(out)
    }

    /// A run of one plugin's claims: the plugin's fused lowering with the per-site statements
    /// as its run-time fallback, or the per-site statements alone when the plugin declines.
    pub(super) fn run(&mut self, plugin: &str, run: &[Stmt]) -> LResult<TokenStream> {
        let Some(reg) = self.registry.plugin(plugin) else {
            return Err(fail(format!("plugin `{plugin}` is not registered")));
        };
        if !reg.negotiated.region_lowering {
            return self.per_site(run);
        }
        // The run's bindings first (see `region::run_at`), then its claims as one region.
        let mut bound = TokenStream::new();
        let mut claims = Vec::new();
        for s in run {
            if crate::unroll::binding(s).is_some() {
                bound.extend(self.stmt(s)?);
            } else {
                claims.push(s.clone());
            }
        }
        let run = claims.as_slice();
        let qualname = self.qualname.clone();
        let reads = std::mem::take(&mut self.reads);
        let formed = region::form(&qualname, run, &reads, &mut |e: &Expr| self.expr(e));
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
            return Ok(quote!(#bound #fallback));
        };
        let what = format!("a region of `{qualname}`");
        let fused = self.splice(reg, &what, &lowered.expr, &lowered.uses)?;
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
            #bound
            let #slot = #fused;
            if let ::std::option::Option::Some((#(#outs,)*)) = #slot {
                #assigns
            } else {
                #fallback
            }
        })
    }

    pub(super) fn stmt(&mut self, s: &Stmt) -> LResult<TokenStream> {
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
                Stmt::ForEach { var, seq, body, .. } => {
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
