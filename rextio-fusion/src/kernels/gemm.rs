//! Matrix products: `linear` (torch `F.linear` layout, optionally with a fused bias and
//! activation), `linear_packed` (the same with the weight packed once) and `matmul`.
//!
//! Two kernels:
//! - a register-blocked outer-product micro-kernel (`MR` rows × two vectors of columns: 6×16 on
//!   AVX2, 12×32 on AVX-512, 6×8 portable) over `B` laid out `k × n`: `matmul`'s `b` is read in
//!   place (only a ragged last column panel is copied, zero-padded); `linear`'s `w` (`n × k`) is
//!   packed transposed into 32-column panels, once by [`PackedWeight::new`], or by `linear`
//!   into a per-thread cache keyed by the weight's address and shape and checked against a copy
//!   of the weight at every use (a weight too large to keep is packed per call into scratch);
//! - for `linear` with fewer than [`DOT_MAX_M`] rows, dot products along `k` straight from `w`
//!   (tiles of 2 rows × 4 weight rows), which beats the pack's comparison for a few rows.
//!
//! The bias is added to the accumulators before they are stored and the activation is applied
//! to each finished strip while it is in L1 (to a small packed product's whole output at the
//! end, in one pass). Summation order (and so the last bits) depends on the kernel, hence on
//! `m`, as with any BLAS.

use std::cell::RefCell;

use super::elementwise::{map_op_inplace, map_op_strip, Unary};
use super::math::GeluEdges;
use super::simd::Simd;
use super::{
    active_isa, check_len, checked_len, dispatch, dispatch_narrow, Isa, Kernel, KernelError,
};

/// An activation applied to `linear`'s result (after the bias) while it is stored, with the
/// semantics of the [`Unary`] op of the same name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Epilogue {
    /// No activation.
    None,
    /// [`Unary::Relu`].
    Relu,
    /// [`Unary::Tanh`].
    Tanh,
    /// [`Unary::Sigmoid`].
    Sigmoid,
    /// [`Unary::Gelu`] with these edges.
    Gelu(GeluEdges),
    /// [`Unary::Silu`].
    Silu,
}

impl Epilogue {
    /// Every epilogue (for tests and tables; GELU with torch's own kernel's edges).
    pub const ALL: [Epilogue; 6] = [
        Epilogue::None,
        Epilogue::Relu,
        Epilogue::Tanh,
        Epilogue::Sigmoid,
        Epilogue::Gelu(GeluEdges::PRODUCT_FORM),
        Epilogue::Silu,
    ];

    /// The elementwise op, if any.
    pub fn unary(self) -> Option<Unary> {
        match self {
            Epilogue::None => None,
            Epilogue::Relu => Some(Unary::Relu),
            Epilogue::Tanh => Some(Unary::Tanh),
            Epilogue::Sigmoid => Some(Unary::Sigmoid),
            Epilogue::Gelu(edges) => Some(Unary::Gelu(edges)),
            Epilogue::Silu => Some(Unary::Silu),
        }
    }
}

/// Below this many rows `linear` uses dot products instead of a packed weight. Measured on an
/// AVX-512 host for 48×96 and 96×48 weights: at 4 rows dot products and a cached pack (with
/// its comparison) cost the same, at 7 rows the pack took 0.99 µs against 1.73 µs.
pub(crate) const DOT_MAX_M: usize = 5;

/// Up to this many outputs (256 KiB, within L2) a packed product applies its activation in one
/// pass over the whole output once every strip is stored, rather than to each strip of
/// `2·LANES` columns as it is finished: the strip's rows are one or two vectors each, and the
/// per-row loop cost more than reading the output back from L2. Measured on an AVX2 host (Zen 3)
/// for 128 rows: `linear` 48→96 with GELU 20.7 -> 20.3 µs, 48→48 with tanh 11.4 -> 10.8 µs. A
/// larger output keeps the strip order, so its activation runs while the strip is in L1.
pub(crate) const EPILOGUE_WHOLE_FLOATS: usize = 1 << 16;

/// Column panel width of packed weights: a multiple of every flavour's `2 × LANES`, so one
/// packed layout serves all instruction sets (narrower flavours walk sub-panels).
const PANEL: usize = 32;

thread_local! {
    /// Packing scratch: grows to the largest packed operand seen on the thread, then is reused.
    static SCRATCH: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with a scratch slice of `len` floats (contents unspecified).
fn with_scratch<R>(len: usize, f: impl FnOnce(&mut [f32]) -> R) -> R {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buf) => {
            if buf.len() < len {
                buf.resize(len, 0.0);
            }
            f(&mut buf[..len])
        }
        // Unreachable (kernels do not re-enter), but never panic: use a fresh buffer.
        Err(_) => f(&mut vec![0.0; len]),
    })
}

/// `out[m×n] = x[m×k] · w[n×k]ᵀ (+ bias[n])`, torch's `F.linear(x, w, bias)`.
pub fn linear(
    x: &[f32],
    m: usize,
    k: usize,
    w: &[f32],
    n: usize,
    bias: Option<&[f32]>,
    out: &mut [f32],
) -> Result<(), KernelError> {
    linear_fused(x, m, k, w, n, bias, Epilogue::None, out)
}

