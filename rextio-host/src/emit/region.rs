//! Region formation (plugin API 1.9): runs of consecutive statements whose values are trees of
//! one plugin's claims become a [`Region`] the plugin may lower as one fused piece.
//!
//! A run is a maximal sequence of `name = <claims>` statements, optionally ended by
//! `return <claims>` (or `return name` of a value the run computed), inside one block: no
//! control flow, calls of other functions, tuples or raising scalar operations in between. Leaves
//! (locals read from before the run, literals, non-raising scalar expressions, and shape elements
//! such as `(x.shape[-1],)` where Python evaluates them before anything else of the run) become
//! the region's inputs, evaluated once before it; a local assigned in the run is an output only when
//! something outside the run can read it: any read elsewhere in the function (later statements,
//! an enclosing loop's next iteration, another branch), or a read inside the run before its
//! assignment (a value carried around an enclosing loop). Everything else stays an internal
//! temporary the plugin never has to materialise.

use crate::ir::{reads, Expr, ExprKind, ScalarOp, Stmt};
use proc_macro2::TokenStream;
use quote::quote;
use rextio_plugin_api::{LoweredOperand, Region, RegionInput, RegionNode, RegionRef, ValueType};
use std::collections::{BTreeMap, BTreeSet};

/// Scalar operations that cannot raise: hoisting them before the region cannot change which
/// error a call reports.
fn non_raising(op: ScalarOp) -> bool {
    matches!(
        op,
        ScalarOp::FloatAdd
            | ScalarOp::FloatSub
            | ScalarOp::FloatMul
            | ScalarOp::FloatNeg
            | ScalarOp::IntToFloat
            | ScalarOp::BoolToInt
            | ScalarOp::IntTruthy
            | ScalarOp::FloatTruthy
            | ScalarOp::Not
            | ScalarOp::And
            | ScalarOp::Or
            | ScalarOp::Cmp(_)
            | ScalarOp::FloatAbs
            | ScalarOp::IntMin
            | ScalarOp::IntMax
            | ScalarOp::FloatMin
            | ScalarOp::FloatMax
    )
}

fn is_scalar(ty: &ValueType) -> bool {
    matches!(ty, ValueType::Int | ValueType::Float | ValueType::Bool)
}

/// A fixed-length tuple of scalars (`(n,)`: layer_norm's normalised shape), a value that cannot
/// raise when read.
fn is_scalar_tuple(ty: &ValueType) -> bool {
    matches!(ty, ValueType::Tuple(items) if items.iter().all(is_scalar))
}

/// A pure scalar expression over locals and literals.
fn pure_scalar(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Local(_) | ExprKind::Lit(_) => true,
        ExprKind::Scalar(op, xs) => non_raising(*op) && xs.iter().all(pure_scalar),
        _ => false,
    }
}

/// An element of a plugin value's shape (`x.shape[-1]`): a site with a scalar-tuple result
/// whose operands are locals, then one element of it. Reading it could raise (it is a call), so
/// it is a leaf only where nothing of the run is evaluated before it (see [`Walk`]).
fn shape_element(e: &Expr) -> bool {
    let ExprKind::TupleGet(t, _) = &e.kind else {
        return false;
    };
    matches!(t.kind, ExprKind::Site { .. })
        && is_scalar_tuple(&t.ty)
        && is_scalar(&e.ty)
        && t.children().iter().all(|c| {
            matches!(c.kind, ExprKind::Local(_) | ExprKind::Move(_))
                && matches!(c.ty, ValueType::Plugin(_))
        })
}

/// A run's leaves are evaluated before its first node. A leaf that cannot raise may come from
/// anywhere; one that may raise (a shape element) only from the run's first statement and
/// before any of its nodes in Python's evaluation order, so that hoisting it changes neither
/// which error is raised nor when.
struct Walk {
    /// Raising leaves are still allowed (first statement, no node evaluated yet).
    raising_ok: bool,
}

