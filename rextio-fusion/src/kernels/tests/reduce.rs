//! Row and column reductions against f64 references and torch's edge rows.

// torch's results are written as Python printed them: the f64 digits of the f32 value.
#![allow(clippy::excessive_precision)]

use proptest::collection::vec;
use proptest::prelude::*;

use super::super::{
    amax_cols, amax_rows, amin_cols, amin_rows, argmax_cols, argmax_rows, layer_norm_cols,
    layer_norm_cols_within, layer_norm_rows, layer_norm_rows_within, log_softmax_cols,
    log_softmax_rows, mean_cols, mean_rows, softmax_argmax_rows, softmax_cols, softmax_rows,
    sum_cols, sum_rows, KernelError,
};
use super::elementwise::{dims, value};
use super::{close, each_isa, same};

/// A view of an `m×n` matrix by rows (`cols == false`) or by columns: `(count, len, get)`.
fn lines(x: &[f32], m: usize, n: usize, cols: bool) -> Vec<Vec<f32>> {
    if cols {
        (0..n)
            .map(|j| (0..m).map(|i| x[i * n + j]).collect())
            .collect()
    } else {
        x.chunks(n.max(1)).take(m).map(<[f32]>::to_vec).collect()
    }
}

/// torch's argmax of one line: the first NaN, else the first maximum.
fn argmax_ref(v: &[f32]) -> i64 {
    if let Some(i) = v.iter().position(|x| x.is_nan()) {
        return i as i64;
    }
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[best] {
            best = i;
        }
    }
    best as i64
}

fn max_ref(v: &[f32], max: bool) -> f32 {
    if v.iter().any(|x| x.is_nan()) {
        return f32::NAN;
    }
    v.iter().copied().fold(
        if max {
            f32::NEG_INFINITY
        } else {
            f32::INFINITY
        },
        |a, b| if (b > a) == max && b != a { b } else { a },
    )
}

/// Softmax (or log-softmax) of one line in f64 with torch's NaN rule.
fn softmax_ref(v: &[f32], log: bool) -> Vec<f64> {
    let mx = max_ref(v, true);
    if !mx.is_finite() {
        return vec![f64::NAN; v.len()];
    }
    let mx = f64::from(mx);
    let sum: f64 = v.iter().map(|&x| (f64::from(x) - mx).exp()).sum();
    v.iter()
        .map(|&x| {
            let d = f64::from(x) - mx;
            if log {
                d - sum.ln()
            } else {
                d.exp() / sum
            }
        })
        .collect()
}

/// `got` is the sum (or mean) of `v` within the summation bound `(len + 2)·2⁻²³·Σ|x|`; with
/// non-finite inputs, the IEEE result (NaN for NaN or `inf - inf`, else the infinity).
fn check_sum(got: f32, v: &[f32], divide: bool) -> bool {
    let (pinf, ninf) = (v.contains(&f32::INFINITY), v.contains(&f32::NEG_INFINITY));
    if v.iter().any(|x| x.is_nan()) || (pinf && ninf) {
        return got.is_nan();
    }
    if pinf || ninf {
        return got
            == if pinf {
                f32::INFINITY
            } else {
                f32::NEG_INFINITY
            };
    }
    let want: f64 = v.iter().map(|&x| f64::from(x)).sum();
    let mag: f64 = v.iter().map(|&x| f64::from(x).abs()).sum();
    let d = if divide { v.len() as f64 } else { 1.0 };
    let bound = (v.len() as f64 + 2.0) * f64::from(f32::EPSILON) * mag / d + 1e-30;
    (f64::from(got) - want / d).abs() <= bound
}

/// Finite values, with some NaN and infinities.
fn reducible() -> impl Strategy<Value = f32> {
    prop_oneof![
        12 => -10.0f32..10.0,
        1 => Just(f32::NAN),
        1 => Just(f32::INFINITY),
        1 => Just(f32::NEG_INFINITY),
        1 => Just(-0.0f32),
    ]
}

