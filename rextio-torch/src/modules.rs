//! `nn.Module` classes: which `torch.nn` submodules a compiled method may call, what each holds
//! and what calling it computes, as a call site of the functional surface (`nn.Linear` is
//! `F.linear(x, weight, bias)`). Every value named here is read from the live module at each
//! call and checked there; a literal taken from the constructor (`nn.Softmax(dim=-1)`) becomes a
//! condition on the live attribute, so a module whose attribute was changed later runs its
//! original forward instead of a stale constant.

use crate::codes;
use crate::types::F32_CPU;
use rextio_plugin_api::{
    CallEntry, CallPart, CtorArg, Diagnostic, Literal, ModuleAnswer, ModuleCtor, ModuleSupport,
    SubmoduleCall, SubmoduleKind, ValueType, CTOR_OPERATORS, NEG_TARGET,
};

/// What rextio-torch declares about `torch.nn` module classes.
pub fn support() -> ModuleSupport {
    ModuleSupport {
        bases: vec![
            "torch.nn.Module".into(),
            "torch.nn.modules.module.Module".into(),
        ],
        sequential: vec![
            "torch.nn.Sequential".into(),
            "torch.nn.modules.container.Sequential".into(),
        ],
        lists: vec![
            "torch.nn.ModuleList".into(),
            "torch.nn.modules.container.ModuleList".into(),
        ],
        dicts: vec![
            "torch.nn.ModuleDict".into(),
            "torch.nn.modules.container.ModuleDict".into(),
        ],
        register_methods: vec!["register_buffer".into(), "register_parameter".into()],
        stores: vec!["_parameters".into(), "_buffers".into(), "_modules".into()],
        tensor_stores: vec!["_parameters".into(), "_buffers".into()],
        module_stores: vec!["_modules".into()],
        children_store: "_modules".into(),
        call_check_fn: "::rextio_torch::runtime::module_call_check".into(),
        global_check_fn: "::rextio_torch::runtime::module_global_check".into(),
        admit_fn: "::rextio_torch::runtime::module_admit".into(),
        warn_categories: vec!["grad".into()],
        traced_checks: true,
        // `Module.__init__` sets `training` on every instance; `.train()` / `.eval()` flip it.
        base_attrs: vec![("training".into(), ValueType::Bool)],
        // With nothing registered, `Module.__call__` calls `forward(*args, **kwargs)`.
        stamp_fn: Some("::rextio_torch::runtime::module_stamps".into()),
        call_entry: Some(CallEntry {
            method: "forward".into(),
            // `_wrapped_call_impl` (the inherited `__call__`) calls `self._call_impl`.
            pinned: vec!["_call_impl".into()],
            check_fn: "::rextio_torch::runtime::module_entry_check".into(),
        }),
    }
}

/// A refusal, boxed (answers are large and refusals rare).
type Refused = Box<ModuleAnswer>;

fn refuse(what: &str, why: impl Into<String>) -> Refused {
    Box::new(reject(what, why))
}

fn reject(what: &str, why: impl Into<String>) -> ModuleAnswer {
    ModuleAnswer::Rejected(
        Diagnostic::error(codes::MODULE_FORM, format!("{what} {}", why.into())).with_suggestion(
            "see `rextio explain RXTP-TORCH-031` for the submodule forms a compiled method calls",
        ),
    )
}

/// The literal of an argument, if it is one.
fn lit(a: Option<&CtorArg>) -> Option<&Literal> {
    match a {
        Some(CtorArg::Value(o)) => o.literal.as_ref(),
        _ => None,
    }
}

/// A boolean constructor option: `Ok(default)` when omitted, the literal when given, `Err` when
/// it is not a literal (which branch is taken cannot be proven).
fn flag(ctor: &ModuleCtor, i: usize, name: &str, default: bool) -> Result<bool, Refused> {
    match ctor.arg(i, name) {
        None => Ok(default),
        Some(a) => match lit(Some(a)) {
            Some(Literal::Bool(b)) => Ok(*b),
            _ => Err(refuse(
                &short(&ctor.target),
                format!("needs `{name}` as a literal True or False"),
            )),
        },
    }
}

fn short(target: &str) -> String {
    target
        .strip_prefix("torch.nn.")
        .map_or_else(|| target.to_owned(), |s| format!("nn.{s}"))
}

/// A float option: a literal becomes a condition on the live attribute and a literal operand;
/// anything else (an `__init__` parameter) is read from the live attribute.
fn float_option(
    ctor: &ModuleCtor,
    i: usize,
    name: &str,
    default: f64,
    parts: &mut Parts,
) -> Result<CallPart, Refused> {
    match ctor.arg(i, name) {
        None => {
            parts.condition(name, Literal::Float(default));
            Ok(CallPart::Lit(Literal::Float(default)))
        }
        Some(a) => match lit(Some(a)) {
            Some(Literal::Float(v)) => {
                parts.condition(name, Literal::Float(*v));
                Ok(CallPart::Lit(Literal::Float(*v)))
            }
            Some(Literal::Int(v)) => {
                // `nn.ELU(alpha=1)`: torch keeps the int; the condition compares the live value.
                parts.condition(name, Literal::Int(*v));
                Ok(CallPart::Lit(Literal::Float(*v as f64)))
            }
            Some(_) => Err(refuse(
                &short(&ctor.target),
                format!("needs `{name}` as a number"),
            )),
            None => {
                parts.attr(name, ValueType::Float);
                Ok(CallPart::Attr(name.into()))
            }
        },
    }
}

fn site(target: &str, args: Vec<CallPart>, keywords: Vec<(&str, CallPart)>) -> SubmoduleCall {
    SubmoduleCall::Site {
        target: target.into(),
        args,
        keywords: keywords
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
    }
}