impl Walk {
    /// The plugin of a claims tree whose every node has a plugin-typed result and whose leaves
    /// are locals, literals, pure scalar expressions or (where allowed) shape elements; `None`
    /// when `e` is anything else.
    fn tree_plugin<'e>(&mut self, e: &'e Expr) -> Option<&'e str> {
        let ExprKind::Site { claimed, .. } = &e.kind else {
            return None;
        };
        if !matches!(e.ty, ValueType::Plugin(_)) {
            return None;
        }
        let id = claimed.plugin_id.as_str();
        for c in e.children() {
            let ok = match &c.kind {
                ExprKind::Site { .. } => self.tree_plugin(c) == Some(id),
                ExprKind::Local(_) | ExprKind::Move(_) => {
                    matches!(c.ty, ValueType::Plugin(_))
                        || is_scalar(&c.ty)
                        || is_scalar_tuple(&c.ty)
                }
                ExprKind::Lit(_) => true,
                ExprKind::Scalar(..) => is_scalar(&c.ty) && pure_scalar(c),
                ExprKind::TupleGet(..) => self.raising_ok && shape_element(c),
                ExprKind::Tuple(xs) => {
                    is_scalar_tuple(&c.ty)
                        && xs
                            .iter()
                            .all(|x| pure_scalar(x) || (self.raising_ok && shape_element(x)))
                }
                _ => false,
            };
            if !ok {
                return None;
            }
        }
        // This node is evaluated now: a raising leaf after it would be hoisted above it.
        self.raising_ok = false;
        Some(id)
    }
}

/// The plugin a statement belongs to when it can be part of a run, and whether it ends the run.
/// `bound` holds the locals the run assigned so far (a `return name` of one of them is fine);
/// `first` says whether it would be the run's first statement.
fn stmt_plugin<'a>(
    s: &'a Stmt,
    locals: &BTreeMap<String, ValueType>,
    bound: &BTreeMap<String, &'a str>,
    first: bool,
) -> Option<(&'a str, bool)> {
    let mut walk = Walk { raising_ok: first };
    match s {
        Stmt::Assign { name, value } => {
            let target = locals.get(name)?;
            if !matches!(target, ValueType::Plugin(_)) || *target != value.ty {
                return None;
            }
            walk.tree_plugin(value).map(|p| (p, false))
        }
        Stmt::Return(value) => match &value.kind {
            ExprKind::Local(n) | ExprKind::Move(n) => bound.get(n).map(|p| (*p, true)),
            _ => walk.tree_plugin(value).map(|p| (p, true)),
        },
        _ => None,
    }
}

/// The length of the run starting at `body[0]` and its plugin; 0 when `body[0]` starts none.
///
/// A run may hold bindings (`name = <projection>`, see [`crate::unroll::binding`]: the unpacking
/// of a module's state) between its claims: they cannot raise and have no effect, so the
/// emitter evaluates them before the run, in order, and the region reads their targets as
/// inputs. That holds while the local a binding reads is not assigned by an earlier claim of
/// the run, and its target is neither read nor assigned by another statement of the run before
/// it, nor by a claim after it. A run ends with a claim, never a binding.
pub fn run_at<'a>(
    body: &'a [Stmt],
    locals: &BTreeMap<String, ValueType>,
) -> (usize, Option<&'a str>) {
    let mut bound: BTreeMap<String, &str> = BTreeMap::new();
    let mut read: BTreeMap<String, usize> = BTreeMap::new();
    let mut bindings: BTreeSet<&str> = BTreeSet::new();
    let mut plugin = None;
    let mut len = 0;
    let mut claimed = 0;
    for s in body {
        if let Some((target, base)) = crate::unroll::binding(s) {
            if bound.contains_key(base)
                || bound.contains_key(target)
                || read.contains_key(target)
                || !bindings.insert(target)
            {
                break;
            }
            len += 1;
            continue;
        }
        let Some((p, ends)) = stmt_plugin(s, locals, &bound, plugin.is_none()) else {
            break;
        };
        if plugin.is_some_and(|q| q != p) {
            break;
        }
        if matches!(s, Stmt::Assign { name, .. } if bindings.contains(name.as_str())) {
            break;
        }
        plugin = Some(p);
        len += 1;
        claimed = len;
        if ends {
            break;
        }
        if let Stmt::Assign { name, .. } = s {
            bound.insert(name.clone(), p);
        }
        for (n, c) in reads(std::slice::from_ref(s)) {
            *read.entry(n).or_default() += c;
        }
    }
    (claimed, plugin.filter(|_| claimed > 0))
}

/// A formed region and how its outputs map back to the function.
#[derive(Debug)]
pub struct Formed {
    /// What the plugin sees.
    pub region: Region,
    /// For each output (in order), the locals that take its value.
    pub assigns: Vec<Vec<String>>,
    /// The output the run returns, when it ends with `return`.
    pub returns: Option<usize>,
}

/// How one leaf is read: `lower` renders a leaf expression as Rust.
pub type LowerLeaf<'a> =
    dyn FnMut(&Expr) -> Result<TokenStream, rextio_plugin_api::Diagnostic> + 'a;

struct Builder<'a, 'b> {
    lower_leaf: &'b mut LowerLeaf<'a>,
    inputs: Vec<RegionInput>,
    by_local: BTreeMap<String, usize>,
    nodes: Vec<RegionNode>,
    env: BTreeMap<String, usize>,
    read_before_bound: BTreeSet<String>,
}

