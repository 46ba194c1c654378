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
//! After that, a branch on a bool the state unpacking bound (`if self.residual:`, which cannot
//! change during the call) is unswitched the same way: the body after the unpacking becomes
//! `if flag: <every such branch taken> else: <every one skipped>` (at most two flags), so the
//! branch no longer cuts the regions around it.
//!
//! Each copy of the loop body gets its own names for the locals that only unpack the element's
//! state (`name~i`, which no Python name can spell), so that a region may read them all as
//! inputs bound before it (see [`crate::emit::region`]).

use crate::ir::{reads, CmpKind, Expr, ExprKind, FnIr, ScalarOp, Stmt};
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
        let at = split + i;
        let mut outside_reads = reads(&ir.body[..at]);
        for (n, c) in reads(&ir.body[at + 1..]) {
            *outside_reads.entry(n).or_default() += c;
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
    let mut out = ir.clone();
    if let Some(cond) = guards.into_iter().reduce(|a, b| {
        let span = a.span;
        Expr::scalar(ValueType::Bool, ScalarOp::And, vec![a, b], span)
    }) {
        out.body = head.to_vec();
        out.body.push(Stmt::If {
            cond,
            then,
            orelse: rest.to_vec(),
        });
        out.locals.extend(locals);
    }
    unswitch(&mut out, split);
    out
}

/// Flags unswitched per function at most (each doubles the code after the state unpacking).
const MAX_FLAGS: usize = 2;

/// Branches on a bool the state unpacking bound (`if self.residual:`) split the regions of the
/// code around them, once per copy of a written-out loop. Such a flag cannot change during the
/// call, so the body after the unpacking (the first `split` statements) becomes
/// `if flag: <body with every branch on it taken> else: <body with every branch skipped>`.
fn unswitch(ir: &mut FnIr, split: usize) {
    let bools: BTreeSet<String> = ir
        .locals
        .iter()
        .filter(|(_, t)| *t == ValueType::Bool)
        .map(|(n, _)| n.clone())
        .collect();
    for _ in 0..MAX_FLAGS {
        let (head, rest) = ir.body.split_at(split);
        let mut rest_assigned = BTreeSet::new();
        assigned(rest, &mut rest_assigned);
        let flag = head.iter().find_map(|s| match s {
            Stmt::Assign { name, value }
                if binding(s).is_some()
                    && bools.contains(name)
                    && !rest_assigned.contains(name)
                    && branches_on(rest, name) =>
            {
                Some((name.clone(), value.span))
            }
            _ => None,
        });
        let Some((flag, span)) = flag else {
            return;
        };
        let cond = Expr {
            ty: ValueType::Bool,
            kind: ExprKind::Local(flag.clone()),
            span,
        };
        let then = settle(rest, &flag, true);
        let orelse = settle(rest, &flag, false);
        let mut body = head.to_vec();
        body.push(Stmt::If { cond, then, orelse });
        ir.body = body;
    }
}

/// Whether some `if` in `body` tests exactly the local `flag`.
fn branches_on(body: &[Stmt], flag: &str) -> bool {
    body.iter().any(|s| match s {
        Stmt::If { cond, then, orelse } => {
            tests(cond, flag).is_some() || branches_on(then, flag) || branches_on(orelse, flag)
        }
        Stmt::While { body, .. } | Stmt::ForRange { body, .. } | Stmt::ForEach { body, .. } => {
            branches_on(body, flag)
        }
        Stmt::Assign { .. } | Stmt::Break | Stmt::Continue | Stmt::Return(_) => false,
    })
}

/// `Some(true)` when `cond` is `flag`, `Some(false)` when it is `not flag`.
fn tests(cond: &Expr, flag: &str) -> Option<bool> {
    match &cond.kind {
        ExprKind::Local(n) if n == flag => Some(true),
        ExprKind::Scalar(ScalarOp::Not, xs) if xs.len() == 1 => tests(&xs[0], flag).map(|v| !v),
        _ => None,
    }
}

/// `body` with every `if` that tests `flag` replaced by the branch `value` takes.
fn settle(body: &[Stmt], flag: &str, value: bool) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(body.len());
    for s in body {
        match s {
            Stmt::If { cond, then, orelse } => match tests(cond, flag) {
                Some(when) => out.extend(settle(
                    if when == value { then } else { orelse },
                    flag,
                    value,
                )),
                None => out.push(s.map_blocks(&mut |b| settle(b, flag, value))),
            },
            _ => out.push(s.map_blocks(&mut |b| settle(b, flag, value))),
        }
        // A settled branch that leaves the block leaves the rest of it unreachable.
        if matches!(
            out.last(),
            Some(Stmt::Return(_) | Stmt::Break | Stmt::Continue)
        ) {
            break;
        }
    }
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
    let mut read_before: BTreeMap<String, usize> = BTreeMap::new();
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
        for (n, c) in reads(std::slice::from_ref(s)) {
            *read_before.entry(n).or_default() += c;
        }
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
