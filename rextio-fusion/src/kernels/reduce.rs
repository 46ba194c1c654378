//! Reductions over the last dim (rows) or dim 0 (columns) of an `m×n` matrix: softmax,
//! log-softmax, argmax, sum, mean, amax, amin, and the fused softmax-argmax.
//!
//! NaN semantics follow torch: max/min/argmax treat NaN as the extreme (argmax returns the first
//! NaN, amax/amin return NaN), sums propagate it, and a softmax row whose maximum is NaN or ±inf
//! is all NaN (`exp(inf - inf)`). Reductions without an identity (amax, amin, argmax) refuse a
//! reduced dimension of size 0, as torch does; sum gives 0 and mean NaN there.

use super::elementwise::{
    map, map_inplace, VFn2, WithRhs, OP_ADD, OP_DIV, OP_MAX, OP_MIN, OP_MUL, OP_SUB,
};
use super::math::{exp_v, log_v};
use super::simd::Simd;
use super::{check_len, checked_len, dispatch, dispatch_narrow, Kernel, KernelError};

/// `max(a, b)` that is NaN when either is.
#[inline(always)]
fn max_nan<S: Simd>(s: S, a: S::V, b: S::V) -> S::V {
    OP_MAX.apply(s, a, b)
}

/// Folds `f` over the row's vectors (the tail padded with `fill`), starting from `init`.
#[inline(always)]
fn fold_row<S: Simd>(s: S, row: &[f32], init: S::V, fill: f32, f: impl VFn2<S>) -> S::V {
    let mut acc = init;
    let mut c = row.chunks_exact(S::LANES);
    for v in &mut c {
        acc = f.apply(s, s.load(v), acc);
    }
    let t = c.remainder();
    if !t.is_empty() {
        acc = f.apply(s, s.load_partial(t, fill), acc);
    }
    acc
}

/// The row's maximum, NaN if it holds one (`-inf` if empty).
#[inline(always)]
fn row_max<S: Simd>(s: S, row: &[f32]) -> f32 {
    let ninf = f32::NEG_INFINITY;
    let acc = fold_row(s, row, s.splat(ninf), ninf, OP_MAX);
    if s.bitmask(s.is_nan(acc)) != 0 {
        f32::NAN
    } else {
        s.reduce_max(acc)
    }
}

/// The row's minimum, NaN if it holds one (`+inf` if empty).
#[inline(always)]
fn row_min<S: Simd>(s: S, row: &[f32]) -> f32 {
    let inf = f32::INFINITY;
    let acc = fold_row(s, row, s.splat(inf), inf, OP_MIN);
    if s.bitmask(s.is_nan(acc)) != 0 {
        f32::NAN
    } else {
        s.reduce_min(acc)
    }
}

/// The row's sum (four interleaved vector accumulators, then the lanes in a fixed order).
#[inline(always)]
fn row_sum<S: Simd>(s: S, row: &[f32]) -> f32 {
    let l = S::LANES;
    let mut acc = [s.zero(); 4];
    let mut c4 = row.chunks_exact(4 * l);
    for v in &mut c4 {
        for (j, a) in acc.iter_mut().enumerate() {
            *a = s.add(*a, s.load(&v[j * l..]));
        }
    }
    let mut c = c4.remainder().chunks_exact(l);
    for v in &mut c {
        acc[0] = s.add(acc[0], s.load(v));
    }
    let t = c.remainder();
    if !t.is_empty() {
        acc[1] = s.add(acc[1], s.load_partial(t, 0.0));
    }
    s.reduce_add(s.add(s.add(acc[0], acc[1]), s.add(acc[2], acc[3])))
}

/// Inputs within this of the row maximum are the softmax-argmax candidates: any other
/// probability is at most `e^(-1/64) < 1` times the largest, so it cannot tie with it.
const CANDIDATE_DELTA: f32 = 1.0 / 64.0;

/// One per lane of the widest flavour: `load_partial(&ONES[..n], 0.0)` masks the first `n` lanes.
const ONES: [f32; 16] = [1.0; 16];

/// What [`exp_sum`] found: the sum, and with `CAND` the number of candidates
/// (`x - mx >= -CANDIDATE_DELTA`) and the index of the first.
struct ExpSum {
    sum: f32,
    candidates: u32,
    first: usize,
}

/// Adds the lanes set in `m` (and `valid`) of the vector at `i` to the candidate count,
/// noting the first.
#[inline(always)]
fn count_candidates<S: Simd>(
    s: S,
    m: S::M,
    i: usize,
    valid: u64,
    candidates: &mut u32,
    first: &mut usize,
) {
    let bits = s.bitmask(m) & valid;
    if bits != 0 {
        if *candidates == 0 {
            *first = i + bits.trailing_zeros() as usize;
        }
        *candidates += bits.count_ones();
    }
}

/// `Σ exp(x - mx)` over the row, storing each `exp` into `out` when `STORE` (then
/// `out.len() == row.len()`) and counting softmax-argmax candidates when `CAND`. One function
/// for all uses, so [`softmax_argmax_rows`] reproduces the sum [`softmax_rows`] divides by bit
/// for bit.
#[inline(always)]
fn exp_sum<S: Simd, const STORE: bool, const CAND: bool>(
    s: S,
    row: &[f32],
    mx: f32,
    out: &mut [f32],
) -> ExpSum {
    let l = S::LANES;
    let (mv, lo) = (s.splat(mx), s.splat(-CANDIDATE_DELTA));
    let mut acc = s.zero();
    let (mut candidates, mut first) = (0u32, 0usize);
    let mut c = row.chunks_exact(l);
    let mut i = 0;
    for v in &mut c {
        let d = s.sub(s.load(v), mv);
        let e = exp_v(s, d);
        if STORE {
            s.store(&mut out[i..], e);
        }
        if CAND {
            count_candidates(s, s.ge(d, lo), i, u64::MAX, &mut candidates, &mut first);
        }
        acc = s.add(acc, e);
        i += l;
    }
    let t = c.remainder();
    if !t.is_empty() {
        // Padding lanes hold `mx` (so `d = 0`) and their exp is then zeroed. Padding with -inf
        // gave the same sum but made `exp_v` compute subnormal intermediates in those lanes,
        // which costs a microcode assist per vector on x86: softmax-argmax over 8 classes ran
        // 7x slower on AVX-512 (16 lanes, 8 of them padding) than on AVX2. Where `mx` is not
        // finite the row's sum is NaN either way.
        let d = s.sub(s.load_partial(t, mx), mv);
        let e = s.mul(exp_v(s, d), s.load_partial(&ONES[..t.len()], 0.0));
        if STORE {
            s.store_partial(&mut out[i..], e);
        }
        if CAND {
            let valid = (1u64 << t.len()) - 1;
            count_candidates(s, s.ge(d, lo), i, valid, &mut candidates, &mut first);
        }
        acc = s.add(acc, e);
    }
    ExpSum {
        sum: s.reduce_add(acc),
        candidates,
        first,
    }
}

