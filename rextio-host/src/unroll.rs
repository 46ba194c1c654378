//! Module loops specialised for the length `__init__` states.
//!
//! `for block in self.blocks: h = block(h)` iterates a module list whose length is known only at
//! run time, so its body is one region per iteration and the code around the loop is cut into
//! separate regions too. When `__init__` states the list's length (a list literal, or
//! `range(n)` of a literal or of a parameter's default), the function's body after its state
//! unpacking becomes
//!
//! ```text
//! if len(list) == n:  <the body with the loop written out n times>
//! else:               <the body as written>
//! ```
//!
//! so that a model built with that length runs straight-line code, which the regions span, and
//! any other length (a list built with another argument, or changed later) runs the loop as
//! before. The check is made at every call; the hint is never assumed.
//!
//! Each copy of the loop body gets its own names for the locals that only unpack the element's
//! state (`name~i`, which no Python name can spell), so that a region may read them all as
//! inputs bound before it (see [`crate::emit::region`]).

use crate::ir::{CmpKind, Expr, ExprKind, FnIr, ScalarOp, Stmt};
use rextio_plugin_api::{Literal, ValueType};
use std::collections::{BTreeMap, BTreeSet};

/// Lists longer than this keep their loop.
const MAX_COPIES: usize = 16;
/// Loops whose written-out body would be longer than this keep their loop.
const MAX_STATEMENTS: usize = 1024;

/// A pure read of a local's parts: `t`, `t[i]` of a tuple, `l[i]` of a list. It cannot raise
/// (a list element's index is checked by the guard around it) and has no effect.
pub fn projection(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Local(_) | ExprKind::Move(_) => true,
        ExprKind::TupleGet(t, _) | ExprKind::ListGet(t, _) => projection(t),
        _ => false,
    }
}

/// The local a projection reads.
pub fn projection_base(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Local(n) | ExprKind::Move(n) => Some(n),
        ExprKind::TupleGet(t, _) | ExprKind::ListGet(t, _) => projection_base(t),
        _ => None,
    }
}

/// `name = <projection>`: the target and the local it reads.
pub fn binding(s: &Stmt) -> Option<(&str, &str)> {
    match s {
        Stmt::Assign { name, value }
            if projection(value)
                && !matches!(value.kind, ExprKind::Local(_) | ExprKind::Move(_)) =>
        {
            Some((name, projection_base(value)?))
        }
        _ => None,
    }
}