/// `out[m×n] = act(x[m×k] · w[n×k]ᵀ (+ bias[n]))`, e.g. `F.relu(F.linear(x, w, b))`, with the
/// bias and activation applied while the result is stored. `w` is torch's weight layout (row `j`
/// holds output `j`'s `k` weights). Errors when a slice's length does not match.
#[allow(clippy::too_many_arguments)]
pub fn linear_fused(
    x: &[f32],
    m: usize,
    k: usize,
    w: &[f32],
    n: usize,
    bias: Option<&[f32]>,
    epilogue: Epilogue,
    out: &mut [f32],
) -> Result<(), KernelError> {
    check_len("x", x.len(), checked_len(m, k)?)?;
    check_len("w", w.len(), checked_len(n, k)?)?;
    check_len("out", out.len(), checked_len(m, n)?)?;
    if let Some(b) = bias {
        check_len("bias", b.len(), n)?;
    }
    if m == 0 || n == 0 {
        return Ok(());
    }
    if k > 0 && m < DOT_MAX_M {
        let dot = Dot {
            x,
            m,
            k,
            w,
            n,
            bias,
            epilogue,
            out,
        };
        if m == 1 {
            dispatch(DotRow(dot));
        } else {
            dispatch(dot);
        }
        return Ok(());
    }
    let op = Op {
        a: x,
        m,
        k,
        b: B::Weight(w),
        n,
        bias,
        epilogue,
        out,
    };
    // Fewer rows took the dot products above, so this is the empty sum.
    if k == 0 {
        dispatch(Run {
            op,
            scratch: &mut [],
        });
        return Ok(());
    }
    let len = packed_len(n, k).ok_or(KernelError::Overflow)?;
    // From a cached pack when the cache holds (or takes) this weight; else packed per call.
    let mut op = Some(op);
    PACKS.with(|cell| {
        let Ok(mut cache) = cell.try_borrow_mut() else {
            return;
        };
        if let Some(packed) = cache.get(w, n, k, len) {
            if let Some(op) = op.take() {
                let op = Op {
                    b: B::Packed(packed),
                    ..op
                };
                dispatch(Run {
                    op,
                    scratch: &mut [],
                });
            }
        }
    });
    let Some(op) = op else {
        return Ok(());
    };
    with_scratch(len, |scratch| dispatch(Run { op, scratch }));
    Ok(())
}

/// Packed weights kept per thread, by address and shape, each with a copy of the weight it was
/// packed from. A weight is a constant between updates in inference, but nothing tells a kernel
/// when it is updated (an in-place write through `.data` or NumPy bumps no version counter), so
/// every use compares the weight with the copy (one sequential `memcmp`, several times cheaper
/// than packing) and repacks when they differ: a stale pack is never used.
struct PackCache {
    entries: Vec<PackEntry>,
    clock: u64,
}

struct PackEntry {
    addr: usize,
    copy: Vec<f32>,
    packed: PackedWeight,
    used: u64,
}

/// Floats (copies plus packs) a thread's pack cache holds at most; the least recently used
/// entries go first. 2^22 floats is 16 MiB per thread.
const PACK_CACHE_FLOATS: usize = 1 << 22;

thread_local! {
    static PACKS: RefCell<PackCache> = const {
        RefCell::new(PackCache {
            entries: Vec::new(),
            clock: 0,
        })
    };
}

