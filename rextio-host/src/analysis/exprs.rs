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

    pub(super) fn unary(&mut self, op: ast::UnaryOp, v: Expr, at: Span) -> R<Expr> {
        if let ValueType::Plugin(k) = &v.ty {
            let msg = format!("unary operator on a plugin value ({k}) is not lowered");
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
