//! Fused regions: a straight-line region of claims becomes one small [`Program`] that the
//! runtime executes on float32 CPU buffers with the SIMD kernels of [`crate::kernels`], instead
//! of one libtorch call (and one allocation) per site.
//!
//! The plugin side ([`lower_region`]) translates the region's claims, re-planned from their
//! sites, into instructions, or declines the whole region when one of them has no fused form.
//! The runtime side first [`plan`]s a call from the actual input shapes: shapes of every value,
//! which buffer each value lives in (internal temporaries, output tensors, or an owned input
//! written in place), and declines (the per-site path then runs, with libtorch's exact errors)
//! whenever a shape, a broadcast or a size is outside what the kernels handle. Only after a
//! complete plan does anything get written.

use crate::claim::{self, Arg, Op, Src};
use crate::entry::Rt;
use rextio_plugin_api::{LowerError, LoweredRegion, Region, RegionContext, RegionRef, ValueType};

/// A value of a program: inputs first, then one per instruction.
pub type V = u16;

/// Elementwise functions of one operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryF {
    /// `relu`.
    Relu,
    /// `sigmoid`.
    Sigmoid,
    /// `tanh`.
    Tanh,
    /// `abs`.
    Abs,
    /// `neg`.
    Neg,
    /// `exp`.
    Exp,
    /// `log`.
    Log,
    /// `sqrt`.
    Sqrt,
    /// `gelu` (erf form).
    Gelu,
}

/// Elementwise functions of two operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryF {
    /// `+`.
    Add,
    /// `-`.
    Sub,
    /// `*`.
    Mul,
    /// `/`.
    Div,
}

/// Reductions over one dim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceF {
    /// `sum`.
    Sum,
    /// `mean`.
    Mean,
    /// `amax`.
    Amax,
    /// `amin`.
    Amin,
}

/// One instruction; its result is the next value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ins {
    /// `F.linear(x, w, b?)`.
    Linear {
        /// Input (rank 1 or 2).
        x: V,
        /// Weight (rank 2).
        w: V,
        /// Optional bias (rank 1).
        b: Option<V>,
    },
    /// `a @ b` on two matrices.
    Matmul {
        /// Left.
        a: V,
        /// Right.
        b: V,
    },
    /// Elementwise function.
    Unary {
        /// Which.
        f: UnaryF,
        /// Operand.
        t: V,
    },
    /// Tensor-tensor elementwise, same shape or a vector broadcast along the last dim.
    Binary {
        /// Which.
        f: BinaryF,
        /// Left.
        a: V,
        /// Right.
        b: V,
    },
    /// Tensor-scalar elementwise (`rev`: the scalar is the left operand).
    Scalar {
        /// Which.
        f: BinaryF,
        /// Tensor operand.
        t: V,
        /// Scalar operand (a scalar input).
        s: V,
        /// Scalar on the left (`s - t`, `s / t`).
        rev: bool,
    },
    /// Softmax or log-softmax over a normalised dim.
    Softmax {
        /// Operand.
        t: V,
        /// Dim (non-negative).
        dim: u8,
        /// Log-softmax.
        log: bool,
    },
    /// A reduction over a normalised dim.
    Reduce {
        /// Which.
        f: ReduceF,
        /// Operand.
        t: V,
        /// Dim (non-negative).
        dim: u8,
        /// Keep the reduced dim with size 1.
        keepdim: bool,
    },
    /// `F.layer_norm(x, (n,), w?, b?, eps)` over the last dim.
    LayerNorm {
        /// Operand (rank 1 or 2).
        x: V,
        /// The normalised size (a scalar input, checked against the last dim at run time).
        n: V,
        /// Optional weight (rank 1).
        w: Option<V>,
        /// Optional bias (rank 1).
        b: Option<V>,
        /// `eps` as a scalar input; `None`: the default `1e-5`.
        eps: Option<V>,
    },
    /// Argmax over a normalised dim (int64 result).
    Argmax {
        /// Operand.
        t: V,
        /// Dim (non-negative).
        dim: u8,
        /// Keep the reduced dim with size 1.
        keepdim: bool,
    },
}

/// How a program input is passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// `tensors[slot]`; `owned`: may be written in place (nothing else observes it).
    Tensor {
        /// Index into the tensor arguments.
        slot: u16,
        /// Exclusively owned by the region.
        owned: bool,
    },
    /// `scalars[slot]`.
    Scalar {
        /// Index into the scalar arguments.
        slot: u16,
    },
    /// Not read by any instruction (a literal the claim fixed statically, such as a dim).
    Unused,
}

/// A fused region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Program {
    /// Inputs, values `0..inputs.len()`.
    pub inputs: &'static [Input],
    /// Instructions, value `inputs.len() + i` each.
    pub ins: &'static [Ins],
    /// The values the region yields, in order.
    pub outputs: &'static [V],
}

/// An owned program, as the plugin builds it before rendering it as Rust.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramBuf {
    /// See [`Program::inputs`].
    pub inputs: Vec<Input>,
    /// See [`Program::ins`].
    pub ins: Vec<Ins>,
    /// See [`Program::outputs`].
    pub outputs: Vec<V>,
}

/// A borrowed program.
#[derive(Debug, Clone, Copy)]
pub struct ProgramView<'a> {
    /// Inputs.
    pub inputs: &'a [Input],
    /// Instructions.
    pub ins: &'a [Ins],
    /// Outputs.
    pub outputs: &'a [V],
}

