//! Ownership: find the last use of each local that exclusively owns a fresh plugin value, so the
//! plugin may consume it (in-place kernels) instead of allocating.
//!
//! A local is *exclusive* when it is not a parameter (those came from Python), every assignment
//! to it is a plugin site's result (fresh memory), and it is never copied into another name
//! (which would alias it). A use is *last* when the local is not live afterwards: a backward
//! liveness pass over the structured IR, loops iterated to a fixpoint, so the verdict agrees
//! with Rust's own move checking of the generated code. Only a statement that mentions the
//! local once may move it.

use crate::ir::{Expr, ExprKind, FnIr, Stmt};
use rextio_plugin_api::ValueType;
use std::collections::BTreeSet;

type Live = BTreeSet<String>;

/// Rewrite last uses of exclusive locals to [`ExprKind::Move`].
pub fn mark_moves(ir: &mut FnIr) {
    let mut exclusive: BTreeSet<String> = ir
        .locals
        .iter()
        .filter(|(_, t)| matches!(t, ValueType::Plugin(_)))
        .map(|(n, _)| n.clone())
        .collect();
    disqualify(&ir.body, &mut exclusive);
    if exclusive.is_empty() {
        return;
    }
    let mut pass = Pass {
        exclusive,
        loops: Vec::new(),
    };
    pass.block(&mut ir.body, Live::new());
}

/// Remove locals that escape an expression as a whole value: an element of a tuple or an
/// argument of a project function holds another handle to the same memory.
fn escapes(e: &Expr, exclusive: &mut BTreeSet<String>) {
    if let ExprKind::Tuple(xs) | ExprKind::Call { args: xs, .. } = &e.kind {
        for x in xs {
            if let ExprKind::Local(n) | ExprKind::Move(n) = &x.kind {
                exclusive.remove(n);
            }
        }
    }
    for c in e.children() {
        escapes(c, exclusive);
    }
}

/// Remove locals assigned from anything but a site, copied into another name, or escaping
/// into a tuple or a call.
fn disqualify(body: &[Stmt], exclusive: &mut BTreeSet<String>) {
    for s in body {
        match s {
            Stmt::Assign { name, value } => {
                if let ExprKind::Local(src) | ExprKind::Move(src) = &value.kind {
                    exclusive.remove(src);
                }
                if !matches!(value.kind, ExprKind::Site { .. }) {
                    exclusive.remove(name);
                }
                escapes(value, exclusive);
            }
            Stmt::If { cond, then, orelse } => {
                escapes(cond, exclusive);
                disqualify(then, exclusive);
                disqualify(orelse, exclusive);
            }
            Stmt::While { cond, body } => {
                escapes(cond, exclusive);
                disqualify(body, exclusive);
            }
            Stmt::ForRange { body, .. } | Stmt::ForEach { body, .. } => disqualify(body, exclusive),
            Stmt::Return(v) => escapes(v, exclusive),
            Stmt::Break | Stmt::Continue => {}
        }
    }
}

fn uses(e: &Expr, out: &mut Vec<String>) {
    match &e.kind {
        ExprKind::Local(n) | ExprKind::Move(n) => out.push(n.clone()),
        _ => e.children().into_iter().for_each(|c| uses(c, out)),
    }
}

fn live_uses(e: &Expr) -> Live {
    let mut v = Vec::new();
    uses(e, &mut v);
    v.into_iter().collect()
}

/// Rewrite the single occurrence of `name` as a site operand into a move.
fn to_move(e: &mut Expr, name: &str) {
    let is_site = matches!(e.kind, ExprKind::Site { .. });
    for op in e.children_mut() {
        if is_site && matches!(&op.kind, ExprKind::Local(n) if n == name) {
            op.kind = ExprKind::Move(name.to_owned());
        } else {
            to_move(op, name);
        }
    }
}

struct Pass {
    exclusive: BTreeSet<String>,
    /// (live at the loop head for `continue`, live after the loop for `break`).
    loops: Vec<(Live, Live)>,
}

impl Pass {
    /// Candidates of an expression evaluated when `after` is live afterwards: exclusive locals
    /// mentioned exactly once and dead afterwards.
    fn movable(&self, e: &Expr, after: &Live) -> Vec<String> {
        let mut v = Vec::new();
        uses(e, &mut v);
        v.iter()
            .filter(|n| {
                self.exclusive.contains(*n)
                    && v.iter().filter(|m| m == n).count() == 1
                    && !after.contains(*n)
            })
            .cloned()
            .collect()
    }

    /// Live set at a loop head: the fixpoint of `head = seed ∪ (live_in(body, head) - {var})`,
    /// computed on scratch copies; then the body is processed for real with the final head
    /// (`continue` goes to the head, `break` to `out`).
    fn fixpoint(&mut self, body: &mut [Stmt], out: &Live, seed: Live, var: Option<&str>) -> Live {
        let mut head = seed;
        loop {
            self.loops.push((head.clone(), out.clone()));
            let mut scratch = body.to_vec();
            let mut inner = self.block(&mut scratch, head.clone());
            self.loops.pop();
            if let Some(v) = var {
                inner.remove(v);
            }
            let mut next = head.clone();
            next.extend(inner);
            if next == head {
                break;
            }
            head = next;
        }
        self.loops.push((head.clone(), out.clone()));
        self.block(body, head.clone());
        self.loops.pop();
        head
    }

    /// Process a block backwards given what is live after it; returns what is live before it.
    fn block(&mut self, body: &mut [Stmt], mut live: Live) -> Live {
        for s in body.iter_mut().rev() {
            live = self.stmt(s, live);
        }
        live
    }

    fn stmt(&mut self, s: &mut Stmt, out: Live) -> Live {
        match s {
            Stmt::Assign { name, value } => {
                let mut after = out.clone();
                after.remove(name.as_str());
                for n in self.movable(value, &after) {
                    // A plain `x = y` copy never moves (it disqualified both anyway).
                    if matches!(value.kind, ExprKind::Site { .. }) {
                        to_move(value, &n);
                    }
                }
                let mut live = after;
                live.extend(live_uses(value));
                live
            }
            Stmt::Return(v) => {
                for n in self.movable(v, &Live::new()) {
                    to_move(v, &n);
                }
                live_uses(v)
            }
            Stmt::If { cond, then, orelse } => {
                let mut live = self.block(then, out.clone());
                live.extend(self.block(orelse, out));
                live.extend(live_uses(cond));
                live
            }
            Stmt::While { cond, body } => {
                let mut seed = out.clone();
                seed.extend(live_uses(cond));
                self.fixpoint(body, &out, seed, None)
            }
            Stmt::ForRange {
                var,
                start,
                stop,
                step,
                body,
            } => {
                let mut live = self.fixpoint(body, &out, out.clone(), Some(var.as_str()));
                for e in [start, stop, step] {
                    live.extend(live_uses(e));
                }
                live
            }
            Stmt::ForEach { var, seq, body, .. } => {
                let mut live = self.fixpoint(body, &out, out.clone(), Some(var.as_str()));
                live.extend(live_uses(seq));
                live
            }
            Stmt::Break => self
                .loops
                .last()
                .map(|(_, after)| after.clone())
                .unwrap_or_default(),
            Stmt::Continue => self
                .loops
                .last()
                .map(|(head, _)| head.clone())
                .unwrap_or_default(),
        }
    }
}