fn check_all(x: &[f32], m: usize, n: usize) {
    each_isa(|isa| {
        for cols in [false, true] {
            let (count, len) = if cols { (n, m) } else { (m, n) };
            let ls = lines(x, m, n, cols);
            let tag = format!("{isa:?} {}x{} {}", m, n, if cols { "cols" } else { "rows" });
            // sum, mean
            let mut out = vec![0.0; count];
            if cols {
                sum_cols(x, m, n, &mut out)
            } else {
                sum_rows(x, m, n, &mut out)
            }
            .unwrap();
            for (l, &g) in ls.iter().zip(&out) {
                assert!(check_sum(g, l, false), "{tag} sum {l:?} = {g}");
            }
            if cols {
                mean_cols(x, m, n, &mut out)
            } else {
                mean_rows(x, m, n, &mut out)
            }
            .unwrap();
            for (l, &g) in ls.iter().zip(&out) {
                assert!(
                    len == 0 && g.is_nan() || check_sum(g, l, true),
                    "{tag} mean {l:?} = {g}"
                );
            }
            // amax, amin, argmax: errors on an empty reduced dim.
            let r = if cols {
                amax_cols(x, m, n, &mut out)
            } else {
                amax_rows(x, m, n, &mut out)
            };
            if len == 0 {
                assert!(
                    matches!(r, Err(KernelError::EmptyReduction { .. })),
                    "{tag}"
                );
            } else {
                r.unwrap();
                for (l, &g) in ls.iter().zip(&out) {
                    let want = max_ref(l, true);
                    assert!(same(g, want) || g == want, "{tag} amax {l:?} = {g}");
                }
                if cols {
                    amin_cols(x, m, n, &mut out)
                } else {
                    amin_rows(x, m, n, &mut out)
                }
                .unwrap();
                for (l, &g) in ls.iter().zip(&out) {
                    let want = max_ref(l, false);
                    assert!(same(g, want) || g == want, "{tag} amin {l:?} = {g}");
                }
            }
            let mut idx = vec![-1i64; count];
            let r = if cols {
                argmax_cols(x, m, n, &mut idx)
            } else {
                argmax_rows(x, m, n, &mut idx)
            };
            if len == 0 {
                assert!(
                    matches!(r, Err(KernelError::EmptyReduction { .. })),
                    "{tag}"
                );
            } else {
                r.unwrap();
                for (l, &g) in ls.iter().zip(&idx) {
                    assert_eq!(g, argmax_ref(l), "{tag} argmax {l:?}");
                }
            }
            // softmax, log_softmax
            for log in [false, true] {
                let mut out = vec![0.0; m * n];
                match (cols, log) {
                    (false, false) => softmax_rows(x, m, n, &mut out),
                    (false, true) => log_softmax_rows(x, m, n, &mut out),
                    (true, false) => softmax_cols(x, m, n, &mut out),
                    (true, true) => log_softmax_cols(x, m, n, &mut out),
                }
                .unwrap();
                let got = lines(&out, m, n, cols);
                for (l, g) in ls.iter().zip(&got) {
                    // log_softmax is `x - (max + ln Σ)` as in torch: the rounding of the
                    // parenthesis costs up to an ulp of `max`.
                    let mx = f64::from(max_ref(l, true)).abs();
                    for ((&gv, want), &xv) in g.iter().zip(softmax_ref(l, log)).zip(l) {
                        let slack = if log {
                            2.0 * f64::from(f32::EPSILON) * (mx + f64::from(xv).abs())
                        } else {
                            0.0
                        };
                        assert!(
                            close(gv, want, 1e-5, 1e-6 + slack),
                            "{tag} {} {l:?}: {g:?}",
                            if log { "log_softmax" } else { "softmax" }
                        );
                    }
                }
            }
        }
        // The fused labels equal argmax(softmax) exactly.
        let mut fused = vec![-1i64; m];
        let r = softmax_argmax_rows(x, m, n, &mut fused);
        if n == 0 {
            assert!(r.is_err());
        } else {
            r.unwrap();
            let mut p = vec![0.0; m * n];
            softmax_rows(x, m, n, &mut p).unwrap();
            let mut want = vec![0i64; m];
            argmax_rows(&p, m, n, &mut want).unwrap();
            assert_eq!(fused, want, "{isa:?} softmax_argmax {x:?}");
        }
    });
}

