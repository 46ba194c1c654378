//! Layout changes: [`transpose`].

use super::simd::Simd;
use super::{check_len, checked_len, dispatch, Kernel, KernelError};

/// Tiles of this many rows and columns keep both sides of a transpose in cache.
const TILE: usize = 32;

/// Blocks of this many rows and columns are moved through registers ([`Simd::transpose8`]).
const BLOCK: usize = 8;

/// `out[n×m] = xᵀ` for `x[m×n]`; bit-exact (values are moved, never computed).
pub fn transpose(x: &[f32], m: usize, n: usize, out: &mut [f32]) -> Result<(), KernelError> {
    let len = checked_len(m, n)?;
    check_len("x", x.len(), len)?;
    check_len("out", out.len(), len)?;
    // Compiled for the active instruction set, whose shuffles the blocks below become (a
    // scalar loop moved half a nanosecond per element; feature-major calls transpose their
    // inputs and outputs).
    dispatch(Transpose { x, m, n, out });
    Ok(())
}

struct Transpose<'a> {
    x: &'a [f32],
    m: usize,
    n: usize,
    out: &'a mut [f32],
}

impl Kernel for Transpose<'_> {
    type Out = ();
    #[inline(always)]
    fn run<S: Simd>(self, s: S) {
        let Transpose { x, m, n, out } = self;
        for i0 in (0..m).step_by(TILE) {
            let i1 = (i0 + TILE).min(m);
            for j0 in (0..n).step_by(TILE) {
                let j1 = (j0 + TILE).min(n);
                let mut i = i0;
                while i + BLOCK <= i1 {
                    let mut j = j0;
                    while j + BLOCK <= j1 {
                        // SAFETY: rows `i..i + 8` of `x` hold columns `j..j + 8` (`i + 8 <= m`,
                        // `j + 8 <= n`, `x` is `m·n` floats) and rows `j..j + 8` of `out`
                        // columns `i..i + 8` (`out` is `n·m` floats, checked by `transpose`);
                        // `x` and `out` are distinct slices.
                        unsafe {
                            s.transpose8(
                                x.as_ptr().add(i * n + j),
                                n,
                                out.as_mut_ptr().add(j * m + i),
                                m,
                            )
                        };
                        j += BLOCK;
                    }
                    edge(x, m, n, out, i..i + BLOCK, j..j1);
                    i += BLOCK;
                }
                edge(x, m, n, out, i..i1, j0..j1);
            }
        }
    }
}

/// The elements of rows `rows` and columns `cols` one by one, a column at a time (the writes
/// contiguous).
#[inline(always)]
fn edge(
    x: &[f32],
    m: usize,
    n: usize,
    out: &mut [f32],
    rows: std::ops::Range<usize>,
    cols: std::ops::Range<usize>,
) {
    if rows.end > m || cols.end > n || x.len() < m * n || out.len() < m * n {
        debug_assert!(false, "transpose edge out of bounds");
        return;
    }
    for j in cols {
        let o = &mut out[j * m + rows.start..j * m + rows.end];
        for (i, o) in rows.clone().zip(o) {
            // SAFETY: `i < m` and `j < n` (checked above), so `i·n + j < m·n <= x.len()`.
            *o = unsafe { *x.get_unchecked(i * n + j) };
        }
    }
}