/// `ir` with its module loops specialised (see the module docs); `ir` itself when it has none
/// that qualify.
pub fn specialise(ir: &FnIr) -> FnIr {
    let split = ir.body.iter().take_while(|s| binding(s).is_some()).count();
    let (head, rest) = ir.body.split_at(split);
    let head_bound: BTreeSet<&str> = head
        .iter()
        .filter_map(|s| binding(s).map(|b| b.0))
        .collect();
    let mut rest_assigned = BTreeSet::new();
    assigned(rest, &mut rest_assigned);
    let mut outside_reads = BTreeMap::new();
    let mut guards = Vec::new();
    let mut then = Vec::new();
    let mut locals: Vec<(String, ValueType)> = Vec::new();
    let types: BTreeMap<&str, &ValueType> =
        ir.locals.iter().map(|(n, t)| (n.as_str(), t)).collect();
    for (i, s) in rest.iter().enumerate() {
        let Stmt::ForEach {
            var,
            seq,
            body,
            expect: Some(n),
        } = s
        else {
            then.push(s.clone());
            continue;
        };
        let seq_local = match &seq.kind {
            ExprKind::Local(l) => l.as_str(),
            _ => "",
        };
        // Locals read anywhere but in this loop's body.
        outside_reads.clear();
        for (j, other) in ir.body.iter().enumerate() {
            if j != split + i {
                reads(std::slice::from_ref(other), &mut outside_reads);
            }
        }
        // The loop variable is renamed in every copy, so nothing after the loop may read it.
        let qualifies = (1..=MAX_COPIES).contains(n)
            && n * body.len() <= MAX_STATEMENTS
            && head_bound.contains(seq_local)
            && !rest_assigned.contains(seq_local)
            && !outside_reads.contains_key(var.as_str())
            && !leaves_early(body);
        if !qualifies {
            then.push(s.clone());
            continue;
        }
        let renamed = per_copy(var, body, &outside_reads);
        for k in 0..*n {
            let map: BTreeMap<String, String> = renamed
                .iter()
                .map(|l| (l.clone(), format!("{l}~{k}")))
                .collect();
            for (from, to) in &map {
                if let Some(t) = types.get(from.as_str()) {
                    locals.push((to.clone(), (*t).clone()));
                }
            }
            then.push(Stmt::Assign {
                name: map[var].clone(),
                value: Expr {
                    ty: types
                        .get(var.as_str())
                        .map_or_else(|| ValueType::Tuple(Vec::new()), |t| (*t).clone()),
                    kind: ExprKind::ListGet(Box::new(seq.clone()), k),
                    span: seq.span,
                },
            });
            then.extend(body.iter().map(|s| rename_stmt(s, &map)));
        }
        guards.push(Expr::scalar(
            ValueType::Bool,
            ScalarOp::Cmp(CmpKind::Eq),
            vec![
                Expr {
                    ty: ValueType::Int,
                    kind: ExprKind::ListLen(Box::new(seq.clone())),
                    span: seq.span,
                },
                Expr {
                    ty: ValueType::Int,
                    kind: ExprKind::Lit(Literal::Int(*n as i64)),
                    span: seq.span,
                },
            ],
            seq.span,
        ));
    }
    let Some(cond) = guards.into_iter().reduce(|a, b| {
        let span = a.span;
        Expr::scalar(ValueType::Bool, ScalarOp::And, vec![a, b], span)
    }) else {
        return ir.clone();
    };
    let mut out = ir.clone();
    out.body = head.to_vec();
    out.body.push(Stmt::If {
        cond,
        then,
        orelse: rest.to_vec(),
    });
    out.locals.extend(locals);
    out
}

/// The locals each copy of `body` names for itself: the loop variable, and every local the body
/// binds once, at its top level, by a projection, that nothing reads before that binding (in
/// the body or around the loop) and nothing outside the body reads.
fn per_copy(var: &str, body: &[Stmt], outside_reads: &BTreeMap<String, usize>) -> Vec<String> {
    let mut out = vec![var.to_owned()];
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut all = BTreeSet::new();
    assigned(body, &mut all);
    for s in body {
        if let Stmt::Assign { name, .. } = s {
            *counts.entry(name.clone()).or_default() += 1;
        }
    }
    let mut read_before = BTreeMap::new();
    for s in body {
        if let Some((name, _)) = binding(s) {
            let once = counts.get(name) == Some(&1) && !nested_assigns(body, name);
            if once
                && !read_before.contains_key(name)
                && !outside_reads.contains_key(name)
                && name != var
            {
                out.push(name.to_owned());
            }
        }
        reads(std::slice::from_ref(s), &mut read_before);
    }
    out
}

/// Whether `name` is assigned inside a nested block of `body`.
fn nested_assigns(body: &[Stmt], name: &str) -> bool {
    body.iter().any(|s| {
        let mut inner = BTreeSet::new();
        match s {
            Stmt::Assign { .. } | Stmt::Return(_) | Stmt::Break | Stmt::Continue => return false,
            Stmt::If { then, orelse, .. } => {
                assigned(then, &mut inner);
                assigned(orelse, &mut inner);
            }
            Stmt::While { body, .. } | Stmt::ForEach { body, .. } => assigned(body, &mut inner),
            Stmt::ForRange { var, body, .. } => {
                inner.insert(var.clone());
                assigned(body, &mut inner);
            }
        }
        if let Stmt::ForEach { var, .. } = s {
            inner.insert(var.clone());
        }
        inner.contains(name)
    })
}