proptest! {
    #![proptest_config(ProptestConfig {
        // No regression files outside src/kernels; failures print their inputs.
        failure_persistence: None,
        ..ProptestConfig::with_cases(96)
    })]

    #[test]
    fn reductions_match_references(
        (m, n) in dims(11, 45),
        data in vec(reducible(), 11 * 45),
    ) {
        check_all(&data[..m * n], m, n);
    }

    #[test]
    fn reductions_survive_arbitrary_bits(
        (m, n) in dims(5, 20),
        data in vec(value(), 5 * 20),
    ) {
        // Only the exact ones are compared here (sums of huge values overflow differently).
        let x = &data[..m * n];
        each_isa(|isa| {
            if n > 0 {
                let mut idx = vec![0i64; m];
                argmax_rows(x, m, n, &mut idx).unwrap();
                let mut fused = vec![0i64; m];
                softmax_argmax_rows(x, m, n, &mut fused).unwrap();
                let mut p = vec![0.0; m * n];
                softmax_rows(x, m, n, &mut p).unwrap();
                let mut want = vec![0i64; m];
                argmax_rows(&p, m, n, &mut want).unwrap();
                for (i, row) in x.chunks(n).enumerate() {
                    assert_eq!(idx[i], argmax_ref(row), "{isa:?} {row:?}");
                    assert_eq!(fused[i], want[i], "{isa:?} {row:?}");
                }
            }
        });
    }

    /// Rows built from near-ties, where rounded probabilities can tie although the inputs do
    /// not: the fused labels must still be exactly argmax(softmax).
    #[test]
    fn softmax_argmax_is_exact_on_near_ties(
        (m, n) in (1usize..6, 1usize..40),
        picks in vec(0usize..12, 6 * 40),
    ) {
        let pool = [0.0f32, 1e-8, -1e-8, 6e-8, 1e-7, -3e-8, 3.0, 3.000_000_2, 2.999_999_8, -90.0, -88.5, 17.0];
        let x: Vec<f32> = picks[..m * n].iter().map(|&i| pool[i]).collect();
        check_all(&x, m, n);
    }
}

/// A row, torch's softmax of it (`None`: all NaN), its argmax and argmax(softmax).
type EdgeRow<'a> = (&'a [f32], Option<&'a [f32]>, i64, i64);

