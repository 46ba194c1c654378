//! `linear` and `matmul` against an f64 reference, on random shapes around the block sizes.

use proptest::collection::vec;
use proptest::prelude::*;

use super::super::gemm::{DOT_MAX_M, EPILOGUE_WHOLE_FLOATS};
use super::super::{
    linear, linear_cols, linear_fused, linear_packed, matmul, transpose, unary_inplace, Epilogue,
    GeluEdges, KernelError, PackedWeight,
};
use super::{each_isa, erf_f64, same};

/// `act(v)` in f64, and a bound on how much `act` can move an error in `v` (its Lipschitz
/// constant).
fn act(e: Epilogue, v: f64) -> (f64, f64) {
    match e {
        Epilogue::None => (v, 1.0),
        Epilogue::Relu => (v.max(0.0), 1.0),
        Epilogue::Tanh => (v.tanh(), 1.0),
        Epilogue::Sigmoid => (1.0 / (1.0 + (-v).exp()), 0.25),
        Epilogue::Gelu(_) => (
            0.5 * v * (1.0 + erf_f64(v / std::f64::consts::SQRT_2)),
            1.13,
        ),
        Epilogue::Silu => (v / (1.0 + (-v).exp()), 1.1),
    }
}

/// Checks `out` (`m×n`) against `Σ_p a(i, p)·b(p, j) + bias[j]` then `e`, allowing the dot
/// product's rounding bound `(k + 2)·2⁻²³·(Σ|a·b| + |bias|)` plus the epilogue's own error.
#[allow(clippy::too_many_arguments)]
fn check_product(
    what: &str,
    out: &[f32],
    m: usize,
    k: usize,
    n: usize,
    a: impl Fn(usize, usize) -> f32,
    b: impl Fn(usize, usize) -> f32,
    bias: Option<&[f32]>,
    e: Epilogue,
) {
    for i in 0..m {
        for j in 0..n {
            let mut sum = 0.0f64;
            let mut mag = 0.0f64;
            for p in 0..k {
                let t = f64::from(a(i, p)) * f64::from(b(p, j));
                sum += t;
                mag += t.abs();
            }
            if let Some(bias) = bias {
                sum += f64::from(bias[j]);
                mag += f64::from(bias[j]).abs();
            }
            let (want, lip) = act(e, sum);
            let bound = lip * (k as f64 + 2.0) * f64::from(f32::EPSILON) * mag
                + 3.0e-7 * want.abs().max(1.0)
                + 1e-30;
            let got = f64::from(out[i * n + j]);
            assert!(
                (got - want).abs() <= bound,
                "{what} {e:?} ({i}, {j}) of {m}x{k}x{n}: {got:e}, want {want:e} (bound {bound:e})"
            );
        }
    }
}

fn shape() -> impl Strategy<Value = (usize, usize, usize)> {
    // m crosses the dot-product cut-off (4) and the row blocks (6, 12); k and n cross 4, 8, 16
    // and 32 lanes.
    (0usize..=27, 0usize..=41, 0usize..=37)
}

