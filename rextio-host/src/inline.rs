//! Inlining: a call of another native body that is straight-line (assignments, then one
//! `return`) is replaced by that body, so that the plugin's regions span both (a module's
//! `forward` calling its blocks, a block calling a project helper) and the body calls no other
//! native function (which lets its plugin release the GIL while it runs).
//!
//! The callee's locals get fresh names (`name@k`, which no Python name can spell); a parameter
//! becomes the caller's local passed for it when the callee never assigns it, else a fresh local
//! bound to the argument first. The callee keeps its own body for its own callers and its
//! Python entry point.

use crate::ir::{Expr, ExprKind, FnIr, Stmt};
use rextio_plugin_api::ValueType;
use std::collections::{BTreeMap, BTreeSet};

/// Calls nested deeper than this are left as calls.
const MAX_DEPTH: u32 = 6;
/// Callees with more statements than this are left as calls.
const MAX_STATEMENTS: usize = 64;

/// Inline straight-line callees of `ir` found in `bodies` (qualified name -> IR).
pub fn inline_calls(ir: &FnIr, bodies: &BTreeMap<String, FnIr>) -> FnIr {
    let mut out = ir.clone();
    let mut cx = Cx {
        bodies,
        counter: 0,
        locals: Vec::new(),
    };
    out.body = cx.block(&ir.body, 0);
    out.locals.extend(cx.locals);
    out
}

struct Cx<'a> {
    bodies: &'a BTreeMap<String, FnIr>,
    counter: u32,
    locals: Vec<(String, ValueType)>,
}

/// Whether a body is assignments then one final `return`.
fn straight_line(body: &[Stmt]) -> bool {
    match body.split_last() {
        Some((Stmt::Return(_), rest)) => rest.iter().all(|s| matches!(s, Stmt::Assign { .. })),
        _ => false,
    }
}

