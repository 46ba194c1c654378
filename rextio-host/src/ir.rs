//! The typed intermediate form analysis hands to lowering: scalar control flow around claimed
//! plugin sites. Every expression carries its static type; every plugin site its claim.

use rextio_plugin_api::{ClaimedSite, Literal, Span, ValueType};
use std::collections::BTreeMap;

/// A native-eligible function.
#[derive(Debug, Clone, PartialEq)]
pub struct FnIr {
    /// `module.function`.
    pub qualname: String,
    /// The Python name.
    pub name: String,
    /// Parameters in order.
    pub params: Vec<Param>,
    /// The annotated return type.
    pub ret: ValueType,
    /// Locals that are not parameters, with their single type, in first-assignment order.
    pub locals: Vec<(String, ValueType)>,
    /// The body.
    pub body: Vec<Stmt>,
    /// For a compiled method of a module class: how its state (the first parameter, a tuple)
    /// is read from the instance.
    pub method: Option<crate::ir_module::MethodIr>,
}

/// A parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// Python name.
    pub name: String,
    /// Annotated type.
    pub ty: ValueType,
}

/// A statement.
// The IR is built once per function and walked a few times; boxing its expressions would only
// add indirection.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    /// `name = value`.
    Assign {
        /// Target local.
        name: String,
        /// Value.
        value: Expr,
    },
    /// `if` / `elif` / `else`.
    If {
        /// Condition (bool).
        cond: Expr,
        /// Then branch.
        then: Vec<Stmt>,
        /// Else branch (an `elif` is a nested `If`).
        orelse: Vec<Stmt>,
    },
    /// `while cond:`.
    While {
        /// Condition (bool).
        cond: Expr,
        /// Body.
        body: Vec<Stmt>,
    },
    /// `for var in range(start, stop, step):`.
    ForRange {
        /// Loop variable.
        var: String,
        /// Start (int).
        start: Expr,
        /// Stop (int).
        stop: Expr,
        /// Step (int).
        step: Expr,
        /// Body.
        body: Vec<Stmt>,
    },
    /// `for var in seq:` over a list value (the states of a module list's elements).
    ForEach {
        /// Loop variable (the element).
        var: String,
        /// The list.
        seq: Expr,
        /// Body.
        body: Vec<Stmt>,
        /// The length `__init__` gives the list, when it states one (a list literal, or
        /// `range(n)` of a literal or of a parameter's default): a hint for
        /// [`crate::unroll`], checked at run time, never assumed.
        expect: Option<usize>,
    },
    /// `break`.
    Break,
    /// `continue`.
    Continue,
    /// `return value`.
    Return(Expr),
}

impl Stmt {
    /// This statement with each block nested in it (an `if`'s branches, a loop's body) replaced
    /// by `f` of that block, its own expressions and names kept; a statement without blocks as
    /// it is.
    pub fn map_blocks(&self, f: &mut impl FnMut(&[Stmt]) -> Vec<Stmt>) -> Stmt {
        match self {
            Stmt::If { cond, then, orelse } => Stmt::If {
                cond: cond.clone(),
                then: f(then),
                orelse: f(orelse),
            },
            Stmt::While { cond, body } => Stmt::While {
                cond: cond.clone(),
                body: f(body),
            },
            Stmt::ForRange {
                var,
                start,
                stop,
                step,
                body,
            } => Stmt::ForRange {
                var: var.clone(),
                start: start.clone(),
                stop: stop.clone(),
                step: step.clone(),
                body: f(body),
            },
            Stmt::ForEach {
                var,
                seq,
                body,
                expect,
            } => Stmt::ForEach {
                var: var.clone(),
                seq: seq.clone(),
                body: f(body),
                expect: *expect,
            },
            Stmt::Assign { .. } | Stmt::Break | Stmt::Continue | Stmt::Return(_) => self.clone(),
        }
    }
}

