//! Flow checks over the built IR: every read is of a definitely assigned local, and every path
//! returns the annotated type.

use super::*;

impl Fx<'_> {
    /// Definite assignment and return types over the typed body. Returns whether the block
    /// always diverges (returns, breaks or continues).
    pub(super) fn flow(
        &mut self,
        body: &[Stmt],
        assigned: &mut BTreeSet<String>,
        ret: &ValueType,
    ) -> bool {
        for s in body {
            match s {
                Stmt::Assign { name, value } => {
                    self.uses(value, assigned);
                    assigned.insert(name.clone());
                }
                Stmt::If { cond, then, orelse } => {
                    self.uses(cond, assigned);
                    let mut a = assigned.clone();
                    let mut b = assigned.clone();
                    let da = self.flow(then, &mut a, ret);
                    let db = self.flow(orelse, &mut b, ret);
                    match (da, db) {
                        (true, true) => return true,
                        (true, false) => *assigned = b,
                        (false, true) => *assigned = a,
                        (false, false) => *assigned = a.intersection(&b).cloned().collect(),
                    }
                }
                Stmt::While { cond, body } => {
                    self.uses(cond, assigned);
                    let mut inner = assigned.clone();
                    self.flow(body, &mut inner, ret);
                }
                Stmt::ForRange {
                    var,
                    start,
                    stop,
                    step,
                    body,
                } => {
                    for e in [start, stop, step] {
                        self.uses(e, assigned);
                    }
                    let mut inner = assigned.clone();
                    inner.insert(var.clone());
                    self.flow(body, &mut inner, ret);
                }
                Stmt::ForEach { var, seq, body, .. } => {
                    self.uses(seq, assigned);
                    let mut inner = assigned.clone();
                    inner.insert(var.clone());
                    self.flow(body, &mut inner, ret);
                }
                Stmt::Break | Stmt::Continue => return true,
                Stmt::Return(v) => {
                    self.uses(v, assigned);
                    if &v.ty != ret {
                        let msg =
                            format!("returns {} but the function is annotated -> {ret}", v.ty);
                        self.error(codes::RETURN_PATH, v.span, msg, None);
                    }
                    return true;
                }
            }
        }
        false
    }

    pub(super) fn uses(&mut self, e: &Expr, assigned: &BTreeSet<String>) {
        if let ExprKind::Local(n) | ExprKind::Move(n) = &e.kind {
            if !assigned.contains(n) {
                let msg = format!("`{n}` may be read before it is assigned on some path");
                self.error(
                    codes::UNBOUND_NAME,
                    e.span,
                    msg,
                    Some("assign it on every path before this use"),
                );
            }
        }
        for c in e.children() {
            self.uses(c, assigned);
        }
    }
}