proptest! {
    #![proptest_config(ProptestConfig {
        // No regression files outside src/kernels; failures print their inputs.
        failure_persistence: None,
        ..ProptestConfig::with_cases(48)
    })]

    #[test]
    fn linear_matches_f64(
        (m, k, n) in shape(),
        data in vec(-2.0f32..2.0, 27 * 41 + 37 * 41 + 37),
        with_bias in any::<bool>(),
        e in prop::sample::select(Epilogue::ALL.to_vec()),
    ) {
        let x = &data[..m * k];
        let w = &data[27 * 41..27 * 41 + n * k];
        let bias = with_bias.then(|| &data[27 * 41 + 37 * 41..27 * 41 + 37 * 41 + n]);
        each_isa(|isa| {
            let mut out = vec![f32::NAN; m * n];
            linear_fused(x, m, k, w, n, bias, e, &mut out).unwrap();
            check_product(
                &format!("{isa:?} linear"),
                &out, m, k, n,
                |i, p| x[i * k + p],
                |p, j| w[j * k + p],
                bias, e,
            );
            // The packed weight: the same bound, and the same bits where `linear` packs too.
            let pw = PackedWeight::new(w, n, k).unwrap();
            assert_eq!((pw.n(), pw.k()), (n, k));
            let mut packed = vec![f32::NAN; m * n];
            linear_packed(x, m, &pw, bias, e, &mut packed).unwrap();
            check_product(
                &format!("{isa:?} linear_packed"),
                &packed, m, k, n,
                |i, p| x[i * k + p],
                |p, j| w[j * k + p],
                bias, e,
            );
            if m >= DOT_MAX_M {
                assert_eq!(
                    packed.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    out.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
                );
            }
            if e == Epilogue::None {
                let mut plain = vec![0.0; m * n];
                linear(x, m, k, w, n, bias, &mut plain).unwrap();
                assert_eq!(
                    plain.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    out.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
                );
            }
        });
    }

    #[test]
    fn matmul_matches_f64(
        (m, k, n) in shape(),
        data in vec(-2.0f32..2.0, 27 * 41 + 41 * 37),
    ) {
        let a = &data[..m * k];
        let b = &data[27 * 41..27 * 41 + k * n];
        each_isa(|isa| {
            let mut out = vec![f32::NAN; m * n];
            matmul(a, m, k, b, n, &mut out).unwrap();
            check_product(
                &format!("{isa:?} matmul"),
                &out, m, k, n,
                |i, p| a[i * k + p],
                |p, j| b[p * n + j],
                None, Epilogue::None,
            );
        });
    }
}

/// Deterministic pseudo-random values in `[-1, 1)`.
fn values(len: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}

#[test]
fn larger_products_match_f64() {
    for (m, k, n) in [(128, 32, 32), (37, 300, 70), (5, 1000, 3), (200, 7, 129)] {
        let x = values(m * k, 1);
        let w = values(n * k, 2);
        let bias = values(n, 3);
        each_isa(|isa| {
            let mut out = vec![0.0; m * n];
            linear_fused(&x, m, k, &w, n, Some(&bias), Epilogue::Tanh, &mut out).unwrap();
            check_product(
                &format!("{isa:?} linear"),
                &out,
                m,
                k,
                n,
                |i, p| x[i * k + p],
                |p, j| w[j * k + p],
                Some(&bias),
                Epilogue::Tanh,
            );
            let pw = PackedWeight::new(&w, n, k).unwrap();
            let mut out = vec![0.0; m * n];
            linear_packed(
                &x,
                m,
                &pw,
                Some(&bias),
                Epilogue::Gelu(GeluEdges::SUM_FORM),
                &mut out,
            )
            .unwrap();
            check_product(
                &format!("{isa:?} linear_packed"),
                &out,
                m,
                k,
                n,
                |i, p| x[i * k + p],
                |p, j| w[j * k + p],
                Some(&bias),
                Epilogue::Gelu(GeluEdges::SUM_FORM),
            );
            // `w` read as a `k×n` matrix.
            let mut out = vec![0.0; m * n];
            matmul(&x, m, k, &w, n, &mut out).unwrap();
            check_product(
                &format!("{isa:?} matmul"),
                &out,
                m,
                k,
                n,
                |i, p| x[i * k + p],
                |p, j| w[p * n + j],
                None,
                Epilogue::None,
            );
        });
    }
}