/// The lanes of `v` that are NaN (`nan`) or equal to `tv`.
#[inline(always)]
fn hits<S: Simd>(s: S, v: S::V, nan: bool, tv: S::V) -> u64 {
    s.bitmask(if nan { s.is_nan(v) } else { s.eq(v, tv) })
}

/// The index of the first element of `row` that is NaN (`nan`) or equal to `target`.
#[inline(always)]
fn first_where<S: Simd>(s: S, row: &[f32], nan: bool, target: f32) -> Option<usize> {
    let l = S::LANES;
    let tv = s.splat(target);
    let mut c = row.chunks_exact(l);
    let mut base = 0;
    for v in &mut c {
        let bits = hits(s, s.load(v), nan, tv);
        if bits != 0 {
            return Some(base + bits.trailing_zeros() as usize);
        }
        base += l;
    }
    let t = c.remainder();
    if !t.is_empty() {
        let bits = hits(s, s.load_partial(t, 0.0), nan, tv) & ((1u64 << t.len()) - 1);
        if bits != 0 {
            return Some(base + bits.trailing_zeros() as usize);
        }
    }
    None
}

/// torch's argmax of one non-empty row: the first NaN, else the first maximum.
#[inline(always)]
fn row_argmax<S: Simd>(s: S, row: &[f32]) -> usize {
    let mx = row_max(s, row);
    first_where(s, row, mx.is_nan(), mx).unwrap_or(0)
}

fn check_matrix(x: usize, m: usize, n: usize) -> Result<usize, KernelError> {
    let len = checked_len(m, n)?;
    check_len("x", x, len)?;
    Ok(len)
}

/// Row-wise scalar reductions.
#[derive(Clone, Copy)]
enum RowOp {
    Sum,
    Mean,
    Max,
    Min,
}

fn rows_reduce(
    op: RowOp,
    x: &[f32],
    m: usize,
    n: usize,
    out: &mut [f32],
) -> Result<(), KernelError> {
    check_matrix(x.len(), m, n)?;
    check_len("out", out.len(), m)?;
    if n == 0 {
        match op {
            RowOp::Sum => out.fill(0.0),
            RowOp::Mean => out.fill(f32::NAN),
            RowOp::Max => return Err(KernelError::EmptyReduction { what: "amax_rows" }),
            RowOp::Min => return Err(KernelError::EmptyReduction { what: "amin_rows" }),
        }
        return Ok(());
    }
    struct K<'a>(RowOp, &'a [f32], usize, &'a mut [f32]);
    impl Kernel for K<'_> {
        type Out = ();
        #[inline(always)]
        fn run<S: Simd>(self, s: S) {
            let K(op, x, n, out) = self;
            for (o, r) in out.iter_mut().zip(x.chunks_exact(n)) {
                *o = match op {
                    RowOp::Sum => row_sum(s, r),
                    RowOp::Mean => row_sum(s, r) / n as f32,
                    RowOp::Max => row_max(s, r),
                    RowOp::Min => row_min(s, r),
                };
            }
        }
    }
    dispatch_narrow(K(op, x, n, out), n);
    Ok(())
}

/// `out[i] = Σ_j x[i, j]` (`x.sum(dim=-1)`); `out` has `m` elements, 0 where `n == 0`.
pub fn sum_rows(x: &[f32], m: usize, n: usize, out: &mut [f32]) -> Result<(), KernelError> {
    rows_reduce(RowOp::Sum, x, m, n, out)
}

/// `out[i] = Σ_j x[i, j] / n` (`x.mean(dim=-1)`: the sum divided by `n`); NaN where `n == 0`.
pub fn mean_rows(x: &[f32], m: usize, n: usize, out: &mut [f32]) -> Result<(), KernelError> {
    rows_reduce(RowOp::Mean, x, m, n, out)
}

/// `out[i] = max_j x[i, j]` (`torch.amax(x, -1)`): NaN if the row holds one. The sign of a zero
/// result when `+0` and `-0` tie is unspecified. Errors when `n == 0`.
pub fn amax_rows(x: &[f32], m: usize, n: usize, out: &mut [f32]) -> Result<(), KernelError> {
    rows_reduce(RowOp::Max, x, m, n, out)
}

/// `out[i] = min_j x[i, j]` (`torch.amin(x, -1)`), as [`amax_rows`].
pub fn amin_rows(x: &[f32], m: usize, n: usize, out: &mut [f32]) -> Result<(), KernelError> {
    rows_reduce(RowOp::Min, x, m, n, out)
}

/// `out[i] = argmax_j x[i, j]` (`torch.argmax(x, -1)`): the first NaN if the row holds one, else
/// the first maximum (`+0` and `-0` tie). Errors when `n == 0`.
pub fn argmax_rows(x: &[f32], m: usize, n: usize, out: &mut [i64]) -> Result<(), KernelError> {
    check_matrix(x.len(), m, n)?;
    check_len("out", out.len(), m)?;
    if n == 0 {
        return Err(KernelError::EmptyReduction {
            what: "argmax_rows",
        });
    }
    struct K<'a>(&'a [f32], usize, &'a mut [i64]);
    impl Kernel for K<'_> {
        type Out = ();
        #[inline(always)]
        fn run<S: Simd>(self, s: S) {
            let K(x, n, out) = self;
            for (o, r) in out.iter_mut().zip(x.chunks_exact(n)) {
                *o = row_argmax(s, r) as i64;
            }
        }
    }
    dispatch_narrow(K(x, n, out), n);
    Ok(())
}