impl Program {
    /// This program as a view.
    pub fn view(&self) -> ProgramView<'static> {
        ProgramView {
            inputs: self.inputs,
            ins: self.ins,
            outputs: self.outputs,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Plugin side: region -> program -> Rust.
// ---------------------------------------------------------------------------------------------

const F32_TYPES: [&str; 2] = [crate::types::F32_CPU_1D, crate::types::F32_CPU_2D];

fn is_f32_cpu(ty: &ValueType) -> bool {
    matches!(ty, ValueType::Plugin(k) if F32_TYPES.contains(&k.0.as_str()))
}

fn unary(f: Rt) -> Option<UnaryF> {
    Some(match f {
        Rt::Relu => UnaryF::Relu,
        Rt::Sigmoid => UnaryF::Sigmoid,
        Rt::Tanh => UnaryF::Tanh,
        Rt::Abs => UnaryF::Abs,
        Rt::Neg | Rt::Negative => UnaryF::Neg,
        Rt::Exp => UnaryF::Exp,
        Rt::Log => UnaryF::Log,
        Rt::Sqrt => UnaryF::Sqrt,
        Rt::GeluNone => UnaryF::Gelu,
        _ => return None,
    })
}

fn binary(f: Rt) -> Option<BinaryF> {
    Some(match f {
        Rt::Add => BinaryF::Add,
        Rt::Sub => BinaryF::Sub,
        Rt::Mul => BinaryF::Mul,
        Rt::Div => BinaryF::Div,
        _ => return None,
    })
}

fn scalar(f: Rt) -> Option<(BinaryF, bool)> {
    Some(match f {
        Rt::AddScalar => (BinaryF::Add, false),
        Rt::SubScalar => (BinaryF::Sub, false),
        Rt::RsubScalar => (BinaryF::Sub, true),
        Rt::MulScalar => (BinaryF::Mul, false),
        Rt::DivScalar => (BinaryF::Div, false),
        Rt::RdivScalar => (BinaryF::Div, true),
        _ => return None,
    })
}

fn reduce(f: Rt) -> Option<ReduceF> {
    Some(match f {
        Rt::SumDim => ReduceF::Sum,
        Rt::MeanDim => ReduceF::Mean,
        Rt::AmaxDim => ReduceF::Amax,
        Rt::AminDim => ReduceF::Amin,
        _ => return None,
    })
}

/// Translate a region into a program; `Ok(None)` when some claim has no fused form.
pub fn build(region: &Region) -> Result<Option<ProgramBuf>, LowerError> {
    let n_in = region.inputs.len();
    if n_in + region.nodes.len() > usize::from(V::MAX) {
        return Ok(None);
    }
    let value = |r: RegionRef| -> V {
        // In range: checked against V::MAX above.
        match r {
            RegionRef::Input(i) => i as V,
            RegionRef::Node(j) => (n_in + j) as V,
        }
    };
    let mut ins = Vec::with_capacity(region.nodes.len());
    let mut tensor_in = vec![false; n_in];
    let mut scalar_in = vec![false; n_in];
    for (j, node) in region.nodes.iter().enumerate() {
        let c = &node.claimed;
        let drift = |why: &str| LowerError::new(c.rule_id.clone(), why.to_owned());
        let plan =
            claim::plan(&c.site).map_err(|_| drift("the site no longer matches any rule"))?;
        if plan.rule_id != c.rule_id || plan.result != c.result_type {
            return Err(drift(
                "the site now plans to a different rule or result type",
            ));
        }
        let pick = |s: Src| -> Result<RegionRef, LowerError> {
            let r = match s {
                Src::Recv => node.receiver,
                Src::Arg(i) => node.args.get(i).copied(),
                Src::Kw(i) => node.keywords.get(i).map(|(_, r)| *r),
            };
            let r = r.ok_or_else(|| drift("an operand of the plan is missing"))?;
            if let RegionRef::Node(k) = r {
                if k >= j {
                    return Err(drift("an operand refers to a later node"));
                }
            }
            if let RegionRef::Input(i) = r {
                if i >= n_in {
                    return Err(drift("an operand refers to a missing input"));
                }
            }
            Ok(r)
        };
        // Tensor operands must be float32 CPU values; scalar operands inputs of scalar type.
        let mut tensor = |s: Src| -> Result<Option<V>, LowerError> {
            let r = pick(s)?;
            let ty = match r {
                RegionRef::Input(i) => &region.inputs[i].ty,
                RegionRef::Node(k) => &region.nodes[k].claimed.result_type,
            };
            if !is_f32_cpu(ty) {
                return Ok(None);
            }
            if let RegionRef::Input(i) = r {
                tensor_in[i] = true;
            }
            Ok(Some(value(r)))
        };
        macro_rules! t {
            ($s:expr) => {
                match tensor($s)? {
                    Some(v) => v,
                    None => return Ok(None),
                }
            };
        }
        if !is_f32_cpu(&c.result_type) && !matches!(plan.op, Op::Argmax { .. }) {
            return Ok(None);
        }
        let i = match plan.op {
            Op::Linear { x, w, b } => Ins::Linear {
                x: t!(x),
                w: t!(w),
                b: match b {
                    Some(b) => Some(t!(b)),
                    None => None,
                },
            },
            Op::Matmul { a, b } => Ins::Matmul { a: t!(a), b: t!(b) },
            Op::Unary { f, t } => match unary(f) {
                Some(f) => Ins::Unary { f, t: t!(t) },
                None => return Ok(None),
            },
            Op::Binary { f, a, b } => match binary(f) {
                Some(f) => Ins::Binary {
                    f,
                    a: t!(a),
                    b: t!(b),
                },
                None => return Ok(None),
            },
            Op::Scalar { f, t, s } => {
                let Some((f, rev)) = scalar(f) else {
                    return Ok(None);
                };
                let t = t!(t);
                let RegionRef::Input(si) = pick(s)? else {
                    return Ok(None);
                };
                if !matches!(region.inputs[si].ty, ValueType::Int | ValueType::Float) {
                    return Ok(None);
                }
                scalar_in[si] = true;
                Ins::Scalar {
                    f,
                    t,
                    s: si as V,
                    rev,
                }
            }
            Op::Softmax { t, dim } => match u8::try_from(dim) {
                Ok(dim) => Ins::Softmax {
                    t: t!(t),
                    dim,
                    log: false,
                },
                Err(_) => return Ok(None),
            },
            Op::Call {
                f: Rt::LogSoftmax,
                ref args,
            } => match args.as_slice() {
                [Arg::Tensor(t), Arg::Int(d)] => match u8::try_from(*d) {
                    Ok(dim) => Ins::Softmax {
                        t: t!(*t),
                        dim,
                        log: true,
                    },
                    Err(_) => return Ok(None),
                },
                _ => return Ok(None),
            },
            Op::Reduce { f, t, dim, keepdim } => match (reduce(f), u8::try_from(dim)) {
                (Some(f), Ok(dim)) => Ins::Reduce {
                    f,
                    t: t!(t),
                    dim,
                    keepdim,
                },
                _ => return Ok(None),
            },
            Op::Argmax { t, dim, keepdim } => match u8::try_from(dim) {
                Ok(dim) => Ins::Argmax {
                    t: t!(t),
                    dim,
                    keepdim,
                },
                Err(_) => return Ok(None),
            },
            Op::Call {
                f: Rt::LayerNorm,
                ref args,
            } => {
                let [Arg::Tensor(x), Arg::TupleFirst(ns), Arg::OptTensor(w), Arg::OptTensor(b), eps] =
                    args.as_slice()
                else {
                    return Ok(None);
                };
                let x = t!(*x);
                // The normalised size and eps reach the program as scalar inputs.
                let mut scalar_input =
                    |s: Src, ok: &dyn Fn(&ValueType) -> bool| -> Result<Option<V>, LowerError> {
                        let RegionRef::Input(si) = pick(s)? else {
                            return Ok(None);
                        };
                        if !ok(&region.inputs[si].ty) {
                            return Ok(None);
                        }
                        scalar_in[si] = true;
                        Ok(Some(si as V))
                    };
                let Some(n) = scalar_input(*ns, &|t| t == &ValueType::Tuple(vec![ValueType::Int]))?
                else {
                    return Ok(None);
                };
                let eps = match eps {
                    Arg::Float(e) if *e == 1e-5 => None,
                    Arg::Scalar(s) => {
                        match scalar_input(*s, &|t| matches!(t, ValueType::Float | ValueType::Int))?
                        {
                            Some(v) => Some(v),
                            None => return Ok(None),
                        }
                    }
                    _ => return Ok(None),
                };
                let w = match w {
                    Some(w) => Some(t!(*w)),
                    None => None,
                };
                let b = match b {
                    Some(b) => Some(t!(*b)),
                    None => None,
                };
                Ins::LayerNorm { x, n, w, b, eps }
            }
            Op::Call { .. } => return Ok(None),
        };
        ins.push(i);
    }
    let mut inputs = Vec::with_capacity(n_in);
    let (mut ts, mut ss) = (0u16, 0u16);
    for (i, input) in region.inputs.iter().enumerate() {
        inputs.push(if tensor_in[i] {
            ts += 1;
            Input::Tensor {
                slot: ts - 1,
                owned: input.operand.owned_temp,
            }
        } else if scalar_in[i] {
            ss += 1;
            Input::Scalar { slot: ss - 1 }
        } else {
            Input::Unused
        });
    }
    let outputs = region.outputs.iter().map(|&k| (n_in + k) as V).collect();
    Ok(Some(ProgramBuf {
        inputs,
        ins,
        outputs,
    }))
}

fn render_ins(i: &Ins) -> String {
    const P: &str = "::rextio_torch::fusion";
    let opt = |b: Option<V>| match b {
        Some(v) => format!("::std::option::Option::Some({v})"),
        None => "::std::option::Option::None".to_owned(),
    };
    match *i {
        Ins::Linear { x, w, b } => format!("{P}::Ins::Linear {{ x: {x}, w: {w}, b: {} }}", opt(b)),
        Ins::Matmul { a, b } => format!("{P}::Ins::Matmul {{ a: {a}, b: {b} }}"),
        Ins::Unary { f, t } => format!("{P}::Ins::Unary {{ f: {P}::UnaryF::{f:?}, t: {t} }}"),
        Ins::Binary { f, a, b } => {
            format!("{P}::Ins::Binary {{ f: {P}::BinaryF::{f:?}, a: {a}, b: {b} }}")
        }
        Ins::Scalar { f, t, s, rev } => {
            format!("{P}::Ins::Scalar {{ f: {P}::BinaryF::{f:?}, t: {t}, s: {s}, rev: {rev} }}")
        }
        Ins::Softmax { t, dim, log } => {
            format!("{P}::Ins::Softmax {{ t: {t}, dim: {dim}, log: {log} }}")
        }
        Ins::Reduce { f, t, dim, keepdim } => format!(
            "{P}::Ins::Reduce {{ f: {P}::ReduceF::{f:?}, t: {t}, dim: {dim}, keepdim: {keepdim} }}"
        ),
        Ins::Argmax { t, dim, keepdim } => {
            format!("{P}::Ins::Argmax {{ t: {t}, dim: {dim}, keepdim: {keepdim} }}")
        }
        Ins::LayerNorm { x, n, w, b, eps } => format!(
            "{P}::Ins::LayerNorm {{ x: {x}, n: {n}, w: {}, b: {}, eps: {} }}",
            opt(w),
            opt(b),
            opt(eps)
        ),
    }
}

fn render_input(i: &Input) -> String {
    const P: &str = "::rextio_torch::fusion";
    match *i {
        Input::Tensor { slot, owned } => {
            format!("{P}::Input::Tensor {{ slot: {slot}, owned: {owned} }}")
        }
        Input::Scalar { slot } => format!("{P}::Input::Scalar {{ slot: {slot} }}"),
        Input::Unused => format!("{P}::Input::Unused"),
    }
}

/// The plugin's fused lowering of a region (see [`rextio_plugin_api::Plugin::lower_region`]).
pub fn lower_region(
    region: &Region,
    cx: &RegionContext,
) -> Result<Option<LoweredRegion>, LowerError> {
    if cx.target != "cpu" || region.outputs.is_empty() {
        return Ok(None);
    }
    let Some(prog) = build(region)? else {
        return Ok(None);
    };
    // A program that would not fuse anything beyond what one libtorch call does is still worth
    // it: the fused path skips the dispatcher and, for owned operands, the allocation.
    let mut tensors = Vec::new();
    let mut scalars = Vec::new();
    for (input, r) in prog.inputs.iter().zip(&region.inputs) {
        match input {
            Input::Tensor { .. } => tensors.push(format!("&({})", r.operand.expr)),
            // Int and float scalars alike reach the program as f64.
            Input::Scalar { .. } if matches!(r.ty, ValueType::Tuple(_)) => {
                // A one-element int tuple (layer_norm's normalized_shape): its element.
                scalars.push(format!("((({}).0) as f64)", r.operand.expr))
            }
            Input::Scalar { .. } => scalars.push(format!("(({}) as f64)", r.operand.expr)),
            Input::Unused => {}
        }
    }
    let n = prog.outputs.len();
    let names: Vec<String> = (0..n).map(|i| format!("__rx_o{i}")).collect();
    let list = |xs: Vec<String>| xs.join(", ");
    let expr = format!(
        "{{ static __RX_PROGRAM: ::rextio_torch::fusion::Program = ::rextio_torch::fusion::Program {{ \
         inputs: &[{}], ins: &[{}], outputs: &[{}] }}; \
         ::rextio_torch::runtime::fused::<{n}>(&__RX_PROGRAM, &[{}], &[{}])?\
         .map(|[{}]| ({},)) }}",
        list(prog.inputs.iter().map(render_input).collect()),
        list(prog.ins.iter().map(render_ins).collect()),
        list(prog.outputs.iter().map(|v| v.to_string()).collect()),
        list(tensors),
        list(scalars),
        names.join(", "),
        names.join(", "),
    );
    Ok(Some(LoweredRegion {
        expr,
        uses: Vec::new(),
    }))
}

// ---------------------------------------------------------------------------------------------
// Runtime side: planning a call from the actual shapes.
// ---------------------------------------------------------------------------------------------

/// A runtime shape of rank 0, 1 or 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Rank.
    pub rank: u8,
    /// Sizes (`dims[..rank]`).
    pub dims: [usize; 2],
}

impl Shape {
    /// A shape from sizes (rank <= 2).
    pub fn of(sizes: &[usize]) -> Option<Shape> {
        match *sizes {
            [] => Some(Shape {
                rank: 0,
                dims: [1, 1],
            }),
            [n] => Some(Shape {
                rank: 1,
                dims: [n, 1],
            }),
            [m, n] => Some(Shape {
                rank: 2,
                dims: [m, n],
            }),
            _ => None,
        }
    }