fn kind(
    class_path: &str,
    attrs: Vec<(String, ValueType)>,
    conditions: Vec<(String, Literal)>,
    call: SubmoduleCall,
) -> ModuleAnswer {
    ModuleAnswer::Submodule(SubmoduleKind {
        class_path: class_path.into(),
        attrs,
        conditions,
        call,
    })
}

/// `inplace`, omitted or a literal, which the live module must keep (a condition): no keyword
/// for False, `inplace=True` for True, so the call is the functional in-place form, which is
/// lowered only where the host proves its input private (see `RXTP-TORCH-004`).
fn in_place(
    ctor: &ModuleCtor,
    i: usize,
    parts: &mut Parts,
) -> Result<Vec<(&'static str, CallPart)>, Refused> {
    let on = flag(ctor, i, "inplace", false)?;
    parts.condition("inplace", Literal::Bool(on));
    Ok(if on {
        vec![("inplace", CallPart::Lit(Literal::Bool(true)))]
    } else {
        vec![]
    })
}

/// The kind of a `torch.nn` submodule constructor, or of a tensor attribute's value.
pub fn kind_of(ctor: &ModuleCtor) -> ModuleAnswer {
    match answer(ctor) {
        Ok(a) => a,
        Err(a) => *a,
    }
}

fn answer(ctor: &ModuleCtor) -> Result<ModuleAnswer, Refused> {
    let t = ctor.target.as_str();
    if !t.starts_with("torch.nn.") {
        return Ok(tensor_value(ctor));
    }
    let name = t
        .strip_prefix("torch.nn.modules.")
        .and_then(|s| s.rsplit('.').next())
        .or_else(|| t.strip_prefix("torch.nn."))
        .unwrap_or("");
    if name == "Parameter" || name == "parameter.Parameter" {
        let Some(CtorArg::Call(inner)) = ctor.arg(0, "data") else {
            return Err(refuse(
                "nn.Parameter",
                "needs its data as a tensor constructor call (`torch.zeros(d)`, `torch.randn(a, b) * 0.02`) so its rank is known",
            ));
        };
        return Ok(tensor_value(inner));
    }
    let Some((_, read)) = KINDS.iter().find(|(n, _)| *n == name) else {
        return Ok(ModuleAnswer::NotCovered);
    };
    let mut parts = Parts::default();
    let call = read(ctor, &mut parts)?;
    Ok(kind(
        &format!("torch.nn.{name}"),
        parts.attrs,
        parts.conditions,
        call,
    ))
}

/// What a kind's reader states besides its call: the live attributes the call reads (with
/// their types) and the conditions on live attributes the constructor's literals became.
#[derive(Default)]
struct Parts {
    attrs: Vec<(String, ValueType)>,
    conditions: Vec<(String, Literal)>,
}

impl Parts {
    fn condition(&mut self, name: &str, value: Literal) {
        self.conditions.push((name.into(), value));
    }

    fn attr(&mut self, name: &str, ty: ValueType) {
        self.attrs.push((name.into(), ty));
    }

    /// A normalisation's weight or bias `name`: the live rank-1 attribute when the module was
    /// built with it (`present`), else `None` (the live attribute must be `None` too).
    fn optional_vector(&mut self, name: &str, present: bool) -> CallPart {
        if present {
            self.attr(name, f32_1());
            CallPart::Attr(name.into())
        } else {
            self.attr(name, ValueType::NoneType);
            CallPart::Lit(Literal::None)
        }
    }
}

/// How a kind's constructor is read: its call, as a site of the functional surface.
type Reader = fn(&ModuleCtor, &mut Parts) -> Result<SubmoduleCall, Refused>;

/// The `torch.nn` module kinds a compiled method may call, one row each: the class name (after
/// `torch.nn.`) and its reader.
const KINDS: &[(&str, Reader)] = &[
    ("Linear", linear),
    ("LayerNorm", layer_norm),
    ("BatchNorm1d", batch_norm),
    ("ReLU", |c, p| pointwise(c, p, "torch.relu", Some("relu"))),
    ("SiLU", |c, p| {
        pointwise(c, p, "torch.nn.functional.silu", Some("silu"))
    }),
    ("Tanh", |c, p| pointwise(c, p, "torch.tanh", None)),
    ("Sigmoid", |c, p| pointwise(c, p, "torch.sigmoid", None)),
    ("GELU", gelu),
    ("LeakyReLU", leaky_relu),
    ("ELU", elu),
    ("Softplus", softplus),
    ("Hardtanh", hardtanh),
    ("ReLU6", relu6),
    ("Identity", |_, _| Ok(SubmoduleCall::Identity)),
    ("Flatten", flatten),
    ("Dropout", dropout),
    ("Softmax", |c, p| softmax(c, p, "torch.softmax")),
    ("LogSoftmax", |c, p| softmax(c, p, "torch.log_softmax")),
];

fn functional(name: &str) -> String {
    format!("torch.nn.functional.{name}")
}

/// `nn.Linear(in, out, bias=True)`: `F.linear(x, weight[, bias])`.
fn linear(ctor: &ModuleCtor, parts: &mut Parts) -> Result<SubmoduleCall, Refused> {
    let bias = flag(ctor, 2, "bias", true)?;
    if ctor.arg(3, "device").is_some() || ctor.arg(4, "dtype").is_some() {
        return Err(refuse(
            "nn.Linear",
            "with a device or dtype is not float32 CPU",
        ));
    }
    parts.attr("weight", f32_2());
    parts.attr("bias", if bias { f32_1() } else { ValueType::NoneType });
    let args = if bias {
        vec![
            CallPart::Input,
            CallPart::Attr("weight".into()),
            CallPart::Attr("bias".into()),
        ]
    } else {
        vec![CallPart::Input, CallPart::Attr("weight".into())]
    };
    Ok(site(&functional("linear"), args, vec![]))
}