/// Every local read anywhere in `body` (nested blocks included), with how often.
pub fn reads(body: &[Stmt]) -> BTreeMap<String, usize> {
    fn walk(e: &Expr, out: &mut BTreeMap<String, usize>) {
        if let ExprKind::Local(n) | ExprKind::Move(n) = &e.kind {
            *out.entry(n.clone()).or_default() += 1;
        }
        for c in e.children() {
            walk(c, out);
        }
    }
    let mut out = BTreeMap::new();
    for_each_expr(body, &mut |e| walk(e, &mut out));
    out
}

/// `e` with its locals renamed by `map` (names not in it are left alone).
pub fn renamed(e: &Expr, map: &BTreeMap<String, String>) -> Expr {
    fn walk(e: &mut Expr, map: &BTreeMap<String, String>) {
        if let ExprKind::Local(n) | ExprKind::Move(n) = &mut e.kind {
            if let Some(to) = map.get(n.as_str()) {
                n.clone_from(to);
            }
        }
        for c in e.children_mut() {
            walk(c, map);
        }
    }
    let mut e = e.clone();
    walk(&mut e, map);
    e
}

/// Call `f` on every statement-level expression of `body` (conditions, values, range bounds),
/// nested blocks included, in source order; `f` walks sub-expressions itself if it needs them.
pub fn for_each_expr<'a>(body: &'a [Stmt], f: &mut impl FnMut(&'a Expr)) {
    for s in body {
        match s {
            Stmt::Assign { value, .. } | Stmt::Return(value) => f(value),
            Stmt::If { cond, then, orelse } => {
                f(cond);
                for_each_expr(then, f);
                for_each_expr(orelse, f);
            }
            Stmt::While { cond, body } => {
                f(cond);
                for_each_expr(body, f);
            }
            Stmt::ForRange {
                start,
                stop,
                step,
                body,
                ..
            } => {
                f(start);
                f(stop);
                f(step);
                for_each_expr(body, f);
            }
            Stmt::ForEach { seq, body, .. } => {
                f(seq);
                for_each_expr(body, f);
            }
            Stmt::Break | Stmt::Continue => {}
        }
    }
}

/// Scalar operations the host lowers itself, with Python semantics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarOp {
    /// int + int (checked).
    IntAdd,
    /// int - int (checked).
    IntSub,
    /// int * int (checked).
    IntMul,
    /// int // int (floor, zero division raises).
    IntFloorDiv,
    /// int % int (sign of divisor).
    IntMod,
    /// int / int (float).
    IntTrueDiv,
    /// -int (checked).
    IntNeg,
    /// float + float.
    FloatAdd,
    /// float - float.
    FloatSub,
    /// float * float.
    FloatMul,
    /// float / float (zero division raises).
    FloatDiv,
    /// -float.
    FloatNeg,
    /// int -> float.
    IntToFloat,
    /// bool -> int.
    BoolToInt,
    /// Truthiness of an int.
    IntTruthy,
    /// Truthiness of a float.
    FloatTruthy,
    /// not bool.
    Not,
    /// bool and bool (short-circuit).
    And,
    /// bool or bool (short-circuit).
    Or,
    /// Comparison of two values of the same scalar type.
    Cmp(CmpKind),
    /// `abs(int)` (checked).
    IntAbs,
    /// `abs(float)`.
    FloatAbs,
    /// `min(int, int)` (the first operand unless the second is smaller, as Python).
    IntMin,
    /// `max(int, int)`.
    IntMax,
    /// `min(float, float)` (the first unless the second is smaller: NaN handling as Python).
    FloatMin,
    /// `max(float, float)`.
    FloatMax,
    /// `math.sqrt` (domain errors raise).
    FloatSqrt,
    /// `math.exp` (overflow raises).
    FloatExp,
    /// `math.log` (domain errors raise).
    FloatLog,
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpKind {
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
}

impl CmpKind {
    /// The Rust operator.
    pub fn rust(self) -> &'static str {
        match self {
            CmpKind::Eq => "==",
            CmpKind::Ne => "!=",
            CmpKind::Lt => "<",
            CmpKind::Le => "<=",
            CmpKind::Gt => ">",
            CmpKind::Ge => ">=",
        }
    }
}