#[test]
fn torch_edge_rows() {
    // F.softmax / F.log_softmax / argmax / argmax(softmax) / amax / amin of these rows
    // (torch 2.13.0, dim=1, both as written and repeated 5x along the row).
    let nan = f32::NAN;
    let inf = f32::INFINITY;
    let rows: [EdgeRow<'_>; 9] = [
        (&[1.0, nan, 3.0], None, 1, 0),
        (&[1.0, inf, 3.0], None, 1, 0),
        (&[1.0, inf, inf], None, 1, 0),
        (&[-inf, -inf, -inf], None, 0, 0),
        (&[-inf, 0.0, -inf], Some(&[0.0, 1.0, 0.0]), 1, 1),
        (&[inf, inf, 1.0], None, 0, 0),
        (&[nan, nan, nan], None, 0, 0),
        (
            &[1.0, 2.0, 2.0],
            Some(&[
                0.155_362_412_333_488_46,
                0.422_318_816_184_997_56,
                0.422_318_816_184_997_56,
            ]),
            1,
            1,
        ),
        (&[-inf, 1.0, nan], None, 2, 0),
    ];
    each_isa(|isa| {
        for (row, probs, label, softmax_label) in rows {
            for reps in [1, 5] {
                let x = row.repeat(reps);
                let n = x.len();
                let mut p = vec![0.0; n];
                softmax_rows(&x, 1, n, &mut p).unwrap();
                match probs {
                    // None: torch gives all NaN.
                    None => assert!(p.iter().all(|v| v.is_nan()), "{isa:?} {row:?}: {p:?}"),
                    Some(want) if reps == 1 => {
                        for (&g, &w) in p.iter().zip(want) {
                            assert!(close(g, f64::from(w), 1e-6, 1e-7), "{isa:?} {row:?}: {p:?}");
                        }
                    }
                    Some(_) => {}
                }
                let mut lp = vec![0.0; n];
                log_softmax_rows(&x, 1, n, &mut lp).unwrap();
                if probs.is_none() {
                    assert!(lp.iter().all(|v| v.is_nan()), "{isa:?} {row:?}: {lp:?}");
                }
                let (mut a, mut b) = ([0i64], [0i64]);
                argmax_rows(&x, 1, n, &mut a).unwrap();
                softmax_argmax_rows(&x, 1, n, &mut b).unwrap();
                assert_eq!(
                    (a[0], b[0]),
                    (label, softmax_label),
                    "{isa:?} {row:?} x{reps}"
                );
            }
        }
        // [-inf, 0, -inf]: log_softmax keeps the -inf entries.
        let mut lp = [0.0; 3];
        log_softmax_rows(&[-inf, 0.0, -inf], 1, 3, &mut lp).unwrap();
        assert_eq!(lp, [-inf, 0.0, -inf], "{isa:?}");
        // Equal probabilities from distinct inputs: torch.argmax(F.softmax([[0, 1e-8, 0]])) = 0
        // while torch.argmax([[0, 1e-8, 0]]) = 1.
        let (mut a, mut b) = ([0i64], [0i64]);
        argmax_rows(&[0.0, 1e-8, 0.0], 1, 3, &mut a).unwrap();
        softmax_argmax_rows(&[0.0, 1e-8, 0.0], 1, 3, &mut b).unwrap();
        assert_eq!((a[0], b[0]), (1, 0), "{isa:?}");
        // amax/amin of NaN rows; argmax over columns with NaN (torch.argmax(x, 0) == [1, 0]).
        let mut v = [0.0; 1];
        amax_rows(&[1.0, nan, 3.0], 1, 3, &mut v).unwrap();
        assert!(v[0].is_nan());
        amin_rows(&[1.0, inf, 3.0], 1, 3, &mut v).unwrap();
        assert_eq!(v[0], 1.0);
        let x = [1.0, nan, nan, 2.0, 3.0, 2.0];
        let mut idx = [0i64; 2];
        argmax_cols(&x, 3, 2, &mut idx).unwrap();
        assert_eq!(idx, [1, 0], "{isa:?}");
        let mut s = [0.0; 6];
        softmax_cols(&x, 3, 2, &mut s).unwrap();
        assert!(s.iter().all(|v| v.is_nan()), "{isa:?} {s:?}");
        // torch.mean([[1., 2., 4.]], 1) == 2.3333332538604736
        mean_rows(&[1.0, 2.0, 4.0], 1, 3, &mut v).unwrap();
        assert_eq!(v[0], 2.333_333_253_860_473_6);
    });
}

#[test]
fn empty_reductions_follow_torch() {
    // torch: amax/amin/argmax error iff the reduced dim is 0 (also for a 0x0 input); sum gives
    // 0 and mean NaN there; softmax of an empty shape is empty.
    let mut f = [0.0f32; 3];
    let mut i = [0i64; 3];
    sum_rows(&[], 2, 0, &mut f[..2]).unwrap();
    assert_eq!(f[..2], [0.0, 0.0]);
    mean_rows(&[], 2, 0, &mut f[..2]).unwrap();
    assert!(f[..2].iter().all(|v| v.is_nan()));
    sum_cols(&[], 0, 3, &mut f).unwrap();
    assert_eq!(f, [0.0; 3]);
    mean_cols(&[], 0, 3, &mut f).unwrap();
    assert!(f.iter().all(|v| v.is_nan()));
    for r in [
        amax_rows(&[], 2, 0, &mut f[..2]),
        amin_rows(&[], 0, 0, &mut []),
        amax_cols(&[], 0, 3, &mut f),
        amin_cols(&[], 0, 3, &mut f),
    ] {
        assert!(
            matches!(r, Err(KernelError::EmptyReduction { .. })),
            "{r:?}"
        );
    }
    for r in [
        argmax_rows(&[], 2, 0, &mut i[..2]),
        argmax_rows(&[], 0, 0, &mut []),
        argmax_cols(&[], 0, 3, &mut i),
        softmax_argmax_rows(&[], 2, 0, &mut i[..2]),
    ] {
        assert!(
            matches!(r, Err(KernelError::EmptyReduction { .. })),
            "{r:?}"
        );
    }
    amax_rows(&[], 0, 3, &mut []).unwrap();
    argmax_cols(&[], 2, 0, &mut []).unwrap();
    softmax_rows(&[], 2, 0, &mut []).unwrap();
    softmax_cols(&[], 0, 3, &mut []).unwrap();
    log_softmax_rows(&[], 0, 0, &mut []).unwrap();
}