/// The bytes of a float slice (for an exact, NaN-safe comparison).
fn bytes(v: &[f32]) -> &[u8] {
    // SAFETY: initialised `f32` memory is valid as bytes, over the same length in bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

impl PackCache {
    /// `w` (`n × k`) packed (`len` floats): the cached pack when the copy kept with it is
    /// bitwise `w`, else packed now and kept. `None` when the weight is too large to keep.
    fn get(&mut self, w: &[f32], n: usize, k: usize, len: usize) -> Option<&[f32]> {
        let size = w.len().checked_add(len)?;
        if size > PACK_CACHE_FLOATS / 2 {
            return None;
        }
        self.clock += 1;
        let addr = w.as_ptr() as usize;
        let found = self
            .entries
            .iter()
            .position(|e| e.addr == addr && e.packed.n == n && e.packed.k == k);
        let at = match found {
            Some(at) => {
                let e = &mut self.entries[at];
                if bytes(&e.copy) != bytes(w) {
                    e.copy.copy_from_slice(w);
                    pack_panels(w, n, k, &mut e.packed.data);
                }
                at
            }
            None => {
                // Entries are added on a miss only, so the size held is summed here.
                let held = |c: &Self| -> usize {
                    c.entries
                        .iter()
                        .map(|e| e.copy.len() + e.packed.data.len())
                        .sum()
                };
                while held(self) + size > PACK_CACHE_FLOATS {
                    let oldest = self
                        .entries
                        .iter()
                        .enumerate()
                        .min_by_key(|(_, e)| e.used)
                        .map(|(i, _)| i)?;
                    self.entries.swap_remove(oldest);
                }
                let packed = PackedWeight::new(w, n, k).ok()?;
                self.entries.push(PackEntry {
                    addr,
                    copy: w.to_vec(),
                    packed,
                    used: 0,
                });
                self.entries.len() - 1
            }
        };
        let e = &mut self.entries[at];
        e.used = self.clock;
        Some(&e.packed.data)
    }
}

/// The width of the narrow last panel: a multiple of every flavour's `LANES` (16 on AVX-512).
const NARROW_PANEL: usize = 16;

/// The width of the panel starting at column `j0` of an `n`-column product: [`PANEL`], or for
/// the last panel its columns rounded up to [`NARROW_PANEL`] (so a few ragged columns do not
/// cost a whole panel of zeros).
fn panel_width(n: usize, j0: usize) -> usize {
    PANEL.min((n - j0).div_ceil(NARROW_PANEL) * NARROW_PANEL)
}

/// The length of `w` (`n × k`) packed into panels ([`panel_width`] columns each).
fn packed_len(n: usize, k: usize) -> Option<usize> {
    (n / PANEL * PANEL + (n % PANEL).div_ceil(NARROW_PANEL) * NARROW_PANEL).checked_mul(k)
}

/// A `linear` weight packed once for [`linear_packed`]: `wᵀ` in panels of 32 columns, each
/// `k × 32`, the last one 16 or 32 wide and zero-padded past `n` (one layout for every
/// instruction set). Inference code
/// packs each constant weight once and saves `linear` the per-call packing.
#[derive(Debug, Clone, PartialEq)]
pub struct PackedWeight {
    n: usize,
    k: usize,
    data: Vec<f32>,
}

impl PackedWeight {
    /// Packs `w` (`n × k`, torch's `F.linear` weight layout). Errors when `w.len() != n·k`.
    pub fn new(w: &[f32], n: usize, k: usize) -> Result<Self, KernelError> {
        check_len("w", w.len(), checked_len(n, k)?)?;
        let mut data = vec![0.0; packed_len(n, k).ok_or(KernelError::Overflow)?];
        pack_panels(w, n, k, &mut data);
        Ok(Self { n, k, data })
    }

    /// Output features (rows of the unpacked weight).
    pub fn n(&self) -> usize {
        self.n
    }

    /// Input features (columns of the unpacked weight).
    pub fn k(&self) -> usize {
        self.k
    }
}

/// [`linear_fused`] with a weight packed by [`PackedWeight::new`]: `out[m×n] =
/// act(x[m×k] · wᵀ (+ bias[n]))`, no packing per call and no scratch. Errors when a slice's
/// length does not match `m` and the weight's `n`, `k`.
pub fn linear_packed(
    x: &[f32],
    m: usize,
    w: &PackedWeight,
    bias: Option<&[f32]>,
    epilogue: Epilogue,
    out: &mut [f32],
) -> Result<(), KernelError> {
    let (n, k) = (w.n, w.k);
    check_len("x", x.len(), checked_len(m, k)?)?;
    check_len("out", out.len(), checked_len(m, n)?)?;
    if let Some(b) = bias {
        check_len("bias", b.len(), n)?;
    }
    if m == 0 || n == 0 {
        return Ok(());
    }
    let op = Op {
        a: x,
        m,
        k,
        b: B::Packed(&w.data),
        n,
        bias,
        epilogue,
        out,
    };
    dispatch(Run {
        op,
        scratch: &mut [],
    });
    Ok(())
}

/// `out[m×n] = a[m×k] · b[k×n]`, torch's `a @ b` on 2-D tensors. Errors when a slice's length
/// does not match.
pub fn matmul(
    a: &[f32],
    m: usize,
    k: usize,
    b: &[f32],
    n: usize,
    out: &mut [f32],
) -> Result<(), KernelError> {
    matmul_fused(a, m, k, b, n, None, Epilogue::None, out)
}

/// `out[m×n] = act(a[m×k] · b[k×n] (+ bias[n]))`, e.g. TensorFlow's
/// `tf.nn.relu(tf.matmul(a, b) + bias)`: the product is rounded to float32, then the bias is
/// added and the activation applied to each stored row (the same operations, in the same order,
/// as three separate kernels). Errors when a slice's length does not match.
#[allow(clippy::too_many_arguments)]
pub fn matmul_fused(
    a: &[f32],
    m: usize,
    k: usize,
    b: &[f32],
    n: usize,
    bias: Option<&[f32]>,
    epilogue: Epilogue,
    out: &mut [f32],
) -> Result<(), KernelError> {
    check_len("a", a.len(), checked_len(m, k)?)?;
    check_len("b", b.len(), checked_len(k, n)?)?;
    check_len("out", out.len(), checked_len(m, n)?)?;
    if let Some(bias) = bias {
        check_len("bias", bias.len(), n)?;
    }
    if m == 0 || n == 0 {
        return Ok(());
    }
    let op = Op {
        a,
        m,
        k,
        b: B::RowMajor(b),
        n,
        bias,
        epilogue,
        out,
    };
    // Every flavour's panel width divides `PANEL`, so only a ragged `n` needs the scratch panel.
    if k == 0 || n.is_multiple_of(PANEL) {
        dispatch(Run {
            op,
            scratch: &mut [],
        });
        return Ok(());
    }
    let len = checked_len(k, PANEL)?;
    with_scratch(len, |scratch| dispatch_narrow(Run { op, scratch }, n));
    Ok(())
}

/// The right-hand operand.
#[derive(Clone, Copy)]
enum B<'a> {
    /// `n × k` (torch's linear weight): the product uses its transpose.
    Weight(&'a [f32]),
    /// A weight packed by [`pack_panels`].
    Packed(&'a [f32]),
    /// `k × n`.
    RowMajor(&'a [f32]),
}

/// A checked product: `a` is `m×k`, `b` matches, `out` is `m×n`, `bias` has `n` elements.
struct Op<'a> {
    a: &'a [f32],
    m: usize,
    k: usize,
    b: B<'a>,
    n: usize,
    bias: Option<&'a [f32]>,
    epilogue: Epilogue,
    out: &'a mut [f32],
}

struct Run<'a> {
    op: Op<'a>,
    /// For [`B::Weight`]: room for the packed weight ([`packed_len`]); for [`B::RowMajor`]: room
    /// for one ragged column panel (`k × 2·LANES`). May be empty when not needed.
    scratch: &'a mut [f32],
}

impl Kernel for Run<'_> {
    type Out = ();
    #[inline(always)]
    fn run<S: Simd>(self, s: S) {
        if S::LANES >= 16 {
            product::<S, 12, 24>(s, self.op, self.scratch)
        } else {
            product::<S, 6, 12>(s, self.op, self.scratch)
        }
    }
}

/// A checked product of a few rows (`0 < m <` [`DOT_MAX_M`], `k > 0`): [`linear_dot`] in a
/// kernel of its own. Its frame is small, where [`Run`] inlines every product kernel: at batch 1
/// that took an AVX-512 call of 48→96 from 140 to 94 ns.
struct Dot<'a> {
    x: &'a [f32],
    m: usize,
    k: usize,
    w: &'a [f32],
    n: usize,
    bias: Option<&'a [f32]>,
    epilogue: Epilogue,
    out: &'a mut [f32],
}

impl Kernel for Dot<'_> {
    type Out = ();
    #[inline(always)]
    fn run<S: Simd>(self, s: S) {
        let Dot {
            x,
            m,
            k,
            w,
            n,
            bias,
            epilogue,
            out,
        } = self;
        linear_dot(s, x, m, k, w, n, bias, epilogue, out);
    }
}

/// A [`Dot`] of one row, the batch-1 call: what [`linear_dot`] runs for a single row
/// ([`linear_row`]), in a kernel of its own, whose frame holds only that.
struct DotRow<'a>(Dot<'a>);

