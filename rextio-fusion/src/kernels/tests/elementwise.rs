//! Unary and broadcast binary ops against scalar references, on random shapes.

use proptest::collection::vec;
use proptest::prelude::*;

use super::super::{
    binary, binary_inplace, unary, unary_inplace, Binary, KernelError, Operand, Unary,
};
use super::{close, each_isa, erf_f64, same};

/// Mostly moderate values, with zeros of both signs, NaN, infinities and arbitrary bit patterns.
pub(super) fn value() -> impl Strategy<Value = f32> {
    prop_oneof![
        10 => -10.0f32..10.0,
        1 => Just(0.0f32),
        1 => Just(-0.0f32),
        1 => Just(f32::NAN),
        1 => Just(f32::INFINITY),
        1 => Just(f32::NEG_INFINITY),
        2 => any::<f32>(),
    ]
}

/// `(m, n)` with either possibly 0 or 1 and sizes around the vector widths.
pub(super) fn dims(max_m: usize, max_n: usize) -> impl Strategy<Value = (usize, usize)> {
    (0..=max_m, 0..=max_n)
}

/// torch's scalar semantics of `op`, from an f64 evaluation (exact for the correctly rounded
/// ops: f64 holds every f32 sum, product and quotient to well within half an f32 ulp).
fn binary_ref(op: Binary, a: f32, b: f32) -> f32 {
    let (x, y) = (f64::from(a), f64::from(b));
    match op {
        Binary::Add => (x + y) as f32,
        Binary::Sub => (x - y) as f32,
        Binary::Mul => (x * y) as f32,
        Binary::Div => (x / y) as f32,
        // torch.maximum / minimum: NaN wins; on equality (±0) the vectorised path's second.
        Binary::Max if a.is_nan() || b.is_nan() => f32::NAN,
        Binary::Min if a.is_nan() || b.is_nan() => f32::NAN,
        Binary::Max => {
            if a > b {
                a
            } else {
                b
            }
        }
        Binary::Min => {
            if a < b {
                a
            } else {
                b
            }
        }
    }
}

/// `Some(exact)` for the ops that are exact, `None` for the transcendental ones.
fn unary_exact(op: Unary, x: f32) -> Option<f32> {
    match op {
        // clamp_min(x, 0): NaN and -0 pass.
        Unary::Relu => Some(if x.is_nan() || x >= 0.0 { x } else { 0.0 }),
        // max(x, 0) with NaN passing and every zero +0.
        Unary::ReluPlusZero => Some(if x.is_nan() || x > 0.0 { x } else { 0.0 }),
        Unary::Neg => Some(-x),
        Unary::Abs => Some(x.abs()),
        Unary::Sqrt => Some(x.sqrt()),
        Unary::Square => Some(x * x),
        _ => None,
    }
}

fn unary_f64(op: Unary, x: f64) -> f64 {
    match op {
        Unary::Tanh => x.tanh(),
        Unary::Sigmoid => 1.0 / (1.0 + (-x).exp()),
        Unary::Exp => x.exp(),
        Unary::Log => x.ln(),
        Unary::Erf => erf_f64(x),
        Unary::Gelu(_) => 0.5 * x * (1.0 + erf_f64(x / std::f64::consts::SQRT_2)),
        Unary::Silu => x / (1.0 + (-x).exp()),
        Unary::Elu => {
            if x >= 0.0 {
                x
            } else {
                x.exp_m1()
            }
        }
        // TensorFlow's formula, with its float32 `exp(x) - 1` cancellation near zero.
        Unary::EluExpMinusOne => {
            if x < 0.0 {
                f64::from((x.exp() as f32) - 1.0)
            } else {
                x
            }
        }
        _ => f64::NAN,
    }
}

fn check_unary(op: Unary, x: f32, got: f32) -> Result<(), TestCaseError> {
    if let Some(want) = unary_exact(op, x) {
        prop_assert!(
            same(got, want),
            "{:?}({:e}) = {:e}, want {:e}",
            op,
            x,
            got,
            want
        );
        return Ok(());
    }
    // Moderate arguments only: the edges are tabled in `math.rs`, the bounds swept there.
    if !(-20.0..=20.0).contains(&x) || (op == Unary::Log && x <= 0.0) {
        return Ok(());
    }
    let want = unary_f64(op, f64::from(x));
    prop_assert!(
        close(got, want, 1e-6, 1e-6),
        "{:?}({:e}) = {:e}, want {:e}",
        op,
        x,
        got,
        want
    );
    Ok(())
}

/// Operand kind `kind` (full, row, column, scalar) and its element at `(i, j)`.
type Element<'a> = Box<dyn Fn(usize, usize) -> f32 + 'a>;