    /// The sizes.
    pub fn sizes(&self) -> &[usize] {
        &self.dims[..usize::from(self.rank)]
    }

    /// Element count.
    pub fn numel(&self) -> usize {
        self.sizes().iter().product()
    }

    /// (rows, cols) seen as a matrix whose last dim is the row (rank 1: one row).
    pub fn matrix(&self) -> (usize, usize) {
        match self.rank {
            2 => (self.dims[0], self.dims[1]),
            1 => (1, self.dims[0]),
            _ => (1, 1),
        }
    }
}

/// Element type of a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dt {
    /// float32.
    F32,
    /// int64.
    I64,
}

/// Where a value lives during a fused call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    /// A scalar input (no buffer).
    Scalar,
    /// The buffer of tensor input `value`.
    Input(V),
    /// Internal temporary buffer `i`.
    Temp(usize),
    /// Output tensor `i` (allocated once, in the output's shape).
    Output(usize),
}

/// A complete plan for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Shape and element type of every value (scalars: rank 0 F32).
    pub shapes: Vec<(Shape, Dt)>,
    /// Storage of every value.
    pub store: Vec<Store>,
    /// Element counts of the temporaries.
    pub temps: Vec<usize>,
    /// Per instruction: the result overwrites its first operand's buffer.
    pub in_place: Vec<bool>,
    /// Per output: its storage, when it is the buffer of an owned input rather than a fresh
    /// tensor (`None`: allocate).
    pub output_alias: Vec<Option<V>>,
    /// Multiply-adds of the matrix products (for the size guard).
    pub macs: usize,
    /// The largest element count of any value (for the size guard).
    pub max_numel: usize,
    /// Some value has no elements.
    pub any_empty: bool,
    /// Multiply-adds plus elements of every value: the call's work (for releasing the GIL).
    pub work: usize,
}

