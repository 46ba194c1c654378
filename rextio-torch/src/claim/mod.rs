//! Claim rules, one module per family. Each family turns a site into a [`Plan`] (rule id,
//! result type, and the operation with its operand sources) through a series of early returns;
//! `claim` reports the plan's rule, and lowering recomputes the same plan from the site, so a
//! claim is re-validated rather than trusted.

mod activations;
mod binops;
mod classification;
mod compare;
mod concat;
mod cuda;
mod elementwise;
mod linear;
mod norm;
mod reductions;
mod shape;

use crate::codes;
use crate::types::{F32_CPU, I64_CPU_1D};
use rextio_plugin_api::routes::{self, ClaimTable, Route};
use rextio_plugin_api::{ClaimOutcome, ClaimSite, Literal, Operand, SiteKind, ValueType};

/// `torch.nn.functional.linear`.
pub const T_LINEAR: &str = "torch.nn.functional.linear";

/// Where an operand of the plan comes from in the site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Src {
    /// The method receiver.
    Recv,
    /// Positional operand `i`.
    Arg(usize),
    /// Keyword operand `i` (index into the site's keywords).
    Kw(usize),
}

/// One argument of a generic runtime call ([`Op::Call`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// A tensor operand, passed by reference.
    Tensor(Src),
    /// A tuple of tensor operands (a list or tuple written in the call, or a tuple value),
    /// passed by reference.
    Tensors(Src),
    /// An optional tensor operand (`None` when absent or a literal `None`).
    OptTensor(Option<Src>),
    /// A Python int or float operand, passed as its Rust scalar (`i64` / `f64`).
    Scalar(Src),
    /// The only element of a one-element int tuple operand (`(n,)`), as `i64`.
    TupleFirst(Src),
    /// A statically known int (a normalised dim).
    Int(i64),
    /// A statically known bool (keepdim).
    Bool(bool),
    /// A statically known float (a default such as `eps=1e-5`).
    Float(f64),
}

/// What a claimed site computes.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// `linear(x, w, b?)`.
    Linear {
        /// Input.
        x: Src,
        /// Weight.
        w: Src,
        /// Optional bias.
        b: Option<Src>,
    },
    /// A unary op of the table ([`crate::rules::UNARY_OPS`]).
    Math {
        /// The op.
        op: crate::rules::Unary,
        /// Operand.
        t: Src,
    },
    /// A unary runtime function outside the table (`gelu_none`, `silu`).
    Unary {
        /// Runtime entry point.
        f: crate::entry::Rt,
        /// Operand.
        t: Src,
    },
    /// Matrix product.
    Matmul {
        /// Left.
        a: Src,
        /// Right.
        b: Src,
    },
    /// Tensor-tensor elementwise (`add`, `sub`, `mul`, `div`).
    Binary {
        /// Runtime entry point.
        f: crate::entry::Rt,
        /// Left.
        a: Src,
        /// Right.
        b: Src,
        /// An augmented assignment (`a += b`): eager updates `a` in place, so the result keeps
        /// `a`'s shape and a broadcast that would grow it raises eager's error.
        keep: bool,
    },
    /// Tensor-scalar elementwise (`add_scalar`, `rsub_scalar`, `rdiv_scalar`, ...).
    Scalar {
        /// Runtime entry point.
        f: crate::entry::Rt,
        /// Tensor operand.
        t: Src,
        /// Scalar operand.
        s: Src,
    },
    /// `mean_dim` / `sum_dim`.
    Reduce {
        /// Runtime entry point.
        f: crate::entry::Rt,
        /// Operand.
        t: Src,
        /// Static dim.
        dim: i64,
        /// Static keepdim.
        keepdim: bool,
    },
    /// Softmax over a static dim.
    Softmax {
        /// Operand.
        t: Src,
        /// Static dim.
        dim: i64,
    },
    /// A runtime function called with the given arguments, in order; its result (a tensor, a
    /// tuple of tensors, an `i64` or a tuple of `i64`) is the site's value.
    Call {
        /// Runtime entry point.
        f: crate::entry::Rt,
        /// Its arguments.
        args: Vec<Arg>,
    },
    /// Argmax over a static dim.
    Argmax {
        /// Operand.
        t: Src,
        /// Static dim.
        dim: i64,
        /// Static keepdim.
        keepdim: bool,
    },
}