/// `nn.LayerNorm(d, eps, elementwise_affine, bias)` over the last dim:
/// `F.layer_norm(x, normalized_shape, weight, bias, eps)`.
fn layer_norm(ctor: &ModuleCtor, parts: &mut Parts) -> Result<SubmoduleCall, Refused> {
    if let Some(CtorArg::Value(o)) = ctor.arg(0, "normalized_shape") {
        if matches!(&o.ty, Some(ValueType::Tuple(items)) if items.len() != 1) {
            return Err(refuse(
                "nn.LayerNorm",
                "normalises several dims; only the last dim is compiled",
            ));
        }
    }
    let affine = flag(ctor, 2, "elementwise_affine", true)?;
    let bias = flag(ctor, 3, "bias", true)?;
    if ctor.arg(4, "device").is_some() || ctor.arg(5, "dtype").is_some() {
        return Err(refuse(
            "nn.LayerNorm",
            "with a device or dtype is not float32 CPU",
        ));
    }
    parts.attr("normalized_shape", ValueType::Tuple(vec![ValueType::Int]));
    parts.attr("eps", ValueType::Float);
    let w = parts.optional_vector("weight", affine);
    let b = parts.optional_vector("bias", affine && bias);
    let args = vec![
        CallPart::Input,
        CallPart::Attr("normalized_shape".into()),
        w,
        b,
        CallPart::Attr("eps".into()),
    ];
    Ok(site(&functional("layer_norm"), args, vec![]))
}

/// `nn.BatchNorm1d(n, eps, momentum, affine, track_running_stats)` in eval mode:
/// `F.batch_norm(x, running_mean, running_var, weight, bias, training=False, eps=eps)`. In
/// training mode (which updates the running statistics) the original runs; so it does without
/// running statistics.
fn batch_norm(ctor: &ModuleCtor, parts: &mut Parts) -> Result<SubmoduleCall, Refused> {
    let affine = flag(ctor, 3, "affine", true)?;
    if !flag(ctor, 4, "track_running_stats", true)? {
        return Err(refuse(
            "nn.BatchNorm1d",
            "without running statistics (track_running_stats=False) normalises by each batch; only running statistics are compiled",
        ));
    }
    if ctor.arg(5, "device").is_some() || ctor.arg(6, "dtype").is_some() {
        return Err(refuse(
            "nn.BatchNorm1d",
            "with a device or dtype is not float32 CPU",
        ));
    }
    parts.condition("training", Literal::Bool(false));
    parts.condition("track_running_stats", Literal::Bool(true));
    parts.attr("running_mean", f32_1());
    parts.attr("running_var", f32_1());
    parts.attr("eps", ValueType::Float);
    let w = parts.optional_vector("weight", affine);
    let b = parts.optional_vector("bias", affine);
    let args = vec![
        CallPart::Input,
        CallPart::Attr("running_mean".into()),
        CallPart::Attr("running_var".into()),
        w,
        b,
    ];
    Ok(site(
        &functional("batch_norm"),
        args,
        vec![
            ("training", CallPart::Lit(Literal::Bool(false))),
            ("eps", CallPart::Attr("eps".into())),
        ],
    ))
}

/// An activation without parameters (`nn.ReLU`, `nn.Tanh`, ...): `target(x)`. `in_place_fn`:
/// for a class taking an `inplace` flag, the `torch.nn.functional` function its in-place form
/// calls (`F.relu(x, inplace=True)`); a class without one takes no arguments.
fn pointwise(
    ctor: &ModuleCtor,
    parts: &mut Parts,
    target: &str,
    in_place_fn: Option<&str>,
) -> Result<SubmoduleCall, Refused> {
    let Some(f) = in_place_fn else {
        if !ctor.args.is_empty() || !ctor.keywords.is_empty() {
            return Err(refuse(&short(&ctor.target), "takes no arguments"));
        }
        return Ok(site(target, vec![CallPart::Input], vec![]));
    };
    let keywords = in_place(ctor, 0, parts)?;
    if keywords.is_empty() {
        Ok(site(target, vec![CallPart::Input], vec![]))
    } else {
        Ok(site(&functional(f), vec![CallPart::Input], keywords))
    }
}

/// `nn.GELU()` exact: `F.gelu(x)`; `nn.GELU(approximate="tanh")`: `F.gelu(x,
/// approximate="tanh")`. The live `approximate` must stay the one the call was proven with.
fn gelu(ctor: &ModuleCtor, parts: &mut Parts) -> Result<SubmoduleCall, Refused> {
    let tanh = match lit(ctor.arg(0, "approximate")) {
        None if ctor.arg(0, "approximate").is_none() => false,
        Some(Literal::Str(s)) if s == "none" => false,
        Some(Literal::Str(s)) if s == "tanh" => true,
        _ => {
            return Err(refuse(
                "nn.GELU",
                "is compiled exact or in its tanh form (approximate omitted, \"none\" or \"tanh\", a literal)",
            ))
        }
    };
    let form = if tanh { "tanh" } else { "none" };
    parts.condition("approximate", Literal::Str(form.into()));
    // The exact form is `F.gelu(x)` (its rule's documented spelling).
    let keywords = if tanh {
        vec![("approximate", CallPart::Lit(Literal::Str(form.into())))]
    } else {
        vec![]
    };
    Ok(site(&functional("gelu"), vec![CallPart::Input], keywords))
}