/// `out = softmax(x, dim=-1)` (`out` is `m×n`): `e = exp(x - max)` then `e · (1/Σe)` as torch
/// does, three passes over the row (max; exp, store and sum; scale). A row holding NaN or +inf,
/// or all -inf, is all NaN, as in torch.
pub fn softmax_rows(x: &[f32], m: usize, n: usize, out: &mut [f32]) -> Result<(), KernelError> {
    let len = check_matrix(x.len(), m, n)?;
    check_len("out", out.len(), len)?;
    if len == 0 {
        return Ok(());
    }
    struct K<'a>(&'a [f32], usize, &'a mut [f32]);
    impl Kernel for K<'_> {
        type Out = ();
        #[inline(always)]
        fn run<S: Simd>(self, s: S) {
            let K(x, n, out) = self;
            for (row, o) in x.chunks_exact(n).zip(out.chunks_exact_mut(n)) {
                let mx = row_max(s, row);
                let r = s.splat(1.0 / exp_sum::<S, true, false>(s, row, mx, o).sum);
                map_inplace(s, o, WithRhs(OP_MUL, r));
            }
        }
    }
    dispatch_narrow(K(x, n, out), n);
    Ok(())
}

/// `out = log_softmax(x, dim=-1)`: `x - (max + ln Σ exp(x - max))` as torch computes it, two
/// passes over the row plus the store. NaN rows as [`softmax_rows`]; `-inf` entries of a row
/// with a finite maximum stay `-inf`.
pub fn log_softmax_rows(x: &[f32], m: usize, n: usize, out: &mut [f32]) -> Result<(), KernelError> {
    let len = check_matrix(x.len(), m, n)?;
    check_len("out", out.len(), len)?;
    if len == 0 {
        return Ok(());
    }
    struct K<'a>(&'a [f32], usize, &'a mut [f32]);
    impl Kernel for K<'_> {
        type Out = ();
        #[inline(always)]
        fn run<S: Simd>(self, s: S) {
            let K(x, n, out) = self;
            for (row, o) in x.chunks_exact(n).zip(out.chunks_exact_mut(n)) {
                let mx = row_max(s, row);
                let c = s.splat(mx + exp_sum::<S, false, false>(s, row, mx, &mut []).sum.ln());
                map(s, row, o, WithRhs(OP_SUB, c));
            }
        }
    }
    dispatch_narrow(K(x, n, out), n);
    Ok(())
}

/// The labels `argmax(softmax(x, dim=-1), dim=-1)` without materialising the probabilities:
/// exactly what [`softmax_rows`] then [`argmax_rows`] return, in about two passes.
///
/// Softmax is monotonic, but distinct inputs can round to equal probabilities (`[0, 1e-8, 0]`
/// gives three equal probabilities, so torch's label is 0, not 1), and a row holding NaN or
/// +inf, or all -inf, has all-NaN probabilities (label 0). So this finds the maximum `mx`, sums
/// `exp(x - mx)` exactly as [`softmax_rows`] does while counting the candidates with
/// `x - mx ≥ -1/64` (every other probability is at most `e^(-1/64) < 1` times the largest, so it
/// cannot tie): with one candidate that is the label (two passes); with several, their rounded
/// probabilities `exp(x - mx) · (1/Σ)` are compared (a third pass). Where torch's own `exp` or
/// summation order rounds a near-tie differently, torch's label can differ; the tie rule is the
/// same. Errors when `n == 0`.
pub fn softmax_argmax_rows(
    x: &[f32],
    m: usize,
    n: usize,
    out: &mut [i64],
) -> Result<(), KernelError> {
    check_matrix(x.len(), m, n)?;
    check_len("out", out.len(), m)?;
    if n == 0 {
        return Err(KernelError::EmptyReduction {
            what: "softmax_argmax_rows",
        });
    }
    struct K<'a>(&'a [f32], usize, &'a mut [i64]);
    impl Kernel for K<'_> {
        type Out = ();
        #[inline(always)]
        fn run<S: Simd>(self, s: S) {
            let K(x, n, out) = self;
            for (o, r) in out.iter_mut().zip(x.chunks_exact(n)) {
                *o = softmax_argmax_row(s, r) as i64;
            }
        }
    }
    dispatch_narrow(K(x, n, out), n);
    Ok(())
}

#[inline(always)]
fn softmax_argmax_row<S: Simd>(s: S, row: &[f32]) -> usize {
    let mx = row_max(s, row);
    if !mx.is_finite() {
        // All probabilities are NaN; torch's argmax returns the first NaN.
        return 0;
    }
    let es = exp_sum::<S, false, true>(s, row, mx, &mut []);
    if es.candidates <= 1 {
        // The maximum itself is always a candidate, so it is the only one.
        return es.first;
    }
    // Near-ties: compare the candidates' rounded probabilities.
    let r = 1.0 / es.sum;
    let (mv, rv, lo) = (s.splat(mx), s.splat(r), s.splat(-CANDIDATE_DELTA));
    let mut best = 0;
    let mut best_p = f32::NEG_INFINITY;
    let l = S::LANES;
    for (ci, chunk) in row.chunks(l).enumerate().skip(es.first / l) {
        // Padding as in `exp_sum` (`d = 0`, no subnormals); its lanes are never candidates.
        let d = s.sub(s.load_partial(chunk, mx), mv);
        let mut cand = s.bitmask(s.ge(d, lo)) & ((1u64 << chunk.len()) - 1);
        if cand == 0 {
            continue;
        }
        // The probabilities of this vector, computed as `softmax_rows` computes them.
        let p = s.mul(exp_v(s, d), rv);
        let mut lanes = [0.0f32; 16];
        s.store_partial(&mut lanes, p);
        while cand != 0 {
            let j = cand.trailing_zeros() as usize;
            cand &= cand - 1;
            if lanes[j] > best_p {
                best_p = lanes[j];
                best = ci * l + j;
            }
        }
    }
    best
}