/// Whether `body` may leave the loop other than by finishing an iteration.
fn leaves_early(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::Break | Stmt::Continue | Stmt::Return(_) => true,
        Stmt::Assign { .. } => false,
        Stmt::If { then, orelse, .. } => leaves_early(then) || leaves_early(orelse),
        // A nested loop's own `break` / `continue` leave only it; a `return` leaves everything.
        Stmt::While { body, .. } | Stmt::ForRange { body, .. } | Stmt::ForEach { body, .. } => {
            returns(body)
        }
    })
}

fn returns(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::Return(_) => true,
        Stmt::Assign { .. } | Stmt::Break | Stmt::Continue => false,
        Stmt::If { then, orelse, .. } => returns(then) || returns(orelse),
        Stmt::While { body, .. } | Stmt::ForRange { body, .. } | Stmt::ForEach { body, .. } => {
            returns(body)
        }
    })
}

/// Every local assigned in `body`, nested blocks and loop variables included.
fn assigned(body: &[Stmt], out: &mut BTreeSet<String>) {
    for s in body {
        match s {
            Stmt::Assign { name, .. } => {
                out.insert(name.clone());
            }
            Stmt::If { then, orelse, .. } => {
                assigned(then, out);
                assigned(orelse, out);
            }
            Stmt::While { body, .. } => assigned(body, out),
            Stmt::ForRange { var, body, .. } | Stmt::ForEach { var, body, .. } => {
                out.insert(var.clone());
                assigned(body, out);
            }
            Stmt::Break | Stmt::Continue | Stmt::Return(_) => {}
        }
    }
}

/// Count every local read in `body` (nested blocks included) into `out`.
fn reads(body: &[Stmt], out: &mut BTreeMap<String, usize>) {
    fn walk(e: &Expr, out: &mut BTreeMap<String, usize>) {
        if let ExprKind::Local(n) | ExprKind::Move(n) = &e.kind {
            *out.entry(n.clone()).or_default() += 1;
        }
        for c in e.children() {
            walk(c, out);
        }
    }
    crate::ir::for_each_expr(body, &mut |e| walk(e, out));
}

fn rename_name(n: &str, map: &BTreeMap<String, String>) -> String {
    map.get(n).cloned().unwrap_or_else(|| n.to_owned())
}

fn rename_block(body: &[Stmt], map: &BTreeMap<String, String>) -> Vec<Stmt> {
    body.iter().map(|s| rename_stmt(s, map)).collect()
}

fn rename_stmt(s: &Stmt, map: &BTreeMap<String, String>) -> Stmt {
    match s {
        Stmt::Assign { name, value } => Stmt::Assign {
            name: rename_name(name, map),
            value: crate::ir::renamed(value, map),
        },
        Stmt::If { cond, then, orelse } => Stmt::If {
            cond: crate::ir::renamed(cond, map),
            then: rename_block(then, map),
            orelse: rename_block(orelse, map),
        },
        Stmt::While { cond, body } => Stmt::While {
            cond: crate::ir::renamed(cond, map),
            body: rename_block(body, map),
        },
        Stmt::ForRange {
            var,
            start,
            stop,
            step,
            body,
        } => Stmt::ForRange {
            var: rename_name(var, map),
            start: crate::ir::renamed(start, map),
            stop: crate::ir::renamed(stop, map),
            step: crate::ir::renamed(step, map),
            body: rename_block(body, map),
        },
        Stmt::ForEach {
            var,
            seq,
            body,
            expect,
        } => Stmt::ForEach {
            var: rename_name(var, map),
            seq: crate::ir::renamed(seq, map),
            body: rename_block(body, map),
            expect: *expect,
        },
        Stmt::Break | Stmt::Continue => s.clone(),
        Stmt::Return(v) => Stmt::Return(crate::ir::renamed(v, map)),
    }
}