/// `nn.LeakyReLU(negative_slope)`: `F.leaky_relu(x, negative_slope)`.
fn leaky_relu(ctor: &ModuleCtor, parts: &mut Parts) -> Result<SubmoduleCall, Refused> {
    let keywords = in_place(ctor, 1, parts)?;
    let slope = float_option(ctor, 0, "negative_slope", 0.01, parts)?;
    Ok(site(
        &functional("leaky_relu"),
        vec![CallPart::Input, slope],
        keywords,
    ))
}

/// `nn.ELU(alpha)`: `F.elu(x, alpha=alpha)`.
fn elu(ctor: &ModuleCtor, parts: &mut Parts) -> Result<SubmoduleCall, Refused> {
    let mut keywords = in_place(ctor, 1, parts)?;
    let alpha = float_option(ctor, 0, "alpha", 1.0, parts)?;
    keywords.insert(0, ("alpha", alpha));
    Ok(site(&functional("elu"), vec![CallPart::Input], keywords))
}

/// `nn.Softplus(beta, threshold)`: `F.softplus(x, beta=beta, threshold=threshold)`.
fn softplus(ctor: &ModuleCtor, parts: &mut Parts) -> Result<SubmoduleCall, Refused> {
    let beta = float_option(ctor, 0, "beta", 1.0, parts)?;
    let threshold = float_option(ctor, 1, "threshold", 20.0, parts)?;
    Ok(site(
        &functional("softplus"),
        vec![CallPart::Input],
        vec![("beta", beta), ("threshold", threshold)],
    ))
}

/// `nn.Hardtanh(min_val, max_val)`: `F.hardtanh(x, min_val, max_val)` (its claim takes number
/// literals only, so bounds held in `__init__` parameters keep the method on Python).
fn hardtanh(ctor: &ModuleCtor, parts: &mut Parts) -> Result<SubmoduleCall, Refused> {
    let keywords = in_place(ctor, 2, parts)?;
    if ctor.arg(3, "min_value").is_some() || ctor.arg(4, "max_value").is_some() {
        return Err(refuse(
            "nn.Hardtanh",
            "with the deprecated min_value / max_value is not compiled; write min_val / max_val",
        ));
    }
    let lo = float_option(ctor, 0, "min_val", -1.0, parts)?;
    let hi = float_option(ctor, 1, "max_val", 1.0, parts)?;
    Ok(site(
        &functional("hardtanh"),
        vec![CallPart::Input, lo, hi],
        keywords,
    ))
}

/// `nn.ReLU6()`: a Hardtanh whose `__init__` sets bounds 0.0 and 6.0, so `F.hardtanh(x, 0.0,
/// 6.0)` while the live bounds stay those.
fn relu6(ctor: &ModuleCtor, parts: &mut Parts) -> Result<SubmoduleCall, Refused> {
    let keywords = in_place(ctor, 0, parts)?;
    let mut bound = |name: &str, v: f64| {
        parts.condition(name, Literal::Float(v));
        CallPart::Lit(Literal::Float(v))
    };
    let args = vec![
        CallPart::Input,
        bound("min_val", 0.0),
        bound("max_val", 6.0),
    ];
    Ok(site(&functional("hardtanh"), args, keywords))
}

/// `nn.Flatten(start_dim=1, end_dim=-1)`: `torch.flatten(x, start_dim, end_dim)`; its claim
/// decides the ranks it lowers (1 and 2) and refuses the rest with a diagnostic.
fn flatten(ctor: &ModuleCtor, parts: &mut Parts) -> Result<SubmoduleCall, Refused> {
    let dim = |i: usize, name: &str, default: i64| match ctor.arg(i, name) {
        None => Ok(default),
        Some(a) => match lit(Some(a)) {
            Some(Literal::Int(v)) => Ok(*v),
            _ => Err(refuse(
                "nn.Flatten",
                format!("needs `{name}` as an int literal"),
            )),
        },
    };
    let (s, e) = (dim(0, "start_dim", 1)?, dim(1, "end_dim", -1)?);
    parts.condition("start_dim", Literal::Int(s));
    parts.condition("end_dim", Literal::Int(e));
    let args = vec![
        CallPart::Input,
        CallPart::Lit(Literal::Int(s)),
        CallPart::Lit(Literal::Int(e)),
    ];
    Ok(site("torch.flatten", args, vec![]))
}

/// `nn.Dropout(p[, inplace])`: the identity in eval mode, where eager returns its input
/// unwritten whatever `inplace` is; in training mode the original runs.
fn dropout(_ctor: &ModuleCtor, parts: &mut Parts) -> Result<SubmoduleCall, Refused> {
    parts.condition("training", Literal::Bool(false));
    Ok(SubmoduleCall::Identity)
}

/// `nn.Softmax(dim)` / `nn.LogSoftmax(dim)` with a literal dim: `target(x, dim)`.
fn softmax(ctor: &ModuleCtor, parts: &mut Parts, target: &str) -> Result<SubmoduleCall, Refused> {
    let dim = match lit(ctor.arg(0, "dim")) {
        Some(Literal::Int(d)) => *d,
        _ => {
            return Err(refuse(
                &short(&ctor.target),
                "needs `dim` as an int literal (an implicit dim depends on the input's rank)",
            ))
        }
    };
    parts.condition("dim", Literal::Int(dim));
    Ok(site(
        target,
        vec![CallPart::Input, CallPart::Lit(Literal::Int(dim))],
        vec![],
    ))
}

fn f32_1() -> ValueType {
    F32_CPU.ty(1).unwrap_or(ValueType::NoneType)
}

fn f32_2() -> ValueType {
    F32_CPU.ty(2).unwrap_or(ValueType::NoneType)
}