#[test]
fn non_finite_values_propagate_like_torch() {
    // F.linear(torch.tensor([[inf, 1.]]), torch.eye(2)) == [[inf, nan]] (inf·0 = NaN).
    let inf = f32::INFINITY;
    let w = [1.0, 0.0, 0.0, 1.0];
    each_isa(|isa| {
        for m in [1, 8, 13] {
            let x: Vec<f32> = [inf, 1.0].repeat(m);
            let mut out = vec![0.0; 2 * m];
            linear(&x, m, 2, &w, 2, None, &mut out).unwrap();
            for row in out.chunks(2) {
                assert!(row[0] == inf && row[1].is_nan(), "{isa:?} m={m}: {row:?}");
            }
            let mut out = vec![0.0; 2 * m];
            matmul(&x, m, 2, &w, 2, &mut out).unwrap();
            for row in out.chunks(2) {
                assert!(row[0] == inf && row[1].is_nan(), "{isa:?} m={m}: {row:?}");
            }
            // NaN poisons every output of its row (NaN·0 = NaN); relu keeps NaN.
            let x: Vec<f32> = [f32::NAN, f32::NEG_INFINITY].repeat(m);
            let w = [1.0, 0.0, 0.0, 1.0];
            let mut out = vec![0.0; 2 * m];
            linear_fused(&x, m, 2, &w, 2, None, Epilogue::Relu, &mut out).unwrap();
            for row in out.chunks(2) {
                assert!(row[0].is_nan() && same(row[1], f32::NAN), "{isa:?} {row:?}");
            }
            let x: Vec<f32> = [-1.0, 0.0].repeat(m);
            let mut out = vec![0.0; 2 * m];
            linear_fused(&x, m, 2, &w, 2, None, Epilogue::Relu, &mut out).unwrap();
            for row in out.chunks(2) {
                assert!(same(row[0], 0.0) && row[1] == 0.0, "{isa:?} {row:?}");
            }
        }
    });
}

#[test]
fn empty_inner_dimension_gives_the_bias() {
    let bias = [1.0, -2.0, 0.5];
    each_isa(|isa| {
        for m in [1, 7] {
            let mut out = vec![f32::NAN; m * 3];
            linear_fused(&[], m, 0, &[], 3, Some(&bias), Epilogue::Relu, &mut out).unwrap();
            for row in out.chunks(3) {
                assert_eq!(row, [1.0, 0.0, 0.5], "{isa:?}");
            }
            let mut out = vec![f32::NAN; m * 3];
            matmul(&[], m, 0, &[], 3, &mut out).unwrap();
            assert!(out.iter().all(|&v| v == 0.0), "{isa:?}");
        }
    });
}

#[test]
fn product_lengths_are_checked() {
    let a = [1.0f32; 12];
    let mut out = [0.0f32; 12];
    let err = |what| KernelError::Length {
        what,
        expected: 0,
        actual: 0,
    };
    let what = |r: Result<(), KernelError>| match r {
        Err(KernelError::Length { what, .. }) => err(what),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        what(linear(&a[..5], 2, 3, &a[..6], 2, None, &mut out[..4])),
        err("x")
    );
    assert_eq!(
        what(linear(&a[..6], 2, 3, &a[..5], 2, None, &mut out[..4])),
        err("w")
    );
    assert_eq!(
        what(linear(&a[..6], 2, 3, &a[..6], 2, None, &mut out[..5])),
        err("out")
    );
    assert_eq!(
        what(linear(
            &a[..6],
            2,
            3,
            &a[..6],
            2,
            Some(&a[..3]),
            &mut out[..4]
        )),
        err("bias")
    );
    assert_eq!(
        what(matmul(&a[..6], 2, 3, &a[..5], 2, &mut out[..4])),
        err("b")
    );
    assert_eq!(what(PackedWeight::new(&a[..5], 2, 3).map(|_| ())), err("w"));
    let pw = PackedWeight::new(&a[..6], 2, 3).unwrap();
    let none = Epilogue::None;
    assert_eq!(
        what(linear_packed(&a[..5], 2, &pw, None, none, &mut out[..4])),
        err("x")
    );
    assert_eq!(
        what(linear_packed(&a[..6], 2, &pw, None, none, &mut out[..5])),
        err("out")
    );
    assert_eq!(
        matmul(&a, usize::MAX, 2, &a, 2, &mut out),
        Err(KernelError::Overflow)
    );
}

