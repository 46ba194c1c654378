//! Statements to IR: assignments with one type per local, `if/elif/else`, `while`,
//! `for ... in range(...)`, `break`, `continue`, `return`.

use super::*;
use ruff_python_ast::visitor::{walk_expr, Visitor};

impl Fx<'_> {
    pub(super) fn block(&mut self, body: &[ast::Stmt]) -> Vec<Stmt> {
        // What is fresh is followed along straight-line code: a block starts knowing nothing
        // (it may run again, after its own statements), and after it only the outer fresh
        // locals it never mentions are still known to be fresh and unread (a block that neither
        // reads nor assigns a name can neither alias nor rebind it, however often it runs).
        let outer = std::mem::take(&mut self.fresh);
        let out = self.block_statements(body);
        let seen = mentioned(body);
        self.fresh = outer
            .into_iter()
            .filter(|(n, _)| !seen.contains(n.as_str()))
            .collect();
        out
    }

    fn block_statements(&mut self, body: &[ast::Stmt]) -> Vec<Stmt> {
        let mut out = Vec::new();
        for s in body {
            if let ast::Stmt::Assign(a) = s {
                if let [ast::Expr::Tuple(ast::ExprTuple { elts, .. })
                | ast::Expr::List(ast::ExprList { elts, .. })] = a.targets.as_slice()
                {
                    let at = self.span(s);
                    if let Ok(sts) = self.unpack(elts, &a.value, at) {
                        out.extend(sts);
                    }
                    continue;
                }
            }
            if let ast::Stmt::For(f) = s {
                let at = self.span(s);
                // The loops over module containers that become several statements.
                let written = self
                    .range_len_loop(f, at)
                    .or_else(|| self.zip_loop(f, at))
                    .or_else(|| self.for_enumerate(f, at));
                if let Some(sts) = written {
                    if let Ok(sts) = sts {
                        out.extend(sts);
                    }
                    continue;
                }
            }
            if let Ok(Some(st)) = self.stmt(s) {
                out.push(st);
            }
        }
        out
    }

    /// `for i, m in enumerate(<module list>[, start]):` is the module loop of
    /// [`Fx::for_modules`] counting as Python's `enumerate` does: a hidden int local set to
    /// `start` (default 0) before the loop, and at the top of each iteration
    /// `i = counter; counter = counter + 1`. `None` when the loop is not over `enumerate(...)`.
    fn for_enumerate(&mut self, f: &ast::StmtFor, at: Span) -> Option<R<Vec<Stmt>>> {
        let ast::Expr::Call(c) = f.iter.as_ref() else {
            return None;
        };
        if !self.is_builtin(&c.func, "enumerate") {
            return None;
        }
        let targets = target_names(f);
        let result = self.enumerate_loop(f, c, &targets, at);
        if result.is_err() {
            for n in targets {
                if !self.types.contains_key(n) {
                    self.poisoned.insert(n.to_owned());
                }
            }
        }
        Some(result)
    }

    /// `for i in range(len(self.layers)):` whose body never assigns `i`: the module loop with
    /// `i` counting from 0, where `self.layers[i]` is the element of the iteration (Python
    /// evaluates `len` once, and a compiled method cannot change the list). `None` when the
    /// loop is not of that form.
    fn range_len_loop(&mut self, f: &ast::StmtFor, at: Span) -> Option<R<Vec<Stmt>>> {
        let ast::Expr::Name(i) = f.target.as_ref() else {
            return None;
        };
        let builtin = |fx: &Self, c: &ast::ExprCall, name: &str| {
            fx.is_builtin(&c.func, name) && c.arguments.keywords.is_empty()
        };
        let ast::Expr::Call(range) = f.iter.as_ref() else {
            return None;
        };
        let [ast::Expr::Call(len)] = range.arguments.args.as_ref() else {
            return None;
        };
        let [list] = len.arguments.args.as_ref() else {
            return None;
        };
        if !builtin(self, range, "range") || !builtin(self, len, "len") || !f.orelse.is_empty() {
            return None;
        }
        let mut assigned = BTreeSet::new();
        super::collect_targets(&f.body, &mut assigned);
        if assigned.contains(i.id.as_str()) {
            return None;
        }
        let node = match self.member(list)? {
            Ok(classes::Member::Module(node)) if node.is_list() => node,
            Ok(_) => return None,
            Err(e) => return Some(Err(e)),
        };
        let index = i.id.as_str();
        self.unpack_count += 1;
        let var = format!("#item{}", self.unpack_count);
        let key = node.index_key(index);
        if let Some(m) = self.method.as_mut() {
            m.index_aliases.insert(key.clone(), var.clone());
        }
        let zero = Expr {
            ty: ValueType::Int,
            kind: ExprKind::Lit(Literal::Int(0)),
            span: at,
        };
        let result = self.counted_modules(f, index, &var, node, zero, at);
        if let Some(m) = self.method.as_mut() {
            m.index_aliases.remove(&key);
        }
        if result.is_err() && !self.types.contains_key(index) {
            self.poisoned.insert(index.to_owned());
        }
        Some(result)
    }

    /// `for a, b in zip(self.norms, self.layers):` over module containers whose lengths
    /// `__init__` states: the body written out once per element pair, in order, each name bound
    /// to its container's element (read live, as `self.norms[k]` is), for as many pairs as the
    /// shortest stated length (as `zip` stops), with each container's count checked at every
    /// call. A body that leaves the loop early (`break`, `continue`) is not written out.
    /// `None` when the loop is not over `zip(...)`.
    fn zip_loop(&mut self, f: &ast::StmtFor, at: Span) -> Option<R<Vec<Stmt>>> {
        let ast::Expr::Call(c) = f.iter.as_ref() else {
            return None;
        };
        if !self.is_builtin(&c.func, "zip") {
            return None;
        }
        self.method.as_ref()?;
        let names = target_names(f);
        let form = |fx: &mut Self, why: &str| {
            Some(Err(fx.error(
                codes::NON_RANGE_FOR,
                at,
                why.to_owned(),
                None,
            )))
        };
        let args = c.arguments.args.as_ref();
        if args.is_empty()
            || !c.arguments.keywords.is_empty()
            || names.len() != args.len()
            || !matches!(f.target.as_ref(), ast::Expr::Tuple(t) if t.elts.len() == names.len())
        {
            return form(
                self,
                "a loop over `zip(...)` of module lists binds one plain name per list",
            );
        }
        if !f.orelse.is_empty() || leaves_early(&f.body) {
            return form(
                self,
                "a loop over `zip(...)` is written out per element, so it may not `break`, `continue` or have an `else`",
            );
        }
        let mut nodes = Vec::new();
        for a in args {
            match self.member(a) {
                Some(Ok(classes::Member::Module(node))) => nodes.push(node),
                Some(Err(e)) => return Some(Err(e)),
                _ => {
                    return form(
                        self,
                        "a compiled method zips only module lists (`zip(self.norms, self.layers)`)",
                    )
                }
            }
        }
        Some(self.zipped(f, &names, nodes, at))
    }

    fn zipped(
        &mut self,
        f: &ast::StmtFor,
        names: &[&str],
        nodes: Vec<classes::Node>,
        at: Span,
    ) -> R<Vec<Stmt>> {
        let mut pairs = usize::MAX;
        for node in &nodes {
            pairs = pairs.min(self.stated_count(node, at)?);
        }
        let errors = |fx: &Self| {
            fx.diags
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .count()
        };
        let mut out = Vec::new();
        for k in 0..pairs {
            let before = errors(self);
            let mut prev = Vec::new();
            for (name, node) in names.iter().zip(&nodes) {
                let elem = self.element_at(node.clone(), k, at)?;
                prev.push(self.bind_node(name, Some(elem)));
            }
            out.extend(self.block(&f.body));
            for (name, p) in names.iter().zip(prev) {
                self.bind_node(name, p);
            }
            if errors(self) > before {
                // One copy's reasons are enough.
                return Err(Failed);
            }
        }
        Ok(out)
    }

    fn enumerate_loop(
        &mut self,
        f: &ast::StmtFor,
        c: &ast::ExprCall,
        targets: &[&str],
        at: Span,
    ) -> R<Vec<Stmt>> {
        self.plain_loop(f, at)?;
        let (index, var) = match (targets, f.target.as_ref()) {
            ([index, var], ast::Expr::Tuple(t)) if t.elts.len() == 2 && index != var => {
                (*index, *var)
            }
            _ => {
                return Err(self.error(
                    codes::NON_RANGE_FOR,
                    at,
                    "the target of a loop over `enumerate(...)` must be two plain names",
                    None,
                ))
            }
        };
        let start = match (c.arguments.args.as_ref(), c.arguments.keywords.as_ref()) {
            ([_], []) => None,
            ([_, s], []) => Some(s),
            ([_], [k]) if k.arg.as_ref().is_some_and(|a| a.as_str() == "start") => Some(&k.value),
            _ => {
                return Err(self.error(
                    codes::NON_RANGE_FOR,
                    at,
                    "`enumerate` is lowered with one module list and an optional int start",
                    None,
                ))
            }
        };
        let start = match start {
            Some(s) => {
                let e = self.expr(s)?;
                self.coerce_int(e)?
            }
            None => Expr {
                ty: ValueType::Int,
                kind: ExprKind::Lit(Literal::Int(0)),
                span: at,
            },
        };
        let node = match self.member(&c.arguments.args[0]) {
            Some(Ok(classes::Member::Module(node))) => node,
            Some(Err(e)) => return Err(e),
            None if self.method.is_none() => {
                return Err(self.error(
                    codes::NON_RANGE_FOR,
                    at,
                    "only `for name in range(...)` loops are lowered",
                    Some("iterate over range(...) with int bounds"),
                ))
            }
            _ => {
                return Err(self.error(
                    codes::MODULE_ATTRIBUTE,
                    at,
                    "a compiled method enumerates only module lists (`for i, m in enumerate(self.layers):`)",
                    None,
                ))
            }
        };
        self.counted_modules(f, index, var, node, start, at)
    }

    /// The module loop over `node` with `index` counting from `start` (see
    /// [`Fx::for_enumerate`]).
    fn counted_modules(
        &mut self,
        f: &ast::StmtFor,
        index: &str,
        var: &str,
        node: classes::Node,
        start: Expr,
        at: Span,
    ) -> R<Vec<Stmt>> {
        self.unpack_count += 1;
        let counter = format!("#enumerate{}", self.unpack_count);
        self.bind(&counter, &ValueType::Int, at)?;
        self.bind(index, &ValueType::Int, at)?;
        let mut looped = self.for_modules(f, var, node, at)?;
        let Stmt::ForEach { body, .. } = &mut looped else {
            return Err(Failed);
        };
        let local = |name: &str| Expr {
            ty: ValueType::Int,
            kind: ExprKind::Local(name.to_owned()),
            span: at,
        };
        let one = Expr {
            ty: ValueType::Int,
            kind: ExprKind::Lit(Literal::Int(1)),
            span: at,
        };
        body.splice(
            0..0,
            [
                Stmt::Assign {
                    name: index.to_owned(),
                    value: local(&counter),
                },
                Stmt::Assign {
                    name: counter.clone(),
                    value: Expr::scalar(
                        ValueType::Int,
                        ScalarOp::IntAdd,
                        vec![local(&counter), one],
                        at,
                    ),
                },
            ],
        );
        Ok(vec![
            Stmt::Assign {
                name: counter,
                value: start,
            },
            looped,
        ])
    }

    /// `a, b = value`: the whole right side is evaluated first (so `a, b = b, a` swaps) into a
    /// hidden tuple local, then each name takes its element.
    fn unpack(&mut self, targets: &[ast::Expr], value: &ast::Expr, at: Span) -> R<Vec<Stmt>> {
        let mut names = Vec::new();
        for t in targets {
            let ast::Expr::Name(n) = t else {
                for t in targets {
                    if let ast::Expr::Name(n) = t {
                        self.poisoned.insert(n.id.as_str().to_owned());
                    }
                }
                return Err(self.error(
                    codes::UNSUPPORTED_STATEMENT,
                    at,
                    "tuple unpacking into anything but plain names is not lowered",
                    None,
                ));
            };
            names.push(n.id.as_str().to_owned());
        }
        let poison = |fx: &mut Self| {
            for n in &names {
                if !fx.types.contains_key(n) {
                    fx.poisoned.insert(n.clone());
                }
            }
        };
        let v = match self.expr(value) {
            Ok(v) => v,
            Err(f) => {
                poison(self);
                return Err(f);
            }
        };
        let ValueType::Tuple(items) = v.ty.clone() else {
            poison(self);
            let msg = format!("cannot unpack a {} value into {} names", v.ty, names.len());
            return Err(self.error(codes::UNSUPPORTED_STATEMENT, at, msg, None));
        };
        if items.len() != names.len() {
            poison(self);
            let msg = format!(
                "unpacking {} values into {} names raises ValueError in Python",
                items.len(),
                names.len()
            );
            return Err(self.error(codes::UNSUPPORTED_STATEMENT, at, msg, None));
        }
        self.unpack_count += 1;
        let tmp = format!("#tuple{}", self.unpack_count);
        self.bind(&tmp, &v.ty, at)?;
        let mut out = vec![Stmt::Assign {
            name: tmp.clone(),
            value: v.clone(),
        }];
        for (i, (name, ty)) in names.iter().zip(items).enumerate() {
            if self.bind(name, &ty, at).is_err() {
                poison(self);
                return Err(Failed);
            }
            out.push(Stmt::Assign {
                name: name.clone(),
                value: Expr {
                    ty: ty.clone(),
                    kind: ExprKind::TupleGet(
                        Box::new(Expr {
                            ty: v.ty.clone(),
                            kind: ExprKind::Local(tmp.clone()),
                            span: at,
                        }),
                        i,
                    ),
                    span: at,
                },
            });
        }
        Ok(out)
    }

    pub(super) fn bind(&mut self, name: &str, ty: &ValueType, at: Span) -> R<()> {
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
            Some(_) => {
                self.fresh.remove(name);
                Ok(())
            }
            None => {
                self.fresh.remove(name);
                self.types.insert(name.to_owned(), ty.clone());
                self.order.push((name.to_owned(), ty.clone()));
                Ok(())
            }
        }
    }

    /// `name op= value` on a plugin value: a site of operator `op=` (plugin API 1.17) whose
    /// result `name` is rebound to. Its left operand is [`Operand::private`] when `name` holds a
    /// fresh result read nowhere since and `value` either does not read it or is itself a fresh
    /// result (which shares nothing with it): the plugin decides what the framework's in-place
    /// update means (torch writes the tensor; TensorFlow, whose tensors are immutable, rebinds
    /// the name).
    fn augmented(
        &mut self,
        name: &str,
        n: &ast::ExprName,
        a: &ast::StmtAugAssign,
        at: Span,
    ) -> R<Stmt> {
        let unread = self.fresh.get(name) == Some(&false);
        let reads = reads_of(&a.value, name);
        let target = self.name(n);
        let value = self.expr(&a.value);
        let v = match (target, value) {
            (Ok(t), Ok(v)) => {
                if unread && (reads == 0 || self.fresh_value(&v)) {
                    self.consuming.insert(name.to_owned());
                }
                self.site(
                    SiteKind::BinOp,
                    format!("{}=", a.op.as_str()),
                    None,
                    vec![t, v],
                    Vec::new(),
                    at,
                )
            }
            _ => Err(Failed),
        };
        self.consuming.clear();
        self.rebind(name, v?, at)
    }

    /// `name = v`: bound with `v`'s type, and fresh (unread) when `v` is a fresh result.
    fn rebind(&mut self, name: &str, v: Expr, at: Span) -> R<Stmt> {
        self.bind(name, &v.ty, at)?;
        if self.fresh_value(&v) {
            self.fresh.insert(name.to_owned(), false);
        }
        Ok(Stmt::Assign {
            name: name.to_owned(),
            value: v,
        })
    }

    pub(super) fn assign(&mut self, name: &str, value: &ast::Expr, at: Span) -> R<Stmt> {
        // `h = f(h)` with `h` fresh and unread: its one read may be a private operand, as no
        // name refers to the old value once `h` is rebound.
        self.consume(value, |n| n == name);
        let v = self.expr(value);
        self.consuming.clear();
        let v = match v {
            Ok(v) => v,
            Err(f) => {
                if !self.types.contains_key(name) {
                    self.poisoned.insert(name.to_owned());
                }
                return Err(f);
            }
        };
        self.rebind(name, v, at)
    }

    /// Marks as [`Fx::consuming`] the fresh, unread locals that `pick` accepts and that
    /// `value` reads exactly once.
    fn consume(&mut self, value: &ast::Expr, pick: impl Fn(&str) -> bool) {
        let candidates: Vec<String> = self
            .fresh
            .iter()
            .filter(|(n, read)| !**read && pick(n))
            .map(|(n, _)| n.clone())
            .collect();
        for n in candidates {
            if reads_of(value, &n) == 1 {
                self.consuming.insert(n);
            }
        }
    }

    pub(super) fn stmt(&mut self, s: &ast::Stmt) -> R<Option<Stmt>> {
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
                    return self.augmented(name, n, a, at).map(Some);
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
                // Nothing reads a local after `return`: each fresh one read once may be private.
                self.consume(v, |_| true);
                let v = self.expr(v);
                self.consuming.clear();
                Ok(Some(Stmt::Return(v?)))
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

    pub(super) fn elif_chain(&mut self, clauses: &[ast::ElifElseClause]) -> Vec<Stmt> {
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

    /// A `for` loop without `async` or an `else` clause, else its reason.
    fn plain_loop(&mut self, f: &ast::StmtFor, at: Span) -> R<()> {
        if f.is_async || !f.orelse.is_empty() {
            return Err(self.error(
                codes::UNSUPPORTED_STATEMENT,
                at,
                "`async for` and `for ... else` are not lowered",
                None,
            ));
        }
        Ok(())
    }

    pub(super) fn for_range(&mut self, f: &ast::StmtFor, at: Span) -> R<Stmt> {
        self.plain_loop(f, at)?;
        let ast::Expr::Name(var) = f.target.as_ref() else {
            return Err(self.error(
                codes::NON_RANGE_FOR,
                at,
                "the loop target must be one plain name",
                None,
            ));
        };
        if let Some(m) = self.member(&f.iter) {
            return match m? {
                classes::Member::Module(node) => self.for_modules(f, var.id.as_str(), node, at),
                _ => Err(self.error(
                    codes::MODULE_ATTRIBUTE,
                    at,
                    "a compiled method iterates only module lists (`for m in self.layers:`)",
                    None,
                )),
            };
        }
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
}

/// Whether `body` leaves its loop other than by finishing an iteration (`break` or `continue`
/// at its level; a nested loop's own do not count).
fn leaves_early(body: &[ast::Stmt]) -> bool {
    body.iter().any(|s| match s {
        ast::Stmt::Break(_) | ast::Stmt::Continue(_) => true,
        ast::Stmt::If(i) => {
            leaves_early(&i.body) || i.elif_else_clauses.iter().any(|c| leaves_early(&c.body))
        }
        ast::Stmt::With(w) => leaves_early(&w.body),
        ast::Stmt::Try(t) => {
            leaves_early(&t.body)
                || leaves_early(&t.orelse)
                || leaves_early(&t.finalbody)
                || t.handlers.iter().any(|h| {
                    let ast::ExceptHandler::ExceptHandler(h) = h;
                    leaves_early(&h.body)
                })
        }
        _ => false,
    })
}

/// The plain names of a `for` loop's tuple target (`for a, b in ...`), in order; empty for any
/// other target.
fn target_names(f: &ast::StmtFor) -> Vec<&str> {
    match f.target.as_ref() {
        ast::Expr::Tuple(t) => t
            .elts
            .iter()
            .filter_map(|e| match e {
                ast::Expr::Name(n) => Some(n.id.as_str()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Every name `body` mentions anywhere (loads and stores, nested expressions included).
fn mentioned(body: &[ast::Stmt]) -> BTreeSet<String> {
    struct Names(BTreeSet<String>);
    impl<'a> Visitor<'a> for Names {
        fn visit_expr(&mut self, e: &'a ast::Expr) {
            if let ast::Expr::Name(n) = e {
                self.0.insert(n.id.as_str().to_owned());
            }
            walk_expr(self, e);
        }
    }
    let mut v = Names(BTreeSet::new());
    for s in body {
        v.visit_stmt(s);
    }
    v.0
}

/// How many times `e` mentions the name `name` (loads, and stores of a walrus or comprehension).
fn reads_of(e: &ast::Expr, name: &str) -> usize {
    struct Count<'n> {
        name: &'n str,
        n: usize,
    }
    impl<'a> Visitor<'a> for Count<'_> {
        fn visit_expr(&mut self, e: &'a ast::Expr) {
            if let ast::Expr::Name(n) = e {
                if n.id.as_str() == self.name {
                    self.n += 1;
                }
            }
            walk_expr(self, e);
        }
    }
    let mut c = Count { name, n: 0 };
    c.visit_expr(e);
    c.n
}