/// A tensor made by a factory (`torch.zeros(a, b)`, `torch.randn((d,))`): float32, rank 1 or 2.
fn tensor_value(ctor: &ModuleCtor) -> ModuleAnswer {
    if let Some(answer) = arithmetic(ctor) {
        return answer;
    }
    let t = ctor.target.as_str();
    let Some(factory) = t.strip_prefix("torch.") else {
        return ModuleAnswer::NotCovered;
    };
    let shown = format!("torch.{factory}");
    let is = |a: &CtorArg, ty: ValueType| matches!(a, CtorArg::Value(o) if o.ty == Some(ty));
    let number = |a: &CtorArg| is(a, ValueType::Int) || is(a, ValueType::Float);
    let rank = match factory {
        "zeros" | "ones" | "randn" | "rand" | "empty" | "full" => {
            let size_args: &[CtorArg] = if factory == "full" {
                // `torch.full` takes its dtype from the fill value: an int fills an int64 tensor.
                match ctor.arg(1, "fill_value") {
                    Some(v) if is(v, ValueType::Float) => {}
                    _ => {
                        return reject(
                            &shown,
                            "needs a float fill value (an int or bool one makes an int64 or bool tensor)",
                        )
                    }
                }
                ctor.args.get(..1).unwrap_or(&[])
            } else {
                &ctor.args
            };
            match size_args {
                [CtorArg::Value(o)] if matches!(o.ty, Some(ValueType::Tuple(_))) => match &o.ty {
                    Some(ValueType::Tuple(items)) => items.len(),
                    _ => 0,
                },
                items if items.iter().all(|a| is(a, ValueType::Int)) => items.len(),
                _ => {
                    return reject(
                        &shown,
                        "needs its sizes as ints or a tuple of ints so the tensor's rank is known",
                    )
                }
            }
        }
        // `torch.eye(n[, m])`: an identity matrix.
        "eye" => match ctor.args.as_slice() {
            [n] | [n, _]
                if ctor.args.iter().all(|a| is(a, ValueType::Int)) && is(n, ValueType::Int) =>
            {
                2
            }
            _ => return reject(&shown, "needs one or two int sizes"),
        },
        // `torch.linspace(start, end, steps)`: float32 in the default dtype.
        "linspace" => match ctor.args.as_slice() {
            [a, b, n] if number(a) && number(b) && is(n, ValueType::Int) => 1,
            _ => {
                return reject(
                    &shown,
                    "needs number start and end and an int steps, positionally",
                )
            }
        },
        // `torch.arange`: float32 when an argument is a float, int64 otherwise.
        "arange" => match ctor.args.as_slice() {
            args @ ([_] | [_, _] | [_, _, _]) if args.iter().all(number) => {
                if !args.iter().any(|a| is(a, ValueType::Float)) {
                    return reject(
                        &shown,
                        "of ints makes an int64 tensor; pass a float bound (`torch.arange(0.0, n)`) for float32",
                    );
                }
                1
            }
            _ => return reject(&shown, "needs one to three number arguments, positionally"),
        },
        _ => return ModuleAnswer::NotCovered,
    };
    for (k, v) in &ctor.keywords {
        let fine = match k.as_str() {
            "dtype" => false,
            "requires_grad" => matches!(v, CtorArg::Value(_)),
            "generator" => true,
            _ => false,
        };
        if !fine {
            return reject(
                &shown,
                format!("with `{k}=` is not a float32 CPU tensor this surface reads"),
            );
        }
    }
    match F32_CPU.ty(rank as u8) {
        Some(ty) if rank <= 2 => ModuleAnswer::Tensor(ty),
        _ => reject(
            &shown,
            format!("makes a rank-{rank} tensor; ranks 1 and 2 are compiled"),
        ),
    }
}