impl Kernel for DotRow<'_> {
    type Out = ();
    #[inline(always)]
    fn run<S: Simd>(self, s: S) {
        let Dot {
            x,
            w,
            n,
            bias,
            epilogue,
            out,
            ..
        } = self.0;
        linear_row(s, x, w, n, bias, epilogue, out);
    }
}

/// One row of a product: `out_row = act(x · wᵀ (+ bias))` by [`dot_row`], then [`finish_row`].
#[inline(always)]
fn linear_row<S: Simd>(
    s: S,
    x: &[f32],
    w: &[f32],
    n: usize,
    bias: Option<&[f32]>,
    e: Epilogue,
    out_row: &mut [f32],
) {
    dot_row(s, x, w, n, out_row);
    finish_row(s, out_row, bias, e);
}

/// Adds the bias to and applies the epilogue over a finished row: the bias in one pass, then the
/// activation in its own frame ([`map_op_inplace`]) while the row is in L1.
#[inline(always)]
fn finish_row<S: Simd>(s: S, row: &mut [f32], bias: Option<&[f32]>, e: Epilogue) {
    if let Some(b) = bias {
        let l = S::LANES;
        let (mut rc, mut bc) = (row.chunks_exact_mut(l), b.chunks_exact(l));
        for (r, b) in (&mut rc).zip(&mut bc) {
            let v = s.add(s.load(r), s.load(b));
            s.store(r, v);
        }
        let (r, b) = (rc.into_remainder(), bc.remainder());
        if !r.is_empty() {
            let v = s.add(s.load_partial(r, 0.0), s.load_partial(b, 0.0));
            s.store_partial(r, v);
        }
    }
    if let Some(op) = e.unary() {
        map_op_inplace(s, op, row);
    }
}

#[inline(always)]
fn product<S: Simd, const MR: usize, const MR1: usize>(s: S, op: Op<'_>, scratch: &mut [f32]) {
    let Op {
        a,
        m,
        k,
        b,
        n,
        bias,
        epilogue,
        out,
    } = op;
    let nr = 2 * S::LANES;
    if k == 0 {
        // An empty sum: the bias (or zeros), then the epilogue.
        for row in out.chunks_exact_mut(n) {
            row.fill(0.0);
            finish_row(s, row, bias, epilogue);
        }
        return;
    }
    match b {
        B::Weight(w) => {
            let len = packed_len(n, k).unwrap_or(usize::MAX);
            if m < DOT_MAX_M || scratch.len() < len {
                linear_dot(s, a, m, k, w, n, bias, epilogue, out);
                return;
            }
            let packed = &mut scratch[..len];
            pack_panels(w, n, k, packed);
            packed_product::<S, MR, MR1>(s, a, m, k, packed, n, bias, epilogue, out);
        }
        B::Packed(packed) => {
            packed_product::<S, MR, MR1>(s, a, m, k, packed, n, bias, epilogue, out);
        }
        B::RowMajor(bm) => {
            let mut j0 = 0;
            while j0 < n {
                let cols = nr.min(n - j0);
                if cols == nr {
                    panel_rows::<S, MR, MR1>(s, a, m, k, &bm[j0..], n, j0, n, bias, epilogue, out);
                } else if scratch.len() >= k * nr {
                    let panel = &mut scratch[..k * nr];
                    // The ragged columns, zero-padded to the panel's width (row copies, not
                    // element by element: this runs on every call of a ragged product).
                    for (p, dst) in panel.chunks_exact_mut(nr).enumerate() {
                        let (valid, pad) = dst.split_at_mut(cols);
                        valid.copy_from_slice(&bm[p * n + j0..p * n + n]);
                        pad.fill(0.0);
                    }
                    panel_rows::<S, MR, MR1>(s, a, m, k, panel, nr, j0, n, bias, epilogue, out);
                } else {
                    // No scratch (not reached: `matmul_fused` provides it): scalar columns.
                    for (i, row) in out.chunks_exact_mut(n).enumerate() {
                        for (j, o) in row.iter_mut().enumerate().skip(j0).take(cols) {
                            *o = (0..k).map(|p| a[i * k + p] * bm[p * n + j]).sum();
                        }
                        finish_row(
                            s,
                            &mut row[j0..j0 + cols],
                            bias.map(|b| &b[j0..j0 + cols]),
                            epilogue,
                        );
                    }
                }
                j0 += cols;
            }
        }
    }
}

/// `out = a · wᵀ` for `w` packed by [`pack_panels`]: every `2·LANES`-wide sub-panel of each
/// panel, with `ldb` the panel's width.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn packed_product<S: Simd, const MR: usize, const MR1: usize>(
    s: S,
    a: &[f32],
    m: usize,
    k: usize,
    packed: &[f32],
    n: usize,
    bias: Option<&[f32]>,
    e: Epilogue,
    out: &mut [f32],
) {
    let nr = 2 * S::LANES;
    // A small product takes its activation in one pass over the whole output at the end, one
    // contiguous run instead of a short strip per row (see [`EPILOGUE_WHOLE_FLOATS`]).
    let whole = m.saturating_mul(n) <= EPILOGUE_WHOLE_FLOATS;
    let strip_e = if whole { Epilogue::None } else { e };
    let (mut jp, mut at) = (0, 0);
    while jp < n {
        let width = panel_width(n, jp);
        let Some(panel) = packed.get(at..at + k * width) else {
            debug_assert!(false, "packed weight shorter than its shape");
            return;
        };
        let mut c0 = 0;
        while c0 < width && jp + c0 < n {
            let panel = &panel[c0..];
            panel_rows::<S, MR, MR1>(s, a, m, k, panel, width, jp + c0, n, bias, strip_e, out);
            c0 += nr;
        }
        jp += width;
        at += k * width;
    }
    if let (true, Some(op)) = (whole, e.unary()) {
        map_op_strip(s, op, out, m, n, 0, n);
    }
}

