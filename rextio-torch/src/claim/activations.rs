//! Activations (`relu`, `sigmoid`, `tanh`), unary math (`abs`, `neg`, `negative`, `square`,
//! `exp`, `log`, `sqrt`), and the functional activations of [`rules::FUNCTIONAL`] (`F.relu`,
//! exact `F.gelu`, `F.silu`, `F.leaky_relu`, `F.elu`, `F.softplus`, `F.hardtanh`, `F.relu6`,
//! `F.dropout`).

use super::{bind, get, operand, plan_f32, reject, Arg, NoPlan, Op, Plan, Src};
use crate::entry::Rt;
use crate::rules::{Functional, FunctionalOp, Unary};
use crate::{codes, rules};
use rextio_plugin_api::{ClaimSite, Literal, ValueType};

/// `t.relu()`, `t.exp()`, ... (a row of [`rules::UNARY_OPS`]).
pub fn plan_method(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let name = site.target.as_str();
    if !site.args.is_empty() || !site.keywords.is_empty() {
        return Err(reject(
            codes::UNARY_ARGS,
            format!(".{name}() is lowered only without arguments"),
            &format!("call .{name}() with no arguments"),
        ));
    }
    let (Some(recv), Some(op)) = (&site.receiver, Unary::named(name)) else {
        return Err(super::ClaimOutcome::NotCovered);
    };
    let r = super::f32_rank(recv, &format!(".{name}()"))?;
    plan_f32(op.row().rule(r, true), r, Op::Math { op, t: Src::Recv })
}

/// `-t`, which the host offers as `operator.neg(t)`: `Tensor.__neg__` is `Tensor.neg`, so the
/// site plans as `torch.neg(t)`.
pub fn plan_neg_operator(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let ([t], true) = (site.args.as_slice(), site.keywords.is_empty()) else {
        return Err(super::ClaimOutcome::NotCovered);
    };
    let op = Unary::Neg;
    let r = super::f32_rank(t, "-t")?;
    plan_f32(op.row().rule(r, false), r, Op::Math { op, t: Src::Arg(0) })
}

/// `torch.relu(t)`, `torch.exp(t)`, ... (a row of [`rules::UNARY_OPS`]).
pub fn plan_function(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let Some(name) = site.target.strip_prefix("torch.") else {
        return Err(super::ClaimOutcome::NotCovered);
    };
    let ([t], true) = (site.args.as_slice(), site.keywords.is_empty()) else {
        return Err(reject(
            codes::UNARY_ARGS,
            format!("torch.{name} is lowered only with one positional tensor and no keywords"),
            &format!("write torch.{name}(t)"),
        ));
    };
    let Some(op) = Unary::named(name) else {
        return Err(super::ClaimOutcome::NotCovered);
    };
    let r = super::f32_rank(t, &format!("torch.{name}"))?;
    plan_f32(op.row().rule(r, false), r, Op::Math { op, t: Src::Arg(0) })
}

/// `torch.nn.functional.<name>(t, ...)` for a row of [`rules::FUNCTIONAL`].
pub fn plan_functional(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let row = site
        .target
        .strip_prefix("torch.nn.functional.")
        .and_then(FunctionalOp::named)
        .ok_or(super::ClaimOutcome::NotCovered)?;
    match row.op {
        Functional::Relu => plan_f_relu(site),
        Functional::Gelu => plan_gelu(site),
        Functional::Silu => plan_silu(site),
        Functional::LeakyRelu => plan_leaky_relu(site),
        Functional::Elu => plan_elu(site),
        Functional::Softplus => plan_softplus(site),
        Functional::Hardtanh => plan_hardtanh(site),
        Functional::Relu6 => plan_relu6(site),
        Functional::Dropout => plan_dropout(site),
    }
}

/// `F.relu(t[, inplace=False])`.
fn plan_f_relu(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let form = |why: String| {
        reject(
            codes::UNARY_ARGS,
            format!("F.relu {why}"),
            "write F.relu(t)",
        )
    };
    let bound = bind(site, &["input", "inplace"], &[]).map_err(form)?;
    if get(&bound, "input") != Some(Src::Arg(0)) {
        return Err(form(
            "needs its tensor as the first positional argument".into(),
        ));
    }
    not_in_place(site, &bound, "F.relu")?;
    let r = super::f32_rank(&site.args[0], "F.relu")?;
    plan_f32(
        rules::F_RELU,
        r,
        Op::Math {
            op: Unary::Relu,
            t: Src::Arg(0),
        },
    )
}

