//! Matrix multiplication (`@`, `torch.matmul`, `.matmul`) and elementwise arithmetic
//! (`+ - * /`, `torch.add/sub/mul/div`, and tensor-scalar operators).

use super::{describe, is_i64, plan_f32, rank, reject, ClaimOutcome, NoPlan, Op, Plan, Src};
use crate::rules::ArithOp;
use crate::{codes, rules};
use rextio_plugin_api::{ClaimSite, Literal, Operand, ValueType};

fn plan_matmul(site: &ClaimSite, a: Src, b: Src, binop: bool) -> Result<Plan, NoPlan> {
    let (Some(oa), Some(ob)) = (super::operand(site, a), super::operand(site, b)) else {
        return Err(ClaimOutcome::NotCovered);
    };
    let (rule2, mixed) = if binop {
        (rules::MATMUL_BINOP, rules::MATMUL_BINOP_MIXED)
    } else {
        (rules::MATMUL_CALL, rules::MATMUL_CALL_MIXED)
    };
    match (rank(oa), rank(ob)) {
        (Some(2), Some(2)) => plan_f32(rule2, 2, Op::Matmul { a, b }),
        (Some(2), Some(1)) | (Some(1), Some(2)) => plan_f32(mixed, 1, Op::Matmul { a, b }),
        _ => Err(reject(
            codes::MATMUL_RANKS,
            format!("matmul of {} by {} is not lowered; supported: rank 2 x 2, 2 x 1, 1 x 2 float32 CPU tensors", describe(oa), describe(ob)),
            "rank-1 x rank-1 would be rank 0; keep it in Python",
        )),
    }
}

/// `torch.matmul(a, b)`.
pub fn plan_matmul_call(site: &ClaimSite) -> Result<Plan, NoPlan> {
    if site.args.len() != 2 || !site.keywords.is_empty() {
        return Err(reject(codes::MATMUL_FORM, "torch.matmul is lowered only as torch.matmul(a, b) with two positional tensors and no keywords", "drop the keywords"));
    }
    plan_matmul(site, Src::Arg(0), Src::Arg(1), false)
}

/// `a.matmul(b)`.
pub fn plan_matmul_method(site: &ClaimSite) -> Result<Plan, NoPlan> {
    if site.args.len() != 1 || !site.keywords.is_empty() {
        return Err(reject(
            codes::MATMUL_FORM,
            ".matmul is lowered only as a.matmul(b) with one positional tensor and no keywords",
            "write a.matmul(b)",
        ));
    }
    plan_matmul(site, Src::Recv, Src::Arg(0), false)
}

/// A scalar operand usable with a float32 tensor: Python int or float, literal or parameter.
fn is_scalar(op: &Operand) -> bool {
    matches!(op.ty, Some(ValueType::Int) | Some(ValueType::Float))
        && !matches!(op.literal, Some(Literal::Bool(_)))
}

/// Tensor-tensor ranks -> (rule, result rank).
fn tensor_pair(
    name: &str,
    a: &Operand,
    b: &Operand,
    function: bool,
) -> Result<(String, u8), NoPlan> {
    if is_i64(a) || is_i64(b) {
        return Err(reject(
            codes::INT64_ARITHMETIC,
            format!("`{name}` with an int64 classification result is not lowered"),
            "elementwise arithmetic is float32 only",
        ));
    }
    let rule = |broadcast| {
        if function {
            rules::function_elementwise(name)
        } else {
            rules::elementwise(name, broadcast)
        }
    };
    match (rank(a), rank(b)) {
        (Some(x), Some(y)) if x == y => Ok((rule(false), x)),
        (Some(2), Some(1)) | (Some(1), Some(2)) => Ok((rule(true), 2)),
        _ => Err(reject(
            codes::ELEMENTWISE_RANKS,
            format!(
                "`{name}` of {} and {} is not lowered",
                describe(a),
                describe(b)
            ),
            "use float32 tensors of equal ranks or a rank-2/rank-1 pair",
        )),
    }
}

/// The Python operator of an augmented assignment site (`+=` -> `+`), or `None`.
fn augmented(op: &str) -> Option<&str> {
    op.strip_suffix('=')
        .filter(|base| !base.is_empty() && !matches!(*base, "=" | "!" | "<" | ">"))
}