/// Column-wise ops (over dim 0).
#[derive(Clone, Copy)]
enum ColOp {
    Sum,
    Mean,
    Max,
    Min,
}

fn cols_reduce(
    op: ColOp,
    x: &[f32],
    m: usize,
    n: usize,
    out: &mut [f32],
) -> Result<(), KernelError> {
    check_matrix(x.len(), m, n)?;
    check_len("out", out.len(), n)?;
    if m == 0 {
        match op {
            ColOp::Sum => out.fill(0.0),
            ColOp::Mean => out.fill(f32::NAN),
            ColOp::Max => return Err(KernelError::EmptyReduction { what: "amax_cols" }),
            ColOp::Min => return Err(KernelError::EmptyReduction { what: "amin_cols" }),
        }
        return Ok(());
    }
    if n == 0 {
        return Ok(());
    }
    struct K<'a>(ColOp, &'a [f32], usize, usize, &'a mut [f32]);
    impl Kernel for K<'_> {
        type Out = ();
        #[inline(always)]
        fn run<S: Simd>(self, s: S) {
            let K(op, x, m, n, out) = self;
            let mut rows = x.chunks_exact(n);
            match op {
                // torch's sums start from +0.0, so a column of -0.0 sums to +0.0.
                ColOp::Sum | ColOp::Mean => {
                    out.fill(0.0);
                    for row in rows {
                        accumulate(s, out, row, OP_ADD);
                    }
                    if let ColOp::Mean = op {
                        let d = s.splat(m as f32);
                        map_inplace(s, out, WithRhs(OP_DIV, d));
                    }
                }
                ColOp::Max => {
                    if let Some(first) = rows.next() {
                        out.copy_from_slice(first);
                    }
                    for row in rows {
                        accumulate(s, out, row, OP_MAX);
                    }
                }
                ColOp::Min => {
                    if let Some(first) = rows.next() {
                        out.copy_from_slice(first);
                    }
                    for row in rows {
                        accumulate(s, out, row, OP_MIN);
                    }
                }
            }
        }
    }
    dispatch(K(op, x, m, n, out));
    Ok(())
}

/// `acc = f(row, acc)` lane by lane.
#[inline(always)]
fn accumulate<S: Simd>(s: S, acc: &mut [f32], row: &[f32], f: impl VFn2<S>) {
    let l = S::LANES;
    let (mut ac, mut rc) = (acc.chunks_exact_mut(l), row.chunks_exact(l));
    for (a, v) in (&mut ac).zip(&mut rc) {
        let r = f.apply(s, s.load(v), s.load(a));
        s.store(a, r);
    }
    let (a, v) = (ac.into_remainder(), rc.remainder());
    if !a.is_empty() {
        let r = f.apply(s, s.load_partial(v, 0.0), s.load_partial(a, 0.0));
        s.store_partial(a, r);
    }
}

/// `out[j] = Σ_i x[i, j]` (`x.sum(dim=0)`, rows added in order); `out` has `n` elements, 0
/// where `m == 0`.
pub fn sum_cols(x: &[f32], m: usize, n: usize, out: &mut [f32]) -> Result<(), KernelError> {
    cols_reduce(ColOp::Sum, x, m, n, out)
}

/// `out[j] = Σ_i x[i, j] / m` (`x.mean(dim=0)`); NaN where `m == 0`.
pub fn mean_cols(x: &[f32], m: usize, n: usize, out: &mut [f32]) -> Result<(), KernelError> {
    cols_reduce(ColOp::Mean, x, m, n, out)
}

/// `out[j] = max_i x[i, j]` (`torch.amax(x, 0)`), NaN-propagating; errors when `m == 0`.
pub fn amax_cols(x: &[f32], m: usize, n: usize, out: &mut [f32]) -> Result<(), KernelError> {
    cols_reduce(ColOp::Max, x, m, n, out)
}

/// `out[j] = min_i x[i, j]` (`torch.amin(x, 0)`), NaN-propagating; errors when `m == 0`.
pub fn amin_cols(x: &[f32], m: usize, n: usize, out: &mut [f32]) -> Result<(), KernelError> {
    cols_reduce(ColOp::Min, x, m, n, out)
}

/// `out[j] = argmax_i x[i, j]` (`torch.argmax(x, 0)`): the first NaN in the column, else the
/// first maximum. One pass, all columns of a vector at once. Errors when `m == 0`.
pub fn argmax_cols(x: &[f32], m: usize, n: usize, out: &mut [i64]) -> Result<(), KernelError> {
    check_matrix(x.len(), m, n)?;
    check_len("out", out.len(), n)?;
    if m == 0 {
        return Err(KernelError::EmptyReduction {
            what: "argmax_cols",
        });
    }
    if n == 0 {
        return Ok(());
    }
    if i32::try_from(m).is_err() {
        // Row indices do not fit the vector lanes: one column at a time.
        for (j, o) in out.iter_mut().enumerate() {
            let mut best = 0;
            for i in 1..m {
                let (v, b) = (x[i * n + j], x[best * n + j]);
                if v > b || (v.is_nan() && !b.is_nan()) {
                    best = i;
                }
            }
            *o = best as i64;
        }
        return Ok(());
    }
    struct K<'a>(&'a [f32], usize, usize, &'a mut [i64]);
    impl Kernel for K<'_> {
        type Out = ();
        #[inline(always)]
        fn run<S: Simd>(self, s: S) {
            let K(x, m, n, out) = self;
            let l = S::LANES;
            let mut j = 0;
            while j < n {
                let w = l.min(n - j);
                let mut best = s.load_partial(&x[j..j + w], 0.0);
                let mut idx = s.isplat(0);
                for i in 1..m {
                    let v = s.load_partial(&x[i * n + j..i * n + j + w], 0.0);
                    let upd = s.mor(s.gt(v, best), s.mand(s.is_nan(v), s.mnot(s.is_nan(best))));
                    best = s.select(upd, v, best);
                    // `i < m <= i32::MAX`, checked above.
                    idx = s.iselect(upd, s.isplat(i as i32), idx);
                }
                let mut lanes = [0i32; 16];
                s.istore(idx, &mut lanes);
                for (o, &k) in out[j..j + w].iter_mut().zip(&lanes) {
                    *o = i64::from(k);
                }
                j += w;
            }
        }
    }
    dispatch(K(x, m, n, out));
    Ok(())
}