/// Whether `linear` (which may serve `w` from the thread's pack cache) gives bitwise the product
/// of `w` packed afresh.
fn cached_matches_fresh(
    x: &[f32],
    m: usize,
    k: usize,
    w: &[f32],
    n: usize,
    bias: Option<&[f32]>,
) -> bool {
    let mut out = vec![0.0; m * n];
    linear(x, m, k, w, n, bias, &mut out).unwrap();
    let mut fresh = vec![0.0; m * n];
    let pw = PackedWeight::new(w, n, k).unwrap();
    linear_packed(x, m, &pw, bias, Epilogue::None, &mut fresh).unwrap();
    out.len() == fresh.len() && out.iter().zip(&fresh).all(|(&a, &b)| same(a, b))
}

#[test]
fn a_weight_changed_in_place_is_never_served_from_a_stale_pack() {
    // From `DOT_MAX_M` rows `linear` keeps each weight packed per thread, by address. Writing
    // the same buffer (as `w.data.copy_(...)` or a NumPy view would, with no version bump), or
    // reusing the address for a weight of another shape, must give the new weight's product.
    let (m, k, n) = (DOT_MAX_M + 3, 24, 40);
    let x = values(m * k, 11);
    let mut w = values(n * k, 12);
    let bias = values(n, 13);
    each_isa(|isa| {
        for round in 0..4u64 {
            if round > 0 {
                // Same address and shape, new contents (one element only in round 2).
                if round == 2 {
                    w[k + 3] = -w[k + 3] - 0.5;
                } else {
                    w.copy_from_slice(&values(n * k, 20 + round));
                }
            }
            assert!(
                cached_matches_fresh(&x, m, k, &w, n, Some(&bias)),
                "{isa:?} round {round}: a stale pack was used"
            );
        }
        // The same buffer read as a weight of another shape.
        let (k2, n2) = (k * 2, n / 2);
        let x2 = values(m * k2, 14);
        assert!(
            cached_matches_fresh(&x2, m, k2, &w, n2, None),
            "{isa:?}: a pack of another shape was used"
        );
        // NaN bits are compared exactly too (NaN != NaN as floats).
        w[0] = f32::NAN;
        let mut out = vec![0.0; m * n];
        linear(&x, m, k, &w, n, None, &mut out).unwrap();
        w[0] = 1.0;
        assert!(
            cached_matches_fresh(&x, m, k, &w, n, None),
            "{isa:?}: a NaN weight's pack was reused"
        );
    });
}

/// Below `DOT_MAX_M` rows a last odd row goes through its own one-row tile: each of its outputs
/// is summed in the same order as in a two-row tile, so a row's result does not depend on how
/// many rows it came with (the same bits alone, in a pair, or last of three).
#[test]
fn a_rows_dot_products_do_not_depend_on_the_rows_beside_it() {
    let data: Vec<f32> = (0..8192u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 8) as f32 / 16_777_216.0 * 4.0 - 2.0)
        .collect();
    for (k, n) in [
        (1, 1),
        (7, 5),
        (16, 8),
        (20, 48),
        (33, 9),
        (48, 96),
        (96, 48),
        (17, 31),
    ] {
        let w = &data[..n * k];
        let bias = &data[5000..5000 + n];
        let rows = &data[6000..6000 + 3 * k];
        each_isa(|isa| {
            let lin = |m: usize, x: &[f32]| {
                let mut out = vec![f32::NAN; m * n];
                linear_fused(x, m, k, w, n, Some(bias), Epilogue::Tanh, &mut out).unwrap();
                out.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            };
            let three = lin(3, rows);
            let pair = lin(2, &rows[k..3 * k]);
            let alone = lin(1, &rows[2 * k..3 * k]);
            assert_eq!(
                &three[2 * n..],
                &alone[..],
                "{isa:?} ({k}, {n}): last of three vs alone"
            );
            assert_eq!(
                &pair[n..],
                &alone[..],
                "{isa:?} ({k}, {n}): second of a pair vs alone"
            );
            assert_eq!(
                &three[n..2 * n],
                &pair[..n],
                "{isa:?} ({k}, {n}): middle of three vs pair"
            );
        });
    }
}