#[test]
fn reduction_lengths_are_checked() {
    let x = [1.0f32; 6];
    let mut f = [0.0f32; 6];
    let mut i = [0i64; 6];
    assert!(sum_rows(&x[..5], 2, 3, &mut f[..2]).is_err());
    assert!(sum_rows(&x, 2, 3, &mut f[..3]).is_err());
    assert!(sum_cols(&x, 2, 3, &mut f[..2]).is_err());
    assert!(softmax_rows(&x, 2, 3, &mut f[..5]).is_err());
    assert!(log_softmax_cols(&x, 3, 2, &mut f[..5]).is_err());
    assert!(argmax_rows(&x, 2, 3, &mut i[..3]).is_err());
    assert!(argmax_cols(&x, 2, 3, &mut i[..2]).is_err());
    assert!(softmax_argmax_rows(&x, 3, 2, &mut i[..2]).is_err());
    assert_eq!(
        amax_rows(&x, usize::MAX, 2, &mut f),
        Err(KernelError::Overflow)
    );
}

/// LayerNorm rows against an f64 reference: every ISA, with and without the affine vectors, at
/// widths around the vector lengths; rows holding NaN or ±inf are all NaN, as in torch.
#[test]
fn layer_norm_rows_match_the_f64_reference() {
    let reference = |row: &[f32], w: Option<&[f32]>, b: Option<&[f32]>, eps: f64| -> Vec<f64> {
        let n = row.len() as f64;
        let mean = row.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
        let var = row
            .iter()
            .map(|&v| (f64::from(v) - mean).powi(2))
            .sum::<f64>()
            / n;
        let rstd = 1.0 / (var + eps).sqrt();
        row.iter()
            .enumerate()
            .map(|(i, &v)| {
                let y = (f64::from(v) - mean) * rstd;
                let y = w.map_or(y, |w| y * f64::from(w[i]));
                b.map_or(y, |b| y + f64::from(b[i]))
            })
            .collect()
    };
    for n in [1usize, 3, 7, 8, 15, 16, 17, 33, 48, 96] {
        let m = 3;
        let x: Vec<f32> = (0..m * n)
            .map(|i| ((i * 37 % 23) as f32 - 11.0) * 0.37)
            .collect();
        let w: Vec<f32> = (0..n).map(|i| 0.5 + (i % 5) as f32 * 0.25).collect();
        let b: Vec<f32> = (0..n).map(|i| (i % 3) as f32 - 1.0).collect();
        each_isa(|isa| {
            for (wo, bo) in [
                (None, None),
                (Some(&w[..]), Some(&b[..])),
                (Some(&w[..]), None),
            ] {
                let mut out = vec![0.0f32; m * n];
                layer_norm_rows(&x, m, n, wo, bo, 1e-5, &mut out).unwrap();
                for (r, row) in x.chunks(n).enumerate() {
                    let want = reference(row, wo, bo, 1e-5);
                    for (j, &g) in out[r * n..(r + 1) * n].iter().enumerate() {
                        assert!(
                            close(g, want[j], 1e-5, 1e-5),
                            "{isa:?} n={n} row {r}[{j}]: {g} vs {}",
                            want[j]
                        );
                    }
                }
            }
            // Row 0 holds a NaN, row 1 a +inf: both all NaN; row 2 untouched.
            let mut special = x.clone();
            special[(n - 1).min(1)] = f32::NAN;
            special[n] = f32::INFINITY;
            let mut out = vec![0.0f32; m * n];
            layer_norm_rows(&special, m, n, Some(&w), Some(&b), 1e-5, &mut out).unwrap();
            assert!(
                out[..2 * n].iter().all(|v| v.is_nan()),
                "{isa:?} n={n}: NaN/inf rows are all NaN"
            );
            assert!(
                out[2 * n..].iter().all(|v| v.is_finite()),
                "{isa:?} n={n}: other rows stay finite"
            );
        });
    }
    assert!(layer_norm_rows(&[0.0; 6], 2, 3, Some(&[1.0; 2]), None, 1e-5, &mut [0.0; 6]).is_err());
}

