//! Module constants: module-level names bound exactly once to a literal, a tuple of literals, or
//! a constant expression of them (`HIDDEN * 2`, `-1e-5`), with or without an annotation
//! (`Final` included). Native functions read them as compile-time values. A name bound more than
//! once anywhere at module level, deleted, imported, defined by `def`/`class`, or declared
//! `global` in any function is not a constant: it can change at run time.

use rextio_plugin_api::Literal;
use ruff_python_ast as ast;
use std::collections::{BTreeMap, BTreeSet};

/// A constant's value.
#[derive(Debug, Clone, PartialEq)]
pub enum ConstValue {
    /// An int, float, bool or str.
    Scalar(Literal),
    /// A tuple of scalars.
    Tuple(Vec<Literal>),
}

/// Why a module-level name is not a constant (for the diagnostic of a function that reads it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotConstant {
    /// Bound more than once at module level, or also imported / defined.
    Rebound,
    /// Declared `global` in a function, which may rebind it at run time.
    DeclaredGlobal(String),
    /// Its value is not a constant expression the host evaluates.
    NotConstantExpr,
}

/// The constants of one module, and the module-level names that are not.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModuleConstants {
    /// Name -> value.
    pub values: BTreeMap<String, ConstValue>,
    /// Module-level names that look like constants but are not, with the reason.
    pub refused: BTreeMap<String, NotConstant>,
}

fn count_bindings(body: &[ast::Stmt], counts: &mut BTreeMap<String, usize>) {
    let bump = |n: &str, counts: &mut BTreeMap<String, usize>| {
        *counts.entry(n.to_owned()).or_default() += 1;
    };
    fn targets(e: &ast::Expr, out: &mut Vec<String>) {
        match e {
            ast::Expr::Name(n) => out.push(n.id.as_str().to_owned()),
            ast::Expr::Tuple(t) => t.elts.iter().for_each(|x| targets(x, out)),
            ast::Expr::List(t) => t.elts.iter().for_each(|x| targets(x, out)),
            ast::Expr::Starred(s) => targets(&s.value, out),
            _ => {}
        }
    }
    for s in body {
        let mut names = Vec::new();
        match s {
            ast::Stmt::Assign(a) => a.targets.iter().for_each(|t| targets(t, &mut names)),
            ast::Stmt::AnnAssign(a) if a.value.is_some() => targets(&a.target, &mut names),
            ast::Stmt::AugAssign(a) => targets(&a.target, &mut names),
            ast::Stmt::Delete(d) => d.targets.iter().for_each(|t| targets(t, &mut names)),
            ast::Stmt::FunctionDef(f) => names.push(f.name.as_str().to_owned()),
            ast::Stmt::ClassDef(c) => names.push(c.name.as_str().to_owned()),
            ast::Stmt::Import(i) => {
                for a in &i.names {
                    let n = a.asname.as_ref().unwrap_or(&a.name);
                    names.push(n.as_str().split('.').next().unwrap_or("").to_owned());
                }
            }
            ast::Stmt::ImportFrom(i) => {
                for a in &i.names {
                    names.push(a.asname.as_ref().unwrap_or(&a.name).as_str().to_owned());
                }
            }
            ast::Stmt::For(f) => {
                targets(&f.target, &mut names);
                count_bindings(&f.body, counts);
                count_bindings(&f.orelse, counts);
            }
            ast::Stmt::While(w) => {
                count_bindings(&w.body, counts);
                count_bindings(&w.orelse, counts);
            }
            ast::Stmt::If(i) => {
                count_bindings(&i.body, counts);
                for c in &i.elif_else_clauses {
                    count_bindings(&c.body, counts);
                }
            }
            ast::Stmt::With(w) => {
                for item in &w.items {
                    if let Some(v) = &item.optional_vars {
                        targets(v, &mut names);
                    }
                }
                count_bindings(&w.body, counts);
            }
            ast::Stmt::Try(t) => {
                count_bindings(&t.body, counts);
                for h in &t.handlers {
                    let ast::ExceptHandler::ExceptHandler(h) = h;
                    if let Some(n) = &h.name {
                        names.push(n.as_str().to_owned());
                    }
                    count_bindings(&h.body, counts);
                }
                count_bindings(&t.orelse, counts);
                count_bindings(&t.finalbody, counts);
            }
            _ => {}
        }
        for n in names {
            bump(&n, counts);
        }
    }
}

