//! Planning one call of a [`Program`](crate::ir::Program) from its actual input shapes: the
//! shape and element type of every value, which buffer each value lives in (internal
//! temporaries, output tensors, or an owned input written in place), and the work the call
//! does. [`plan`] declines (`None`) whenever a shape, a broadcast or a size is outside what the
//! kernels handle; the backend then runs its per-op path, with its library's own errors.

use crate::ir::{operands, Input, Ins, ProgramView, V};
use crate::kernels::linear_cols_min_rows;

/// A runtime shape of rank 0, 1 or 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Rank.
    pub rank: usize,
    /// Sizes (`dims[..rank]`).
    pub dims: [usize; 2],
}

impl Shape {
    /// A shape from sizes (rank <= 2).
    #[inline]
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
        &self.dims[..self.rank]
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

/// How a call's matrices lie in memory while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// As the framework holds them: row-major, a batch row after another.
    Rows,
    /// Feature-major: every matrix value with more than one row and column is held transposed
    /// (`[c, m]` for a logical `[m, c]`), so a product reads its weight in place, in the
    /// framework's layout, and keeps the batch in its vectors ([`crate::kernels::linear_cols`]):
    /// no pack, no cached copy to compare. Vectors, scalars and matrices with a dim of 1 lie
    /// the same either way. Inputs read as activations are transposed into a temporary before
    /// the run ([`Plan::enter`]) and outputs into their tensors after it ([`Plan::leave`]).
    /// Chosen by [`layout_of`].
    Cols,
}

/// A complete plan for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// How the matrices lie while the call runs.
    pub layout: Layout,
    /// [`Layout::Cols`]: the tensor inputs copied transposed into their temporaries before the
    /// run.
    pub enter: Vec<V>,
    /// [`Layout::Cols`]: the outputs (by index) held transposed in a temporary and transposed
    /// into their tensors after the run.
    pub leave: Vec<usize>,
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
    /// Multiply-adds of all the matrix products.
    pub macs: usize,
    /// Multiply-adds of the largest matrix product (for the size guard: a product above the
    /// bound is where the backend's BLAS wins, however small the others around it).
    pub largest_product: usize,
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
    let Inferred {
        shapes,
        macs,
        largest: largest_product,
    } = infer_shapes(p, input_shapes)?;
    let layout = layout_of(p, &shapes);
    // Values held transposed whose memory differs from the framework's.
    let moved = |v: usize| layout == Layout::Cols && transposes(shapes[v].0);
    let enter: Vec<V> = (0..n_in)
        .filter(|&v| moved(v) && p.ins.iter().any(|i| reads_as_activation(i, v)))
        .map(|v| v as V)
        .collect();
    let leave: Vec<usize> = (0..p.outputs.len())
        .filter(|&o| moved(usize::from(p.outputs[o])))
        .collect();
    let Storage {
        store,
        temps,
        in_place,
        output_alias,
    } = assign_storage(p, &shapes, &enter, &leave)?;
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
        layout,
        enter,
        leave,
        shapes,
        store,
        temps,
        in_place,
        output_alias,
        macs,
        largest_product,
        max_numel,
        any_empty,
        work,
    })
}

/// Whether a matrix of this shape lies differently transposed (more than one row and column).
fn transposes(s: Shape) -> bool {
    s.rank == 2 && s.dims[0] > 1 && s.dims[1] > 1
}

/// Whether instruction `i` reads value `v` as an activation (anything but a product's weight and
/// the vectors and scalars of a bias, layer norm or scalar op).
fn reads_as_activation(i: &Ins, v: usize) -> bool {
    let is = |u: V| usize::from(u) == v;
    match *i {
        Ins::Linear { x, .. } => is(x),
        Ins::LayerNorm { x, .. } => is(x),
        Ins::Matmul { a, b } => is(a) || is(b),
        Ins::Binary { a, b, .. } => is(a) || is(b),
        Ins::Transpose { t }
        | Ins::Unary { t, .. }
        | Ins::Scalar { t, .. }
        | Ins::Softmax { t, .. }
        | Ins::Reduce { t, .. }
        | Ins::Argmax { t, .. } => is(t),
    }
}