fn assigned(body: &[Stmt]) -> BTreeSet<&str> {
    body.iter()
        .filter_map(|s| match s {
            Stmt::Assign { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect()
}

impl Cx<'_> {
    fn block(&mut self, body: &[Stmt], depth: u32) -> Vec<Stmt> {
        let mut out = Vec::with_capacity(body.len());
        for s in body {
            match s {
                Stmt::Assign { name, value } => match self.expand(value, depth) {
                    Some((mut stmts, result)) => {
                        stmts.push(Stmt::Assign {
                            name: name.clone(),
                            value: result,
                        });
                        out.extend(stmts);
                    }
                    None => out.push(s.clone()),
                },
                Stmt::Return(value) => match self.expand(value, depth) {
                    Some((mut stmts, result)) => {
                        stmts.push(Stmt::Return(result));
                        out.extend(stmts);
                    }
                    None => out.push(s.clone()),
                },
                _ => out.push(s.map_blocks(&mut |b| self.block(b, depth))),
            }
        }
        out
    }

    /// When `value` is a call of a straight-line body: the statements of that body (renamed)
    /// and the expression it returns.
    fn expand(&mut self, value: &Expr, depth: u32) -> Option<(Vec<Stmt>, Expr)> {
        let ExprKind::Call { callee, args } = &value.kind else {
            return None;
        };
        if depth >= MAX_DEPTH {
            return None;
        }
        let callee_ir = self.bodies.get(callee)?;
        if !straight_line(&callee_ir.body)
            || callee_ir.body.len() > MAX_STATEMENTS
            || callee_ir.params.len() != args.len()
        {
            return None;
        }
        // The callee's own calls first.
        let body = self.block(&callee_ir.body, depth + 1);
        if !straight_line(&body) {
            return None;
        }
        self.counter += 1;
        let k = self.counter;
        let written = assigned(&body);
        let mut map = BTreeMap::new();
        let mut stmts = Vec::new();
        for (p, a) in callee_ir.params.iter().zip(args) {
            match &a.kind {
                ExprKind::Local(n) | ExprKind::Move(n) if !written.contains(p.name.as_str()) => {
                    map.insert(p.name.clone(), n.clone());
                }
                _ => {
                    let fresh = format!("{}@{k}", p.name);
                    self.locals.push((fresh.clone(), p.ty.clone()));
                    stmts.push(Stmt::Assign {
                        name: fresh.clone(),
                        value: match &a.kind {
                            // The caller's local stays readable after the call.
                            ExprKind::Move(n) => Expr {
                                kind: ExprKind::Local(n.clone()),
                                ..a.clone()
                            },
                            _ => a.clone(),
                        },
                    });
                    map.insert(p.name.clone(), fresh);
                }
            }
        }
        for (name, ty) in &callee_ir.locals {
            let fresh = format!("{name}@{k}");
            self.locals.push((fresh.clone(), ty.clone()));
            map.insert(name.clone(), fresh);
        }
        let mut result = None;
        for s in body {
            match s {
                Stmt::Assign { name, value } => {
                    // A local of an inner inline is already fresh and declared.
                    let target = map.get(&name).cloned().unwrap_or(name);
                    stmts.push(Stmt::Assign {
                        name: target,
                        value: crate::ir::renamed(&value, &map),
                    });
                }
                Stmt::Return(v) => result = Some(crate::ir::renamed(&v, &map)),
                _ => return None,
            }
        }
        Some((stmts, result?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rextio_plugin_api::{Literal, Span};

    fn at() -> Span {
        Span { line: 1, column: 1 }
    }
    fn local(n: &str) -> Expr {
        Expr {
            ty: ValueType::Int,
            kind: ExprKind::Local(n.into()),
            span: at(),
        }
    }
    fn add(a: Expr, b: Expr) -> Expr {
        Expr::scalar(
            ValueType::Int,
            crate::ir::ScalarOp::IntAdd,
            vec![a, b],
            at(),
        )
    }
    fn f(name: &str, params: &[&str], locals: &[&str], body: Vec<Stmt>) -> FnIr {
        FnIr {
            qualname: format!("m.{name}"),
            name: name.into(),
            params: params
                .iter()
                .map(|p| crate::ir::Param {
                    name: (*p).into(),
                    ty: ValueType::Int,
                })
                .collect(),
            ret: ValueType::Int,
            locals: locals
                .iter()
                .map(|l| ((*l).into(), ValueType::Int))
                .collect(),
            body,
            method: None,
        }
    }
    fn call(callee: &str, args: Vec<Expr>) -> Expr {
        Expr {
            ty: ValueType::Int,
            kind: ExprKind::Call {
                callee: callee.into(),
                args,
            },
            span: at(),
        }
    }

    #[test]
    fn straight_line_callees_are_inlined_with_fresh_names() {
        // def inc(a): t = a + 1; return t + a
        let inc = f(
            "inc",
            &["a"],
            &["t"],
            vec![
                Stmt::Assign {
                    name: "t".into(),
                    value: add(local("a"), local("a")),
                },
                Stmt::Return(add(local("t"), local("a"))),
            ],
        );
        // def twice(a): a = a + a; return a  (assigns its parameter)
        let twice = f(
            "twice",
            &["a"],
            &[],
            vec![
                Stmt::Assign {
                    name: "a".into(),
                    value: add(local("a"), local("a")),
                },
                Stmt::Return(local("a")),
            ],
        );
        // def caller(x): t = inc(x); y = twice(x); return inc(y) + t  (the last is nested)
        let caller = f(
            "caller",
            &["x"],
            &["t", "y"],
            vec![
                Stmt::Assign {
                    name: "t".into(),
                    value: call("m.inc", vec![local("x")]),
                },
                Stmt::Assign {
                    name: "y".into(),
                    value: call("m.twice", vec![local("x")]),
                },
                Stmt::Return(add(call("m.inc", vec![local("y")]), local("t"))),
            ],
        );
        let bodies: BTreeMap<String, FnIr> = [inc, twice]
            .into_iter()
            .map(|f| (f.qualname.clone(), f))
            .collect();
        let out = inline_calls(&caller, &bodies);
        let names: Vec<&str> = out
            .body
            .iter()
            .map(|s| match s {
                Stmt::Assign { name, .. } => name.as_str(),
                Stmt::Return(_) => "return",
                _ => "?",
            })
            .collect();
        // inc(x): its local renamed, its parameter is the caller's x; twice(x) assigns its
        // parameter, so it gets a fresh copy and the caller's x is never written.
        assert_eq!(names, ["t@1", "t", "a@2", "a@2", "y", "return"]);
        assert!(!out
            .body
            .iter()
            .any(|s| matches!(s, Stmt::Assign { name, .. } if name == "x")));
        let Stmt::Assign { value, .. } = &out.body[1] else {
            panic!()
        };
        assert_eq!(*value, add(local("t@1"), local("x")));
        // A call nested in an expression stays a call.
        let Stmt::Return(r) = &out.body[5] else {
            panic!()
        };
        assert!(matches!(&r.children()[0].kind, ExprKind::Call { .. }));
        assert!(out.locals.iter().any(|(n, _)| n == "t@1"));
        assert!(out.locals.iter().any(|(n, _)| n == "a@2"));
        let _ = Literal::Int(0);
    }
}
