//! Tests of the kernels: every kernel on every instruction set this machine has, against f64
//! references and against the edge values eager torch 2.13.0 returns (recorded from
//! `/work/main/.venv` torch on this machine; each table says which call produced it).

mod bench;
mod elementwise;
mod gemm;
mod math;
mod reduce;
mod simd;
mod stack;

use super::{available_isas, with_isa, Isa};

/// Runs `f` once per available instruction set (with it forced on this thread).
pub(super) fn each_isa(mut f: impl FnMut(Isa)) {
    for isa in available_isas() {
        with_isa(isa, || f(isa)).unwrap();
    }
}

/// Equal as torch results are compared here: both NaN, or the same value including the sign
/// of zero.
pub(super) fn same(a: f32, b: f32) -> bool {
    (a.is_nan() && b.is_nan()) || (a == b && a.is_sign_negative() == b.is_sign_negative())
}

/// `|got - want| <= atol + rtol·|want|`, with NaN and infinities required to match exactly.
pub(super) fn close(got: f32, want: f64, rtol: f64, atol: f64) -> bool {
    if want.is_nan() {
        return got.is_nan();
    }
    if want.is_infinite() {
        return f64::from(got) == want;
    }
    let g = f64::from(got);
    g.is_finite() && (g - want).abs() <= atol + rtol * want.abs()
}

/// `erf` in f64 to a few 1e-15: `erf x = 2/√π · e^(-x²) · Σ 2ⁿ x^(2n+1) / (1·3·…·(2n+1))`, a series of
/// positive terms (no cancellation), and `±1` beyond `|x| = 6` (`erfc 6 ≈ 2e-17`).
pub(super) fn erf_f64(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = x.abs();
    if a > 6.0 {
        return x.signum();
    }
    let mut term = a;
    let mut sum = a;
    let mut n = 0.0;
    while term > sum * 1e-17 {
        n += 1.0;
        term *= 2.0 * a * a / (2.0 * n + 1.0);
        sum += term;
    }
    let r = 2.0 / std::f64::consts::PI.sqrt() * (-a * a).exp() * sum;
    if x < 0.0 {
        -r
    } else {
        r
    }
}

#[test]
fn erf_reference_is_accurate() {
    // Values from mpmath at 30 digits.
    for (x, want) in [
        (0.5, 0.520_499_877_813_046_5),
        (1.0, 0.842_700_792_949_714_9),
        (2.0, 0.995_322_265_018_952_7),
        (3.5, 0.999_999_256_901_627_7),
        (-0.1, -0.112_462_916_018_284_89),
    ] {
        assert!((erf_f64(x) - want).abs() < 4e-15, "{x}: {:.17}", erf_f64(x));
    }
}

#[test]
fn with_isa_forces_and_restores() {
    let outer = super::active_isa();
    with_isa(Isa::Portable, || {
        assert_eq!(super::active_isa(), Isa::Portable);
        // Forcing is per thread: another thread keeps the detected set meanwhile.
        let other = std::thread::spawn(super::active_isa).join().unwrap();
        assert_eq!(other, super::isa());
    })
    .unwrap();
    assert_eq!(super::active_isa(), outer);
    assert_eq!(super::isa(), available_isas().next().unwrap());
    for isa in Isa::ALL {
        if !isa.is_available() {
            assert_eq!(
                with_isa(isa, || ()),
                Err(super::KernelError::IsaUnavailable(isa))
            );
        }
    }
}

/// The kernels' sources must reach generated crates through the embedded copy of this crate.
#[cfg(rextio_embedded_sources)]
#[test]
fn kernel_sources_are_embedded() {
    let embedded = crate::embedded::EMBEDDED_SOURCES;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/kernels");
    let mut on_disk = Vec::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                on_disk.push(path);
            }
        }
    }
    assert!(
        on_disk.iter().any(|p| p.ends_with("kernels/mod.rs")),
        "{on_disk:?}"
    );
    for path in on_disk {
        let rel = format!(
            "src/kernels/{}",
            path.strip_prefix(&dir).unwrap().to_string_lossy()
        );
        let text = embedded
            .iter()
            .find(|(p, _)| *p == rel)
            .map(|(_, t)| *t)
            .unwrap_or_else(|| panic!("{rel} is not embedded"));
        assert_eq!(text, std::fs::read_to_string(&path).unwrap(), "{rel}");
    }
    let lib = embedded.iter().find(|(p, _)| *p == "src/lib.rs").unwrap().1;
    assert!(lib.contains("pub mod kernels;"));
}