/// The layout a call runs in: [`Layout::Cols`] when it has a `linear`, every `linear` is of a
/// batch of at least [`linear_cols_min_rows`] rows (where the feature-major product is the
/// faster) with a weight that is a program input read by nothing else, no instruction lacks a
/// feature-major form (`matmul`, `transpose`), and the inputs and outputs it would transpose
/// hold no more elements than its weights (the comparison of packed weights it saves costs
/// about what moving that many elements does); else [`Layout::Rows`]. Measured on an AVX-512
/// host (Zen 5), a residual MLP at 128 rows: as one call (20 features in, 5 classes out) 35.2
/// µs row-major, 33.8 feature-major; as three calls that each move 48 features in and out,
/// 34.6 row-major, 35.2 all feature-major.
pub fn layout_of(p: ProgramView<'_>, shapes: &[(Shape, Dt)]) -> Layout {
    let n_in = p.inputs.len();
    let min_rows = linear_cols_min_rows();
    let mut weights = 0usize;
    for i in p.ins {
        match *i {
            Ins::Linear { x, w, .. } => {
                let (xs, w) = (shapes[usize::from(x)].0, usize::from(w));
                if xs.rank != 2
                    || xs.dims[0] < min_rows
                    || w >= n_in
                    || p.ins.iter().any(|j| reads_as_activation(j, w))
                {
                    return Layout::Rows;
                }
                weights = weights.saturating_add(shapes[w].0.numel());
            }
            Ins::Matmul { .. } | Ins::Transpose { .. } => return Layout::Rows,
            _ => {}
        }
    }
    let moved = |v: usize| {
        let s = shapes[v].0;
        if transposes(s) {
            s.numel()
        } else {
            0
        }
    };
    let entering = (0..n_in)
        .filter(|&v| p.ins.iter().any(|i| reads_as_activation(i, v)))
        .map(moved);
    let leaving = p.outputs.iter().map(|&o| moved(usize::from(o)));
    let transposed = entering.chain(leaving).fold(0usize, usize::saturating_add);
    if weights > 0 && transposed <= weights {
        Layout::Cols
    } else {
        Layout::Rows
    }
}

/// What [`infer_shapes`] finds.
struct Inferred {
    /// The shape and dtype of every value.
    shapes: Vec<(Shape, Dt)>,
    /// Multiply-adds of all the products.
    macs: usize,
    /// Multiply-adds of the largest product.
    largest: usize,
}

/// The shape and dtype of every value (inputs, then one per instruction), the program's
/// multiply-adds and those of its largest product; `None` when an instruction's operands do not
/// fit it.
fn infer_shapes(p: ProgramView<'_>, input_shapes: &[Option<Shape>]) -> Option<Inferred> {
    let n_in = p.inputs.len();
    let mut shapes: Vec<(Shape, Dt)> = Vec::with_capacity(n_in + p.ins.len());
    let scalar_shape = Shape {
        rank: 0,
        dims: [1, 1],
    };
    for (i, input) in p.inputs.iter().enumerate() {
        match (input, input_shapes.get(i).copied().flatten()) {
            (Input::Tensor { .. }, Some(s)) => shapes.push((s, Dt::F32)),
            (Input::Tensor { .. }, None) => return None,
            _ => shapes.push((scalar_shape, Dt::F32)),
        }
    }
    let mut macs = 0usize;
    let mut largest = 0usize;
    for ins in p.ins {
        let (out, m) = result_shape(p, ins, &shapes)?;
        macs = macs.saturating_add(m);
        largest = largest.max(m);
        shapes.push(out);
    }
    Some(Inferred {
        shapes,
        macs,
        largest,
    })
}