/// How an operand of an elementwise op spans the `rows × cols` result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Every element (same shape as the result).
    Full,
    /// One row repeated (`[n]` or `[1, n]`).
    Row,
    /// One column repeated (`[m, 1]`).
    Col,
    /// One element repeated.
    Single,
}

/// Broadcast two shapes of rank <= 2 as torch does: the result's shape and each operand's role.
pub fn broadcast(a: Shape, b: Shape) -> Option<(Shape, Role, Role)> {
    let pad = |s: Shape| match s.rank {
        2 => (s.dims[0], s.dims[1]),
        1 => (1, s.dims[0]),
        _ => (1, 1),
    };
    let ((a0, a1), (b0, b1)) = (pad(a), pad(b));
    let dim = |x: usize, y: usize| match (x, y) {
        _ if x == y => Some(x),
        (1, _) => Some(y),
        (_, 1) => Some(x),
        _ => None,
    };
    let (r0, r1) = (dim(a0, b0)?, dim(a1, b1)?);
    let rank = a.rank.max(b.rank);
    let result = match rank {
        2 => Shape::of(&[r0, r1])?,
        1 => Shape::of(&[r1])?,
        _ => return None,
    };
    let role = |(x0, x1): (usize, usize)| {
        if (x0, x1) == (r0, r1) {
            Role::Full
        } else if (x0, x1) == (1, 1) {
            Role::Single
        } else if x0 == 1 {
            Role::Row
        } else {
            Role::Col
        }
    };
    Some((result, role((a0, a1)), role((b0, b1))))
}

