//! Calls, method calls and operators on plugin values: each becomes a [`ClaimSite`] offered to
//! the registry, post-order, and its answer becomes an IR site or a diagnostic.

use super::*;

/// A call's evaluated positional arguments and keyword arguments.
type CallArgs = (Vec<Expr>, Vec<(String, Expr)>);

impl Fx<'_> {
    pub(super) fn call(&mut self, c: &ast::ExprCall, at: Span) -> R<Expr> {
        if let Some(m) = self.member(&c.func) {
            return self.member_call(m?, c, at);
        }
        if let Some(q) = self.project_callee(&c.func) {
            return self.project_call(&q, c, at);
        }
        if let Some(e) = self.builtin_call(c, at) {
            return e;
        }
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
        let mut opaque = Vec::new();
        let (args, keywords) = self.call_args(c, at, Some(&mut opaque))?;
        self.site_with(kind, target, receiver, args, keywords, &opaque, at)
    }

    /// A call's positional and keyword arguments, each evaluated (starred and `**` arguments are
    /// not lowered). `opaque` is given for the arguments of a plugin site: a keyword whose value
    /// names a module-level object (`output_type=tf.int32`) is collected there instead, as
    /// `(name, dotted path)`: it is offered to plugins as an operand of unknown type and never
    /// lowered; and a list literal argument is offered as a tuple ([`Fx::site_arg`]).
    fn call_args(
        &mut self,
        c: &ast::ExprCall,
        at: Span,
        mut opaque: Option<&mut Vec<(String, String)>>,
    ) -> R<CallArgs> {
        let site = opaque.is_some();
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
            match self.arg(a, site) {
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
            if let (Some(out), ast::Expr::Attribute(_)) = (opaque.as_deref_mut(), &k.value) {
                if let Some(path) = self.dotted_global(&k.value) {
                    out.push((name.as_str().to_owned(), path));
                    continue;
                }
            }
            match self.arg(&k.value, site) {
                Ok(v) => keywords.push((name.as_str().to_owned(), v)),
                Err(_) => failed = true,
            }
        }
        if failed {
            return Err(Failed);
        }
        Ok((args, keywords))
    }

    /// One call argument: of a plugin site ([`Fx::site_arg`]) or of any other call.
    fn arg(&mut self, e: &ast::Expr, site: bool) -> R<Expr> {
        if site {
            self.site_arg(e)
        } else {
            self.expr(e)
        }
    }

    /// An argument of a plugin site. A list literal written there (`torch.cat([a, b])`) is
    /// offered as the tuple of its elements: a Python call taking a sequence takes a list or a
    /// tuple alike, and the literal's length and element types are static. Nowhere else is a
    /// list lowered (it could be mutated or grow).
    fn site_arg(&mut self, e: &ast::Expr) -> R<Expr> {
        match e {
            ast::Expr::List(l) => {
                let at = self.span(e);
                self.sequence(&l.elts, at)
            }
            ast::Expr::ListComp(lc) => {
                let at = self.span(e);
                match self.module_comprehension(lc, at) {
                    Some(v) => v,
                    None => self.expr(e),
                }
            }
            _ => self.expr(e),
        }
    }

    pub(super) fn operand(e: &Expr) -> Operand {
        match &e.kind {
            ExprKind::Lit(l) => Operand::literal(l.clone()),
            _ => Operand::typed(e.ty.clone()),
        }
    }

    /// [`Fx::operand`] of a site, with [`Operand::private`] where proven: the operand is the
    /// result of a site whose rule declares it fresh (in eager nothing but this argument refers
    /// to it), or the one read of a local the statement consumes ([`Fx::consuming`]): bound to
    /// such a result, read nowhere since, and rebound or returned by this statement, so the
    /// tensor it names is not reachable from any other name once the site has run.
    fn site_operand(&mut self, e: &Expr) -> Operand {
        let private = match &e.kind {
            ExprKind::Local(n) => self.consuming.remove(n),
            _ => self.fresh_value(e),
        };
        Operand {
            private,
            ..Self::operand(e)
        }
    }

    /// Whether `e` is the result of a site whose rule declares it fresh (an in-place site is
    /// claimed only on a private input, which its result is).
    pub(super) fn fresh_value(&self, e: &Expr) -> bool {
        matches!(&e.kind, ExprKind::Site { claimed, .. }
            if self.registry.fresh_result(&claimed.plugin_id, &claimed.rule_id))
    }

    pub(super) fn site(
        &mut self,
        kind: SiteKind,
        target: String,
        receiver: Option<Expr>,
        args: Vec<Expr>,
        keywords: Vec<(String, Expr)>,
        at: Span,
    ) -> R<Expr> {
        self.site_with(kind, target, receiver, args, keywords, &[], at)
    }

    /// [`Fx::site`] with keywords whose values are references to module-level objects
    /// (`(name, dotted path)`), offered with an unknown type and never lowered.
    #[allow(clippy::too_many_arguments)]
    fn site_with(
        &mut self,
        kind: SiteKind,
        target: String,
        receiver: Option<Expr>,
        args: Vec<Expr>,
        keywords: Vec<(String, Expr)>,
        opaque: &[(String, String)],
        at: Span,
    ) -> R<Expr> {
        let site = ClaimSite {
            kind,
            target: target.clone(),
            receiver: receiver.as_ref().map(|e| self.site_operand(e)),
            args: args.iter().map(|e| self.site_operand(e)).collect(),
            keywords: keywords
                .iter()
                .map(|(n, e)| Keyword {
                    name: n.clone(),
                    value: self.site_operand(e),
                })
                .chain(opaque.iter().map(|(n, _)| Keyword {
                    name: n.clone(),
                    value: Operand::unknown(),
                }))
                .collect(),
        };
        let resolution = self.registry.offer(&site, self.enabled);
        if let (Some((name, path)), false) = (
            opaque.first(),
            matches!(resolution, SiteResolution::Rejected { .. }),
        ) {
            // Only the plugin's own rejection is worth more than the host's reason.
            let msg = format!(
                "keyword `{name}={path}` refers to a module-level object, which is not lowered"
            );
            return Err(self.error(codes::UNSUPPORTED_EXPRESSION, at, msg, None));
        }
        match resolution {
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
            SiteResolution::ContractViolation { message, .. } => {
                Err(self.error(codes::PLUGIN_CONTRACT, at, message, None))
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
        SiteKind::Call if site.target == NEG_TARGET && parts.len() == 1 => {
            format!("-({})", parts[0])
        }
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
        SiteKind::Attribute => {
            let recv = site.receiver.as_ref().map(op).unwrap_or_default();
            format!("({recv}).{}", site.target)
        }
    }
}

/// Python builtins the host understands (when the name is not shadowed in the module).
const BUILTINS: [&str; 4] = ["len", "abs", "min", "max"];

impl Fx<'_> {
    /// `len`, `abs`, `min`, `max` and `math.sqrt/exp/log`: on Python scalars the host lowers them
    /// with Python's semantics; `len(t)` / `abs(t)` on a plugin value become a site
    /// (`builtins.len`) offered to the plugin owning the type. `None` when the call is none of
    /// these.
    fn builtin_call(&mut self, c: &ast::ExprCall, at: Span) -> Option<R<Expr>> {
        let name = match c.func.as_ref() {
            ast::Expr::Name(n)
                if BUILTINS.contains(&n.id.as_str()) && self.is_builtin(&c.func, n.id.as_str()) =>
            {
                n.id.as_str().to_owned()
            }
            other => match self.dotted_global(other).as_deref() {
                Some(p @ ("math.sqrt" | "math.exp" | "math.log")) => p.to_owned(),
                _ => return None,
            },
        };
        if let (true, [arg], []) = (
            name == "len",
            c.arguments.args.as_ref(),
            c.arguments.keywords.as_ref(),
        ) {
            match self.member(arg) {
                Some(Ok(classes::Member::Module(node))) => return Some(self.module_len(node, at)),
                Some(Err(f)) => return Some(Err(f)),
                _ => {}
            }
        }
        Some(self.builtin(&name, c, at))
    }

    /// Whether `func` names Python's builtin `name`: no local, import or module-level binding
    /// shadows it.
    pub(super) fn is_builtin(&self, func: &ast::Expr, name: &str) -> bool {
        matches!(func, ast::Expr::Name(n) if n.id.as_str() == name)
            && !self.local_names.contains(name)
            && !self.module.imports.contains_key(name)
            && !self.module_defines(name)
    }

    /// Whether the module binds `name` itself (a def, class or assignment shadows a builtin).
    fn module_defines(&self, name: &str) -> bool {
        self.module.ast.body.iter().any(|s| match s {
            ast::Stmt::FunctionDef(f) => f.name.as_str() == name,
            ast::Stmt::ClassDef(c) => c.name.as_str() == name,
            ast::Stmt::Assign(a) => a
                .targets
                .iter()
                .any(|t| matches!(t, ast::Expr::Name(n) if n.id.as_str() == name)),
            ast::Stmt::AnnAssign(a) => {
                matches!(a.target.as_ref(), ast::Expr::Name(n) if n.id.as_str() == name)
            }
            _ => false,
        })
    }

    fn builtin(&mut self, name: &str, c: &ast::ExprCall, at: Span) -> R<Expr> {
        if !c.arguments.keywords.is_empty()
            || c.arguments
                .args
                .iter()
                .any(|a| matches!(a, ast::Expr::Starred(_)))
        {
            return Err(self.error(
                codes::UNSUPPORTED_EXPRESSION,
                at,
                format!("`{name}` with keyword or starred arguments is not lowered"),
                None,
            ));
        }
        let mut args = Vec::new();
        for a in c.arguments.args.iter() {
            args.push(self.expr(a)?);
        }
        let arity = if matches!(name, "min" | "max") { 2 } else { 1 };
        if args.len() != arity {
            return Err(self.error(
                codes::UNSUPPORTED_EXPRESSION,
                at,
                format!("`{name}` is lowered with exactly {arity} argument(s)"),
                None,
            ));
        }
        if args.iter().any(|a| matches!(a.ty, ValueType::Plugin(_))) {
            if matches!(name, "len" | "abs") {
                return self.site(
                    SiteKind::Call,
                    format!("builtins.{name}"),
                    None,
                    args,
                    Vec::new(),
                    at,
                );
            }
            return Err(self.error(
                codes::UNSUPPORTED_EXPRESSION,
                at,
                format!("`{name}` of tensors compares tensor data and is not lowered"),
                Some("use the plugin's elementwise maximum/minimum"),
            ));
        }
        let tys: Vec<ValueType> = args.iter().map(|a| a.ty.clone()).collect();
        let (op, ty) = match (name, tys.as_slice()) {
            ("abs", [ValueType::Int | ValueType::Bool]) => (ScalarOp::IntAbs, ValueType::Int),
            ("abs", [ValueType::Float]) => (ScalarOp::FloatAbs, ValueType::Float),
            ("min", [ValueType::Int, ValueType::Int]) => (ScalarOp::IntMin, ValueType::Int),
            ("max", [ValueType::Int, ValueType::Int]) => (ScalarOp::IntMax, ValueType::Int),
            ("min", [ValueType::Float, ValueType::Float]) => (ScalarOp::FloatMin, ValueType::Float),
            ("max", [ValueType::Float, ValueType::Float]) => (ScalarOp::FloatMax, ValueType::Float),
            (
                "math.sqrt" | "math.exp" | "math.log",
                [ValueType::Int | ValueType::Bool | ValueType::Float],
            ) => (
                match name {
                    "math.sqrt" => ScalarOp::FloatSqrt,
                    "math.exp" => ScalarOp::FloatExp,
                    _ => ScalarOp::FloatLog,
                },
                ValueType::Float,
            ),
            _ => {
                let shown: Vec<String> = tys.iter().map(ToString::to_string).collect();
                return Err(self.error(
                    codes::SCALAR_OPERATION,
                    at,
                    format!(
                        "`{name}` of ({}) is not lowered (min/max need two ints or two floats: with mixed operands Python returns whichever operand wins, so the type depends on the values)",
                        shown.join(", ")
                    ),
                    None,
                ));
            }
        };
        let args = match op {
            ScalarOp::IntAbs => vec![self.coerce_int(args.remove(0))?],
            ScalarOp::FloatSqrt | ScalarOp::FloatExp | ScalarOp::FloatLog => {
                vec![self.coerce_float(args.remove(0))?]
            }
            _ => args,
        };
        Ok(Expr::scalar(ty, op, args, at))
    }
}