/// `F.gelu(t[, approximate="none"])`.
fn plan_gelu(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let form = |why: String| {
        reject(
            codes::GELU_APPROXIMATE,
            format!("F.gelu {why}"),
            "write F.gelu(t), F.gelu(t, approximate=\"none\") or F.gelu(t, approximate=\"tanh\")",
        )
    };
    let bound = bind(site, &["input"], &["approximate"]).map_err(form)?;
    if get(&bound, "input") != Some(Src::Arg(0)) {
        return Err(form(
            "needs its tensor as the only positional argument".into(),
        ));
    }
    let mut tanh = false;
    if let Some(s) = get(&bound, "approximate") {
        match operand(site, s).and_then(|o| o.literal.as_ref()) {
            Some(Literal::Str(v)) if v == "none" => {}
            Some(Literal::Str(v)) if v == "tanh" => tanh = true,
            Some(Literal::Str(v)) => {
                return Err(form(format!(
                    "with approximate={v:?} is neither exact GELU nor its tanh form"
                )))
            }
            _ => return Err(form("with a non-literal approximate is not lowered".into())),
        }
    }
    let r = super::f32_rank(&site.args[0], "F.gelu")?;
    if tanh {
        return plan_f32(
            rules::GELU_TANH,
            r,
            Op::Call {
                f: Rt::GeluTanh,
                args: vec![Arg::Tensor(Src::Arg(0))],
            },
        );
    }
    plan_f32(
        rules::GELU,
        r,
        Op::Unary {
            f: Rt::GeluNone,
            t: Src::Arg(0),
        },
    )
}

/// Check an `inplace` operand: omitted or a literal `False`, or a literal `True` on an input the
/// host proved private ([`rextio_plugin_api::Operand::private`]): a tensor the function made
/// itself that nothing else sees, so writing into it in eager and computing a new tensor
/// natively give the caller the same result.
fn not_in_place(site: &ClaimSite, bound: &[(&str, Src)], shown: &str) -> Result<(), NoPlan> {
    let Some(s) = get(bound, "inplace") else {
        return Ok(());
    };
    match operand(site, s).and_then(|o| o.literal.as_ref()) {
        Some(Literal::Bool(false)) => Ok(()),
        Some(Literal::Bool(true)) => {
            let private = get(bound, "input")
                .and_then(|i| operand(site, i))
                .is_some_and(|o| o.private);
            if private {
                Ok(())
            } else {
                Err(reject(
                    codes::IN_PLACE,
                    format!(
                        "{shown} with inplace=True writes into its input, which is not a tensor \
                         this function made and nothing else refers to"
                    ),
                    "write `h = F.relu(h, inplace=True)` right after `h = <op>(...)`, apply it \
                     to a call's result directly, or drop inplace",
                ))
            }
        }
        _ => Err(reject(
            codes::IN_PLACE,
            format!(
                "{shown} with inplace other than a literal True or False may write into its input"
            ),
            "pass inplace=False or a literal inplace=True",
        )),
    }
}

/// A parameter passed to eager's kernel as a double: a float literal or parameter, or an int
/// literal small enough that float and int arithmetic agree on it (eager converts either to
/// the kernel's float).
fn float_param(site: &ClaimSite, s: Src, shown: &str, p: &str) -> Result<Arg, NoPlan> {
    let Some(o) = operand(site, s) else {
        return Err(super::ClaimOutcome::NotCovered);
    };
    match (&o.ty, &o.literal) {
        (Some(ValueType::Float), _) => Ok(Arg::Scalar(s)),
        (_, Some(Literal::Int(v))) if v.unsigned_abs() <= 1 << 24 => {
            // Exact: |v| <= 2^24 is a float and a double alike.
            #[allow(clippy::cast_precision_loss)]
            Ok(Arg::Float(*v as f64))
        }
        _ => Err(reject(
            codes::ACTIVATION_PARAMS,
            format!("{shown} with {p} {} is not lowered", super::describe(o)),
            &format!("pass {p} as a float literal or a float parameter"),
        )),
    }
}

/// A literal number equal to `v`.
fn literal_is(site: &ClaimSite, s: Src, v: f64) -> bool {
    number_literal(site, s) == Some(v)
}

/// Bound parameter names and their sources.
type Bound<'a> = Vec<(&'a str, Src)>;

/// Bind a parameterised activation whose tensor comes first and positionally.
fn bind_activation<'a>(
    site: &ClaimSite,
    shown: &str,
    params: &[&'a str],
) -> Result<(Bound<'a>, u8), NoPlan> {
    let form = |why: String| {
        reject(
            codes::ACTIVATION_PARAMS,
            format!("{shown} {why}"),
            &format!("write {shown}(t) with default parameters"),
        )
    };
    let bound = bind(site, params, &[]).map_err(form)?;
    if get(&bound, "input") != Some(Src::Arg(0)) {
        return Err(form(
            "needs its tensor as the first positional argument".into(),
        ));
    }
    let r = super::f32_rank(&site.args[0], shown)?;
    Ok((bound, r))
}