/// `wᵀ` (`w` is `n × k`) in panels of [`panel_width`] columns: the panel at column `j0`, `W`
/// wide, holds `w[(j0 + c)·k + p]` at `p·W + c` (zero past `n`). Each weight row is read once,
/// sequentially; the panel it is scattered into (`k × W` floats) stays in L1.
fn pack_panels(w: &[f32], n: usize, k: usize, dst: &mut [f32]) {
    if k == 0 {
        return;
    }
    let (mut j0, mut at) = (0, 0);
    while j0 < n {
        let width = panel_width(n, j0);
        let Some(panel) = dst.get_mut(at..at + k * width) else {
            debug_assert!(false, "packing buffer shorter than the packed weight");
            return;
        };
        let cols = width.min(n - j0);
        for c in 0..width {
            let lanes = panel[c..].iter_mut().step_by(width);
            match w.get((j0 + c) * k..(j0 + c + 1) * k) {
                Some(src) if c < cols => lanes.zip(src).for_each(|(d, &v)| *d = v),
                _ => lanes.for_each(|d| *d = 0.0),
            }
        }
        j0 += width;
        at += k * width;
    }
}

/// All row blocks of one column panel: `out[:, j0..j0+cols] = a · panel`, where `panel` holds
/// rows of `≥ nr` floats `ldb` apart (`panel[p*ldb..p*ldb+nr]` for `p < k`).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn panel_rows<S: Simd, const MR: usize, const MR1: usize>(
    s: S,
    a: &[f32],
    m: usize,
    k: usize,
    panel: &[f32],
    ldb: usize,
    j0: usize,
    n: usize,
    bias: Option<&[f32]>,
    e: Epilogue,
    out: &mut [f32],
) {
    let nr = 2 * S::LANES;
    let cols = nr.min(n - j0);
    let bias = bias.map(|b| &b[j0..j0 + cols]);
    if cols <= S::LANES {
        // One vector of columns: `MR1 = 2·MR` rows per block for the same registers, then
        // blocks of 8 and 4 and the rest row by row (few instantiations: debug builds keep
        // every inlined block's stack). Row by row, each output is one chain of `k` dependent
        // multiply-adds: 16 rows of a 96-deep product took twice as long as in two blocks.
        let mut i = 0;
        macro_rules! blocks {
            ($($r:expr),*) => {$(
                while m - i >= $r {
                    let out = &mut out[i * n + j0..];
                    micro::<S, { $r }, 1>(s, k, &a[i * k..], panel, ldb, out, n, cols, bias);
                    i += $r;
                }
            )*};
        }
        blocks!(MR1, 8, 4, 1);
    } else {
        row_blocks::<S, MR>(s, a, m, k, panel, ldb, j0, n, cols, bias, out);
    }
    // The activation over the panel's strip of columns, still in L1 (one copy of its code per
    // kernel rather than one per register block).
    if let Some(op) = e.unary() {
        map_op_strip(s, op, out, m, n, j0, cols);
    }
}

/// Every row block of one strip of `cols ≤ 2·LANES` columns: blocks of `MR` rows, then the
/// ragged rest.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn row_blocks<S: Simd, const MR: usize>(
    s: S,
    a: &[f32],
    m: usize,
    k: usize,
    panel: &[f32],
    ldb: usize,
    j0: usize,
    n: usize,
    cols: usize,
    bias: Option<&[f32]>,
    out: &mut [f32],
) {
    let mut i = 0;
    while i + MR <= m {
        let out = &mut out[i * n + j0..];
        micro::<S, MR, 2>(s, k, &a[i * k..], panel, ldb, out, n, cols, bias);
        i += MR;
    }
    if i < m {
        let (a, out) = (&a[i * k..], &mut out[i * n + j0..]);
        macro_rules! tail {
            ($($r:literal)*) => {
                match m - i {
                    $($r => micro::<S, $r, 2>(s, k, a, panel, ldb, out, n, cols, bias),)*
                    _ => {}
                }
            };
        }
        tail!(1 2 3 4 5 6 7 8 9 10 11);
    }
}

/// One `R × (V·LANES)` block: `out[r*ldc + c] = Σ_p a[r*k + p]·b[p*ldb + c] + bias[c]` for
/// `r < R`, `c < cols ≤ V·LANES` (`V` is 1 or 2), run in a frame of its own ([`Micro`]: the
/// callers instantiate it for many `R`, see [`Kernel`]).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn micro<S: Simd, const R: usize, const V: usize>(
    s: S,
    k: usize,
    a: &[f32],
    b: &[f32],
    ldb: usize,
    out: &mut [f32],
    ldc: usize,
    cols: usize,
    bias: Option<&[f32]>,
) {
    s.call(Micro::<R, V> {
        k,
        a,
        b,
        ldb,
        out,
        ldc,
        cols,
        bias,
    });
}

/// The arguments of [`micro`], as the kernel that runs it.
struct Micro<'a, const R: usize, const V: usize> {
    k: usize,
    a: &'a [f32],
    b: &'a [f32],
    ldb: usize,
    out: &'a mut [f32],
    ldc: usize,
    cols: usize,
    bias: Option<&'a [f32]>,
}