/// Softmax or log-softmax over dim 0, a vector of columns at a time.
#[inline(always)]
fn softmax_cols_imp<S: Simd, const LOG: bool>(
    s: S,
    x: &[f32],
    m: usize,
    n: usize,
    out: &mut [f32],
) {
    let l = S::LANES;
    let mut j = 0;
    while j < n {
        let w = l.min(n - j);
        let at = |i: usize| i * n + j..i * n + j + w;
        let mut mx = s.splat(f32::NEG_INFINITY);
        for i in 0..m {
            mx = max_nan(s, s.load_partial(&x[at(i)], 0.0), mx);
        }
        let mut sum = s.zero();
        for i in 0..m {
            let e = exp_v(s, s.sub(s.load_partial(&x[at(i)], 0.0), mx));
            if !LOG {
                s.store_partial(&mut out[at(i)], e);
            }
            sum = s.add(sum, e);
        }
        if LOG {
            let c = s.add(mx, log_v(s, sum));
            for i in 0..m {
                let v = s.sub(s.load_partial(&x[at(i)], 0.0), c);
                s.store_partial(&mut out[at(i)], v);
            }
        } else {
            let r = s.div(s.splat(1.0), sum);
            for i in 0..m {
                let v = s.mul(s.load_partial(&out[at(i)], 0.0), r);
                s.store_partial(&mut out[at(i)], v);
            }
        }
        j += w;
    }
}

/// `out = softmax(x, dim=0)`: per column, as [`softmax_rows`] per row.
pub fn softmax_cols(x: &[f32], m: usize, n: usize, out: &mut [f32]) -> Result<(), KernelError> {
    cols_softmax::<false>(x, m, n, out)
}

/// `out = log_softmax(x, dim=0)`: per column, as [`log_softmax_rows`] per row.
pub fn log_softmax_cols(x: &[f32], m: usize, n: usize, out: &mut [f32]) -> Result<(), KernelError> {
    cols_softmax::<true>(x, m, n, out)
}

fn cols_softmax<const LOG: bool>(
    x: &[f32],
    m: usize,
    n: usize,
    out: &mut [f32],
) -> Result<(), KernelError> {
    let len = check_matrix(x.len(), m, n)?;
    check_len("out", out.len(), len)?;
    if len == 0 {
        return Ok(());
    }
    struct K<'a, const LOG: bool>(&'a [f32], usize, usize, &'a mut [f32]);
    impl<const LOG: bool> Kernel for K<'_, LOG> {
        type Out = ();
        #[inline(always)]
        fn run<S: Simd>(self, s: S) {
            let K(x, m, n, out) = self;
            softmax_cols_imp::<S, LOG>(s, x, m, n, out);
        }
    }
    dispatch(K::<LOG>(x, m, n, out));
    Ok(())
}

/// Rows per step of [`layer_norm_rows`].
const LN_BLOCK: usize = 8;

/// For each of the first `R` (at most [`LN_BLOCK`]) rows of equal length (the others' sums are
/// zero), one accumulator over the row's vectors in
/// order: their sum, or with `SQ` the sum of `(x - mean[j])²` by multiply-adds (a ragged last
/// vector is padded with 0, or with the mean, which adds nothing). A row's result does not
/// depend on the rows beside it; the rows' chains are independent, so they overlap.
///
/// Functions with const parameters rather than closures, here and in [`normalize_row`]: a
/// closure is not always inlined, and out of line it is compiled without the kernel's
/// instruction set, so every intrinsic in it becomes a call (measured on AVX2: a 128 × 48
/// LayerNorm took 11.8 µs instead of 3.0 µs).
///
/// With `MAX`, `mx` also takes the largest magnitude of the elements read (as `max` orders them:
/// a NaN may be dropped, which the caller detects by the sums instead).
#[inline(always)]
fn block_sums<S: Simd, const SQ: bool, const MAX: bool, const R: usize>(
    s: S,
    rows: &[&[f32]; LN_BLOCK],
    mean: &[f32; LN_BLOCK],
    mx: &mut S::V,
) -> [S::V; LN_BLOCK] {
    let (l, n) = (S::LANES, rows[0].len());
    let mut acc = [s.zero(); LN_BLOCK];
    if rows.iter().any(|r| r.len() != n) {
        debug_assert!(false, "layer_norm block with rows of different lengths");
        return acc;
    }
    let full = n - n % l;
    let mut i = 0;
    while i < full {
        for j in 0..R {
            // SAFETY: `i + l <= full <= n == rows[j].len()`.
            let v = unsafe { s.loadu(rows[j].as_ptr().add(i)) };
            acc[j] = fold::<S, SQ>(s, acc[j], v, mean[j]);
            if MAX {
                *mx = s.max(*mx, s.abs(v));
            }
        }
        i += l;
    }
    if i < n {
        for j in 0..R {
            let v = s.load_partial(&rows[j][i..], if SQ { mean[j] } else { 0.0 });
            acc[j] = fold::<S, SQ>(s, acc[j], v, mean[j]);
            if MAX {
                *mx = s.max(*mx, s.abs(v));
            }
        }
    }
    acc
}

/// One step of [`block_sums`].
#[inline(always)]
fn fold<S: Simd, const SQ: bool>(s: S, acc: S::V, v: S::V, mean: f32) -> S::V {
    if SQ {
        let d = s.sub(v, s.splat(mean));
        s.mul_add(d, d, acc)
    } else {
        s.add(acc, v)
    }
}