/// `F.silu(t[, inplace=False])`.
fn plan_silu(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let (bound, r) = bind_activation(site, "F.silu", &["input", "inplace"])?;
    not_in_place(site, &bound, "F.silu")?;
    plan_f32(
        rules::SILU,
        r,
        Op::Unary {
            f: Rt::Silu,
            t: Src::Arg(0),
        },
    )
}

/// `F.leaky_relu(t[, negative_slope][, inplace=False])`.
fn plan_leaky_relu(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let shown = "F.leaky_relu";
    let (bound, r) = bind_activation(site, shown, &["input", "negative_slope", "inplace"])?;
    not_in_place(site, &bound, shown)?;
    match get(&bound, "negative_slope") {
        None => plan_f32(
            rules::LEAKY_RELU,
            r,
            Op::Unary {
                f: Rt::LeakyRelu,
                t: Src::Arg(0),
            },
        ),
        Some(s) if literal_is(site, s, 0.01) => plan_f32(
            rules::LEAKY_RELU,
            r,
            Op::Unary {
                f: Rt::LeakyRelu,
                t: Src::Arg(0),
            },
        ),
        Some(s) => {
            let Some(slope) = operand(site, s) else {
                return Err(super::ClaimOutcome::NotCovered);
            };
            if !super::is_number(slope) {
                return Err(reject(
                    codes::ACTIVATION_PARAMS,
                    format!(
                        "{shown} with negative_slope {} is not lowered",
                        super::describe(slope)
                    ),
                    "pass negative_slope as a Python int or float",
                ));
            }
            plan_f32(
                rules::LEAKY_RELU_SLOPE,
                r,
                Op::Call {
                    f: Rt::LeakyReluSlope,
                    args: vec![Arg::Tensor(Src::Arg(0)), Arg::Scalar(s)],
                },
            )
        }
    }
}

/// `F.elu(t[, alpha=1.0][, inplace=False])`.
fn plan_elu(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let shown = "F.elu";
    let (bound, r) = bind_activation(site, shown, &["input", "alpha", "inplace"])?;
    not_in_place(site, &bound, shown)?;
    if let Some(s) = get(&bound, "alpha").filter(|s| !literal_is(site, *s, 1.0)) {
        let alpha = float_param(site, s, shown, "alpha")?;
        return plan_f32(
            rules::ELU_ALPHA,
            r,
            Op::Call {
                f: Rt::EluAlpha,
                args: vec![Arg::Tensor(Src::Arg(0)), alpha],
            },
        );
    }
    plan_f32(
        rules::ELU,
        r,
        Op::Unary {
            f: Rt::Elu,
            t: Src::Arg(0),
        },
    )
}

/// `F.softplus(t[, beta=1][, threshold=20])`.
fn plan_softplus(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let shown = "F.softplus";
    let (bound, r) = bind_activation(site, shown, &["input", "beta", "threshold"])?;
    let mut params = Vec::new();
    let mut defaults = true;
    for (p, default) in [("beta", 1.0), ("threshold", 20.0)] {
        match get(&bound, p) {
            Some(s) if !literal_is(site, s, default) => {
                defaults = false;
                params.push(float_param(site, s, shown, p)?);
            }
            _ => params.push(Arg::Float(default)),
        }
    }
    if !defaults {
        let mut args = vec![Arg::Tensor(Src::Arg(0))];
        args.extend(params);
        return plan_f32(
            rules::SOFTPLUS_PARAMS,
            r,
            Op::Call {
                f: Rt::SoftplusParams,
                args,
            },
        );
    }
    plan_f32(
        rules::SOFTPLUS,
        r,
        Op::Unary {
            f: Rt::Softplus,
            t: Src::Arg(0),
        },
    )
}