/// A typed expression.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    /// Static type.
    pub ty: ValueType,
    /// What it is.
    pub kind: ExprKind,
    /// Where it starts.
    pub span: Span,
}

/// Expression forms.
#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// A local or parameter.
    Local(String),
    /// The last use of a local that exclusively owns a fresh plugin value (set by
    /// [`crate::ownership::mark_moves`]): its value may be consumed or written in place.
    Move(String),
    /// A literal.
    Lit(Literal),
    /// A host scalar operation.
    Scalar(ScalarOp, Vec<Expr>),
    /// A tuple built from its elements (`return a, b`, `(1, 2.0)`, a tuple constant).
    Tuple(Vec<Expr>),
    /// Element `index` of a tuple-typed expression (unpacking, `x.shape[0]`); the index is
    /// already normalised (non-negative, in range).
    TupleGet(Box<Expr>, usize),
    /// The length of a list value (int).
    ListLen(Box<Expr>),
    /// Element `index` of a list value, where a guard around it checked the list's length
    /// (see [`crate::unroll`]); a shorter list is an internal error, never a panic.
    ListGet(Box<Expr>, usize),
    /// A call of another native function of the project, by qualified name, with its
    /// parameters in declaration order.
    Call {
        /// The callee's qualified name.
        callee: String,
        /// One argument per parameter.
        args: Vec<Expr>,
    },
    /// A plugin site, with its operands (post-order: operands are themselves expressions).
    Site {
        /// The claim.
        claimed: Box<ClaimedSite>,
        /// Receiver operand.
        receiver: Option<Box<Expr>>,
        /// Positional operands.
        args: Vec<Expr>,
        /// Keyword operands.
        keywords: Vec<(String, Expr)>,
    },
}

impl Expr {
    /// A host scalar operation of type `ty` at `span`.
    pub fn scalar(ty: ValueType, op: ScalarOp, args: Vec<Expr>, span: Span) -> Expr {
        Expr {
            ty,
            span,
            kind: ExprKind::Scalar(op, args),
        }
    }

    /// Direct sub-expressions in evaluation order (receiver, positional, keyword operands).
    pub fn children(&self) -> Vec<&Expr> {
        match &self.kind {
            ExprKind::Local(_) | ExprKind::Move(_) | ExprKind::Lit(_) => Vec::new(),
            ExprKind::Scalar(_, xs) | ExprKind::Tuple(xs) | ExprKind::Call { args: xs, .. } => {
                xs.iter().collect()
            }
            ExprKind::TupleGet(t, _) | ExprKind::ListLen(t) | ExprKind::ListGet(t, _) => {
                vec![t.as_ref()]
            }
            ExprKind::Site {
                receiver,
                args,
                keywords,
                ..
            } => receiver
                .iter()
                .map(|b| b.as_ref())
                .chain(args.iter())
                .chain(keywords.iter().map(|(_, x)| x))
                .collect(),
        }
    }

    /// Mutable [`Expr::children`].
    pub fn children_mut(&mut self) -> Vec<&mut Expr> {
        match &mut self.kind {
            ExprKind::Local(_) | ExprKind::Move(_) | ExprKind::Lit(_) => Vec::new(),
            ExprKind::Scalar(_, xs) | ExprKind::Tuple(xs) | ExprKind::Call { args: xs, .. } => {
                xs.iter_mut().collect()
            }
            ExprKind::TupleGet(t, _) | ExprKind::ListLen(t) | ExprKind::ListGet(t, _) => {
                vec![t.as_mut()]
            }
            ExprKind::Site {
                receiver,
                args,
                keywords,
                ..
            } => receiver
                .iter_mut()
                .map(|b| b.as_mut())
                .chain(args.iter_mut())
                .chain(keywords.iter_mut().map(|(_, x)| x))
                .collect(),
        }
    }
}