/// The shape and dtype of `ins`'s result given the values before it, and its multiply-adds.
fn result_shape(
    p: ProgramView<'_>,
    ins: &Ins,
    shapes: &[(Shape, Dt)],
) -> Option<((Shape, Dt), usize)> {
    let k = Known { p, shapes };
    let f32 = |s: Shape| (s, Dt::F32);
    Some(match *ins {
        Ins::Linear { x, w, b } => linear_shape(&k, x, w, b)?,
        Ins::Matmul { a, b } => {
            let (as_, bs) = (k.tensor(a)?, k.tensor(b)?);
            if as_.rank != 2 || bs.rank != 2 || as_.dims[1] != bs.dims[0] {
                return None;
            }
            let macs = as_.dims[0]
                .saturating_mul(as_.dims[1])
                .saturating_mul(bs.dims[1]);
            (f32(Shape::of(&[as_.dims[0], bs.dims[1]])?), macs)
        }
        Ins::Transpose { t } => {
            let s = k.tensor(t)?;
            if s.rank != 2 {
                return None;
            }
            (f32(Shape::of(&[s.dims[1], s.dims[0]])?), 0)
        }
        Ins::Unary { t, .. } => (f32(k.tensor(t)?), 0),
        Ins::Binary { a, b, keep, .. } => {
            let left = k.tensor(a)?;
            let (shape, _, _) = broadcast(left, k.tensor(b)?)?;
            if keep && shape != left {
                return None;
            }
            (f32(shape), 0)
        }
        Ins::Scalar { t, s, .. } => {
            if !k.scalar_input(s) {
                return None;
            }
            (f32(k.tensor(t)?), 0)
        }
        Ins::Softmax { t, dim, .. } => {
            let s = k.tensor(t)?;
            if s.rank == 0 || usize::from(dim) >= s.rank {
                return None;
            }
            (f32(s), 0)
        }
        Ins::LayerNorm { x, n, w, b, eps } => (f32(layer_norm_shape(&k, x, n, w, b, eps)?), 0),
        Ins::Reduce {
            t, dim, keepdim, ..
        } => (f32(reduced_shape(&k, t, dim, keepdim)?), 0),
        Ins::Argmax {
            t, dim, keepdim, ..
        } => ((reduced_shape(&k, t, dim, keepdim)?, Dt::I64), 0),
    })
}

/// The values before an instruction, as its shape rule reads them.
struct Known<'a> {
    p: ProgramView<'a>,
    shapes: &'a [(Shape, Dt)],
}

impl Known<'_> {
    /// The shape of `v` when it is a float32 tensor (a computed value or a tensor input).
    fn tensor(&self, v: V) -> Option<Shape> {
        match self.shapes.get(usize::from(v)) {
            Some((s, Dt::F32))
                if usize::from(v) >= self.p.inputs.len()
                    || matches!(self.p.inputs[usize::from(v)], Input::Tensor { .. }) =>
            {
                Some(*s)
            }
            _ => None,
        }
    }

    /// Whether `v` is a scalar input.
    fn scalar_input(&self, v: V) -> bool {
        matches!(
            self.p.inputs.get(usize::from(v)),
            Some(Input::Scalar { .. })
        )
    }
}

/// `x · wᵀ (+ b)`: `x` of rank 1 or 2 whose last dim is `w`'s second, a bias as long as `w`'s
/// rows; the result and its multiply-adds.
fn linear_shape(k: &Known<'_>, x: V, w: V, b: Option<V>) -> Option<((Shape, Dt), usize)> {
    let (xs, ws) = (k.tensor(x)?, k.tensor(w)?);
    if ws.rank != 2 || !(1..=2).contains(&xs.rank) {
        return None;
    }
    let (m, kk) = xs.matrix();
    let (nn, wk) = (ws.dims[0], ws.dims[1]);
    if wk != kk {
        return None;
    }
    if let Some(b) = b {
        let bs = k.tensor(b)?;
        if bs.rank != 1 || bs.dims[0] != nn {
            return None;
        }
    }
    let macs = m.saturating_mul(kk).saturating_mul(nn);
    let shape = if xs.rank == 2 {
        Shape::of(&[m, nn])?
    } else {
        Shape::of(&[nn])?
    };
    Some(((shape, Dt::F32), macs))
}