impl<const R: usize, const V: usize> Kernel for Micro<'_, R, V> {
    type Out = ();
    #[inline(always)]
    fn run<S: Simd>(self, s: S) {
        let Micro {
            k,
            a,
            b,
            ldb,
            out,
            ldc,
            cols,
            bias,
        } = self;
        let l = S::LANES;
        // The raw loads below stay inside `a` and `b` given these (the callers guarantee them; the
        // check keeps a caller bug from becoming an out-of-bounds read).
        if k == 0
            || R == 0
            || !(1..=2).contains(&V)
            || cols > V * l
            || a.len() < (R - 1) * k + k
            || b.len() < (k - 1) * ldb + V * l
            || out.len() < (R - 1) * ldc + cols
        {
            debug_assert!(false, "micro-kernel called out of bounds");
            return;
        }
        let mut acc = [[s.zero(); V]; R];
        let (ap, bp) = (a.as_ptr(), b.as_ptr());
        for p in 0..k {
            let mut bv = [s.zero(); V];
            for (v, b) in bv.iter_mut().enumerate() {
                // SAFETY: `p*ldb + V·l <= (k-1)*ldb + V·l <= b.len()` (checked above).
                *b = unsafe { s.loadu(bp.add(p * ldb + v * l)) };
            }
            for (r, acc) in acc.iter_mut().enumerate() {
                // SAFETY: `r*k + p < (R-1)*k + k <= a.len()` (checked above).
                let av = s.splat(unsafe { *ap.add(r * k + p) });
                for (acc, &b) in acc.iter_mut().zip(&bv) {
                    *acc = s.mul_add(av, b, *acc);
                }
            }
        }
        let mut biasv = [s.zero(); V];
        if let Some(bias) = bias {
            for (v, b) in biasv.iter_mut().enumerate() {
                *b = s.load_partial(bias.get(v * l..).unwrap_or(&[]), 0.0);
            }
        }
        for (r, acc) in acc.iter().enumerate() {
            let row = &mut out[r * ldc..r * ldc + cols];
            for (v, &a) in acc.iter().enumerate() {
                if v * l >= cols {
                    break;
                }
                let a = if bias.is_some() {
                    s.add(a, biasv[v])
                } else {
                    a
                };
                s.store(&mut row[v * l..], a);
            }
        }
    }
}

/// `linear` by dot products along `k` straight from `w`, in tiles of two rows of `x` by four
/// rows of `w` (eight vector accumulators, reduced in one `reduce8`), and a last odd row in tiles
/// of one row by eight rows of `w` ([`dot_row`]), then bias and epilogue over each finished row.
/// Edge tiles re-read the last valid row and discard the surplus sums. Every output is summed in
/// the same order whichever tile computes it.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn linear_dot<S: Simd>(
    s: S,
    x: &[f32],
    m: usize,
    k: usize,
    w: &[f32],
    n: usize,
    bias: Option<&[f32]>,
    e: Epilogue,
    out: &mut [f32],
) {
    let l = S::LANES;
    let kf = k - k % l;
    if m == 0 || n == 0 || k == 0 || x.len() < m * k || w.len() < n * k || out.len() < m * n {
        debug_assert!(false, "linear_dot called out of bounds");
        return;
    }
    let mut i0 = 0;
    while i0 < m {
        if m - i0 == 1 {
            let row = &mut out[i0 * n..(i0 + 1) * n];
            linear_row(s, &x[i0 * k..(i0 + 1) * k], w, n, bias, e, row);
            return;
        }
        let xr = [&x[i0 * k..(i0 + 1) * k], &x[(i0 + 1) * k..][..k]];
        let xt = [
            s.load_partial(&xr[0][kf..], 0.0),
            s.load_partial(&xr[1][kf..], 0.0),
        ];
        let mut j0 = 0;
        while j0 < n {
            let wr: [&[f32]; 4] = if j0 + 4 <= n {
                let t = &w[j0 * k..(j0 + 4) * k];
                [&t[..k], &t[k..2 * k], &t[2 * k..3 * k], &t[3 * k..]]
            } else {
                [0, 1, 2, 3].map(|c| &w[(j0 + c).min(n - 1) * k..][..k])
            };
            let mut acc = [[s.zero(); 4]; 2];
            let mut p = 0;
            while p < kf {
                // SAFETY: `p + l <= kf <= k`, the length of every row in `xr` and `wr`.
                unsafe {
                    let wv = [
                        s.loadu(wr[0].as_ptr().add(p)),
                        s.loadu(wr[1].as_ptr().add(p)),
                        s.loadu(wr[2].as_ptr().add(p)),
                        s.loadu(wr[3].as_ptr().add(p)),
                    ];
                    for (a, r) in acc.iter_mut().zip(xr) {
                        let xv = s.loadu(r.as_ptr().add(p));
                        for (a, &wv) in a.iter_mut().zip(&wv) {
                            *a = s.mul_add(xv, wv, *a);
                        }
                    }
                }
                p += l;
            }
            if kf < k {
                let wv = [
                    s.load_partial(&wr[0][kf..], 0.0),
                    s.load_partial(&wr[1][kf..], 0.0),
                    s.load_partial(&wr[2][kf..], 0.0),
                    s.load_partial(&wr[3][kf..], 0.0),
                ];
                for (a, &xv) in acc.iter_mut().zip(&xt) {
                    for (a, &wv) in a.iter_mut().zip(&wv) {
                        *a = s.mul_add(xv, wv, *a);
                    }
                }
            }
            let cols = 4.min(n - j0);
            let [a0, a1] = acc;
            let sums = s.reduce8([a0[0], a0[1], a0[2], a0[3], a1[0], a1[1], a1[2], a1[3]]);
            for (r, sums) in sums.chunks_exact(4).enumerate() {
                let at = (i0 + r) * n + j0;
                out[at..at + cols].copy_from_slice(&sums[..cols]);
            }
            j0 += 4;
        }
        for row in out[i0 * n..].chunks_exact_mut(n).take(2) {
            finish_row(s, row, bias, e);
        }
        i0 += 2;
    }
}