/// A proven site.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The rule.
    pub rule_id: String,
    /// The result type.
    pub result: ValueType,
    /// The operation.
    pub op: Op,
}

/// Why a site has no plan: a rejection or not ours.
pub type NoPlan = ClaimOutcome;

/// What a planner answers.
pub type Planned = rextio_plugin_api::routes::Planned<Plan>;

/// The claim table: which planner answers each call target, method name and attribute. Rows
/// sharing a target are tried by priority; two rows of one target and priority are refused
/// (see [`rextio_plugin_api::routes`]).
pub static TABLE: ClaimTable<Plan> =
    ClaimTable::new(crate::PLUGIN_ID, codes::UNSUPPORTED_SURFACE, rows);

/// Rows of one site kind: `target => planner`, each row named by its kind and target.
macro_rules! rows {
    ($out:ident, $kind:ident: $($target:literal => $plan:expr),* $(,)?) => {
        $out.extend([$(Route::new(
            SiteKind::$kind,
            $target,
            concat!(stringify!($kind), " ", $target),
            $plan,
        )),*]);
    };
}

/// The rows of one table row's two spellings, `torch.<name>(...)` and `t.<name>(...)`, named
/// `<table>: torch.<name>` and `<table>: .<name>()`.
fn both_spellings(
    out: &mut Vec<Route<Planned>>,
    table: &str,
    name: &'static str,
    function: fn(&ClaimSite) -> Planned,
    method: fn(&ClaimSite) -> Planned,
) {
    call_spelling(out, table, "torch", "torch", name, function);
    out.push(Route::new(
        SiteKind::MethodCall,
        name,
        format!("{table}: .{name}()"),
        method,
    ));
}

/// The row of a table row's call spelling `<module>.<name>(...)`, named `<table>: <shown>.<name>`
/// (`shown` is how messages spell the module: `torch`, `F`).
fn call_spelling(
    out: &mut Vec<Route<Planned>>,
    table: &str,
    module: &str,
    shown: &str,
    name: &str,
    plan: fn(&ClaimSite) -> Planned,
) {
    out.push(Route::new(
        SiteKind::Call,
        format!("{module}.{name}"),
        format!("{table}: {shown}.{name}"),
        plan,
    ));
}

/// The table row a `torch.<name>(...)` site names, by `named`.
pub(crate) fn function_row<T>(
    site: &ClaimSite,
    named: impl FnOnce(&str) -> Option<T>,
) -> Result<T, NoPlan> {
    site.target
        .strip_prefix("torch.")
        .and_then(named)
        .ok_or(ClaimOutcome::NotCovered)
}

/// The table row a `t.<name>(...)` site names, by `named`.
pub(crate) fn method_row<T>(
    site: &ClaimSite,
    named: impl FnOnce(&str) -> Option<T>,
) -> Result<T, NoPlan> {
    named(&site.target).ok_or(ClaimOutcome::NotCovered)
}