/// From `DOT_MAX_M` rows every output of the packed product is one chain of multiply-adds over
/// `k` in order, whichever register block (12 or 24 rows, 8, 4, the exact tails, one) computes
/// its row, and the epilogue runs over whole rows or strips alike: row `i` of an `m`-row
/// product has the bits it has as the first row of a `DOT_MAX_M`-row product.
#[test]
fn packed_rows_do_not_depend_on_their_block() {
    let data = values(1 << 14, 7);
    for (k, n) in [(3, 5), (96, 48), (48, 96), (20, 16), (33, 40), (7, 129)] {
        let w = &data[..n * k];
        let bias = &data[8000..8000 + n];
        let x = &data[9000..9000 + 45 * k];
        for e in [Epilogue::None, Epilogue::Gelu(GeluEdges::PRODUCT_FORM)] {
            each_isa(|isa| {
                let lin = |m: usize, x: &[f32]| {
                    let mut out = vec![f32::NAN; m * n];
                    linear_fused(x, m, k, w, n, Some(bias), e, &mut out).unwrap();
                    out.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
                };
                for m in [DOT_MAX_M, 8, 12, 13, 16, 21, 28, 40] {
                    let all = lin(m, &x[..m * k]);
                    for i in 0..m {
                        let rows = &x[i * k..(i + DOT_MAX_M) * k];
                        assert_eq!(
                            &all[i * n..(i + 1) * n],
                            &lin(DOT_MAX_M, rows)[..n],
                            "{isa:?} {e:?} ({k}, {n}): row {i} of {m}"
                        );
                    }
                }
            });
        }
    }
}

/// The activation is elementwise wherever it runs: a product with an epilogue has the bits of
/// the same product without one and the activation applied afterwards, both for an output small
/// enough to take the activation in one pass at the end and for a larger one, which takes it
/// strip by strip (`EPILOGUE_WHOLE_FLOATS`), packed or not. Values span GELU's and tanh's
/// special forms (the GELU tail below -3, its limit, saturation).
#[test]
fn an_epilogue_is_its_activation_applied_to_the_product() {
    let shapes = [(40, 9, 33), (300, 5, 250)];
    assert!(shapes[0].0 * shapes[0].2 <= EPILOGUE_WHOLE_FLOATS);
    assert!(shapes[1].0 * shapes[1].2 > EPILOGUE_WHOLE_FLOATS);
    for (m, k, n) in shapes {
        let x: Vec<f32> = (0..m * k)
            .map(|i| ((i * 37) % 101) as f32 / 8.0 - 6.0)
            .collect();
        let w: Vec<f32> = (0..n * k)
            .map(|i| ((i * 53) % 89) as f32 / 60.0 - 0.7)
            .collect();
        let bias: Vec<f32> = (0..n).map(|j| (j % 7) as f32 - 3.0).collect();
        let pw = PackedWeight::new(&w, n, k).unwrap();
        each_isa(|isa| {
            for e in Epilogue::ALL {
                let mut plain = vec![f32::NAN; m * n];
                linear_packed(&x, m, &pw, Some(&bias), Epilogue::None, &mut plain).unwrap();
                if let Some(op) = e.unary() {
                    unary_inplace(op, &mut plain);
                }
                let bits = |v: &[f32]| v.iter().map(|y| y.to_bits()).collect::<Vec<_>>();
                let mut packed = vec![f32::NAN; m * n];
                linear_packed(&x, m, &pw, Some(&bias), e, &mut packed).unwrap();
                assert_eq!(
                    bits(&packed),
                    bits(&plain),
                    "{isa:?} {e:?} packed ({m}, {k}, {n})"
                );
                let mut fused = vec![f32::NAN; m * n];
                linear_fused(&x, m, k, &w, n, Some(&bias), e, &mut fused).unwrap();
                assert_eq!(
                    bits(&fused),
                    bits(&plain),
                    "{isa:?} {e:?} linear ({m}, {k}, {n})"
                );
            }
        });
    }
}