fn pick<'a>(
    kind: usize,
    full: &'a [f32],
    row: &'a [f32],
    col: &'a [f32],
    scalar: f32,
    n: usize,
) -> (Operand<'a>, Element<'a>) {
    match kind {
        0 => (Operand::Full(full), Box::new(move |i, j| full[i * n + j])),
        1 => (Operand::Row(row), Box::new(move |_, j| row[j])),
        2 => (Operand::Col(col), Box::new(move |i, _| col[i])),
        _ => (Operand::Scalar(scalar), Box::new(move |_, _| scalar)),
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        // No regression files outside src/kernels; failures print their inputs.
        failure_persistence: None,
        ..ProptestConfig::with_cases(64)
    })]

    #[test]
    fn unary_ops_match_the_scalar_reference(xs in vec(value(), 0..70)) {
        each_isa(|isa| {
            for op in Unary::ALL {
                let mut out = vec![0.0; xs.len()];
                unary(op, &xs, &mut out).unwrap();
                let mut inplace = xs.clone();
                unary_inplace(op, &mut inplace);
                for (i, (&x, &y)) in xs.iter().zip(&out).enumerate() {
                    check_unary(op, x, y).map_err(|e| format!("{isa:?} [{i}] {e}")).unwrap();
                    assert_eq!(y.to_bits(), inplace[i].to_bits(), "{isa:?} {op:?} in place");
                }
            }
        });
    }

    #[test]
    fn binary_ops_broadcast_like_torch(
        (m, n) in dims(9, 37),
        seed in vec(value(), 2 * 9 * 37 + 9 + 37 + 2),
        kinds in (0usize..4, 0usize..4),
    ) {
        let len = m * n;
        let full_a = &seed[..len];
        let full_b = &seed[len..2 * len];
        let row = &seed[2 * len..2 * len + n];
        let col = &seed[2 * len + n..2 * len + n + m];
        let scalar = seed[2 * len + n + m];
        let (lhs, lv) = pick(kinds.0, full_a, row, col, scalar, n);
        let (rhs, rv) = pick(kinds.1, full_b, row, col, scalar, n);
        each_isa(|isa| {
            for op in Binary::ALL {
                let mut out = vec![0.0; len];
                binary(op, m, n, lhs, rhs, &mut out).unwrap();
                for i in 0..m {
                    for j in 0..n {
                        let (a, b) = (lv(i, j), rv(i, j));
                        let want = binary_ref(op, a, b);
                        let got = out[i * n + j];
                        assert!(same(got, want), "{isa:?} {op:?}({a:e}, {b:e}) = {got:e}, want {want:e} at ({i}, {j}) of {m}x{n} {kinds:?}");
                    }
                }
                // In place over a full left operand gives the same bits.
                let mut x = full_a.to_vec();
                binary_inplace(op, m, n, &mut x, rhs).unwrap();
                let mut want = vec![0.0; len];
                binary(op, m, n, Operand::Full(full_a), rhs, &mut want).unwrap();
                assert_eq!(
                    x.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    want.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    "{isa:?} {op:?} in place"
                );
            }
        });
    }
}

#[test]
fn maximum_minimum_edges_match_torch() {
    // torch.maximum/minimum(torch.tensor([a] * 64), torch.tensor([b] * 64)): NaN from either
    // side; on ±0 the second operand (the vectorised path; torch's scalar tail gives the first).
    let nan = f32::NAN;
    let cases = [
        (Binary::Max, nan, 1.0, nan),
        (Binary::Max, 1.0, nan, nan),
        (Binary::Min, nan, 1.0, nan),
        (Binary::Min, 1.0, nan, nan),
        (Binary::Max, 0.0, -0.0, -0.0),
        (Binary::Max, -0.0, 0.0, 0.0),
        (Binary::Min, 0.0, -0.0, -0.0),
        (Binary::Min, -0.0, 0.0, 0.0),
        (Binary::Max, f32::NEG_INFINITY, -1.0, -1.0),
        (Binary::Min, f32::INFINITY, 1.0, 1.0),
    ];
    each_isa(|isa| {
        for (op, a, b, want) in cases {
            for len in [1, 9, 64] {
                let mut out = vec![0.0; len];
                binary(
                    op,
                    1,
                    len,
                    Operand::Full(&vec![a; len]),
                    Operand::Scalar(b),
                    &mut out,
                )
                .unwrap();
                for &got in &out {
                    assert!(same(got, want), "{isa:?} {op:?}({a}, {b}) = {got}");
                }
            }
        }
    });
}

#[test]
fn elementwise_lengths_are_checked() {
    let x = [1.0f32; 6];
    let mut out = [0.0f32; 6];
    assert!(matches!(
        unary(Unary::Exp, &x, &mut out[..5]),
        Err(KernelError::Length { what: "dst", .. })
    ));
    let bad = [
        (Operand::Full(&x[..5]), Operand::Scalar(1.0)),
        (Operand::Full(&x), Operand::Row(&x[..2])),
        (Operand::Col(&x[..3]), Operand::Full(&x)),
        (Operand::Scalar(1.0), Operand::Col(&x)),
    ];
    for (lhs, rhs) in bad {
        assert!(binary(Binary::Add, 2, 3, lhs, rhs, &mut out).is_err());
    }
    assert!(binary(
        Binary::Add,
        2,
        3,
        Operand::Full(&x),
        Operand::Row(&x[..3]),
        &mut out[..4]
    )
    .is_err());
    assert!(binary_inplace(Binary::Add, 3, 3, &mut out, Operand::Scalar(1.0)).is_err());
    assert_eq!(
        binary(
            Binary::Add,
            usize::MAX,
            2,
            Operand::Scalar(1.0),
            Operand::Scalar(1.0),
            &mut out
        ),
        Err(KernelError::Overflow)
    );
    // Zero-sized shapes are fine.
    binary(
        Binary::Mul,
        0,
        5,
        Operand::Full(&[]),
        Operand::Row(&x[..5]),
        &mut [],
    )
    .unwrap();
    binary(
        Binary::Mul,
        4,
        0,
        Operand::Col(&x[..4]),
        Operand::Row(&[]),
        &mut [],
    )
    .unwrap();
}