impl Builder<'_, '_> {
    fn input(&mut self, e: &Expr) -> Result<RegionRef, rextio_plugin_api::Diagnostic> {
        match &e.kind {
            ExprKind::Local(n) | ExprKind::Move(n) => {
                if let Some(&k) = self.env.get(n) {
                    return Ok(RegionRef::Node(k));
                }
                self.read_before_bound.insert(n.clone());
                let moved = matches!(e.kind, ExprKind::Move(_));
                if let Some(&i) = self.by_local.get(n) {
                    if moved {
                        self.inputs[i].operand.owned_temp = true;
                    }
                    return Ok(RegionRef::Input(i));
                }
                let ident = crate::emit::local_ident(n);
                self.inputs.push(RegionInput {
                    operand: LoweredOperand::new(quote!(#ident), moved),
                    ty: e.ty.clone(),
                });
                self.by_local.insert(n.clone(), self.inputs.len() - 1);
                Ok(RegionRef::Input(self.inputs.len() - 1))
            }
            ExprKind::Site { .. } => self.node(e),
            _ => {
                let expr = (self.lower_leaf)(e)?;
                self.inputs.push(RegionInput {
                    operand: LoweredOperand::new(expr, false),
                    ty: e.ty.clone(),
                });
                Ok(RegionRef::Input(self.inputs.len() - 1))
            }
        }
    }

    fn node(&mut self, e: &Expr) -> Result<RegionRef, rextio_plugin_api::Diagnostic> {
        let ExprKind::Site {
            claimed,
            receiver,
            args,
            keywords,
        } = &e.kind
        else {
            return self.input(e);
        };
        let receiver = match receiver {
            Some(r) => Some(self.input(r)?),
            None => None,
        };
        let args = args
            .iter()
            .map(|a| self.input(a))
            .collect::<Result<Vec<_>, _>>()?;
        let keywords = keywords
            .iter()
            .map(|(n, v)| Ok((n.clone(), self.input(v)?)))
            .collect::<Result<Vec<_>, _>>()?;
        self.nodes.push(RegionNode {
            claimed: (**claimed).clone(),
            receiver,
            args,
            keywords,
        });
        Ok(RegionRef::Node(self.nodes.len() - 1))
    }
}

/// Build the region of `run` (a run found by [`run_at`]). `outside_reads` counts the reads of
/// each local in the whole function; the run's own reads are subtracted to find the locals read
/// elsewhere.
pub fn form(
    qualname: &str,
    run: &[Stmt],
    outside_reads: &BTreeMap<String, usize>,
    lower_leaf: &mut LowerLeaf<'_>,
) -> Result<Formed, rextio_plugin_api::Diagnostic> {
    let mut b = Builder {
        lower_leaf,
        inputs: Vec::new(),
        by_local: BTreeMap::new(),
        nodes: Vec::new(),
        env: BTreeMap::new(),
        read_before_bound: BTreeSet::new(),
    };
    let mut returned = None;
    for s in run {
        match s {
            Stmt::Assign { name, value } => {
                let RegionRef::Node(k) = b.node(value)? else {
                    continue;
                };
                b.env.insert(name.clone(), k);
            }
            Stmt::Return(value) => {
                if let RegionRef::Node(k) = b.node(value)? {
                    returned = Some(k);
                }
            }
            _ => {}
        }
    }
    let inside = reads(run);
    let mut outputs: Vec<usize> = Vec::new();
    let mut assigns: Vec<Vec<String>> = Vec::new();
    let slot = |k: usize, outputs: &mut Vec<usize>, assigns: &mut Vec<Vec<String>>| {
        if let Some(i) = outputs.iter().position(|&o| o == k) {
            i
        } else {
            outputs.push(k);
            assigns.push(Vec::new());
            outputs.len() - 1
        }
    };
    // A run that ends in `return` leaves the function: no local it binds is read again (not
    // even by a loop around it), so only the returned value leaves the region.
    for (name, &k) in b.env.iter().filter(|_| returned.is_none()) {
        let total = outside_reads.get(name).copied().unwrap_or(0);
        let own = inside.get(name).copied().unwrap_or(0);
        if total > own || b.read_before_bound.contains(name) {
            let i = slot(k, &mut outputs, &mut assigns);
            assigns[i].push(name.clone());
        }
    }
    let returns = returned.map(|k| slot(k, &mut outputs, &mut assigns));
    Ok(Formed {
        region: Region {
            qualname: qualname.to_owned(),
            inputs: b.inputs,
            nodes: b.nodes,
            outputs,
        },
        assigns,
        returns,
    })
}