/// Every row of the claim table.
pub(crate) fn rows() -> Vec<Route<Planned>> {
    let mut out = Vec::new();
    for u in crate::rules::UNARY_OPS {
        both_spellings(
            &mut out,
            "unary table",
            u.name,
            activations::plan_function,
            activations::plan_method,
        );
    }
    for r in crate::rules::REDUCTIONS {
        both_spellings(
            &mut out,
            "reduction table",
            r.name,
            reductions::plan_function,
            reductions::plan_method,
        );
        // Written exactly `t.mean(dim=1, keepdim=False)` on a rank-2 receiver, the form keeps
        // its own, older rule id; every other form is the general static-dim rule.
        if r.dim1_rule.is_some() {
            out.push(
                Route::new(
                    SiteKind::MethodCall,
                    r.name,
                    format!("reduction table: .{}(dim=1, keepdim=False)", r.name),
                    reductions::plan_dim1,
                )
                .guarded(1, reductions::is_dim1_form),
            );
        }
    }
    for r in crate::rules::CLASSIFICATION {
        both_spellings(
            &mut out,
            "classification table",
            r.name,
            classification::plan_function,
            classification::plan_method,
        );
        if r.functional != crate::rules::FunctionalForm::Unclaimed {
            call_spelling(
                &mut out,
                "classification table",
                "torch.nn.functional",
                "F",
                r.name,
                classification::plan_functional,
            );
        }
    }
    for f in crate::rules::FUNCTIONAL {
        call_spelling(
            &mut out,
            "functional table",
            "torch.nn.functional",
            "F",
            f.name,
            activations::plan_functional,
        );
    }
    for a in crate::rules::ARITHMETIC {
        call_spelling(
            &mut out,
            "arithmetic table",
            "torch",
            "torch",
            a.name,
            binops::plan_function,
        );
    }
    for c in crate::rules::CLAMPS {
        both_spellings(
            &mut out,
            "clamp table",
            c.name,
            elementwise::plan_clamp_function,
            elementwise::plan_clamp_method,
        );
    }
    for p in crate::rules::PAIRWISE {
        both_spellings(
            &mut out,
            "pairwise table",
            p.name,
            elementwise::plan_pairwise_function,
            elementwise::plan_pairwise_method,
        );
    }
    for f in crate::rules::FILLS {
        call_spelling(
            &mut out,
            "fill table",
            "torch",
            "torch",
            f.name,
            elementwise::plan_like,
        );
    }
    for r in crate::rules::LAYOUT {
        both_spellings(
            &mut out,
            "layout table",
            r.name,
            shape::plan_layout_function,
            shape::plan_layout_method,
        );
    }
    // One row per spelling of the shape-query table (two queries share `t.size`).
    let mut spelled = Vec::new();
    for q in crate::rules::QUERIES {
        for &site in q.sites {
            if !spelled.contains(&site) {
                spelled.push(site);
            }
        }
    }
    for site in spelled {
        let (kind, target) = site.route();
        out.push(Route::new(
            kind,
            target,
            format!("query table: {target}"),
            shape::plan_query,
        ));
    }
    rows!(out, Call:
        // `-t` (rextio_plugin_api::NEG_TARGET; a test pins the two equal).
        "operator.neg" => activations::plan_neg_operator,
        "torch.where" => compare::plan_where,
        "torch.nn.functional.layer_norm" => norm::plan_layer_norm,
        "torch.nn.functional.batch_norm" => norm::plan_batch_norm,
        "torch.max" => reductions::plan_max_dim,
        "torch.cat" => |s| concat::plan_cat(s, "cat"),
        "torch.concat" => |s| concat::plan_cat(s, "concat"),
        "torch.nn.functional.linear" => linear::plan,
        "torch.matmul" => binops::plan_matmul_call,
    );
    rows!(out, MethodCall:
        "matmul" => binops::plan_matmul_method,
        "max" => reductions::plan_max_dim,
    );
    rows!(out, Attribute:
        "T" => shape::plan_attribute,
    );
    out
}

/// Plan a site.
pub fn plan(site: &ClaimSite) -> Planned {
    // CUDA values reach only the CUDA slice, never a CPU rule.
    if cuda::LANE.owns(site) {
        return cuda::plan(site);
    }
    match site.kind {
        SiteKind::Call => TABLE.plan(site).unwrap_or(Err(ClaimOutcome::NotCovered)),
        SiteKind::MethodCall | SiteKind::Attribute => {
            let Some(recv) = &site.receiver else {
                return Err(ClaimOutcome::NotCovered);
            };
            if !is_ours(recv) {
                return Err(ClaimOutcome::NotCovered);
            }
            match TABLE.plan(site) {
                Some(planned) => planned,
                None if site.kind == SiteKind::Attribute => shape::plan_attribute(site),
                None => Err(reject(
                    codes::UNSUPPORTED_SURFACE,
                    format!(
                        "tensor method `.{}()` is not in the native rextio-torch surface",
                        site.target
                    ),
                    "keep this function in Python; in-place methods, views and method arithmetic are not lowered",
                )),
            }
        }
        SiteKind::BinOp => routes::operator(site, is_ours, binops::plan_binop),
        SiteKind::Compare => routes::operator(site, is_ours, compare::plan_compare),
    }
}