/// Names declared `global` in any function or class body of the module (nested included).
fn declared_global(body: &[ast::Stmt], out: &mut BTreeMap<String, String>, owner: Option<&str>) {
    for s in body {
        match s {
            ast::Stmt::Global(g) => {
                for n in &g.names {
                    out.entry(n.as_str().to_owned())
                        .or_insert_with(|| owner.unwrap_or("<module>").to_owned());
                }
            }
            ast::Stmt::FunctionDef(f) => declared_global(&f.body, out, Some(f.name.as_str())),
            ast::Stmt::ClassDef(c) => declared_global(&c.body, out, Some(c.name.as_str())),
            ast::Stmt::For(f) => {
                declared_global(&f.body, out, owner);
                declared_global(&f.orelse, out, owner);
            }
            ast::Stmt::While(w) => {
                declared_global(&w.body, out, owner);
                declared_global(&w.orelse, out, owner);
            }
            ast::Stmt::If(i) => {
                declared_global(&i.body, out, owner);
                for c in &i.elif_else_clauses {
                    declared_global(&c.body, out, owner);
                }
            }
            ast::Stmt::With(w) => declared_global(&w.body, out, owner),
            ast::Stmt::Try(t) => {
                declared_global(&t.body, out, owner);
                for h in &t.handlers {
                    let ast::ExceptHandler::ExceptHandler(h) = h;
                    declared_global(&h.body, out, owner);
                }
                declared_global(&t.orelse, out, owner);
                declared_global(&t.finalbody, out, owner);
            }
            _ => {}
        }
    }
}

/// Evaluate a constant expression with Python semantics; `None` when it is not one (or would
/// raise, overflow 64 bits, or produce a value the host does not represent).
fn eval(e: &ast::Expr, known: &BTreeMap<String, ConstValue>) -> Option<ConstValue> {
    use ConstValue::Scalar as S;
    Some(match e {
        ast::Expr::NumberLiteral(n) => match &n.value {
            ast::Number::Int(i) => S(Literal::Int(i.as_i64()?)),
            ast::Number::Float(f) => S(Literal::Float(*f)),
            ast::Number::Complex { .. } => return None,
        },
        ast::Expr::BooleanLiteral(b) => S(Literal::Bool(b.value)),
        ast::Expr::StringLiteral(s) => S(Literal::Str(s.value.to_str().to_owned())),
        ast::Expr::Name(n) => known.get(n.id.as_str())?.clone(),
        ast::Expr::Tuple(t) => {
            let mut items = Vec::new();
            for x in &t.elts {
                match eval(x, known)? {
                    S(l) => items.push(l),
                    ConstValue::Tuple(_) => return None,
                }
            }
            ConstValue::Tuple(items)
        }
        ast::Expr::UnaryOp(u) => {
            let S(v) = eval(&u.operand, known)? else {
                return None;
            };
            S(match (u.op, v) {
                (ast::UnaryOp::USub, Literal::Int(i)) => Literal::Int(i.checked_neg()?),
                (ast::UnaryOp::USub, Literal::Float(f)) => Literal::Float(-f),
                (ast::UnaryOp::UAdd, l @ (Literal::Int(_) | Literal::Float(_))) => l,
                (ast::UnaryOp::Not, Literal::Bool(b)) => Literal::Bool(!b),
                _ => return None,
            })
        }
        ast::Expr::BinOp(b) => {
            let (S(l), S(r)) = (eval(&b.left, known)?, eval(&b.right, known)?) else {
                return None;
            };
            S(binop(l, b.op, r)?)
        }
        _ => return None,
    })
}

fn num(l: &Literal) -> Option<f64> {
    match l {
        Literal::Int(i) => Some(*i as f64),
        Literal::Float(f) => Some(*f),
        _ => None,
    }
}

fn binop(l: Literal, op: ast::Operator, r: Literal) -> Option<Literal> {
    use ast::Operator as O;
    Some(match (l, r) {
        (Literal::Int(a), Literal::Int(b)) => match op {
            O::Add => Literal::Int(a.checked_add(b)?),
            O::Sub => Literal::Int(a.checked_sub(b)?),
            O::Mult => Literal::Int(a.checked_mul(b)?),
            O::FloorDiv => {
                let q = a.checked_div(b)?;
                Literal::Int(if (a % b != 0) && ((a < 0) != (b < 0)) {
                    q - 1
                } else {
                    q
                })
            }
            O::Mod => {
                let m = a.checked_rem(b)?;
                Literal::Int(if m != 0 && ((m < 0) != (b < 0)) {
                    m + b
                } else {
                    m
                })
            }
            // int / int is a float in Python; only exactly representable operands are folded.
            O::Div if b != 0 && a.unsigned_abs() < (1 << 53) && b.unsigned_abs() < (1 << 53) => {
                Literal::Float(a as f64 / b as f64)
            }
            _ => return None,
        },
        (a @ (Literal::Int(_) | Literal::Float(_)), b @ (Literal::Int(_) | Literal::Float(_))) => {
            let big = |v: &Literal| matches!(v, Literal::Int(i) if i.unsigned_abs() >= (1 << 53));
            if big(&a) || big(&b) {
                return None;
            }
            let (x, y) = (num(&a)?, num(&b)?);
            Literal::Float(match op {
                O::Add => x + y,
                O::Sub => x - y,
                O::Mult => x * y,
                O::Div if y != 0.0 => x / y,
                _ => return None,
            })
        }
        _ => return None,
    })
}