/// The feature-major product is the row-major one transposed, bit for bit, from `DOT_MAX_M`
/// rows up: the same fused multiply-adds in the same order, on whole and ragged tiles of both
/// the batch columns and the weight rows, with and without bias, for every epilogue.
#[test]
fn the_feature_major_product_is_the_packed_one_transposed_bit_for_bit() {
    let bits = |v: &[f32]| v.iter().map(|y| y.to_bits()).collect::<Vec<_>>();
    let mut shapes = Vec::new();
    for m in [DOT_MAX_M, 7, 8, 9, 15, 16, 17, 31, 32, 33, 40, 64, 100, 128] {
        for (k, n) in [
            (1, 1),
            (3, 5),
            (17, 7),
            (48, 96),
            (96, 48),
            (20, 13),
            (5, 33),
        ] {
            shapes.push((m, k, n));
        }
    }
    for (case, &(m, k, n)) in shapes.iter().enumerate() {
        let x = values(m * k, 11 + case as u64);
        let w = values(n * k, 12 + case as u64);
        let bias = values(n, 13 + case as u64);
        let mut xt = vec![0.0; m * k];
        transpose(&x, m, k, &mut xt).unwrap();
        let es = if case % 3 == 0 {
            &Epilogue::ALL[..]
        } else {
            &Epilogue::ALL[case % 6..case % 6 + 1]
        };
        each_isa(|isa| {
            for &e in es {
                for b in [Some(&bias[..]), None] {
                    let mut rows = vec![f32::NAN; m * n];
                    linear_fused(&x, m, k, &w, n, b, e, &mut rows).unwrap();
                    let mut want = vec![f32::NAN; m * n];
                    transpose(&rows, m, n, &mut want).unwrap();
                    let mut got = vec![f32::NAN; m * n];
                    linear_cols(&xt, k, m, &w, n, b, e, &mut got).unwrap();
                    assert_eq!(
                        bits(&got),
                        bits(&want),
                        "{isa:?} {e:?} bias {} ({m}, {k}, {n})",
                        b.is_some()
                    );
                }
            }
        });
    }
}

#[test]
fn the_feature_major_product_of_an_empty_sum_is_the_bias_and_checks_its_lengths() {
    each_isa(|isa| {
        let mut out = vec![f32::NAN; 6 * 3];
        linear_cols(
            &[],
            0,
            6,
            &[],
            3,
            Some(&[1.0, -2.0, 0.5]),
            Epilogue::Relu,
            &mut out,
        )
        .unwrap();
        let want: Vec<f32> = [1.0, 0.0, 0.5].iter().flat_map(|&v| [v; 6]).collect();
        assert_eq!(out, want, "{isa:?}");
    });
    let (x, w, mut out) = (vec![0.0; 12], vec![0.0; 8], vec![0.0; 6]);
    let e = Epilogue::None;
    assert!(matches!(
        linear_cols(&x, 4, 3, &w[..7], 2, None, e, &mut out),
        Err(KernelError::Length { what: "w", .. })
    ));
    assert!(matches!(
        linear_cols(&x[..11], 4, 3, &w, 2, None, e, &mut out),
        Err(KernelError::Length { what: "xt", .. })
    ));
    assert!(matches!(
        linear_cols(&x, 4, 3, &w, 2, Some(&[0.0]), e, &mut out),
        Err(KernelError::Length { what: "bias", .. })
    ));
    assert!(matches!(
        linear_cols(&x, 4, 3, &w, 2, None, e, &mut out[..5]),
        Err(KernelError::Length { what: "out", .. })
    ));
}