/// One row of [`layer_norm_rows`] from its mean and `rstd`:
/// `(x · rstd − mean · rstd) · weight + bias`, with `W`/`B` saying whether `w`/`b` apply
/// (a loop of its own for each case, no test per vector).
#[inline(always)]
fn normalize_row<S: Simd, const W: bool, const B: bool>(
    s: S,
    row: &[f32],
    o: &mut [f32],
    w: &[f32],
    b: &[f32],
    mean: f32,
    rstd: f32,
) {
    let (l, n) = (S::LANES, row.len());
    if o.len() != n || (W && w.len() != n) || (B && b.len() != n) {
        debug_assert!(
            false,
            "layer_norm row, output, weight and bias lengths differ"
        );
        return;
    }
    let (scale, shift) = (s.splat(rstd), s.splat(-rstd * mean));
    let full = n - n % l;
    let mut i = 0;
    while i < full {
        // SAFETY: `i + l <= full <= n`, the length of `row`, `o`, and of `w` and `b` where
        // they are read (checked above).
        unsafe {
            let wv = if W { s.loadu(w.as_ptr().add(i)) } else { scale };
            let bv = if B { s.loadu(b.as_ptr().add(i)) } else { scale };
            let y = norm::<S, W, B>(s, s.loadu(row.as_ptr().add(i)), scale, shift, wv, bv);
            s.storeu(o.as_mut_ptr().add(i), y);
        }
        i += l;
    }
    if i < n {
        let wv = if W {
            s.load_partial(&w[i..], 0.0)
        } else {
            scale
        };
        let bv = if B {
            s.load_partial(&b[i..], 0.0)
        } else {
            scale
        };
        let y = norm::<S, W, B>(s, s.load_partial(&row[i..], 0.0), scale, shift, wv, bv);
        s.store_partial(&mut o[i..], y);
    }
}

/// `(x · scale + shift) · w + b` (`w`, `b` only where `W`, `B`): a multiply then an add, as
/// ATen's vectorised kernel computes it (no FMA), so a one-element row normalises to exactly 0.
#[inline(always)]
fn norm<S: Simd, const W: bool, const B: bool>(
    s: S,
    x: S::V,
    scale: S::V,
    shift: S::V,
    w: S::V,
    b: S::V,
) -> S::V {
    let mut y = s.add(s.mul(x, scale), shift);
    if W {
        y = s.mul(y, w);
    }
    if B {
        y = s.add(y, b);
    }
    y
}

/// `out = layer_norm(x, (n,), weight, bias, eps)` over the last dim of an `m×n` matrix, as
/// ATen's CPU kernel computes it: per row the mean and the population variance in float32,
/// `rstd = 1 / sqrt(max(var, 0) + eps)`, then `(x · rstd − mean · rstd) · weight + bias`. A row
/// holding NaN or ±inf is all NaN, as in eager.
#[allow(clippy::too_many_arguments)]
pub fn layer_norm_rows(
    x: &[f32],
    m: usize,
    n: usize,
    weight: Option<&[f32]>,
    bias: Option<&[f32]>,
    eps: f32,
    out: &mut [f32],
) -> Result<(), KernelError> {
    layer_norm_imp::<false>(x, m, n, weight, bias, eps, f32::INFINITY, out).map(|_| ())
}

/// [`layer_norm_rows`] for an input that must be finite with every magnitude at most `limit`:
/// `Ok(false)` as soon as a block of rows holds an element that is not (`out` is then
/// unspecified). The check rides on the pass that sums the rows (a separate scan of the input
/// before the kernel cost a residual MLP about 2% of its time at 128 rows).
#[allow(clippy::too_many_arguments)]
pub fn layer_norm_rows_within(
    x: &[f32],
    m: usize,
    n: usize,
    weight: Option<&[f32]>,
    bias: Option<&[f32]>,
    eps: f32,
    limit: f32,
    out: &mut [f32],
) -> Result<bool, KernelError> {
    layer_norm_imp::<true>(x, m, n, weight, bias, eps, limit, out)
}

/// One step of [`layer_norm_rows`]: the first `R` rows of `block` (`R` is 1 or [`LN_BLOCK`];
/// `ob` holds as many output rows as there are distinct rows, at most `R`) normalised together:
/// sums, variances and normalising each over the whole block, one accumulator per row advanced
/// a vector at a time for all rows (no per-row loop control), the rows' lanes added in one
/// `reduce8`, and the square roots and divisions independent of each other. A row's arithmetic
/// is the same in any block and alone. `false` (with `CHECK`) when a row holds an element that
/// is not finite or exceeds `limit` in magnitude.
///
/// Measured on an AVX2 host (Zen 3), 128 × 48 with weight and bias: 2.9 → 1.6 µs against four
/// accumulators, a horizontal sum and a scalar square root per row.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn ln_block<S: Simd, const CHECK: bool, const R: usize>(
    s: S,
    block: &[&[f32]; LN_BLOCK],
    ob: &mut [f32],
    w: Option<&[f32]>,
    b: Option<&[f32]>,
    inv_n: f32,
    eps: f32,
    limit: f32,
) -> bool {
    let mut mx = s.zero();
    let sums = block_sums::<S, false, CHECK, R>(s, block, &[0.0; LN_BLOCK], &mut mx);
    let sums = s.reduce8(sums);
    // A NaN or an infinity makes its row's sum NaN or infinite (finite elements within `limit`
    // cannot overflow it); `mx` bounds the finite ones.
    if CHECK && !(s.reduce_max(mx) <= limit && sums[..R].iter().all(|v| v.is_finite())) {
        return false;
    }
    let mean = sums.map(|sum| sum * inv_n);
    let sq = block_sums::<S, true, false, R>(s, block, &mean, &mut mx);
    let sq = s.reduce8(sq);
    let mut rstd = [0.0f32; LN_BLOCK];
    for (r, &sq) in rstd.iter_mut().zip(&sq).take(R) {
        let var = sq * inv_n;
        // std::max(var, 0): NaN stays NaN (Rust's f32::max would drop it).
        let var = if var < 0.0 { 0.0 } else { var };
        *r = 1.0 / (var + eps).sqrt();
    }
    let n = block[0].len();
    for (j, o) in ob.chunks_exact_mut(n).take(R).enumerate() {
        let (row, mu, r) = (block[j], mean[j], rstd[j]);
        match (w, b) {
            (Some(w), Some(b)) => normalize_row::<S, true, true>(s, row, o, w, b, mu, r),
            (Some(w), None) => normalize_row::<S, true, false>(s, row, o, w, &[], mu, r),
            (None, Some(b)) => normalize_row::<S, false, true>(s, row, o, &[], b, mu, r),
            (None, None) => normalize_row::<S, false, false>(s, row, o, &[], &[], mu, r),
        }
    }
    true
}