/// One row of `linear_dot` (`out_row[j] = x · w[j]`, before bias and epilogue), in tiles of
/// eight rows of `w`: eight vector accumulators reduced in one `reduce8`, each output summed in
/// the order the two-row tiles use.
#[inline(always)]
fn dot_row<S: Simd>(s: S, x: &[f32], w: &[f32], n: usize, out_row: &mut [f32]) {
    let (l, k) = (S::LANES, x.len());
    let kf = k - k % l;
    if n == 0 || k == 0 || w.len() < n * k || out_row.len() < n {
        debug_assert!(false, "dot_row called out of bounds");
        return;
    }
    let xt = s.load_partial(&x[kf..], 0.0);
    let (xp, wp) = (x.as_ptr(), w.as_ptr());
    // A whole tile's rows lie `k` apart from its first: offsets computed once, not per tile.
    let offs: [usize; 8] = std::array::from_fn(|c| c * k);
    let mut j0 = 0;
    while j0 < n {
        // Row `c` of the tile is `w`'s row `min(j0 + c, n - 1)`: `k` floats inside `w` (checked
        // above: `n·k <= w.len()`). Raw pointers, so that no tile pays eight slice checks.
        let wr: [*const f32; 8] = if j0 + 8 <= n {
            // SAFETY: `(j0 + c)·k <= (n - 1)·k`, an offset inside `w`.
            std::array::from_fn(|c| unsafe { wp.add(j0 * k + offs[c]) })
        } else {
            // SAFETY: `min(j0 + c, n - 1)·k <= (n - 1)·k`, an offset inside `w`.
            std::array::from_fn(|c| unsafe { wp.add((j0 + c).min(n - 1) * k) })
        };
        let mut acc = [s.zero(); 8];
        let mut p = 0;
        while p < kf {
            // SAFETY: `p + l <= kf <= k`, the length of `x` and of every row in `wr`.
            unsafe {
                let xv = s.loadu(xp.add(p));
                for (a, r) in acc.iter_mut().zip(&wr) {
                    *a = s.mul_add(xv, s.loadu(r.add(p)), *a);
                }
            }
            p += l;
        }
        if kf < k {
            for (a, r) in acc.iter_mut().zip(&wr) {
                // SAFETY: `r[kf..k]` lies inside its row (see above).
                let tail = unsafe { std::slice::from_raw_parts(r.add(kf), k - kf) };
                *a = s.mul_add(xt, s.load_partial(tail, 0.0), *a);
            }
        }
        let sums = s.reduce8(acc);
        if j0 + 8 <= n {
            out_row[j0..j0 + 8].copy_from_slice(&sums);
        } else {
            out_row[j0..n].copy_from_slice(&sums[..n - j0]);
        }
        j0 += 8;
    }
}

/// The fewest batch rows from which [`linear_cols`] beats [`linear_fused`] on the active
/// instruction set (the feature-major executor's threshold, see `crate::plan::Layout`): a
/// vector's lanes' worth (16 on AVX-512, 8 elsewhere). With fewer, each broadcast weight
/// feeds a mostly empty vector. Measured on an AVX-512 host (Zen 5) over the seven products
/// of a residual MLP (features 20, width 48, hidden 96, 5 classes), row-major against
/// feature-major: 8 rows 2.65 / 4.14 µs, 16 rows 4.30 / 3.70, 128 rows 24.2 / 21.4; with AVX2
/// 8 rows 4.25 / 4.06, 16 rows 6.72 / 5.76, 128 rows 44.4 / 44.3; portable 8 rows
/// 18.3 / 10.2 (the row-major times with one weight in the pack cache, the cheapest its
/// comparison gets).
pub fn linear_cols_min_rows() -> usize {
    match active_isa() {
        Isa::Avx512 => 16,
        _ => 8,
    }
}

/// `out[n×m] = act(w[n×k] · xt[k×m] (+ bias[j] along row j))`: [`linear_fused`] with its
/// operand and result transposed (feature-major: row `p` of `xt` holds input feature `p` of
/// every batch row, row `j` of `out` output feature `j`), so `out` is `linear_fused(x, ...)ᵀ`
/// for `x = xtᵀ`.
///
/// Tiles of `R` weight rows × one or two vectors of batch columns: each step loads a vector of
/// `xt`'s row `p` and multiplies it by each weight row's `w[j, p]`, broadcast. The weight is
/// read in place, in torch's layout: nothing is packed, cached or compared, which is what makes
/// this the product of the feature-major executor (see `crate::plan::Layout`). Every output is
/// the same chain of fused multiply-adds over `p` in order, then the bias, as
/// [`linear_fused`]'s packed kernel computes it, so from 5 rows (where it packs) the two agree
/// bit for bit on every instruction set (see [`linear_cols_min_rows`] for where it is the faster
/// of the two). Errors when a slice's length does not match.
#[allow(clippy::too_many_arguments)]
pub fn linear_cols(
    xt: &[f32],
    k: usize,
    m: usize,
    w: &[f32],
    n: usize,
    bias: Option<&[f32]>,
    epilogue: Epilogue,
    out: &mut [f32],
) -> Result<(), KernelError> {
    check_len("xt", xt.len(), checked_len(k, m)?)?;
    check_len("w", w.len(), checked_len(n, k)?)?;
    check_len("out", out.len(), checked_len(n, m)?)?;
    if let Some(b) = bias {
        check_len("bias", b.len(), n)?;
    }
    if m == 0 || n == 0 {
        return Ok(());
    }
    dispatch_narrow(
        Cols {
            xt,
            k,
            m,
            w,
            n,
            bias,
            epilogue,
            out,
        },
        m,
    );
    Ok(())
}

/// The checked arguments of [`linear_cols`].
struct Cols<'a> {
    xt: &'a [f32],
    k: usize,
    m: usize,
    w: &'a [f32],
    n: usize,
    bias: Option<&'a [f32]>,
    epilogue: Epilogue,
    out: &'a mut [f32],
}

impl Kernel for Cols<'_> {
    type Out = ();
    #[inline(always)]
    fn run<S: Simd>(self, s: S) {
        // Accumulators: 8 × 2 of AVX-512's 32 registers (16 × 1 when the batch is one vector:
        // each weight's broadcast feeds one multiply-add, and more chains hide its latency;
        // measured on Zen 5 at 16 rows over a residual MLP's seven products, 3.70 -> 3.16 µs),
        // 6 × 2 of AVX2's 16. More spill: 12 × 2 on AVX-512 ran 2.5x slower, 12 × 1 on AVX2
        // 1.4x.
        if S::LANES >= 16 && self.m <= S::LANES {
            cols_product::<S, 16>(s, self)
        } else if S::LANES >= 16 {
            cols_product::<S, 8>(s, self)
        } else {
            cols_product::<S, 6>(s, self)
        }
    }
}

