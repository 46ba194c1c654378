//! The region IR: a straight-line [`Program`] over float32 (and int64) values of rank 0 to 2.
//!
//! A backend translates a region of its claims into a [`ProgramBuf`], renders it as a `static`
//! [`Program`] in the generated crate ([`crate::render`]), and at run time hands it to
//! [`crate::exec::run`] with its tensors. The instructions name their functions with one
//! vocabulary, the kernels': [`UnaryF`] (converted to [`kernels::Unary`] exhaustively in both
//! directions, so an op the kernels gain is an op the IR can name), [`kernels::Binary`] itself,
//! and [`ReduceF`].

use crate::kernels::{self, Epilogue, GeluEdges};

/// A value of a program: inputs first, then one per instruction.
pub type V = u16;

/// Elementwise functions of one operand: [`kernels::Unary`] without the run-time parameters
/// (the GELU edges, which the host measures; see [`crate::exec::Edges`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryF {
    /// [`kernels::Unary::Relu`].
    Relu,
    /// [`kernels::Unary::ReluPlusZero`].
    ReluPlusZero,
    /// [`kernels::Unary::Tanh`].
    Tanh,
    /// [`kernels::Unary::Sigmoid`].
    Sigmoid,
    /// [`kernels::Unary::Exp`].
    Exp,
    /// [`kernels::Unary::Log`].
    Log,
    /// [`kernels::Unary::Neg`].
    Neg,
    /// [`kernels::Unary::Abs`].
    Abs,
    /// [`kernels::Unary::Sqrt`].
    Sqrt,
    /// [`kernels::Unary::Square`].
    Square,
    /// [`kernels::Unary::Erf`].
    Erf,
    /// [`kernels::Unary::Gelu`].
    Gelu,
    /// [`kernels::Unary::Silu`].
    Silu,
    /// [`kernels::Unary::Elu`] (torch's).
    Elu,
    /// [`kernels::Unary::EluExpMinusOne`] (TensorFlow's).
    EluExpMinusOne,
}

impl UnaryF {
    /// Every function.
    pub const ALL: [UnaryF; 15] = [
        UnaryF::Relu,
        UnaryF::ReluPlusZero,
        UnaryF::Tanh,
        UnaryF::Sigmoid,
        UnaryF::Exp,
        UnaryF::Log,
        UnaryF::Neg,
        UnaryF::Abs,
        UnaryF::Sqrt,
        UnaryF::Square,
        UnaryF::Erf,
        UnaryF::Gelu,
        UnaryF::Silu,
        UnaryF::Elu,
        UnaryF::EluExpMinusOne,
    ];

    /// The kernel op, with `gelu` as GELU's edges.
    pub fn kernel(self, gelu: GeluEdges) -> kernels::Unary {
        match self {
            UnaryF::Relu => kernels::Unary::Relu,
            UnaryF::ReluPlusZero => kernels::Unary::ReluPlusZero,
            UnaryF::Tanh => kernels::Unary::Tanh,
            UnaryF::Sigmoid => kernels::Unary::Sigmoid,
            UnaryF::Exp => kernels::Unary::Exp,
            UnaryF::Log => kernels::Unary::Log,
            UnaryF::Neg => kernels::Unary::Neg,
            UnaryF::Abs => kernels::Unary::Abs,
            UnaryF::Sqrt => kernels::Unary::Sqrt,
            UnaryF::Square => kernels::Unary::Square,
            UnaryF::Erf => kernels::Unary::Erf,
            UnaryF::Gelu => kernels::Unary::Gelu(gelu),
            UnaryF::Silu => kernels::Unary::Silu,
            UnaryF::Elu => kernels::Unary::Elu,
            UnaryF::EluExpMinusOne => kernels::Unary::EluExpMinusOne,
        }
    }

    /// The IR function of a kernel op.
    pub fn of_kernel(u: kernels::Unary) -> UnaryF {
        match u {
            kernels::Unary::Relu => UnaryF::Relu,
            kernels::Unary::ReluPlusZero => UnaryF::ReluPlusZero,
            kernels::Unary::Tanh => UnaryF::Tanh,
            kernels::Unary::Sigmoid => UnaryF::Sigmoid,
            kernels::Unary::Exp => UnaryF::Exp,
            kernels::Unary::Log => UnaryF::Log,
            kernels::Unary::Neg => UnaryF::Neg,
            kernels::Unary::Abs => UnaryF::Abs,
            kernels::Unary::Sqrt => UnaryF::Sqrt,
            kernels::Unary::Square => UnaryF::Square,
            kernels::Unary::Erf => UnaryF::Erf,
            kernels::Unary::Gelu(_) => UnaryF::Gelu,
            kernels::Unary::Silu => UnaryF::Silu,
            kernels::Unary::Elu => UnaryF::Elu,
            kernels::Unary::EluExpMinusOne => UnaryF::EluExpMinusOne,
        }
    }

    /// The matrix-product epilogue that applies this function, when the kernels have one.
    pub fn epilogue(self, gelu: GeluEdges) -> Option<Epilogue> {
        let k = self.kernel(gelu);
        Epilogue::ALL
            .into_iter()
            .map(|e| match e {
                Epilogue::Gelu(_) => Epilogue::Gelu(gelu),
                e => e,
            })
            .find(|e| e.unary() == Some(k))
    }
}

/// Reductions over one dim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceF {
    /// Sum.
    Sum,
    /// Mean.
    Mean,
    /// Maximum (NaN if any element is NaN).
    Amax,
    /// Minimum (NaN if any element is NaN).
    Amin,
}