/// Arithmetic between a tensor factory's value and a Python int or float (`torch.randn(d) * 0.02
/// + 1.0`, `-torch.ones(d)`, `1 / torch.full((d,), 2.0)`): the result keeps the factory's float32
/// dtype and rank. `None` when `ctor` is not arithmetic (see [`CTOR_OPERATORS`]).
fn arithmetic(ctor: &ModuleCtor) -> Option<ModuleAnswer> {
    let op = CTOR_OPERATORS
        .iter()
        .find(|(_, target)| *target == ctor.target)
        .map(|(symbol, _)| *symbol)
        .or((ctor.target == NEG_TARGET).then_some("-"))?;
    let number = |a: &CtorArg| matches!(a, CtorArg::Value(o) if matches!(o.ty, Some(ValueType::Int | ValueType::Float)));
    let tensor = match ctor.args.as_slice() {
        [CtorArg::Call(t)] if ctor.target == NEG_TARGET => t,
        [CtorArg::Call(t), n] | [n, CtorArg::Call(t)] if number(n) => t,
        _ => {
            return Some(reject(
                &format!("`{op}` in a tensor value"),
                "is read only between one tensor factory call and a Python int or float (`torch.randn(d) * 0.02`)",
            ))
        }
    };
    Some(tensor_value(tensor))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rextio_plugin_api::Operand;

    fn ctor(target: &str, args: Vec<CtorArg>, keywords: Vec<(&str, CtorArg)>) -> ModuleCtor {
        ModuleCtor {
            target: target.into(),
            args,
            keywords: keywords.into_iter().map(|(k, v)| (k.into(), v)).collect(),
        }
    }
    fn int() -> CtorArg {
        CtorArg::Value(Operand::typed(ValueType::Int))
    }
    fn lit(l: Literal) -> CtorArg {
        CtorArg::Value(Operand::literal(l))
    }
    fn sub(a: ModuleAnswer) -> SubmoduleKind {
        match a {
            ModuleAnswer::Submodule(k) => k,
            other => panic!("not a submodule: {other:?}"),
        }
    }

    /// Every row of the kinds table answers its class, under both spellings of its path, and
    /// calls a target of the functional surface (or is the identity).
    #[test]
    fn every_kind_answers_its_class_under_both_paths() {
        for (name, _) in KINDS {
            // The fewest arguments each kind needs.
            let args = match *name {
                "Linear" => vec![int(), int()],
                "LayerNorm" => vec![int()],
                "Softmax" | "LogSoftmax" => vec![lit(Literal::Int(-1))],
                _ => vec![],
            };
            for path in [
                format!("torch.nn.{name}"),
                format!("torch.nn.modules.somefile.{name}"),
            ] {
                let k = sub(kind_of(&ctor(&path, args.clone(), vec![])));
                assert_eq!(k.class_path, format!("torch.nn.{name}"), "{path}");
                // Kinds taking `inplace` run natively only while it stays False.
                let inplace = k
                    .conditions
                    .contains(&("inplace".to_owned(), Literal::Bool(false)));
                assert_eq!(
                    inplace,
                    ["ReLU", "SiLU", "LeakyReLU", "ELU", "Hardtanh", "ReLU6"].contains(name),
                    "{name}"
                );
                match &k.call {
                    SubmoduleCall::Identity => {
                        assert!(["Identity", "Dropout"].contains(name), "{name}")
                    }
                    SubmoduleCall::Site { target, args, .. } => {
                        assert!(target.starts_with("torch."), "{name}: {target}");
                        assert_eq!(args.first(), Some(&CallPart::Input), "{name}");
                    }
                }
            }
        }
    }

    #[test]
    fn linear_reads_its_weights_and_calls_functional_linear() {
        let k = sub(kind_of(&ctor(
            "torch.nn.Linear",
            vec![int(), int()],
            vec![],
        )));
        assert_eq!(k.class_path, "torch.nn.Linear");
        assert_eq!(
            k.attrs,
            vec![("weight".into(), f32_2()), ("bias".into(), f32_1())]
        );
        let SubmoduleCall::Site { target, args, .. } = k.call else {
            panic!("identity")
        };
        assert_eq!(target, "torch.nn.functional.linear");
        assert_eq!(args.len(), 3);
        // Without bias, the live `bias` must be None and the call has two operands.
        let k = sub(kind_of(&ctor(
            "torch.nn.Linear",
            vec![int(), int()],
            vec![("bias", lit(Literal::Bool(false)))],
        )));
        assert_eq!(k.attrs[1], ("bias".into(), ValueType::NoneType));
        // A bias flag that is not a literal cannot be proven either way.
        let bias_var = ctor(
            "torch.nn.Linear",
            vec![int(), int()],
            vec![("bias", CtorArg::Value(Operand::typed(ValueType::Bool)))],
        );
        assert!(
            matches!(kind_of(&bias_var), ModuleAnswer::Rejected(d) if d.code == codes::MODULE_FORM)
        );
    }

    #[test]
    fn hardtanh_and_relu6_call_functional_hardtanh_with_their_live_bounds() {
        let k = sub(kind_of(&ctor(
            "torch.nn.Hardtanh",
            vec![lit(Literal::Float(-2.0))],
            vec![("max_val", lit(Literal::Int(3)))],
        )));
        let want_conditions = vec![
            ("inplace".to_owned(), Literal::Bool(false)),
            ("min_val".to_owned(), Literal::Float(-2.0)),
            ("max_val".to_owned(), Literal::Int(3)),
        ];
        assert_eq!(k.conditions, want_conditions);
        let SubmoduleCall::Site { target, args, .. } = k.call else {
            panic!("identity")
        };
        assert_eq!(target, "torch.nn.functional.hardtanh");
        assert_eq!(
            args,
            vec![
                CallPart::Input,
                CallPart::Lit(Literal::Float(-2.0)),
                CallPart::Lit(Literal::Float(3.0))
            ]
        );
        // ReLU6 is a Hardtanh whose __init__ fixes the bounds; they stay conditions.
        let k = sub(kind_of(&ctor("torch.nn.ReLU6", vec![], vec![])));
        assert!(k
            .conditions
            .contains(&("max_val".to_owned(), Literal::Float(6.0))));
        let SubmoduleCall::Site { target, args, .. } = k.call else {
            panic!("identity")
        };
        assert_eq!(target, "torch.nn.functional.hardtanh");
        assert_eq!(
            args[1..],
            [
                CallPart::Lit(Literal::Float(0.0)),
                CallPart::Lit(Literal::Float(6.0))
            ]
        );
        // The deprecated spellings and a non-literal `inplace` are refused with the
        // documented code.
        for bad in [
            ctor(
                "torch.nn.Hardtanh",
                vec![],
                vec![("min_value", lit(Literal::Float(0.0)))],
            ),
            ctor("torch.nn.ReLU6", vec![CtorArg::Other], vec![]),
        ] {
            assert!(
                matches!(kind_of(&bad), ModuleAnswer::Rejected(d) if d.code == codes::MODULE_FORM),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn literal_options_become_conditions_on_the_live_module() {
        let k = sub(kind_of(&ctor(
            "torch.nn.Softmax",
            vec![],
            vec![("dim", lit(Literal::Int(-1)))],
        )));
        assert_eq!(k.conditions, vec![("dim".into(), Literal::Int(-1))]);
        let k = sub(kind_of(&ctor(
            "torch.nn.Dropout",
            vec![lit(Literal::Float(0.1))],
            vec![],
        )));
        assert_eq!(
            k.conditions,
            vec![("training".into(), Literal::Bool(false))]
        );
        assert_eq!(k.call, SubmoduleCall::Identity);
        // In eval mode eager's in-place dropout hands back its input unwritten too.
        let k = sub(kind_of(&ctor(
            "torch.nn.Dropout",
            vec![lit(Literal::Float(0.1))],
            vec![("inplace", lit(Literal::Bool(true)))],
        )));
        assert_eq!(k.call, SubmoduleCall::Identity);
        // A slope held in an `__init__` parameter is read from the live module instead.
        let k = sub(kind_of(&ctor(
            "torch.nn.LeakyReLU",
            vec![CtorArg::Value(Operand::typed(ValueType::Float))],
            vec![],
        )));
        assert!(k
            .attrs
            .contains(&("negative_slope".into(), ValueType::Float)));
        // BatchNorm1d runs in eval mode with running statistics; affine=False passes None.
        let k = sub(kind_of(&ctor(
            "torch.nn.BatchNorm1d",
            vec![int()],
            vec![("affine", lit(Literal::Bool(false)))],
        )));
        assert_eq!(
            k.conditions,
            vec![
                ("training".into(), Literal::Bool(false)),
                ("track_running_stats".into(), Literal::Bool(true)),
            ]
        );
        assert!(k.attrs.contains(&("running_var".into(), f32_1())));
        assert!(k.attrs.contains(&("weight".into(), ValueType::NoneType)));
        assert!(matches!(
            kind_of(&ctor(
                "torch.nn.BatchNorm1d",
                vec![int()],
                vec![("track_running_stats", lit(Literal::Bool(false)))],
            )),
            ModuleAnswer::Rejected(_)
        ));
        // GELU's tanh form calls `F.gelu(x, approximate="tanh")` while the live module keeps it.
        let k = sub(kind_of(&ctor(
            "torch.nn.GELU",
            vec![],
            vec![("approximate", lit(Literal::Str("tanh".into())))],
        )));
        assert_eq!(
            k.conditions,
            vec![("approximate".into(), Literal::Str("tanh".into()))]
        );
        assert!(
            matches!(&k.call, SubmoduleCall::Site { keywords, .. } if keywords.len() == 1),
            "{:?}",
            k.call
        );
        // Forms whose computation differs are refused with the documented code.
        for bad in [
            ctor("torch.nn.Softmax", vec![], vec![]),
            ctor(
                "torch.nn.GELU",
                vec![],
                vec![("approximate", lit(Literal::Str("erf".into())))],
            ),
            // A non-literal `inplace`: which form runs cannot be proven.
            ctor("torch.nn.ReLU", vec![], vec![("inplace", CtorArg::Other)]),
        ] {
            assert!(
                matches!(kind_of(&bad), ModuleAnswer::Rejected(_)),
                "{bad:?}"
            );
        }
        assert_eq!(
            kind_of(&ctor("torch.nn.Conv2d", vec![], vec![])),
            ModuleAnswer::NotCovered
        );
    }

    /// `inplace=True` becomes the functional in-place call, kept by a condition on the live
    /// flag; whether it is lowered is the claim's question (its input must be private).
    #[test]
    fn in_place_activations_call_the_functional_in_place_form() {
        let on = || vec![("inplace", lit(Literal::Bool(true)))];
        for (name, target, args) in [
            ("ReLU", "relu", 1),
            ("SiLU", "silu", 1),
            ("LeakyReLU", "leaky_relu", 2),
            ("ELU", "elu", 1),
            ("Hardtanh", "hardtanh", 3),
            ("ReLU6", "hardtanh", 3),
        ] {
            let k = sub(kind_of(&ctor(&format!("torch.nn.{name}"), vec![], on())));
            assert!(
                k.conditions
                    .contains(&("inplace".to_owned(), Literal::Bool(true))),
                "{name}"
            );
            let SubmoduleCall::Site {
                target: t,
                args: a,
                keywords,
            } = &k.call
            else {
                panic!("{name}: {:?}", k.call)
            };
            assert_eq!(t, &format!("torch.nn.functional.{target}"), "{name}");
            assert_eq!(a.len(), args, "{name}");
            assert_eq!(a[0], CallPart::Input, "{name}");
            assert!(
                keywords.contains(&("inplace".to_owned(), CallPart::Lit(Literal::Bool(true)))),
                "{name}"
            );
        }
    }

    #[test]
    fn tensor_attributes_take_their_rank_from_the_factory_call() {
        let zeros = ctor("torch.zeros", vec![int()], vec![]);
        let p = ctor(
            "torch.nn.Parameter",
            vec![CtorArg::Call(zeros.clone())],
            vec![],
        );
        assert_eq!(kind_of(&p), ModuleAnswer::Tensor(f32_1()));
        assert_eq!(kind_of(&zeros), ModuleAnswer::Tensor(f32_1()));
        let randn = ctor("torch.randn", vec![int(), int()], vec![]);
        assert_eq!(kind_of(&randn), ModuleAnswer::Tensor(f32_2()));
        let tuple = ctor(
            "torch.ones",
            vec![CtorArg::Value(Operand::typed(ValueType::Tuple(
                vec![ValueType::Int; 2],
            )))],
            vec![],
        );
        assert_eq!(kind_of(&tuple), ModuleAnswer::Tensor(f32_2()));
        for bad in [
            ctor("torch.zeros", vec![int(), int(), int()], vec![]),
            ctor("torch.zeros", vec![int()], vec![("dtype", CtorArg::Other)]),
            ctor("torch.nn.Parameter", vec![CtorArg::Other], vec![]),
        ] {
            assert!(
                matches!(kind_of(&bad), ModuleAnswer::Rejected(_)),
                "{bad:?}"
            );
        }
    }

    /// `torch.eye`, `torch.linspace`, float `torch.arange` and `torch.full` with a float fill
    /// are float32 of a known rank; the forms that make int64 tensors are refused.
    #[test]
    fn more_factories_state_their_rank_and_refuse_int_tensors() {
        let float = || CtorArg::Value(Operand::typed(ValueType::Float));
        let size = || CtorArg::Value(Operand::typed(ValueType::Tuple(vec![ValueType::Int])));
        for (target, args, want) in [
            ("torch.eye", vec![int()], f32_2()),
            ("torch.eye", vec![int(), int()], f32_2()),
            ("torch.linspace", vec![float(), int(), int()], f32_1()),
            ("torch.arange", vec![float()], f32_1()),
            ("torch.arange", vec![int(), float(), int()], f32_1()),
            ("torch.full", vec![size(), float()], f32_1()),
        ] {
            let c = ctor(target, args, vec![]);
            assert_eq!(kind_of(&c), ModuleAnswer::Tensor(want), "{c:?}");
        }
        for (target, args) in [
            ("torch.arange", vec![int()]),
            ("torch.arange", vec![int(), int(), int()]),
            ("torch.full", vec![size(), int()]),
            ("torch.full", vec![size()]),
            ("torch.eye", vec![float()]),
            ("torch.linspace", vec![float(), float()]),
        ] {
            let c = ctor(target, args, vec![]);
            assert!(
                matches!(kind_of(&c), ModuleAnswer::Rejected(ref d) if d.code == codes::MODULE_FORM),
                "{c:?}"
            );
        }
    }

    /// `torch.randn(a, b) * 0.02 + 1.0`, `-torch.ones(d)`, `1 / torch.full(...)`: arithmetic with
    /// a Python number keeps the factory's float32 dtype and rank; anything else is refused.
    #[test]
    fn scalar_arithmetic_on_a_factory_keeps_its_type() {
        let op = |target: &str, args: Vec<CtorArg>| CtorArg::Call(ctor(target, args, vec![]));
        let randn = || op("torch.randn", vec![int(), int()]);
        let float = || CtorArg::Value(Operand::typed(ValueType::Float));
        let scaled = op(
            "operator.add",
            vec![
                op("operator.mul", vec![randn(), float()]),
                lit(Literal::Float(1.0)),
            ],
        );
        let CtorArg::Call(scaled) = scaled else {
            unreachable!()
        };
        assert_eq!(kind_of(&scaled), ModuleAnswer::Tensor(f32_2()));
        let p = ctor("torch.nn.Parameter", vec![CtorArg::Call(scaled)], vec![]);
        assert_eq!(kind_of(&p), ModuleAnswer::Tensor(f32_2()));
        let ones = || op("torch.ones", vec![int()]);
        for ok in [
            ctor(NEG_TARGET, vec![ones()], vec![]),
            ctor(
                "operator.truediv",
                vec![lit(Literal::Int(1)), ones()],
                vec![],
            ),
            ctor("operator.sub", vec![int(), ones()], vec![]),
        ] {
            assert_eq!(kind_of(&ok), ModuleAnswer::Tensor(f32_1()), "{ok:?}");
        }
        for bad in [
            // Two tensors broadcast to a rank the constructor calls do not state alone.
            ctor("operator.mul", vec![ones(), randn()], vec![]),
            // A bool, or a value of unknown type, is not a number here.
            ctor(
                "operator.mul",
                vec![ones(), lit(Literal::Bool(true))],
                vec![],
            ),
            ctor("operator.mul", vec![ones(), CtorArg::Other], vec![]),
            // The factory's own refusals (a dtype) still hold through the arithmetic.
            ctor(
                "operator.mul",
                vec![
                    CtorArg::Call(ctor(
                        "torch.zeros",
                        vec![int()],
                        vec![("dtype", CtorArg::Other)],
                    )),
                    float(),
                ],
                vec![],
            ),
        ] {
            assert!(
                matches!(kind_of(&bad), ModuleAnswer::Rejected(ref d) if d.code == codes::MODULE_FORM),
                "{bad:?}"
            );
        }
        // A negated value that is not a factory call is not read either.
        assert!(matches!(
            kind_of(&ctor(NEG_TARGET, vec![float()], vec![])),
            ModuleAnswer::Rejected(_)
        ));
    }

    #[test]
    fn flatten_is_torch_flatten_with_its_literal_dims_checked_live() {
        let k = sub(kind_of(&ctor("torch.nn.Flatten", vec![], vec![])));
        assert_eq!(
            k.conditions,
            vec![
                ("start_dim".into(), Literal::Int(1)),
                ("end_dim".into(), Literal::Int(-1))
            ]
        );
        let SubmoduleCall::Site { target, args, .. } = k.call else {
            panic!("not a site");
        };
        assert_eq!(target, "torch.flatten");
        assert_eq!(
            args,
            vec![
                CallPart::Input,
                CallPart::Lit(Literal::Int(1)),
                CallPart::Lit(Literal::Int(-1))
            ]
        );
        let k = sub(kind_of(&ctor(
            "torch.nn.Flatten",
            vec![lit(Literal::Int(0))],
            vec![("end_dim", lit(Literal::Int(1)))],
        )));
        assert_eq!(
            k.conditions,
            vec![
                ("start_dim".into(), Literal::Int(0)),
                ("end_dim".into(), Literal::Int(1))
            ]
        );
        // A dim that is not a literal cannot be proven.
        let bad = ctor("torch.nn.Flatten", vec![int()], vec![]);
        assert!(
            matches!(kind_of(&bad), ModuleAnswer::Rejected(d) if d.code == codes::MODULE_FORM),
            "{bad:?}"
        );
    }
}