/// An `m×n` layer-norm input of spread values, with a weight and a bias of `n` elements.
fn layer_norm_case(m: usize, n: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let x = (0..m * n)
        .map(|i| ((i * 7919 % 1013) as f32 - 500.0) * 0.013)
        .collect();
    let w = (0..n).map(|i| 0.5 + (i % 7) as f32 * 0.1).collect();
    let b = (0..n).map(|i| (i % 3) as f32 * 0.2).collect();
    (x, w, b)
}

/// Rows are normalised in blocks, each step over the whole block: every row of an `m`-row call
/// (full blocks, a partial last one, the last few rows each alone) has the bits it has alone,
/// with the affine vectors or not.
#[test]
fn layer_norm_rows_do_not_depend_on_their_block() {
    for n in [1usize, 5, 16, 48, 97] {
        let m = 21;
        let (x, w, b) = layer_norm_case(m, n);
        each_isa(|isa| {
            for (wo, bo) in [(None, None), (Some(&w[..]), Some(&b[..]))] {
                let norm = |rows: &[f32]| {
                    let mut out = vec![f32::NAN; rows.len()];
                    layer_norm_rows(rows, rows.len() / n, n, wo, bo, 1e-5, &mut out).unwrap();
                    out.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
                };
                for len in [1, 3, 4, 7, 8, 9, 11, 16, 21] {
                    let all = norm(&x[..len * n]);
                    for r in 0..len {
                        assert_eq!(
                            &all[r * n..(r + 1) * n],
                            &norm(&x[r * n..(r + 1) * n])[..],
                            "{isa:?} n={n}: row {r} of {len}"
                        );
                    }
                }
            }
        });
    }
}

/// The checked layer norm answers the plain one's bits when every element is finite and within
/// the limit (the limit itself included), and `false` when any one element, anywhere (a full
/// vector, a ragged tail, the last short block of rows), is NaN, infinite or beyond it.
#[test]
fn layer_norm_rows_within_checks_every_element() {
    let limit = 4294967296.0f32;
    for n in [1usize, 5, 8, 48, 53] {
        for m in [1usize, 3, 8, 11] {
            let (x, w, b) = layer_norm_case(m, n);
            each_isa(|isa| {
                let plain = |x: &[f32]| {
                    let mut out = vec![f32::NAN; x.len()];
                    layer_norm_rows(x, m, n, Some(&w), Some(&b), 1e-5, &mut out).unwrap();
                    out.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
                };
                let checked = |x: &[f32]| {
                    let mut out = vec![f32::NAN; x.len()];
                    let ok =
                        layer_norm_rows_within(x, m, n, Some(&w), Some(&b), 1e-5, limit, &mut out)
                            .unwrap();
                    (ok, out.iter().map(|v| v.to_bits()).collect::<Vec<_>>())
                };
                assert_eq!(checked(&x), (true, plain(&x)), "{isa:?} {m}x{n}");
                for at in [0, m * n / 2, m * n - 1] {
                    let mut edge = x.clone();
                    edge[at] = -limit;
                    assert_eq!(
                        checked(&edge),
                        (true, plain(&edge)),
                        "{isa:?} {m}x{n} at {at}"
                    );
                    for v in [
                        f32::NAN,
                        f32::INFINITY,
                        f32::NEG_INFINITY,
                        limit * 2.0,
                        -1e38,
                    ] {
                        let mut bad = x.clone();
                        bad[at] = v;
                        assert!(!checked(&bad).0, "{isa:?} {m}x{n}: {v} at {at}");
                    }
                }
            });
        }
    }
    assert_eq!(
        layer_norm_rows_within(&[], 0, 4, None, None, 1e-5, 1.0, &mut []),
        Ok(true)
    );
}