/// `F.hardtanh(t[, min_val=-1.0][, max_val=1.0][, inplace=False])` with bounds that are int or
/// float literals, `min_val <= max_val` (eager raises a ValueError otherwise, so such a site
/// stays Python). Eager computes it as `clamp(t, min_val, max_val)`, and so does the native
/// path, bit for bit (signed zeros, NaN and infinities included).
fn plan_hardtanh(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let shown = "F.hardtanh";
    let params = ["input", "min_val", "max_val", "inplace"];
    let (bound, r) = bind_activation(site, shown, &params)?;
    not_in_place(site, &bound, shown)?;
    let mut bounds = [(-1.0, Arg::Float(-1.0)), (1.0, Arg::Float(1.0))];
    for (p, slot) in ["min_val", "max_val"].into_iter().zip(&mut bounds) {
        let Some(s) = get(&bound, p) else { continue };
        let Some(v) = number_literal(site, s) else {
            return Err(reject(
                codes::ACTIVATION_PARAMS,
                format!("{shown} with a {p} other than an int or float literal is not lowered"),
                "write min_val and max_val as number literals",
            ));
        };
        *slot = (v, Arg::Scalar(s));
    }
    let [(lo, lo_arg), (hi, hi_arg)] = bounds;
    if lo > hi {
        return Err(reject(
            codes::ACTIVATION_PARAMS,
            format!("{shown} with min_val {lo} above max_val {hi} raises in eager"),
            "pass min_val <= max_val",
        ));
    }
    let args = vec![Arg::Tensor(Src::Arg(0)), lo_arg, hi_arg];
    plan_f32(rules::HARDTANH, r, Op::Call { f: Rt::Clamp, args })
}

/// `F.relu6(t[, inplace=False])`: eager's `hardtanh(t, 0, 6)`, so `clamp(t, 0, 6)`.
fn plan_relu6(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let (bound, r) = bind_activation(site, "F.relu6", &["input", "inplace"])?;
    not_in_place(site, &bound, "F.relu6")?;
    let args = vec![Arg::Tensor(Src::Arg(0)), Arg::Int(0), Arg::Int(6)];
    plan_f32(rules::RELU6, r, Op::Call { f: Rt::Clamp, args })
}

/// A number literal whose value as a float is exact (an int within 32 bits, or a float).
fn number_literal(site: &ClaimSite, s: Src) -> Option<f64> {
    match operand(site, s).and_then(|o| o.literal.as_ref()) {
        Some(Literal::Float(x)) => Some(*x),
        Some(Literal::Int(x)) => i32::try_from(*x).ok().map(f64::from),
        _ => None,
    }
}

/// `F.dropout(t[, p=0.5][, training=True][, inplace=False])` through eager's own kernel. `p` is
/// a float literal in [0, 1] (one outside makes eager raise, so that site stays Python), an int
/// literal 0 or 1, or a float value the runtime checks as eager does; `training` is a bool
/// literal or a bool value such as `self.training`; `inplace` is omitted or a literal False.
/// The rule is not fresh: out of training mode eager returns the input itself.
fn plan_dropout(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let shown = "F.dropout";
    let (bound, r) = bind_activation(site, shown, &["input", "p", "training", "inplace"])?;
    if let Some(s) = get(&bound, "inplace") {
        if !matches!(
            operand(site, s).and_then(|o| o.literal.as_ref()),
            Some(Literal::Bool(false))
        ) {
            return Err(reject(
                codes::IN_PLACE,
                "F.dropout with inplace other than a literal False writes into its input",
                "drop inplace (F.dropout(h, p, training=self.training) returns a new tensor in \
                 training mode and h itself otherwise)",
            ));
        }
    }
    let p = match get(&bound, "p") {
        None => Arg::Float(0.5),
        Some(s) => {
            let o = operand(site, s).ok_or(super::ClaimOutcome::NotCovered)?;
            match (&o.ty, &o.literal) {
                (_, Some(Literal::Float(v))) if (0.0..=1.0).contains(v) => Arg::Float(*v),
                (_, Some(Literal::Int(v))) if *v == 0 || *v == 1 =>
                {
                    #[allow(clippy::cast_precision_loss)]
                    Arg::Float(*v as f64)
                }
                (Some(ValueType::Float), None) => Arg::Scalar(s),
                _ => {
                    return Err(reject(
                        codes::ACTIVATION_PARAMS,
                        format!("F.dropout with p {} is not lowered", super::describe(o)),
                        "pass p as a float literal in [0, 1] or a float parameter",
                    ))
                }
            }
        }
    };
    let training = match get(&bound, "training") {
        None => Arg::Bool(true),
        Some(s) => {
            let o = operand(site, s).ok_or(super::ClaimOutcome::NotCovered)?;
            match (&o.ty, &o.literal) {
                (_, Some(Literal::Bool(b))) => Arg::Bool(*b),
                (Some(ValueType::Bool), None) => Arg::Scalar(s),
                _ => {
                    return Err(reject(
                        codes::ACTIVATION_PARAMS,
                        format!(
                            "F.dropout with training {} is not lowered",
                            super::describe(o)
                        ),
                        "pass training as a bool literal or a bool value such as self.training",
                    ))
                }
            }
        }
    };
    plan_f32(
        rules::DROPOUT,
        r,
        Op::Call {
            f: Rt::Dropout,
            args: vec![Arg::Tensor(Src::Arg(0)), p, training],
        },
    )
}
