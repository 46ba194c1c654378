//! Statements to IR: assignments with one type per local, `if/elif/else`, `while`,
//! `for ... in range(...)`, `break`, `continue`, `return`.

use super::*;

impl Fx<'_> {
    pub(super) fn block(&mut self, body: &[ast::Stmt]) -> Vec<Stmt> {
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
            if let Ok(Some(st)) = self.stmt(s) {
                out.push(st);
            }
        }
        out
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
            Some(_) => Ok(()),
            None => {
                self.types.insert(name.to_owned(), ty.clone());
                self.order.push((name.to_owned(), ty.clone()));
                Ok(())
            }
        }
    }

    pub(super) fn assign(&mut self, name: &str, value: &ast::Expr, at: Span) -> R<Stmt> {
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

    pub(super) fn for_range(&mut self, f: &ast::StmtFor, at: Span) -> R<Stmt> {
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