/// One instruction; its result is the next value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ins {
    /// `x · wᵀ (+ b)`: `x` rank 1 or 2, `w` `[out, in]`, `b` `[out]` (torch's `F.linear`).
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
    /// The transpose of a matrix.
    Transpose {
        /// Operand (rank 2).
        t: V,
    },
    /// Elementwise function.
    Unary {
        /// Which.
        f: UnaryF,
        /// Operand.
        t: V,
    },
    /// Tensor-tensor elementwise with broadcasting over ranks <= 2 (see
    /// [`crate::plan::broadcast`]).
    Binary {
        /// Which.
        f: kernels::Binary,
        /// Left.
        a: V,
        /// Right.
        b: V,
        /// The result must have `a`'s shape (an update of `a` in place in the framework, which
        /// refuses a broadcast that would grow it): the call declines otherwise, and the
        /// per-site path raises the framework's error.
        keep: bool,
    },
    /// Tensor-scalar elementwise (`rev`: the scalar is the left operand). The scalar is cast to
    /// float32 before the operation.
    Scalar {
        /// Which.
        f: kernels::Binary,
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
        /// The backend's softmax is the kernel's only on finite operands: a row holding NaN or
        /// ±inf makes the call decline after the run (see [`crate::exec::run`]).
        finite_only: bool,
    },
    /// A reduction of a matrix over a normalised dim.
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
    /// Layer norm over the last dim (torch's `F.layer_norm(x, (n,), w?, b?, eps)`).
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
    /// Argmax of a matrix over a normalised dim (int64 result; ties: the first index; NaN is
    /// the largest value, as torch answers).
    Argmax {
        /// Operand.
        t: V,
        /// Dim (non-negative).
        dim: u8,
        /// Keep the reduced dim with size 1.
        keepdim: bool,
        /// The backend's argmax is the kernel's only on finite operands: a NaN or ±inf makes
        /// the call decline after the run.
        finite_only: bool,
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

/// A fused region, as generated crates hold it (`static`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Program {
    /// Inputs, values `0..inputs.len()`.
    pub inputs: &'static [Input],
    /// Instructions, value `inputs.len() + i` each.
    pub ins: &'static [Ins],
    /// The values the region yields, in order.
    pub outputs: &'static [V],
}

/// An owned program, as a backend builds it before rendering it as Rust.
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

impl ProgramBuf {
    /// A program from its inputs (tensor and scalar slots numbered here, see
    /// [`number_slots`]), its instructions, and the instructions whose values it yields (by
    /// instruction index, in order). `None` when it yields nothing (no program is worth running
    /// then) or a yielded value is out of `V`'s range.
    pub fn assemble(mut inputs: Vec<Input>, ins: Vec<Ins>, yields: &[usize]) -> Option<Self> {
        if yields.is_empty() {
            return None;
        }
        number_slots(&mut inputs);
        let outputs = yields
            .iter()
            .map(|&k| V::try_from(inputs.len() + k).ok())
            .collect::<Option<Vec<V>>>()?;
        Some(Self {
            inputs,
            ins,
            outputs,
        })
    }

    /// This program as a view.
    pub fn view(&self) -> ProgramView<'_> {
        ProgramView {
            inputs: &self.inputs,
            ins: &self.ins,
            outputs: &self.outputs,
        }
    }
}

/// The operand values an instruction reads (no allocation: it runs on every fused call).
pub fn operands(ins: &Ins) -> impl Iterator<Item = V> {
    let slots = match *ins {
        Ins::LayerNorm { x, n, w, b, eps } => [Some(x), Some(n), w, b, eps],
        Ins::Linear { x, w, b } => [Some(x), Some(w), b, None, None],
        Ins::Matmul { a, b } | Ins::Binary { a, b, .. } => [Some(a), Some(b), None, None, None],
        Ins::Scalar { t, s, .. } => [Some(t), Some(s), None, None, None],
        Ins::Unary { t, .. }
        | Ins::Transpose { t }
        | Ins::Softmax { t, .. }
        | Ins::Reduce { t, .. }
        | Ins::Argmax { t, .. } => [Some(t), None, None, None, None],
    };
    slots.into_iter().flatten()
}

/// A program's inputs from what a planner found it reads of each region input: input `i` is a
/// tensor where `tensor[i]` (owned, so writable in place, where `owned(i)`), else a scalar where
/// `scalar[i]`, else unused; a missing flag reads as `false`. Slots are numbered by
/// [`ProgramBuf::assemble`].
pub fn region_inputs(
    n: usize,
    tensor: &[bool],
    scalar: &[bool],
    owned: impl Fn(usize) -> bool,
) -> Vec<Input> {
    let flag = |flags: &[bool], i: usize| flags.get(i).copied().unwrap_or(false);
    (0..n)
        .map(|i| {
            if flag(tensor, i) {
                Input::Tensor {
                    slot: 0,
                    owned: owned(i),
                }
            } else if flag(scalar, i) {
                Input::Scalar { slot: 0 }
            } else {
                Input::Unused
            }
        })
        .collect()
}

/// Numbers the tensor inputs and the scalar inputs each in order (`slot` is the position in the
/// runtime's tensor or scalar argument array), whatever slots they held.
pub fn number_slots(inputs: &mut [Input]) {
    let (mut tensors, mut scalars) = (0u16, 0u16);
    for input in inputs {
        match input {
            Input::Tensor { slot, .. } => {
                *slot = tensors;
                tensors += 1;
            }
            Input::Scalar { slot } => {
                *slot = scalars;
                scalars += 1;
            }
            Input::Unused => {}
        }
    }
}