/// `a <op>= b` on a tensor local `a` (plugin API 1.17 offers it as operator `<op>=`): eager
/// updates `a` in place (`Tensor.__iadd__`), which natively is the operator's value rebound to
/// `a` when nothing else refers to `a`'s tensor ([`Operand::private`]) and the result keeps
/// `a`'s shape (checked where the sizes are known: a broadcast that would grow `a` raises
/// eager's error). Planned as `a <op> b` under the same rules.
fn plan_augmented(site: &ClaimSite, base: &str) -> Result<Plan, NoPlan> {
    let [a, b] = site.args.as_slice() else {
        return Err(ClaimOutcome::NotCovered);
    };
    let op = site.target.as_str();
    let Some(row) = ArithOp::of(base) else {
        return Err(reject(
            codes::UNSUPPORTED_SURFACE,
            format!("tensor operator `{op}` is not in the native rextio-torch surface (`+= -= *= /=` are)"),
            "keep this function in Python",
        ));
    };
    if !super::is_ours(a) {
        return Err(ClaimOutcome::NotCovered);
    }
    if !a.private {
        return Err(reject(
            codes::IN_PLACE,
            format!(
                "`{op}` updates its left operand in place in eager, and it is not a tensor this \
                 function made and nothing else refers to (a parameter, a weight, or a local read \
                 or copied since it was made)"
            ),
            "write `h = h + v`, or apply it right after `h = <op>(...)`",
        ));
    }
    let plan = plan_operator(row, a, b)?;
    if a.ty.as_ref() != Some(&plan.result) {
        return Err(reject(
            codes::ELEMENTWISE_RANKS,
            format!(
                "`{op}` of {} and {} would change its left operand's type, which eager refuses in place",
                describe(a),
                describe(b)
            ),
            "use operands the left one can hold",
        ));
    }
    Ok(match plan.op {
        Op::Binary { f, a, b, .. } => Plan {
            op: Op::Binary {
                f,
                a,
                b,
                keep: true,
            },
            ..plan
        },
        _ => plan,
    })
}

/// A binary operator with at least one operand of ours.
pub fn plan_binop(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let [a, b] = site.args.as_slice() else {
        return Err(ClaimOutcome::NotCovered);
    };
    let op = site.target.as_str();
    if op == "@" {
        return plan_matmul(site, Src::Arg(0), Src::Arg(1), true);
    }
    if let Some(base) = augmented(op) {
        return plan_augmented(site, base);
    }
    let Some(row) = ArithOp::of(op) else {
        return Err(reject(
            codes::UNSUPPORTED_SURFACE,
            format!("tensor operator `{op}` is not in the native rextio-torch surface (`+ - * / @` are)"),
            "keep this function in Python",
        ));
    };
    plan_operator(row, a, b)
}

/// `a <op> b` for a row of the arithmetic table, with at least one operand of ours.
fn plan_operator(row: &ArithOp, a: &Operand, b: &Operand) -> Result<Plan, NoPlan> {
    let op = row.op;
    let name = row.name;
    let (ta, tb) = (super::is_ours(a), super::is_ours(b));
    if ta && tb {
        let (rule, r) = tensor_pair(name, a, b, false)?;
        return plan_f32(
            rule,
            r,
            Op::Binary {
                f: row.tensors,
                a: Src::Arg(0),
                b: Src::Arg(1),
                keep: false,
            },
        );
    }
    // Exactly one tensor: the other must be a Python int or float.
    let (t, s, tensor_left) = if ta { (a, b, true) } else { (b, a, false) };
    if is_i64(t) {
        return Err(reject(
            codes::INT64_ARITHMETIC,
            format!("`{op}` on an int64 classification result is not lowered"),
            "elementwise arithmetic is float32 only",
        ));
    }
    if !is_scalar(s) {
        return Err(reject(
            codes::SCALAR_OPERAND,
            format!("`{op}` between a tensor and {} is not lowered; scalar operands must be Python int or float", describe(s)),
            "use an int or float operand",
        ));
    }
    let Some(r) = rank(t) else {
        return Err(reject(
            codes::UNSUPPORTED_SURFACE,
            format!("`{op}` on {} is not lowered", describe(t)),
            "keep this function in Python",
        ));
    };
    let f = if tensor_left {
        row.tensor_scalar
    } else {
        row.scalar_tensor
    };
    let (t_src, s_src) = if tensor_left {
        (Src::Arg(0), Src::Arg(1))
    } else {
        (Src::Arg(1), Src::Arg(0))
    };
    plan_f32(
        rules::scalar_elementwise(name),
        r,
        Op::Scalar {
            f,
            t: t_src,
            s: s_src,
        },
    )
}

/// `torch.<name>(a, b)` for a row of [`rules::ARITHMETIC`]: two positional tensors, no
/// options.
pub fn plan_function(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let row = super::function_row(site, ArithOp::named)?;
    let name = row.name;
    if !site.keywords.is_empty() {
        let names: Vec<&str> = site.keywords.iter().map(|k| k.name.as_str()).collect();
        return Err(reject(
            codes::FUNCTIONAL_OPTIONS,
            format!(
                "torch.{name} with keyword(s) {} is not lowered",
                names.join(", ")
            ),
            &format!("write torch.{name}(a, b) without options"),
        ));
    }
    let [a, b] = site.args.as_slice() else {
        return Err(reject(
            codes::FUNCTIONAL_OPTIONS,
            format!("torch.{name} takes two positional tensors here"),
            &format!("write torch.{name}(a, b)"),
        ));
    };
    if !(super::is_ours(a) && super::is_ours(b)) {
        return Err(reject(
            codes::FUNCTIONAL_OPTIONS,
            format!(
                "torch.{name} of {} and {} is not lowered; the functional form takes two tensors",
                describe(a),
                describe(b)
            ),
            "use the operator form for tensor-scalar arithmetic",
        ));
    }
    let (rule, r) = tensor_pair(name, a, b, true)?;
    plan_f32(
        rule,
        r,
        Op::Binary {
            f: row.tensors,
            a: Src::Arg(0),
            b: Src::Arg(1),
            keep: false,
        },
    )
}