impl Fx<'_> {
    /// The qualified name of the project function a call's target names, if any: a function
    /// of this module, or one imported from another module of the project.
    fn project_callee(&self, func: &ast::Expr) -> Option<String> {
        if let ast::Expr::Name(n) = func {
            let id = n.id.as_str();
            if self.local_names.contains(id) {
                return None;
            }
            let own = super::qualname_of(self.module, id);
            let defined_here = self
                .module
                .ast
                .body
                .iter()
                .any(|s| matches!(s, ast::Stmt::FunctionDef(f) if f.name.as_str() == id));
            if defined_here && !self.module.imports.contains_key(id) {
                return Some(own);
            }
        }
        let path = self.dotted_global(func)?;
        // A package a plugin covers is the plugin's to claim, even when its source sits in the
        // project (a vendored library).
        (self.index.functions.contains(&path) && !self.registry.covers(&path, self.enabled))
            .then_some(path)
    }

    /// A call of another function of the project, bound to its parameters by position and
    /// name; the argument types must equal the annotated parameter types.
    fn project_call(&mut self, callee: &str, c: &ast::ExprCall, at: Span) -> R<Expr> {
        let Some(sig) = self.index.signatures.get(callee).cloned() else {
            return Err(self.error(
                codes::CALLEE_NOT_NATIVE,
                at,
                format!("`{callee}` cannot be called natively: its parameters and return are not all annotated with supported types (or it has defaults, *args or **kwargs)"),
                None,
            ));
        };
        if c.arguments.args.len() > sig.params.len() {
            return Err(self.error(
                codes::CALLEE_NOT_NATIVE,
                at,
                format!(
                    "`{callee}` takes {} arguments, {} given (Python raises TypeError)",
                    sig.params.len(),
                    c.arguments.args.len()
                ),
                None,
            ));
        }
        let (positional, keywords) = self.call_args(c, at, None)?;
        let mut slots: Vec<Option<Expr>> = positional.into_iter().map(Some).collect();
        slots.resize(sig.params.len(), None);
        for (name, v) in keywords {
            let Some(i) = sig.params.iter().position(|(p, _)| *p == name) else {
                return Err(self.error(
                    codes::CALLEE_NOT_NATIVE,
                    at,
                    format!("`{callee}` has no parameter `{name}` (Python raises TypeError)"),
                    None,
                ));
            };
            if slots[i].is_some() {
                return Err(self.error(
                    codes::CALLEE_NOT_NATIVE,
                    at,
                    format!("`{callee}` got parameter `{name}` twice (Python raises TypeError)"),
                    None,
                ));
            }
            slots[i] = Some(v);
        }
        let mut args = Vec::new();
        for ((pname, pty), slot) in sig.params.iter().zip(slots) {
            let Some(v) = slot else {
                return Err(self.error(
                    codes::CALLEE_NOT_NATIVE,
                    at,
                    format!("`{callee}` is called without parameter `{pname}` (Python raises TypeError)"),
                    None,
                ));
            };
            if &v.ty != pty {
                // Python would pass the value as it is: an int where a float is annotated stays
                // an int inside the callee, which the native callee would not reproduce.
                return Err(self.error(
                    codes::CALLEE_NOT_NATIVE,
                    v.span,
                    format!("argument `{pname}` of `{callee}` is {} but the parameter is annotated {pty}", v.ty),
                    Some("pass a value of exactly the annotated type"),
                ));
            }
            args.push(v);
        }
        self.callees.insert(callee.to_owned());
        Ok(Expr {
            ty: sig.ret.clone(),
            kind: ExprKind::Call {
                callee: callee.to_owned(),
                args,
            },
            span: at,
        })
    }
}
