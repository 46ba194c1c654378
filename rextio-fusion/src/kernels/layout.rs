//! Layout changes: [`transpose`].

use super::{check_len, checked_len, KernelError};

/// Tiles of this many rows and columns keep both sides of a transpose in cache.
const TILE: usize = 32;

/// `out[n×m] = xᵀ` for `x[m×n]`; bit-exact (values are moved, never computed).
pub fn transpose(x: &[f32], m: usize, n: usize, out: &mut [f32]) -> Result<(), KernelError> {
    let len = checked_len(m, n)?;
    check_len("x", x.len(), len)?;
    check_len("out", out.len(), len)?;
    for i0 in (0..m).step_by(TILE) {
        let i1 = (i0 + TILE).min(m);
        for j0 in (0..n).step_by(TILE) {
            let j1 = (j0 + TILE).min(n);
            for i in i0..i1 {
                let row = &x[i * n + j0..i * n + j1];
                for (j, &v) in (j0..j1).zip(row) {
                    out[j * m + i] = v;
                }
            }
        }
    }
    Ok(())
}