#[allow(clippy::too_many_arguments)]
fn layer_norm_imp<const CHECK: bool>(
    x: &[f32],
    m: usize,
    n: usize,
    weight: Option<&[f32]>,
    bias: Option<&[f32]>,
    eps: f32,
    limit: f32,
    out: &mut [f32],
) -> Result<bool, KernelError> {
    let len = check_matrix(x.len(), m, n)?;
    check_len("out", out.len(), len)?;
    if let Some(w) = weight {
        check_len("weight", w.len(), n)?;
    }
    if let Some(b) = bias {
        check_len("bias", b.len(), n)?;
    }
    if len == 0 {
        return Ok(true);
    }
    struct K<'a, const CHECK: bool> {
        x: &'a [f32],
        n: usize,
        w: Option<&'a [f32]>,
        b: Option<&'a [f32]>,
        eps: f32,
        limit: f32,
        out: &'a mut [f32],
    }
    impl<const CHECK: bool> Kernel for K<'_, CHECK> {
        type Out = bool;
        #[inline(always)]
        fn run<S: Simd>(self, s: S) -> bool {
            let K {
                x,
                n,
                w,
                b,
                eps,
                limit,
                out,
            } = self;
            let inv_n = 1.0 / n as f32;
            let m = x.len() / n;
            // Rows in blocks of eight ([`ln_block`]); a last block of four to seven rows repeats
            // its first row to fill up, and fewer rows run one at a time.
            let mut r0 = 0;
            while r0 < m {
                let rows = (m - r0).min(LN_BLOCK);
                // Fewer than half a block: each row alone (the block's other accumulators stay
                // zero), rather than seven copies of a batch-1 row.
                let ok = if rows >= LN_BLOCK / 2 {
                    let block: [&[f32]; LN_BLOCK] = std::array::from_fn(|j| {
                        let r = r0 + if j < rows { j } else { 0 };
                        &x[r * n..(r + 1) * n]
                    });
                    let ob = &mut out[r0 * n..(r0 + rows) * n];
                    ln_block::<S, CHECK, LN_BLOCK>(s, &block, ob, w, b, inv_n, eps, limit)
                } else {
                    (r0..r0 + rows).all(|r| {
                        let block = [&x[r * n..(r + 1) * n]; LN_BLOCK];
                        let ob = &mut out[r * n..(r + 1) * n];
                        ln_block::<S, CHECK, 1>(s, &block, ob, w, b, inv_n, eps, limit)
                    })
                };
                if !ok {
                    return false;
                }
                r0 += rows;
            }
            true
        }
    }
    Ok(dispatch(K::<CHECK> {
        x,
        n,
        w: weight,
        b: bias,
        eps,
        limit,
        out,
    }))
}

/// [`layer_norm_rows`] of `xᵀ`, transposed: each column of the `m×n` matrix `x` (a feature-major
/// batch: row `r` holds feature `r` of `n` batch rows) normalised over its `m` elements, with
/// `weight[r]` and `bias[r]` applying to row `r`. The same steps as [`layer_norm_rows`] (mean
/// and population variance in float32, `rstd = 1 / sqrt(max(var, 0) + eps)`, then
/// `(x · rstd − mean · rstd) · weight + bias`), vectorised across columns, each column's sums
/// taken down the column in four interleaved partial sums (so the last bits of the moments may
/// differ from [`layer_norm_rows`]'s lane-split sums, as they differ from eager's Welford
/// merge). A column's result does not depend on the columns beside it.
#[allow(clippy::too_many_arguments)]
pub fn layer_norm_cols(
    x: &[f32],
    m: usize,
    n: usize,
    weight: Option<&[f32]>,
    bias: Option<&[f32]>,
    eps: f32,
    out: &mut [f32],
) -> Result<(), KernelError> {
    layer_norm_cols_imp::<false>(x, m, n, weight, bias, eps, f32::INFINITY, out).map(|_| ())
}

/// [`layer_norm_cols`] for an input that must be finite with every magnitude at most `limit`
/// (see [`layer_norm_rows_within`]): `Ok(false)` as soon as a block of columns holds an element
/// that is not (`out` is then unspecified).
#[allow(clippy::too_many_arguments)]
pub fn layer_norm_cols_within(
    x: &[f32],
    m: usize,
    n: usize,
    weight: Option<&[f32]>,
    bias: Option<&[f32]>,
    eps: f32,
    limit: f32,
    out: &mut [f32],
) -> Result<bool, KernelError> {
    layer_norm_cols_imp::<true>(x, m, n, weight, bias, eps, limit, out)
}

#[allow(clippy::too_many_arguments)]
fn layer_norm_cols_imp<const CHECK: bool>(
    x: &[f32],
    m: usize,
    n: usize,
    weight: Option<&[f32]>,
    bias: Option<&[f32]>,
    eps: f32,
    limit: f32,
    out: &mut [f32],
) -> Result<bool, KernelError> {
    let len = check_matrix(x.len(), m, n)?;
    check_len("out", out.len(), len)?;
    if let Some(w) = weight {
        check_len("weight", w.len(), m)?;
    }
    if let Some(b) = bias {
        check_len("bias", b.len(), m)?;
    }
    if len == 0 {
        return Ok(true);
    }
    let k = LnCols::<CHECK> {
        x,
        m,
        n,
        w: weight,
        b: bias,
        eps,
        limit,
        out,
    };
    Ok(dispatch_narrow(k, n))
}

/// The checked arguments of [`layer_norm_cols_imp`].
struct LnCols<'a, const CHECK: bool> {
    x: &'a [f32],
    m: usize,
    n: usize,
    w: Option<&'a [f32]>,
    b: Option<&'a [f32]>,
    eps: f32,
    limit: f32,
    out: &'a mut [f32],
}