/// The feature-major layer norm: each column of an `m×n` matrix normalised over its `m` rows,
/// against the f64 reference of that column, with and without the affine vectors (one element
/// per row), over batch widths that fill groups of vectors, single vectors and a ragged one.
/// Columns holding NaN or ±inf are all NaN; every column has the bits it has alone; the
/// checked form answers the plain one's bits, or `false` for any element outside its domain.
#[test]
fn layer_norm_cols_is_layer_norm_rows_of_the_transpose() {
    let limit = 4294967296.0f32;
    for m in [1usize, 3, 8, 17, 48, 96] {
        for n in [1usize, 5, 8, 16, 17, 40, 64, 70] {
            let (x, _, _) = layer_norm_case(m, n);
            // One weight and bias element per row (feature).
            let (_, w, b) = layer_norm_case(1, m);
            each_isa(|isa| {
                for (wo, bo) in [
                    (None, None),
                    (Some(&w[..]), Some(&b[..])),
                    (Some(&w[..]), None),
                ] {
                    let mut out = vec![f32::NAN; m * n];
                    layer_norm_cols(&x, m, n, wo, bo, 1e-5, &mut out).unwrap();
                    for c in 0..n {
                        let col: Vec<f32> = (0..m).map(|r| x[r * n + c]).collect();
                        let mut want = vec![0.0; m];
                        layer_norm_rows(&col, 1, m, wo, bo, 1e-5, &mut want).unwrap();
                        for r in 0..m {
                            let g = out[r * n + c];
                            assert!(
                                close(g, f64::from(want[r]), 2e-6, 2e-6),
                                "{isa:?} {m}x{n} [{r}, {c}]: {g} vs {}",
                                want[r]
                            );
                        }
                        let mut alone = vec![0.0; m];
                        layer_norm_cols(&col, m, 1, wo, bo, 1e-5, &mut alone).unwrap();
                        let got: Vec<u32> = (0..m).map(|r| out[r * n + c].to_bits()).collect();
                        let alone: Vec<u32> = alone.iter().map(|v| v.to_bits()).collect();
                        assert_eq!(got, alone, "{isa:?} {m}x{n}: column {c} alone");
                    }
                }
                let plain = |x: &[f32]| {
                    let mut out = vec![f32::NAN; x.len()];
                    layer_norm_cols(x, m, n, Some(&w), Some(&b), 1e-5, &mut out).unwrap();
                    out.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
                };
                let checked = |x: &[f32]| {
                    let mut out = vec![f32::NAN; x.len()];
                    let ok =
                        layer_norm_cols_within(x, m, n, Some(&w), Some(&b), 1e-5, limit, &mut out)
                            .unwrap();
                    (ok, out.iter().map(|v| v.to_bits()).collect::<Vec<_>>())
                };
                assert_eq!(checked(&x), (true, plain(&x)), "{isa:?} {m}x{n}");
                for at in [0, m * n / 2, m * n - 1] {
                    let mut edge = x.clone();
                    edge[at] = -limit;
                    assert_eq!(checked(&edge), (true, plain(&edge)), "{isa:?} {m}x{n} {at}");
                    for v in [
                        f32::NAN,
                        f32::INFINITY,
                        f32::NEG_INFINITY,
                        limit * 2.0,
                        -1e38,
                    ] {
                        let mut bad = x.clone();
                        bad[at] = v;
                        assert!(!checked(&bad).0, "{isa:?} {m}x{n}: {v} at {at}");
                        if v.is_nan() || v.is_infinite() {
                            let out = plain(&bad);
                            let c = at % n;
                            for r in 0..m {
                                assert!(
                                    f32::from_bits(out[r * n + c]).is_nan(),
                                    "{isa:?} {m}x{n}: column {c} with {v} is NaN"
                                );
                            }
                            if n > 1 {
                                let other = (c + 1) % n;
                                assert!(f32::from_bits(out[other]).is_finite());
                            }
                        }
                    }
                }
            });
        }
    }
    assert!(layer_norm_cols(&[0.0; 6], 2, 3, Some(&[1.0; 3]), None, 1e-5, &mut [0.0; 6]).is_err());
    assert_eq!(
        layer_norm_cols_within(&[], 0, 4, None, None, 1e-5, 1.0, &mut []),
        Ok(true)
    );
}