#[inline(always)]
fn cols_product<S: Simd, const R: usize>(s: S, c: Cols<'_>) {
    let Cols {
        xt,
        k,
        m,
        w,
        n,
        bias,
        epilogue,
        out,
    } = c;
    let mut j0 = 0;
    while j0 < n {
        let rows = R.min(n - j0);
        let (w, bias) = (&w[j0 * k..], bias.map(|b| &b[j0..]));
        let out = &mut out[j0 * m..(j0 + rows) * m];
        if k == 0 {
            // An empty sum: the bias (or zeros).
            for (r, row) in out.chunks_exact_mut(m).enumerate() {
                row.fill(bias.map_or(0.0, |b| b[r]));
            }
        } else {
            macro_rules! rows {
                ($($r:literal)*) => {
                    match rows {
                        $($r => cols_rows::<S, $r>(s, xt, k, m, w, bias, out),)*
                        _ => cols_rows::<S, R>(s, xt, k, m, w, bias, out),
                    }
                };
            }
            rows!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
        }
        // The activation over the block's rows while they are in L1.
        if let Some(op) = epilogue.unary() {
            map_op_inplace(s, op, out);
        }
        j0 += rows;
    }
}

/// `R` weight rows (`w[r·k..]`, `bias[r]`) against every batch column: blocks of two vectors,
/// then one, then a ragged last vector.
#[inline(always)]
fn cols_rows<S: Simd, const R: usize>(
    s: S,
    xt: &[f32],
    k: usize,
    m: usize,
    w: &[f32],
    bias: Option<&[f32]>,
    out: &mut [f32],
) {
    let l = S::LANES;
    let mut i0 = 0;
    while i0 + 2 * l <= m {
        s.call(ColsMicro::<R, 2> {
            xt,
            k,
            m,
            i0,
            cols: 2 * l,
            w,
            bias,
            out: &mut *out,
        });
        i0 += 2 * l;
    }
    if i0 < m {
        s.call(ColsMicro::<R, 1> {
            xt,
            k,
            m,
            i0,
            cols: l.min(m - i0),
            w,
            bias,
            out: &mut *out,
        });
        i0 += l;
    }
    if i0 < m {
        s.call(ColsMicro::<R, 1> {
            xt,
            k,
            m,
            i0,
            cols: m - i0,
            w,
            bias,
            out,
        });
    }
}

/// One tile of [`linear_cols`]: `out[r·m + i0 + c] = Σ_p w[r·k + p]·xt[p·m + i0 + c] + bias[r]`
/// for `r < R`, `c < cols ≤ V·LANES`, in a frame of its own.
struct ColsMicro<'a, const R: usize, const V: usize> {
    xt: &'a [f32],
    k: usize,
    m: usize,
    i0: usize,
    cols: usize,
    w: &'a [f32],
    bias: Option<&'a [f32]>,
    out: &'a mut [f32],
}

impl<const R: usize, const V: usize> Kernel for ColsMicro<'_, R, V> {
    type Out = ();
    #[inline(always)]
    fn run<S: Simd>(self, s: S) {
        let ColsMicro {
            xt,
            k,
            m,
            i0,
            cols,
            w,
            bias,
            out,
        } = self;
        let l = S::LANES;
        // The raw reads below stay inside `xt` and `w` given these (the callers guarantee
        // them; the check keeps a caller bug from becoming an out-of-bounds read).
        if k == 0
            || R == 0
            || !(1..=2).contains(&V)
            || cols == 0
            || cols > V * l
            || i0 + cols > m
            || xt.len() < k * m
            || w.len() < (R - 1) * k + k
            || out.len() < (R - 1) * m + m
            || bias.is_some_and(|b| b.len() < R)
        {
            debug_assert!(false, "feature-major micro-kernel called out of bounds");
            return;
        }
        // A ragged tile (`cols < V·l`) loads whole vectors from the rows of `xt` whose vector
        // ends inside `xt` (the lanes past `cols` are the next row's and are never stored), and
        // only the last rows' lanes one by one.
        let whole = if cols == V * l {
            k
        } else if k * m < i0 + V * l {
            0
        } else {
            // Rows `p` with `p·m + i0 + V·l <= k·m`.
            ((k * m - i0 - V * l) / m + 1).min(k)
        };
        let (xp, wp) = (xt.as_ptr(), w.as_ptr());
        let mut acc = [[s.zero(); V]; R];
        // One loop over `p` (in two, the accumulators were kept in memory on AVX2).
        for p in 0..k {
            let mut xv = [s.zero(); V];
            if p < whole {
                for (v, x) in xv.iter_mut().enumerate() {
                    // SAFETY: `p·m + i0 + V·l <= k·m <= xt.len()` for `p < whole` (above).
                    *x = unsafe { s.loadu(xp.add(p * m + i0 + v * l)) };
                }
            } else {
                let row = &xt[p * m + i0..p * m + i0 + cols];
                for (v, x) in xv.iter_mut().enumerate() {
                    *x = s.load_partial(row.get(v * l..).unwrap_or(&[]), 0.0);
                }
            }
            for (r, acc) in acc.iter_mut().enumerate() {
                // SAFETY: `r·k + p < (R-1)·k + k <= w.len()` (checked above).
                let wv = s.splat(unsafe { *wp.add(r * k + p) });
                for (a, &x) in acc.iter_mut().zip(&xv) {
                    *a = s.mul_add(x, wv, *a);
                }
            }
        }
        for (r, acc) in acc.iter().enumerate() {
            let row = &mut out[r * m + i0..r * m + i0 + cols];
            for (v, &a) in acc.iter().enumerate() {
                if v * l >= cols {
                    break;
                }
                let a = match bias {
                    Some(b) => s.add(a, s.splat(b[r])),
                    None => a,
                };
                s.store(&mut row[v * l..], a);
            }
        }
    }
}