/// Infer shapes and assign storage; `None` declines the call (the per-site path then runs).
/// `input_shapes[v]` is the shape of tensor input `v` (`None` for scalar or unused inputs).
pub fn plan(p: ProgramView<'_>, input_shapes: &[Option<Shape>]) -> Option<Plan> {
    let n_in = p.inputs.len();
    if input_shapes.len() != n_in {
        return None;
    }
    let n = n_in + p.ins.len();
    let mut shapes: Vec<(Shape, Dt)> = Vec::with_capacity(n);
    let scalar_shape = Shape {
        rank: 0,
        dims: [1, 1],
    };
    for (i, input) in p.inputs.iter().enumerate() {
        match (input, input_shapes[i]) {
            (Input::Tensor { .. }, Some(s)) => shapes.push((s, Dt::F32)),
            (Input::Tensor { .. }, None) => return None,
            _ => shapes.push((scalar_shape, Dt::F32)),
        }
    }
    let tensor = |shapes: &Vec<(Shape, Dt)>, v: V| -> Option<Shape> {
        match shapes.get(usize::from(v)) {
            Some((s, Dt::F32))
                if usize::from(v) >= n_in
                    || matches!(p.inputs[usize::from(v)], Input::Tensor { .. }) =>
            {
                Some(*s)
            }
            _ => None,
        }
    };
    let mut macs = 0usize;
    for ins in p.ins {
        let out = match *ins {
            Ins::Linear { x, w, b } => {
                let (xs, ws) = (tensor(&shapes, x)?, tensor(&shapes, w)?);
                if ws.rank != 2 || !(1..=2).contains(&xs.rank) {
                    return None;
                }
                let (m, k) = xs.matrix();
                let (nn, wk) = (ws.dims[0], ws.dims[1]);
                if wk != k {
                    return None;
                }
                if let Some(b) = b {
                    let bs = tensor(&shapes, b)?;
                    if bs.rank != 1 || bs.dims[0] != nn {
                        return None;
                    }
                }
                macs = macs.saturating_add(m.saturating_mul(k).saturating_mul(nn));
                if xs.rank == 2 {
                    (Shape::of(&[m, nn])?, Dt::F32)
                } else {
                    (Shape::of(&[nn])?, Dt::F32)
                }
            }
            Ins::Matmul { a, b } => {
                let (as_, bs) = (tensor(&shapes, a)?, tensor(&shapes, b)?);
                if as_.rank != 2 || bs.rank != 2 || as_.dims[1] != bs.dims[0] {
                    return None;
                }
                macs = macs.saturating_add(
                    as_.dims[0]
                        .saturating_mul(as_.dims[1])
                        .saturating_mul(bs.dims[1]),
                );
                (Shape::of(&[as_.dims[0], bs.dims[1]])?, Dt::F32)
            }
            Ins::Unary { t, .. } => (tensor(&shapes, t)?, Dt::F32),
            Ins::Binary { a, b, .. } => {
                let (as_, bs) = (tensor(&shapes, a)?, tensor(&shapes, b)?);
                (broadcast(as_, bs)?.0, Dt::F32)
            }
            Ins::Scalar { t, s, .. } => {
                if !matches!(p.inputs.get(usize::from(s)), Some(Input::Scalar { .. })) {
                    return None;
                }
                (tensor(&shapes, t)?, Dt::F32)
            }
            Ins::Softmax { t, dim, .. } => {
                let s = tensor(&shapes, t)?;
                if s.rank == 0 || dim >= s.rank {
                    return None;
                }
                (s, Dt::F32)
            }
            Ins::LayerNorm { x, n, w, b, eps } => {
                let s = tensor(&shapes, x)?;
                if !(1..=2).contains(&s.rank) {
                    return None;
                }
                let last = s.matrix().1;
                for v in [Some(n), eps].into_iter().flatten() {
                    if !matches!(p.inputs.get(usize::from(v)), Some(Input::Scalar { .. })) {
                        return None;
                    }
                }
                for v in [w, b].into_iter().flatten() {
                    let ws = tensor(&shapes, v)?;
                    if ws.rank != 1 || ws.dims[0] != last {
                        return None;
                    }
                }
                (s, Dt::F32)
            }
            Ins::Reduce {
                t, dim, keepdim, ..
            }
            | Ins::Argmax { t, dim, keepdim } => {
                let s = tensor(&shapes, t)?;
                // Reductions to a 0-dim tensor stay on libtorch.
                if s.rank != 2 || dim >= 2 {
                    return None;
                }
                let (m, nn) = (s.dims[0], s.dims[1]);
                let kept = if dim == 1 { m } else { nn };
                let shape = match (keepdim, dim) {
                    (true, 1) => Shape::of(&[m, 1]),
                    (true, _) => Shape::of(&[1, nn]),
                    (false, _) => Shape::of(&[kept]),
                }?;
                let dt = if matches!(ins, Ins::Argmax { .. }) {
                    Dt::I64
                } else {
                    Dt::F32
                };
                // Empty reductions raise (argmax, amax) or need libtorch's conventions.
                if (dim == 1 && nn == 0) || (dim == 0 && m == 0) {
                    return None;
                }
                (shape, dt)
            }
        };
        shapes.push(out);
    }
    // Last read of every value (outputs are read at the end).
    let mut last = vec![None::<usize>; n];
    for (j, ins) in p.ins.iter().enumerate() {
        for v in operands(ins) {
            last[usize::from(v)] = Some(j);
        }
    }
    let mut is_output = vec![false; n];
    for &o in p.outputs {
        let o = usize::from(o);
        if o >= n {
            return None;
        }
        is_output[o] = true;
    }
    let mut store: Vec<Store> = Vec::with_capacity(n);
    for (i, input) in p.inputs.iter().enumerate() {
        store.push(match input {
            Input::Tensor { .. } => Store::Input(i as V),
            _ => Store::Scalar,
        });
    }
    let mut temps: Vec<usize> = Vec::new();
    let mut in_place = Vec::with_capacity(p.ins.len());
    let mut output_alias: Vec<Option<V>> = vec![None; p.outputs.len()];
    // Which buffers may be overwritten: temporaries, and owned inputs.
    let writable = |st: Store| match st {
        Store::Temp(_) => true,
        Store::Input(v) => matches!(
            p.inputs.get(usize::from(v)),
            Some(Input::Tensor { owned: true, .. })
        ),
        _ => false,
    };
    let mut temp_free: Vec<usize> = Vec::new();
    // The value each temporary currently holds.
    let mut holder: Vec<usize> = Vec::new();
    for (j, ins) in p.ins.iter().enumerate() {
        let v = n_in + j;
        let (shape, dt) = shapes[v];
        // In place over the first operand when this is its last read, it is not an output, it
        // has the result's shape, and no other operand shares its buffer.
        let first = match *ins {
            Ins::Unary { t, .. } | Ins::Scalar { t, rev: false, .. } => Some(t),
            Ins::Binary { a, b, .. } => {
                Some(a).filter(|&a| store[usize::from(a)] != store[usize::from(b)])
            }
            _ => None,
        };
        let reuse = first.map(usize::from).filter(|&u| {
            last[u] == Some(j)
                && !is_output[u]
                && shapes[u] == (shape, dt)
                && writable(store[u])
                // A temporary cannot become an output tensor.
                && !(is_output[v] && matches!(store[u], Store::Temp(_)))
        });
        let st = match reuse {
            Some(u) => {
                let st = store[u];
                match st {
                    Store::Temp(t) => holder[t] = v,
                    Store::Input(iv) if is_output[v] => {
                        if let Some(k) = p.outputs.iter().position(|&o| usize::from(o) == v) {
                            output_alias[k] = Some(iv);
                        }
                    }
                    _ => {}
                }
                st
            }
            None if is_output[v] => output_store(p.outputs, v)?,
            None => {
                let len = shape.numel();
                let t = match temp_free.iter().position(|&t| temps[t] == len) {
                    Some(pos) => temp_free.swap_remove(pos),
                    None => {
                        temps.push(len);
                        holder.push(v);
                        temps.len() - 1
                    }
                };
                holder[t] = v;
                Store::Temp(t)
            }
        };
        in_place.push(reuse.is_some());
        store.push(st);
        // A temporary whose value died here (and was not overwritten in place) is free.
        for u in operands(ins) {
            let u = usize::from(u);
            if let Store::Temp(t) = store[u] {
                if last[u] == Some(j) && holder[t] == u && !temp_free.contains(&t) {
                    temp_free.push(t);
                }
            }
        }
    }
    // The same value listed twice as an output would alias two result tensors: decline.
    for (i, o) in p.outputs.iter().enumerate() {
        if p.outputs[..i].contains(o) {
            return None;
        }
        if usize::from(*o) < n_in {
            return None;
        }
    }
    let elements = shapes.iter().map(|(s, _)| s.numel());
    let max_numel = elements.clone().max().unwrap_or(0);
    let any_empty = elements.clone().any(|n| n == 0);
    let work = macs.saturating_add(elements.fold(0usize, usize::saturating_add));
    Some(Plan {
        shapes,
        store,
        temps,
        in_place,
        output_alias,
        macs,
        max_numel,
        any_empty,
        work,
    })
}

