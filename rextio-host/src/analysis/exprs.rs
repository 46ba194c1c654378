//! Typing of expressions the host lowers itself: names, literals, scalar operators with Python
//! semantics, comparisons and truthiness.

use super::*;

impl Fx<'_> {
    pub(super) fn coerce_int(&mut self, e: Expr) -> R<Expr> {
        match e.ty {
            ValueType::Int => Ok(e),
            ValueType::Bool => {
                let span = e.span;
                Ok(Expr::scalar(
                    ValueType::Int,
                    ScalarOp::BoolToInt,
                    vec![e],
                    span,
                ))
            }
            ref other => {
                let msg = format!("expected an int, found {other}");
                Err(self.error(codes::SCALAR_OPERATION, e.span, msg, None))
            }
        }
    }

    pub(super) fn coerce_float(&mut self, e: Expr) -> R<Expr> {
        match e.ty {
            ValueType::Float => Ok(e),
            ValueType::Int | ValueType::Bool => {
                let span = e.span;
                let i = self.coerce_int(e)?;
                Ok(Expr::scalar(
                    ValueType::Float,
                    ScalarOp::IntToFloat,
                    vec![i],
                    span,
                ))
            }
            ref other => {
                let msg = format!("expected a number, found {other}");
                Err(self.error(codes::SCALAR_OPERATION, e.span, msg, None))
            }
        }
    }

    /// Truthiness of a condition as a bool expression.
    pub(super) fn truthy(&mut self, e: Expr) -> R<Expr> {
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
        Ok(Expr::scalar(ValueType::Bool, op, vec![e], span))
    }

    pub(super) fn condition(&mut self, e: &ast::Expr) -> R<Expr> {
        let v = self.expr(e)?;
        self.truthy(v)
    }

    pub(super) fn name(&mut self, n: &ast::ExprName) -> R<Expr> {
        let at = self.span(n);
        let id = n.id.as_str();
        if let Some(m) = self.member(&ast::Expr::Name(n.clone())) {
            m?;
            return Err(self.error(
                codes::MODULE_ATTRIBUTE,
                at,
                format!("`{id}` (a module) is used as a value; compiled methods read its attributes or call it"),
                None,
            ));
        }
        if self.local_names.contains(id) {
            if self.poisoned.contains(id) {
                return Err(Failed);
            }
            if let Some(read) = self.fresh.get_mut(id) {
                *read = true;
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
        if let Some(v) = self.module.constants.values.get(id) {
            return Ok(const_expr(v, at));
        }
        // A constant imported from another module of the project.
        if let Some(v) = self
            .module
            .imports
            .get(id)
            .and_then(|path| self.index.constants.get(path))
        {
            return Ok(const_expr(v, at));
        }
        let why = match self.module.constants.refused.get(id) {
            Some(crate::constants::NotConstant::Rebound) => {
                format!("`{id}` is bound more than once at module level, so it may change at run time")
            }
            Some(crate::constants::NotConstant::DeclaredGlobal(f)) => {
                format!("`{id}` is declared `global` in `{f}`, so it may change at run time")
            }
            Some(crate::constants::NotConstant::NotConstantExpr) => format!(
                "`{id}` is a module global whose value is not a constant expression of int, float, bool or str literals"
            ),
            None => format!(
                "`{id}` is a global or builtin name; native functions read only their parameters, locals and module constants"
            ),
        };
        Err(self.error(
            codes::UNBOUND_NAME,
            at,
            why,
            Some("pass the value as a parameter, or bind it once at module level to a constant"),
        ))
    }

    pub(super) fn literal(&mut self, e: &ast::Expr) -> Option<R<Literal>> {
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

    pub(super) fn expr(&mut self, e: &ast::Expr) -> R<Expr> {
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
                        Some(prev) => Expr::scalar(ValueType::Bool, op, vec![prev, v], at),
                    });
                }
                out.ok_or(Failed)
            }
            ast::Expr::Compare(c) => self.compare(c, at),
            ast::Expr::Call(c) => self.call(c, at),
            ast::Expr::Attribute(a) => self.attribute(a, at),
            ast::Expr::Subscript(sub) => self.subscript(sub, at),
            ast::Expr::Tuple(t) => self.sequence(&t.elts, at),
            // Only a direct argument of a plugin site may be a list (see `Fx::site_arg`).
            ast::Expr::List(_) => Err(self.error(
                codes::UNSUPPORTED_EXPRESSION,
                at,
                "a list literal is lowered only as a direct argument of a plugin operation",
                Some("write the list in the call (`torch.cat([a, b])`), or bind a tuple instead (`xs = (a, b)`)"),
            )),
            other => {
                let (what, help) = match other {
                    ast::Expr::ListComp(_)
                    | ast::Expr::SetComp(_)
                    | ast::Expr::DictComp(_)
                    | ast::Expr::Generator(_) => (
                        "a comprehension is not lowered",
                        Some("write a `for` loop that accumulates into a local"),
                    ),
                    ast::Expr::Lambda(_) => ("a lambda is not lowered", None),
                    ast::Expr::If(_) => (
                        "a conditional expression (`a if c else b`) is not lowered",
                        Some("write an `if` statement"),
                    ),
                    ast::Expr::Dict(_) | ast::Expr::Set(_) => {
                        ("a dict or set display is not lowered", None)
                    }
                    ast::Expr::Starred(_) => ("a starred expression is not lowered", None),
                    ast::Expr::FString(_) => ("an f-string is not lowered", None),
                    _ => ("this expression form is not lowered", None),
                };
                Err(self.error(codes::UNSUPPORTED_EXPRESSION, at, what, help))
            }
        }
    }

    /// The elements of a tuple display (or of a list literal offered to a plugin as a tuple),
    /// each evaluated, as one tuple-typed expression.
    pub(super) fn sequence(&mut self, elts: &[ast::Expr], at: Span) -> R<Expr> {
        let mut items = Vec::new();
        let mut failed = false;
        for x in elts {
            if matches!(x, ast::Expr::Starred(_)) {
                return Err(self.error(
                    codes::UNSUPPORTED_EXPRESSION,
                    at,
                    "starred elements are not lowered",
                    None,
                ));
            }
            match self.expr(x) {
                Ok(v) => items.push(v),
                Err(_) => failed = true,
            }
        }
        if failed {
            return Err(Failed);
        }
        Ok(Expr {
            ty: ValueType::Tuple(items.iter().map(|i| i.ty.clone()).collect()),
            kind: ExprKind::Tuple(items),
            span: at,
        })
    }

    pub(super) fn unary(&mut self, op: ast::UnaryOp, v: Expr, at: Span) -> R<Expr> {
        if let ValueType::Plugin(k) = &v.ty {
            // `-t` is `operator.neg(t)` for every Python object: offered to the plugin owning
            // the type as that call, as `abs(t)` is offered as `builtins.abs`.
            if op == ast::UnaryOp::USub {
                return self.site(
                    SiteKind::Call,
                    NEG_TARGET.to_owned(),
                    None,
                    vec![v],
                    Vec::new(),
                    at,
                );
            }
            let msg = format!(
                "unary operator `{}` on a plugin value ({k}) is not lowered",
                op.as_str()
            );
            return Err(self.error(codes::UNSUPPORTED_EXPRESSION, at, msg, None));
        }
        match op {
            ast::UnaryOp::Not => {
                let b = self.truthy(v)?;
                Ok(Expr::scalar(ValueType::Bool, ScalarOp::Not, vec![b], at))
            }
            ast::UnaryOp::USub => match v.ty {
                ValueType::Float => Ok(Expr::scalar(
                    ValueType::Float,
                    ScalarOp::FloatNeg,
                    vec![v],
                    at,
                )),
                _ => {
                    let i = self.coerce_int(v)?;
                    Ok(Expr::scalar(ValueType::Int, ScalarOp::IntNeg, vec![i], at))
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

    pub(super) fn binop(&mut self, l: Expr, op: ast::Operator, r: Expr, at: Span) -> R<Expr> {
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

    pub(super) fn compare(&mut self, c: &ast::ExprCompare, at: Span) -> R<Expr> {
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
                    Expr::scalar(ValueType::Bool, ScalarOp::Cmp(kind), vec![l, r], at)
                };
            out = Some(match out {
                None => cmp,
                Some(prev) => Expr::scalar(ValueType::Bool, ScalarOp::And, vec![prev, cmp], at),
            });
        }
        out.ok_or(Failed)
    }
}

/// The expression of a module constant.
pub(super) fn const_expr(v: &crate::constants::ConstValue, at: Span) -> Expr {
    let lit = |l: &Literal| Expr {
        ty: lit_type(l),
        kind: ExprKind::Lit(l.clone()),
        span: at,
    };
    match v {
        crate::constants::ConstValue::Scalar(l) => lit(l),
        crate::constants::ConstValue::Tuple(items) => Expr {
            ty: ValueType::Tuple(items.iter().map(lit_type).collect()),
            kind: ExprKind::Tuple(items.iter().map(lit).collect()),
            span: at,
        },
    }
}

impl Fx<'_> {
    /// `value.name`: on a plugin value, an attribute site offered to the plugins.
    pub(super) fn attribute(&mut self, a: &ast::ExprAttribute, at: Span) -> R<Expr> {
        if let Some(m) = self.member(&ast::Expr::Attribute(a.clone())) {
            return match m? {
                classes::Member::Value(v) => Ok(v),
                classes::Member::Module(_)
                | classes::Member::Method(_)
                | classes::Member::Super { .. } => Err(self.error(
                    codes::MODULE_ATTRIBUTE,
                    at,
                    format!(
                        "`.{}` is a submodule or method used as a value; compiled methods call it",
                        a.attr
                    ),
                    None,
                )),
            };
        }
        if let Some(path) = self.dotted_global(&ast::Expr::Attribute(a.clone())) {
            if let Some(v) = self.index.constants.get(&path) {
                return Ok(const_expr(v, at));
            }
            return Err(self.error(
                codes::UNSUPPORTED_EXPRESSION,
                at,
                format!("reading the module attribute `{path}` is not lowered"),
                Some("bind the value to a module constant, or pass it as a parameter"),
            ));
        }
        let recv = self.expr(&a.value)?;
        if !matches!(recv.ty, ValueType::Plugin(_)) {
            return Err(self.error(
                codes::UNSUPPORTED_EXPRESSION,
                at,
                format!(
                    "attribute read `.{}` on a {} value is not lowered",
                    a.attr.as_str(),
                    recv.ty
                ),
                None,
            ));
        }
        self.site(
            SiteKind::Attribute,
            a.attr.as_str().to_owned(),
            Some(recv),
            Vec::new(),
            Vec::new(),
            at,
        )
    }

    /// `value[index]` on a tuple with a static int index (negative counts from the end).
    pub(super) fn subscript(&mut self, sub: &ast::ExprSubscript, at: Span) -> R<Expr> {
        let value = self.expr(&sub.value)?;
        let ValueType::Tuple(items) = &value.ty else {
            return Err(self.error(
                codes::UNSUPPORTED_EXPRESSION,
                at,
                format!("subscripts of {} values are not lowered", value.ty),
                Some("only tuples with a constant index (`x.shape[0]`, `pair[-1]`) are"),
            ));
        };
        let index = match self.expr(&sub.slice)? {
            Expr {
                kind: ExprKind::Lit(Literal::Int(i)),
                ..
            } => i,
            other => {
                return Err(self.error(
                    codes::UNSUPPORTED_EXPRESSION,
                    at,
                    format!(
                        "a tuple index must be an int literal or constant, found {}",
                        other.ty
                    ),
                    None,
                ))
            }
        };
        let len = items.len() as i64;
        let norm = if index < 0 { index + len } else { index };
        if !(0..len).contains(&norm) {
            // Python raises IndexError here; a native function never does.
            return Err(self.error(
                codes::UNSUPPORTED_EXPRESSION,
                at,
                format!(
                    "index {index} is out of range for a tuple of {len} (Python raises IndexError)"
                ),
                None,
            ));
        }
        let ty = items[norm as usize].clone();
        Ok(Expr {
            ty,
            kind: ExprKind::TupleGet(Box::new(value), norm as usize),
            span: at,
        })
    }
}