/// The symbols the claim table reaches (coverage documentation): every call target, every
/// method and attribute as `torch.Tensor.<name>`, every comparison as its dunder method.
pub fn symbols() -> Vec<String> {
    let mut out: Vec<String> = TABLE
        .targets(SiteKind::Call)
        .into_iter()
        .map(str::to_owned)
        .collect();
    for kind in [SiteKind::MethodCall, SiteKind::Attribute] {
        out.extend(
            TABLE
                .targets(kind)
                .into_iter()
                .map(|m| format!("torch.Tensor.{m}")),
        );
    }
    out.extend(
        crate::rules::COMPARISONS
            .iter()
            .map(|c| format!("torch.Tensor.__{}__", c.name)),
    );
    out
}

/// Decide a site.
pub fn claim(site: &ClaimSite) -> ClaimOutcome {
    rextio_plugin_api::kit::decide(plan(site).map(|p| (p.rule_id, p.result)))
}

/// Whether a rule belongs to the build-only CUDA lane.
pub fn is_cuda_rule(rule_id: &str) -> bool {
    crate::rules::CUDA_RULES.contains(&rule_id)
}

/// Whether an operand is one of this plugin's tensor types.
pub(crate) fn is_ours(op: &Operand) -> bool {
    op.key().is_some_and(|k| k.namespace() == "rextio-torch")
}

/// The float32 CPU rank of an operand, if it is a non-literal tensor of ours.
pub(crate) fn rank(op: &Operand) -> Option<u8> {
    F32_CPU.operand_rank(op)
}

/// Whether an operand is an int64 classification result.
pub(crate) fn is_i64(op: &Operand) -> bool {
    op.key().is_some_and(|k| k.as_str() == I64_CPU_1D)
}

/// The rank of a float32 CPU tensor operand; int64 classification results and anything else
/// are rejected with the matching code.
pub(crate) fn f32_rank(op: &Operand, what: &str) -> Result<u8, NoPlan> {
    if is_i64(op) {
        return Err(reject(
            codes::INT64_ARITHMETIC,
            format!("{what} on an int64 classification result is not lowered"),
            "use float32 scores; int64 results are for returning",
        ));
    }
    rank(op).ok_or_else(|| {
        reject(
            codes::UNSUPPORTED_SURFACE,
            format!(
                "{what} on {} is outside the float32 CPU rank-1/2 surface",
                describe(op)
            ),
            "keep this function in Python",
        )
    })
}

/// Describe an operand type for messages.
pub(crate) fn describe(op: &Operand) -> String {
    op.describe(|k| {
        crate::types::MARKERS
            .describe_key(k)
            .unwrap_or_else(|| k.to_string())
    })
}

pub(crate) use rextio_plugin_api::kit::reject;

/// A float32 CPU plan of result `rank`.
pub(crate) fn plan_f32(rule_id: impl Into<String>, rank: u8, op: Op) -> Result<Plan, NoPlan> {
    F32_CPU.result(rank).map(|result| Plan {
        rule_id: rule_id.into(),
        result,
        op,
    })
}