fn output_store(outputs: &[V], v: usize) -> Option<Store> {
    outputs
        .iter()
        .position(|&o| usize::from(o) == v)
        .map(Store::Output)
}

/// The operand values an instruction reads (no allocation: it runs on every fused call).
pub fn operands(ins: &Ins) -> impl Iterator<Item = V> {
    let slots = match *ins {
        Ins::LayerNorm { x, n, w, b, eps } => {
            // Five operands at most; eps, when present, is a scalar read last.
            return [Some(x), Some(n), w, b, eps].into_iter().flatten();
        }
        Ins::Linear { x, w, b } => [Some(x), Some(w), b, None, None],
        Ins::Matmul { a, b } | Ins::Binary { a, b, .. } => [Some(a), Some(b), None, None, None],
        Ins::Scalar { t, s, .. } => [Some(t), Some(s), None, None, None],
        Ins::Unary { t, .. }
        | Ins::Softmax { t, .. }
        | Ins::Reduce { t, .. }
        | Ins::Argmax { t, .. } => [Some(t), None, None, None, None],
    };
    slots.into_iter().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(slot: u16, owned: bool) -> Input {
        Input::Tensor { slot, owned }
    }

    fn sh(sizes: &[usize]) -> Option<Shape> {
        Shape::of(sizes)
    }

    fn view<'a>(inputs: &'a [Input], ins: &'a [Ins], outputs: &'a [V]) -> ProgramView<'a> {
        ProgramView {
            inputs,
            ins,
            outputs,
        }
    }

    /// The scoring prologue: `(x - mean) / s` then `linear`: the two elementwise steps share
    /// one temporary (the second in place), the linear writes the output tensor.
    #[test]
    fn a_chain_shares_one_temporary_and_writes_the_output_directly() {
        let inputs = [
            t(0, false),
            t(1, false),
            Input::Scalar { slot: 0 },
            t(2, false),
            t(3, false),
        ];
        let ins = [
            Ins::Binary {
                f: BinaryF::Sub,
                a: 0,
                b: 1,
            },
            Ins::Scalar {
                f: BinaryF::Div,
                t: 5,
                s: 2,
                rev: false,
            },
            Ins::Linear {
                x: 6,
                w: 3,
                b: Some(4),
            },
        ];
        let shapes = [sh(&[4, 32]), sh(&[32]), None, sh(&[16, 32]), sh(&[16])];
        let p = plan(view(&inputs, &ins, &[7]), &shapes).unwrap();
        assert_eq!(p.shapes[7].0.sizes(), &[4, 16]);
        assert_eq!(p.store[5], Store::Temp(0));
        assert_eq!(p.store[6], Store::Temp(0));
        assert_eq!(p.in_place, vec![false, true, false]);
        assert_eq!(p.store[7], Store::Output(0));
        assert_eq!(p.temps, vec![128]);
        assert_eq!(p.macs, 4 * 32 * 16);
        assert_eq!(p.output_alias, vec![None]);
    }

    #[test]
    fn an_owned_input_is_overwritten_in_place_and_becomes_the_output() {
        let inputs = [t(0, true)];
        let ins = [Ins::Unary {
            f: UnaryF::Relu,
            t: 0,
        }];
        let p = plan(view(&inputs, &ins, &[1]), &[sh(&[2, 3])]).unwrap();
        assert_eq!(p.in_place, vec![true]);
        assert_eq!(p.store[1], Store::Input(0));
        assert_eq!(p.output_alias, vec![Some(0)]);
        // A borrowed input is never written.
        let inputs = [t(0, false)];
        let p = plan(view(&inputs, &ins, &[1]), &[sh(&[2, 3])]).unwrap();
        assert_eq!(p.in_place, vec![false]);
        assert_eq!(p.store[1], Store::Output(0));
        assert_eq!(p.output_alias, vec![None]);
    }

    #[test]
    fn layer_norm_keeps_its_input_shape_and_needs_affine_vectors_of_the_last_dim() {
        // x, n, weight, bias, eps
        let inputs = [
            t(0, false),
            Input::Scalar { slot: 0 },
            t(1, false),
            t(2, false),
            Input::Scalar { slot: 1 },
        ];
        let ins = [Ins::LayerNorm {
            x: 0,
            n: 1,
            w: Some(2),
            b: Some(3),
            eps: Some(4),
        }];
        let shapes = [sh(&[5, 48]), None, sh(&[48]), sh(&[48]), None];
        let p = plan(view(&inputs, &ins, &[5]), &shapes).unwrap();
        assert_eq!(p.shapes[5].0.sizes(), &[5, 48]);
        assert_eq!(p.store[5], Store::Output(0));
        // A weight of another size is libtorch's error to raise: declined.
        let bad = [sh(&[5, 48]), None, sh(&[47]), sh(&[48]), None];
        assert!(plan(view(&inputs, &ins, &[5]), &bad).is_none());
        // The normalised size must be a scalar input.
        let not_scalar = [
            t(0, false),
            t(3, false),
            t(1, false),
            t(2, false),
            Input::Scalar { slot: 1 },
        ];
        let shapes = [sh(&[5, 48]), sh(&[1]), sh(&[48]), sh(&[48]), None];
        assert!(plan(view(&not_scalar, &ins, &[5]), &shapes).is_none());
        assert_eq!(operands(&ins[0]).collect::<Vec<_>>(), vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn values_read_again_or_returned_are_never_overwritten() {
        // a = relu(x); b = a * a; c = tanh(a): a is read again by c, so b (whose two operands
        // share one buffer anyway) is computed out of place; c, a's last reader, may take over
        // the owned buffer and become the output that aliases x.
        let inputs = [t(0, true)];
        let ins = [
            Ins::Unary {
                f: UnaryF::Relu,
                t: 0,
            },
            Ins::Binary {
                f: BinaryF::Mul,
                a: 1,
                b: 1,
            },
            Ins::Unary {
                f: UnaryF::Tanh,
                t: 1,
            },
        ];
        let p = plan(view(&inputs, &ins, &[2, 3]), &[sh(&[3])]).unwrap();
        assert_eq!(p.in_place, vec![true, false, true]);
        assert_eq!(p.store[1], Store::Input(0));
        assert_eq!(p.store[2], Store::Output(0));
        assert_eq!(p.store[3], Store::Input(0));
        assert_eq!(p.output_alias, vec![None, Some(0)]);
        // An output is never the in-place target of a later instruction.
        let ins = [
            Ins::Unary {
                f: UnaryF::Relu,
                t: 0,
            },
            Ins::Unary {
                f: UnaryF::Exp,
                t: 1,
            },
        ];
        let inputs = [t(0, false)];
        let p = plan(view(&inputs, &ins, &[1, 2]), &[sh(&[3])]).unwrap();
        assert_eq!(p.in_place, vec![false, false]);
    }

    #[test]
    fn dead_temporaries_are_reused_but_never_by_their_own_reader() {
        // t1 = x + 1; t2 = linear(t1, w); t3 = t2 - 1 (in place); out = linear(t3, w)
        let inputs = [t(0, false), Input::Scalar { slot: 0 }, t(1, false)];
        let ins = [
            Ins::Scalar {
                f: BinaryF::Add,
                t: 0,
                s: 1,
                rev: false,
            },
            Ins::Linear {
                x: 3,
                w: 2,
                b: None,
            },
            Ins::Scalar {
                f: BinaryF::Sub,
                t: 4,
                s: 1,
                rev: false,
            },
            Ins::Linear {
                x: 5,
                w: 2,
                b: None,
            },
        ];
        let p = plan(view(&inputs, &ins, &[6]), &[sh(&[2, 4]), None, sh(&[4, 4])]).unwrap();
        // The linear cannot write the buffer it reads; the in-place step keeps t2's buffer.
        assert_ne!(p.store[3], p.store[4]);
        assert_eq!(p.store[4], p.store[5]);
        assert_eq!(p.temps.len(), 2);
    }

    #[test]
    fn shapes_outside_the_kernels_decline() {
        let inputs = [t(0, false), t(1, false)];
        let sub = [Ins::Binary {
            f: BinaryF::Sub,
            a: 0,
            b: 1,
        }];
        // Same shape, and a row vector on the right: fine.
        assert!(plan(view(&inputs, &sub, &[2]), &[sh(&[2, 3]), sh(&[2, 3])]).is_some());
        assert!(plan(view(&inputs, &sub, &[2]), &[sh(&[2, 3]), sh(&[3])]).is_some());
        // A vector minus a matrix, a column broadcast, a single element: broadcast as torch.
        assert!(plan(view(&inputs, &sub, &[2]), &[sh(&[3]), sh(&[2, 3])]).is_some());
        assert!(plan(view(&inputs, &sub, &[2]), &[sh(&[2, 3]), sh(&[2, 1])]).is_some());
        assert_eq!(
            broadcast(sh(&[2, 1]).unwrap(), sh(&[1, 3]).unwrap()),
            Some((sh(&[2, 3]).unwrap(), Role::Col, Role::Row))
        );
        assert_eq!(
            broadcast(sh(&[1]).unwrap(), sh(&[4]).unwrap()),
            Some((sh(&[4]).unwrap(), Role::Single, Role::Full))
        );
        // Mismatched sizes: libtorch raises its own error.
        assert!(plan(view(&inputs, &sub, &[2]), &[sh(&[2, 3]), sh(&[4])]).is_none());
        assert!(plan(view(&inputs, &sub, &[2]), &[sh(&[2, 3]), sh(&[3, 3])]).is_none());
        let add = [Ins::Binary {
            f: BinaryF::Add,
            a: 0,
            b: 1,
        }];
        let p = plan(view(&inputs, &add, &[2]), &[sh(&[3]), sh(&[2, 3])]).unwrap();
        assert_eq!(p.shapes[2].0.sizes(), &[2, 3]);
        // Linear with a wrong inner size, a 1-D weight: libtorch raises its own error.
        let lin = [Ins::Linear {
            x: 0,
            w: 1,
            b: None,
        }];
        assert!(plan(view(&inputs, &lin, &[2]), &[sh(&[2, 3]), sh(&[4, 2])]).is_none());
        assert!(plan(view(&inputs, &lin, &[2]), &[sh(&[2, 3]), sh(&[3])]).is_none());
        let p = plan(view(&inputs, &lin, &[2]), &[sh(&[3]), sh(&[5, 3])]).unwrap();
        assert_eq!(p.shapes[2].0.sizes(), &[5]);
        // Reductions over an empty dim, or to a 0-dim tensor: libtorch.
        let one = [t(0, false)];
        let amax = [Ins::Reduce {
            f: ReduceF::Amax,
            t: 0,
            dim: 1,
            keepdim: false,
        }];
        assert!(plan(view(&one, &amax, &[1]), &[sh(&[2, 0])]).is_none());
        assert!(plan(view(&one, &amax, &[1]), &[sh(&[4])]).is_none());
        let keep = [Ins::Argmax {
            t: 0,
            dim: 0,
            keepdim: true,
        }];
        let p = plan(view(&one, &keep, &[1]), &[sh(&[2, 5])]).unwrap();
        assert_eq!(p.shapes[1], (Shape::of(&[1, 5]).unwrap(), Dt::I64));
        // A missing tensor shape, a wrong input count.
        assert!(plan(view(&one, &keep, &[1]), &[None]).is_none());
        assert!(plan(view(&one, &keep, &[1]), &[]).is_none());
    }

    fn region_of(src: &str) -> Region {
        // Build a region from claims of the real claim table.
        use crate::claim::tests::{binop, t1, t2};
        use rextio_plugin_api::{
            ClaimOutcome, ClaimedSite, LoweredOperand, RegionInput, RegionNode,
        };
        let claimed = |site: rextio_plugin_api::ClaimSite| {
            let ClaimOutcome::Claimed {
                rule_id,
                result_type,
            } = claim::claim(&site)
            else {
                panic!("not claimed: {site:?}")
            };
            ClaimedSite {
                site,
                plugin_id: crate::PLUGIN_ID.into(),
                rule_id,
                result_type,
            }
        };
        let input = |ty: ValueType, owned: bool| RegionInput {
            operand: LoweredOperand {
                expr: "l_v".into(),
                owned_temp: owned,
            },
            ty,
        };
        let ty = |o: &rextio_plugin_api::Operand| o.ty.clone().unwrap_or(ValueType::Int);
        match src {
            // x - mean (2-D minus 1-D)
            "sub" => Region {
                qualname: "m.f".into(),
                inputs: vec![input(ty(&t2()), false), input(ty(&t1()), false)],
                nodes: vec![RegionNode {
                    claimed: claimed(binop("-", t2(), t1())),
                    receiver: None,
                    args: vec![RegionRef::Input(0), RegionRef::Input(1)],
                    keywords: vec![],
                }],
                outputs: vec![0],
            },
            _ => unreachable!(),
        }
    }

    #[test]
    fn a_region_renders_as_a_static_program_with_a_fallback_option() {
        let region = region_of("sub");
        let cx = RegionContext {
            target: "cpu".into(),
            device_authorization: None,
        };
        let lowered = lower_region(&region, &cx).unwrap().unwrap();
        assert!(
            lowered.expr.contains("static __RX_PROGRAM"),
            "{}",
            lowered.expr
        );
        assert!(
            lowered
                .expr
                .contains("fused::<1>(&__RX_PROGRAM, &[&(l_v), &(l_v)], &[])?"),
            "{}",
            lowered.expr
        );
        assert!(syn_like_balanced(&lowered.expr));
        // Another target: declined, never CPU code.
        let cx = RegionContext {
            target: crate::CUDA_CAPABILITY.into(),
            device_authorization: None,
        };
        assert_eq!(lower_region(&region, &cx).unwrap(), None);
        // A drifted claim fails closed.
        let mut drifted = region.clone();
        drifted.nodes[0].claimed.rule_id = "rextio-torch/tensor-add-f32-cpu-same-rank".into();
        assert!(lower_region(
            &drifted,
            &RegionContext {
                target: "cpu".into(),
                device_authorization: None
            }
        )
        .is_err());
        // An operand pointing past the inputs fails closed too.
        let mut bad = region;
        bad.nodes[0].args[1] = RegionRef::Input(7);
        assert!(build(&bad).is_err());
    }

    fn syn_like_balanced(s: &str) -> bool {
        let mut depth = 0i32;
        for c in s.chars() {
            match c {
                '{' | '(' | '[' => depth += 1,
                '}' | ')' | ']' => depth -= 1,
                _ => {}
            }
            if depth < 0 {
                return false;
            }
        }
        depth == 0
    }
}