/// A layer norm over the last dim of a rank-1 or rank-2 `x`: its size and eps are scalar
/// inputs, its weight and bias as long as that dim.
fn layer_norm_shape(
    k: &Known<'_>,
    x: V,
    n: V,
    w: Option<V>,
    b: Option<V>,
    eps: Option<V>,
) -> Option<Shape> {
    let s = k.tensor(x)?;
    if !(1..=2).contains(&s.rank) {
        return None;
    }
    let last = s.matrix().1;
    if ![Some(n), eps]
        .into_iter()
        .flatten()
        .all(|v| k.scalar_input(v))
    {
        return None;
    }
    for v in [w, b].into_iter().flatten() {
        let ws = k.tensor(v)?;
        if ws.rank != 1 || ws.dims[0] != last {
            return None;
        }
    }
    Some(s)
}

/// A reduction (or argmax) of a rank-2 `t` over `dim`; reductions to a 0-dim tensor and empty
/// reductions (which raise, or follow libtorch's conventions) stay on libtorch.
fn reduced_shape(k: &Known<'_>, t: V, dim: u8, keepdim: bool) -> Option<Shape> {
    let s = k.tensor(t)?;
    if s.rank != 2 || dim >= 2 {
        return None;
    }
    let (m, nn) = (s.dims[0], s.dims[1]);
    if (dim == 1 && nn == 0) || (dim == 0 && m == 0) {
        return None;
    }
    match (keepdim, dim) {
        (true, 1) => Shape::of(&[m, 1]),
        (true, _) => Shape::of(&[1, nn]),
        (false, 1) => Shape::of(&[m]),
        (false, _) => Shape::of(&[nn]),
    }
}

/// Where each value lives, which instructions run in place, and which outputs alias an owned
/// input.
struct Storage {
    store: Vec<Store>,
    temps: Vec<usize>,
    in_place: Vec<bool>,
    output_alias: Vec<Option<V>>,
}

/// Assign storage: inputs stay where they are (those in `enter` move to a temporary of their
/// own); an instruction writes over its first operand when that is the operand's last read,
/// else into its output tensor (a temporary for the outputs in `leave`, kept to the end) or a
/// temporary (reused once the value it held is dead).
fn assign_storage(
    p: ProgramView<'_>,
    shapes: &[(Shape, Dt)],
    enter: &[V],
    leave: &[usize],
) -> Option<Storage> {
    let n_in = p.inputs.len();
    let n = shapes.len();
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
    // Outputs that live in a temporary until they are transposed into their tensor.
    let mut held = vec![false; n];
    for &o in leave {
        held[usize::from(*p.outputs.get(o)?)] = true;
    }
    let mut store: Vec<Store> = Vec::with_capacity(n);
    let mut temps: Vec<usize> = Vec::new();
    // The value each temporary currently holds.
    let mut holder: Vec<usize> = Vec::new();
    for (i, input) in p.inputs.iter().enumerate() {
        store.push(match input {
            Input::Tensor { .. } if enter.contains(&(i as V)) => {
                temps.push(shapes[i].0.numel());
                holder.push(i);
                Store::Temp(temps.len() - 1)
            }
            Input::Tensor { .. } => Store::Input(i as V),
            _ => Store::Scalar,
        });
    }
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
                // A temporary cannot become an output tensor (but may hold one to transpose).
                && !(is_output[v] && !held[v] && matches!(store[u], Store::Temp(_)))
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
            None if is_output[v] && !held[v] => output_store(p.outputs, v)?,
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
                if last[u] == Some(j) && !held[u] && holder[t] == u && !temp_free.contains(&t) {
                    temp_free.push(t);
                }
            }
        }
    }
    Some(Storage {
        store,
        temps,
        in_place,
        output_alias,
    })
}

fn output_store(outputs: &[V], v: usize) -> Option<Store> {
    outputs
        .iter()
        .position(|&o| usize::from(o) == v)
        .map(Store::Output)
}