/// Bind a call's operands to a Python signature: `params` may be given positionally (in
/// order) or by keyword, `kw_only` only by keyword. A method's receiver is not part of it.
/// Returns the source of each bound name, or a message on a binding error.
pub(crate) fn bind<'a>(
    site: &ClaimSite,
    params: &[&'a str],
    kw_only: &[&'a str],
) -> Result<Vec<(&'a str, Src)>, String> {
    if site.args.len() > params.len() {
        return Err(format!(
            "takes at most {} positional argument(s), got {}",
            params.len(),
            site.args.len()
        ));
    }
    let mut bound: Vec<(&'a str, Src)> = params
        .iter()
        .zip(0..site.args.len())
        .map(|(p, i)| (*p, Src::Arg(i)))
        .collect();
    for (i, kw) in site.keywords.iter().enumerate() {
        let Some(name) = params.iter().chain(kw_only.iter()).find(|p| **p == kw.name) else {
            return Err(format!("unexpected keyword `{}`", kw.name));
        };
        if bound.iter().any(|(n, _)| n == name) {
            return Err(format!("`{}` is given more than once", kw.name));
        }
        bound.push((*name, Src::Kw(i)));
    }
    Ok(bound)
}

/// The tensor a tensor op reads: the receiver of a method call, else the function's bound
/// `input` (`missing` is the rejection when it has none); `NotCovered` when it is no operand.
pub(crate) fn subject<'s>(
    site: &'s ClaimSite,
    bound: &[(&str, Src)],
    missing: impl FnOnce() -> NoPlan,
) -> Result<(Src, &'s Operand), NoPlan> {
    let t = if site.receiver.is_some() {
        Src::Recv
    } else {
        get(bound, "input").ok_or_else(missing)?
    };
    let tensor = operand(site, t).ok_or(ClaimOutcome::NotCovered)?;
    Ok((t, tensor))
}

/// The operand a source points at.
pub(crate) fn operand(site: &ClaimSite, src: Src) -> Option<&Operand> {
    match src {
        Src::Recv => site.receiver.as_ref(),
        Src::Arg(i) => site.args.get(i),
        Src::Kw(i) => site.keywords.get(i).map(|k| &k.value),
    }
}

/// Look up a bound name.
pub(crate) fn get(bound: &[(&str, Src)], name: &str) -> Option<Src> {
    bound.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
}

/// The operands of `t.op(dim[, keepdim=b])` / `torch.op(t, dim[, keepdim=b])`.
pub(crate) struct DimArgs {
    /// The tensor.
    pub t: Src,
    /// The dim, given positionally or as `dim=` (once), if given.
    pub dim: Option<Src>,
    /// `keepdim=`, if given (never positionally).
    pub keepdim: Option<Src>,
}

/// Parse a static-dim call: the tensor (receiver or first positional), at most one more
/// positional (the dim), keywords `dim` and `keepdim` once each, and any keyword `extra`
/// accepts. Returns a reason on a form outside that shape.
pub(crate) fn dim_args(
    site: &ClaimSite,
    keepdim_allowed: bool,
    extra: impl Fn(&rextio_plugin_api::Keyword) -> bool,
) -> Result<DimArgs, String> {
    let (t, rest) = if site.receiver.is_some() {
        (Src::Recv, 0usize)
    } else if site.args.is_empty() {
        return Err("has no tensor".to_owned());
    } else {
        (Src::Arg(0), 1usize)
    };
    let positional = site.args.len().saturating_sub(rest);
    if positional > 1 {
        return Err("has a positional keepdim or extra arguments".to_owned());
    }
    let mut dim = (positional == 1).then_some(Src::Arg(rest));
    let mut keepdim = None;
    for (i, kw) in site.keywords.iter().enumerate() {
        match kw.name.as_str() {
            "dim" if dim.is_none() => dim = Some(Src::Kw(i)),
            "dim" => return Err("gives dim twice".to_owned()),
            "keepdim" if keepdim_allowed && keepdim.is_none() => keepdim = Some(Src::Kw(i)),
            _ if extra(kw) => {}
            other => return Err(format!("with keyword `{other}` is not lowered")),
        }
    }
    Ok(DimArgs { t, dim, keepdim })
}

/// A static int literal (not a bool).
pub(crate) fn int_literal(op: Option<&Operand>) -> Option<i64> {
    match op.and_then(|o| o.literal.as_ref()) {
        Some(Literal::Int(v)) => Some(*v),
        _ => None,
    }
}

/// Normalise a literal dim against a static rank, as eager does (`-1` is the last dim);
/// `None` when it is out of range.
pub(crate) fn norm_dim(d: i64, rank: u8) -> Option<i64> {
    let r = i64::from(rank);
    if (-r..0).contains(&d) {
        Some(d + r)
    } else if (0..r).contains(&d) {
        Some(d)
    } else {
        None
    }
}

/// A Python int or float operand (literal or parameter), never a bool.
pub(crate) fn is_number(op: &Operand) -> bool {
    matches!(op.ty, Some(ValueType::Int) | Some(ValueType::Float))
        && !matches!(op.literal, Some(Literal::Bool(_)))
}

/// A static bool literal.
pub(crate) fn bool_literal(op: Option<&Operand>) -> Option<bool> {
    match op.and_then(|o| o.literal.as_ref()) {
        Some(Literal::Bool(v)) => Some(*v),
        _ => None,
    }
}

#[cfg(test)]
pub(crate) mod tests;