/// The constants of a module body, in source order (a constant may use earlier ones).
pub fn module_constants(body: &[ast::Stmt]) -> ModuleConstants {
    let mut counts = BTreeMap::new();
    count_bindings(body, &mut counts);
    let mut globals = BTreeMap::new();
    declared_global(body, &mut globals, None);
    let mut out = ModuleConstants::default();
    let mut seen = BTreeSet::new();
    for s in body {
        let (name, value) = match s {
            ast::Stmt::Assign(a) => match a.targets.as_slice() {
                [ast::Expr::Name(n)] => (n.id.as_str(), a.value.as_ref()),
                _ => continue,
            },
            ast::Stmt::AnnAssign(a) => match (a.target.as_ref(), &a.value) {
                (ast::Expr::Name(n), Some(v)) => (n.id.as_str(), v.as_ref()),
                _ => continue,
            },
            _ => continue,
        };
        if !seen.insert(name.to_owned()) {
            continue;
        }
        if counts.get(name).copied().unwrap_or(0) != 1 {
            out.refused.insert(name.to_owned(), NotConstant::Rebound);
            continue;
        }
        if let Some(f) = globals.get(name) {
            out.refused
                .insert(name.to_owned(), NotConstant::DeclaredGlobal(f.clone()));
            continue;
        }
        match eval(value, &out.values) {
            Some(v) => {
                out.values.insert(name.to_owned(), v);
            }
            None => {
                out.refused
                    .insert(name.to_owned(), NotConstant::NotConstantExpr);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn consts(src: &str) -> ModuleConstants {
        let parsed = ruff_python_parser::parse_module(src).unwrap_or_else(|e| panic!("{e:?}"));
        module_constants(&parsed.into_syntax().body)
    }

    #[test]
    fn literals_tuples_and_constant_expressions_fold_with_python_semantics() {
        let c = consts(
            "from typing import Final\nHIDDEN = 16\nWIDE: Final = HIDDEN * 2\nEPS: float = -1e-5\nON = True\nNAME = 'x'\nSHAPE = (HIDDEN, 3)\nQ = -7 // 2\nM = -7 % 3\nH = HIDDEN / 3\nMIX = HIDDEN + 0.5\n",
        );
        let s = |n: &str| c.values.get(n).cloned();
        assert_eq!(s("HIDDEN"), Some(ConstValue::Scalar(Literal::Int(16))));
        assert_eq!(s("WIDE"), Some(ConstValue::Scalar(Literal::Int(32))));
        assert_eq!(s("EPS"), Some(ConstValue::Scalar(Literal::Float(-1e-5))));
        assert_eq!(s("ON"), Some(ConstValue::Scalar(Literal::Bool(true))));
        assert_eq!(
            s("NAME"),
            Some(ConstValue::Scalar(Literal::Str("x".into())))
        );
        assert_eq!(
            s("SHAPE"),
            Some(ConstValue::Tuple(vec![Literal::Int(16), Literal::Int(3)]))
        );
        assert_eq!(s("Q"), Some(ConstValue::Scalar(Literal::Int(-4))));
        assert_eq!(s("M"), Some(ConstValue::Scalar(Literal::Int(2))));
        assert_eq!(s("H"), Some(ConstValue::Scalar(Literal::Float(16.0 / 3.0))));
        assert_eq!(s("MIX"), Some(ConstValue::Scalar(Literal::Float(16.5))));
        assert!(!c.values.contains_key("Final"));
    }

    #[test]
    fn names_that_can_change_are_not_constants() {
        let c = consts(
            "A = 1\nA = 2\nB = 1\nB += 1\nC = 3\ndef f():\n    global C\n    C = 4\nD = 1\nfor D in range(3):\n    pass\nE = [1]\nF = 1 // 0\nG = 2 ** 70\nI = 9223372036854775807 + 1\nJ = 1\ndel J\nK = 1\nimport K\n",
        );
        assert!(c.values.is_empty(), "{:?}", c.values);
        assert_eq!(c.refused["A"], NotConstant::Rebound);
        assert_eq!(c.refused["B"], NotConstant::Rebound);
        assert_eq!(c.refused["C"], NotConstant::DeclaredGlobal("f".into()));
        assert_eq!(c.refused["D"], NotConstant::Rebound);
        assert_eq!(c.refused["E"], NotConstant::NotConstantExpr);
        assert_eq!(c.refused["F"], NotConstant::NotConstantExpr);
        assert_eq!(c.refused["G"], NotConstant::NotConstantExpr);
        assert_eq!(c.refused["I"], NotConstant::NotConstantExpr);
        assert_eq!(c.refused["J"], NotConstant::Rebound);
        assert_eq!(c.refused["K"], NotConstant::Rebound);
    }
}