/// Vectors of columns [`layer_norm_cols`] normalises at once.
const LN_COLS_GROUP: usize = 2;

/// Partial sums per vector of columns in [`layer_norm_cols`] (a single chain of additions down
/// a 48-row column was most of a 48 × 16 layer norm's time).
const LN_COLS_SPLIT: usize = 4;

impl<const CHECK: bool> Kernel for LnCols<'_, CHECK> {
    type Out = bool;
    #[inline(always)]
    fn run<S: Simd>(mut self, s: S) -> bool {
        let l = S::LANES;
        let n = self.n;
        let mut c0 = 0;
        while c0 + LN_COLS_GROUP * l <= n {
            if !ln_cols_block::<S, LN_COLS_GROUP, CHECK>(s, &mut self, c0, l) {
                return false;
            }
            c0 += LN_COLS_GROUP * l;
        }
        while c0 < n {
            let cnt = l.min(n - c0);
            if !ln_cols_block::<S, 1, CHECK>(s, &mut self, c0, cnt) {
                return false;
            }
            c0 += cnt;
        }
        true
    }
}

/// Columns `c0..` of [`layer_norm_cols`], `G` vectors of them, the last holding `cnt` columns
/// (the others whole); `false` when `CHECK` finds an element outside the domain.
#[inline(always)]
fn ln_cols_block<S: Simd, const G: usize, const CHECK: bool>(
    s: S,
    k: &mut LnCols<'_, CHECK>,
    c0: usize,
    cnt: usize,
) -> bool {
    let (l, m, n) = (S::LANES, k.m, k.n);
    if G == 0
        || cnt == 0
        || cnt > l
        || c0 + (G - 1) * l + cnt > n
        || k.x.len() < m * n
        || k.out.len() < m * n
        || k.w.is_some_and(|w| w.len() < m)
        || k.b.is_some_and(|b| b.len() < m)
    {
        debug_assert!(false, "layer_norm_cols block out of bounds");
        return true;
    }
    let xp = k.x.as_ptr();
    // Vector `v` of row `r` (the last one ragged when `cnt < l`).
    macro_rules! load {
        ($r:expr, $v:expr, $fill:expr) => {{
            let (r, v): (usize, usize) = ($r, $v);
            let at = r * n + c0 + v * l;
            if v + 1 == G && cnt < l {
                s.load_partial(&k.x[at..at + cnt], $fill)
            } else {
                // SAFETY: `at + l <= r·n + c0 + G·l <= r·n + n` for a whole vector (checked
                // above), inside `x` (`m·n` floats).
                unsafe { s.loadu(xp.add(at)) }
            }
        }};
    }
    let inv_n = s.splat(1.0 / m as f32);
    // Each column's sums in `LN_COLS_SPLIT` partial sums (row `r` into sum `r % 4`), added as
    // `(s0 + s1) + (s2 + s3)`: four independent chains per vector, the same order in any
    // group.
    const Q: usize = LN_COLS_SPLIT;
    let mut part = [[s.zero(); Q]; G];
    let mut mx = s.zero();
    let mut r0 = 0;
    while r0 < m {
        for q in 0..Q.min(m - r0) {
            for (v, part) in part.iter_mut().enumerate() {
                let x = load!(r0 + q, v, 0.0);
                part[q] = s.add(part[q], x);
                if CHECK {
                    mx = s.max(mx, s.abs(x));
                }
            }
        }
        r0 += Q;
    }
    let mut sum = [s.zero(); G];
    for (sum, p) in sum.iter_mut().zip(&part) {
        *sum = s.add(s.add(p[0], p[1]), s.add(p[2], p[3]));
    }
    if CHECK {
        // A NaN or an infinity makes its column's sum NaN or infinite (finite elements within
        // `limit` cannot overflow it); `mx` bounds the finite ones.
        let inf = s.splat(f32::INFINITY);
        let mut bad = s.gt(mx, s.splat(k.limit));
        for &acc in &sum {
            bad = s.mor(bad, s.mnot(s.lt(s.abs(acc), inf)));
        }
        if s.bitmask(bad) != 0 {
            return false;
        }
    }
    let mut mean = [s.zero(); G];
    for (mean, &acc) in mean.iter_mut().zip(&sum) {
        *mean = s.mul(acc, inv_n);
    }
    let mut part = [[s.zero(); Q]; G];
    let mut r0 = 0;
    while r0 < m {
        for q in 0..Q.min(m - r0) {
            for (v, part) in part.iter_mut().enumerate() {
                let d = s.sub(load!(r0 + q, v, 0.0), mean[v]);
                part[q] = s.mul_add(d, d, part[q]);
            }
        }
        r0 += Q;
    }
    let mut sq = [s.zero(); G];
    for (sq, p) in sq.iter_mut().zip(&part) {
        *sq = s.add(s.add(p[0], p[1]), s.add(p[2], p[3]));
    }
    let (zero, one, eps) = (s.zero(), s.splat(1.0), s.splat(k.eps));
    let mut scale = [zero; G];
    let mut shift = [zero; G];
    for v in 0..G {
        let var = s.mul(sq[v], inv_n);
        // std::max(var, 0): NaN stays NaN.
        let var = s.select(s.lt(var, zero), zero, var);
        scale[v] = s.div(one, s.sqrt(s.add(var, eps)));
        shift[v] = s.neg(s.mul(scale[v], mean[v]));
    }
    for r in 0..m {
        let wr = k.w.map(|w| s.splat(w[r]));
        let br = k.b.map(|b| s.splat(b[r]));
        for v in 0..G {
            let mut y = s.add(s.mul(load!(r, v, 0.0), scale[v]), shift[v]);
            if let Some(w) = wr {
                y = s.mul(y, w);
            }
            if let Some(b) = br {
                y = s.add(y, b);
            }
            let at = r * n + c0 + v * l;
            let len = if v + 1 == G { cnt } else { l };
            s.store(&mut k.out[at..at + len], y);
        }
    }
    true
}
