//! Timings (ignored by default; run in release):
//! `cargo test --release -p rextio-fusion --lib kernels::tests::bench -- --ignored --nocapture`

use std::hint::black_box;
use std::time::Instant;

use super::super::{
    active_isa, argmax_rows, binary, binary_inplace, layer_norm_cols, layer_norm_rows, linear,
    linear_cols, linear_fused, linear_packed, softmax_argmax_rows, softmax_rows, transpose, unary,
    unary_inplace, Binary, Epilogue, Isa, Operand, PackedWeight, Unary,
};
use super::each_isa;

/// Nanoseconds per call of `f` on the CPU (best of seven batches of ~20 ms) and TSC ticks per
/// call. On Linux the time is the thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), so that time
/// spent descheduled on a shared machine does not count; elsewhere wall time. TSC ticks are
/// scaled by the on-CPU share of the wall time.
fn time(mut f: impl FnMut()) -> (f64, f64) {
    let mut iters = 1u64;
    loop {
        let t = Instant::now();
        for _ in 0..iters {
            f();
        }
        if t.elapsed().as_millis() >= 20 {
            break;
        }
        iters *= 2;
    }
    let mut best = (f64::INFINITY, f64::INFINITY);
    for _ in 0..7 {
        let (c0, r0, t) = (ticks(), cpu_ns(), Instant::now());
        for _ in 0..iters {
            f();
        }
        let wall = t.elapsed().as_nanos() as f64;
        let cpu = match (r0, cpu_ns()) {
            (Some(a), Some(b)) => (b - a) as f64,
            _ => wall,
        };
        let ns = cpu / iters as f64;
        let c = (ticks() - c0) as f64 / iters as f64 * (cpu / wall).min(1.0);
        if ns < best.0 {
            best = (ns, c);
        }
    }
    best
}

/// This thread's CPU time in nanoseconds.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn cpu_ns() -> Option<u64> {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: glibc's `clock_gettime` writes one `struct timespec` (two i64 on x86-64 Linux)
    // through the valid pointer it is given.
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| ts.sec as u64 * 1_000_000_000 + ts.nsec as u64)
}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
fn cpu_ns() -> Option<u64> {
    None
}

fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `rdtsc` exists on every x86-64 CPU and only reads the time-stamp counter.
        unsafe { std::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

fn lanes(isa: Isa) -> usize {
    match isa {
        Isa::Avx512 => 16,
        Isa::Avx2Fma => 8,
        Isa::Portable => 4,
    }
}

fn data(len: usize) -> Vec<f32> {
    (0..len)
        .map(|i| ((i * 7919) % 1000) as f32 / 500.0 - 1.0)
        .collect()
}

#[test]
#[ignore = "timing; run in release with --ignored --nocapture"]
fn bench_linear() {
    if cfg!(debug_assertions) {
        println!("(debug build: timings are meaningless, use --release)");
    }
    each_isa(|isa| {
        for (m, k, n) in [
            (1, 32, 32),
            (1, 48, 96),
            (1, 96, 48),
            (2, 48, 96),
            (3, 48, 96),
            (4, 48, 96),
            (3, 96, 48),
            (4, 96, 48),
            (16, 32, 32),
            (128, 32, 32),
            (4, 32, 32),
            (8, 32, 32),
            (32, 32, 32),
            (64, 256, 256),
        ] {
            let x = data(m * k);
            let w = data(n * k);
            let b = data(n);
            let mut out = vec![0.0; m * n];
            let (ns, tsc) = time(|| {
                linear(black_box(&x), m, k, black_box(&w), n, Some(&b), &mut out).unwrap();
                black_box(&out);
            });
            let (ns_relu, _) = time(|| {
                linear_fused(&x, m, k, &w, n, Some(&b), Epilogue::Relu, &mut out).unwrap();
                black_box(&out);
            });
            let pw = PackedWeight::new(&w, n, k).unwrap();
            let (ns_packed, tsc_packed) = time(|| {
                linear_packed(black_box(&x), m, &pw, Some(&b), Epilogue::None, &mut out).unwrap();
                black_box(&out);
            });
            let fmas = (m * n * k) as f64 / lanes(isa) as f64;
            println!(
                "{:>9} linear ({m:>3},{k},{n}) + bias: {ns:>7.0} ns ({:.2} vector FMA/tick); + relu {ns_relu:>7.0} ns; prepacked {ns_packed:>7.0} ns ({:.2} FMA/tick, {:.1} GFLOP/s)",
                isa.name(),
                fmas / tsc,
                fmas / tsc_packed,
                2.0 * (m * n * k) as f64 / ns_packed,
            );
        }
    });
}

/// `a @ b` with `b` as given (`[k, n]`, TensorFlow's weight layout) against `linear` on the
/// transposed weight, at the same shapes.
#[test]
#[ignore = "timing; run in release with --ignored --nocapture"]
fn bench_matmul() {
    each_isa(|isa| {
        for (m, k, n) in [
            (1, 32, 32),
            (16, 32, 32),
            (128, 32, 32),
            (128, 32, 8),
            (16, 128, 64),
        ] {
            let x = data(m * k);
            let b = data(k * n);
            let w = data(n * k);
            let mut out = vec![0.0; m * n];
            let (ns, _) = time(|| {
                super::super::matmul(black_box(&x), m, k, black_box(&b), n, &mut out).unwrap();
                black_box(&out);
            });
            let (ns_linear, _) = time(|| {
                linear(black_box(&x), m, k, black_box(&w), n, None, &mut out).unwrap();
                black_box(&out);
            });
            println!(
                "{:>9} matmul ({m:>3},{k},{n}): {ns:>7.0} ns; linear {ns_linear:>7.0} ns",
                isa.name()
            );
        }
    });
}

#[test]
#[ignore = "timing; run in release with --ignored --nocapture"]
fn bench_math() {
    let x: Vec<f32> = (0..4096)
        .map(|i| (i as f32 / 4096.0 - 0.5) * 20.0)
        .collect();
    let mut y = vec![0.0; x.len()];
    let (ns, _) = time(|| {
        for (d, &v) in y.iter_mut().zip(&x) {
            *d = black_box(v).tanh();
        }
        black_box(&y);
    });
    println!("  libm tanhf: {:.3} ns/element", ns / x.len() as f64);
    each_isa(|isa| {
        for op in Unary::ALL {
            let (ns, _) = time(|| {
                unary(op, black_box(&x), &mut y).unwrap();
                black_box(&y);
            });
            println!(
                "{:>9} {op:?}: {:.3} ns/element",
                isa.name(),
                ns / x.len() as f64
            );
        }
    });
}

#[test]
#[ignore = "timing; run in release with --ignored --nocapture"]
fn bench_softmax() {
    let (m, n) = (128, 10);
    let x = data(m * n);
    let mut p = vec![0.0; m * n];
    let mut idx = vec![0i64; m];
    each_isa(|isa| {
        let (two, _) = time(|| {
            softmax_rows(&x, m, n, &mut p).unwrap();
            argmax_rows(&p, m, n, &mut idx).unwrap();
            black_box(&idx);
        });
        let (fused, _) = time(|| {
            softmax_argmax_rows(black_box(&x), m, n, &mut idx).unwrap();
            black_box(&idx);
        });
        println!(
            "{:>9} ({m}x{n}) softmax then argmax {two:.0} ns, softmax_argmax_rows {fused:.0} ns",
            isa.name()
        );
    });
}

/// The stages of a small classifier head (normalise, linear, four activations, linear, softmax
/// with argmax), each timed alone at batch 1, 16 and 128: where a fused call spends its compute.
#[test]
#[ignore = "timing; run in release with --ignored --nocapture"]
fn bench_head_stages() {
    let (k, h, c) = (32, 32, 8);
    each_isa(|isa| {
        for m in [1usize, 16, 128] {
            let x = data(m * k);
            let (mean, scale) = (data(k), data(k));
            let (w1, b1, w2, b2) = (data(h * k), data(h), data(c * h), data(c));
            let mut xn = vec![0.0; m * k];
            let mut hid = vec![0.0; m * h];
            let mut logits = vec![0.0; m * c];
            let mut labels = vec![0i64; m];
            let (norm, _) = time(|| {
                binary(
                    Binary::Sub,
                    m,
                    k,
                    Operand::Full(&x),
                    Operand::Row(&mean),
                    &mut xn,
                )
                .unwrap();
                binary_inplace(Binary::Div, m, k, &mut xn, Operand::Row(&scale)).unwrap();
                black_box(&xn);
            });
            let (lin1, _) = time(|| {
                linear(black_box(&xn), m, k, &w1, h, Some(&b1), &mut hid).unwrap();
                black_box(&hid);
            });
            let (relu, _) = time(|| {
                unary_inplace(Unary::Relu, black_box(&mut hid));
            });
            let (tanh, _) = time(|| {
                unary_inplace(Unary::Tanh, black_box(&mut hid));
            });
            let (lin2, _) = time(|| {
                linear(black_box(&hid), m, h, &w2, c, Some(&b2), &mut logits).unwrap();
                black_box(&logits);
            });
            let (sm, _) = time(|| {
                softmax_argmax_rows(black_box(&logits), m, c, &mut labels).unwrap();
                black_box(&labels);
            });
            let total = norm + lin1 + 2.0 * (relu + tanh) + lin2 + sm;
            println!(
                "{:>9} head m={m:>3}: normalise {norm:>6.0} linear1 {lin1:>6.0} relu {relu:>5.0} tanh {tanh:>6.0} linear2 {lin2:>6.0} softmax+argmax {sm:>6.0} = {total:>6.0} ns",
                isa.name()
            );
        }
    });
}

/// `(k, n)` of the module bench's residual MLP's seven products, in call order (features 20,
/// width 48, hidden 96, two blocks, 5 classes).
const MLP_PRODUCTS: [(usize, usize); 7] = [
    (20, 48),
    (48, 96),
    (96, 48),
    (48, 96),
    (96, 48),
    (48, 48),
    (48, 5),
];

/// The feature-major product against the row-major one (packed, cached and compared) on the
/// products of a residual MLP (features 20, width 48, hidden 96, 5 classes), per batch size.
#[test]
#[ignore = "timing; run in release with --ignored --nocapture"]
fn bench_linear_cols() {
    each_isa(|isa| {
        for m in [1, 2, 5, 8, 16, 32, 64, 128] {
            let mut total = (0.0, 0.0);
            let mut line = String::new();
            for &(k, n) in &MLP_PRODUCTS {
                let x = data(m * k);
                let w = data(n * k);
                let b = data(n);
                let mut out = vec![0.0; m * n];
                let (rows, _) = time(|| {
                    linear(black_box(&x), m, k, black_box(&w), n, Some(&b), &mut out).unwrap();
                    black_box(&out);
                });
                let (cols, _) = time(|| {
                    let e = Epilogue::None;
                    linear_cols(black_box(&x), k, m, black_box(&w), n, Some(&b), e, &mut out)
                        .unwrap();
                    black_box(&out);
                });
                total = (total.0 + rows, total.1 + cols);
                line += &format!(" {k}->{n} {rows:.0}/{cols:.0}");
            }
            println!(
                "{:>9} m={m:>3}: rows/cols ns{line}; all {:.0}/{:.0}",
                isa.name(),
                total.0,
                total.1
            );
        }
    });
}

/// `transpose` of batches of activations (in and out of the feature-major layout).
#[test]
#[ignore = "timing; run in release with --ignored --nocapture"]
fn bench_transpose() {
    for (m, n) in [
        (16, 20),
        (16, 48),
        (128, 20),
        (128, 48),
        (128, 96),
        (128, 5),
        (1000, 48),
    ] {
        let x = data(m * n);
        let mut out = vec![0.0; m * n];
        let (ns, _) = time(|| {
            transpose(black_box(&x), m, n, &mut out).unwrap();
            black_box(&out);
        });
        let (back, _) = time(|| {
            transpose(black_box(&x), n, m, &mut out).unwrap();
            black_box(&out);
        });
        println!(
            "transpose {m}x{n}: {ns:.0} ns ({:.2} ns/element), back {back:.0} ns",
            ns / (m * n) as f64
        );
    }
}

/// Layer norm over the last dim of a batch, row-major against feature-major.
#[test]
#[ignore = "timing; run in release with --ignored --nocapture"]
fn bench_layer_norm_cols() {
    each_isa(|isa| {
        for (m, n) in [(1, 48), (3, 48), (16, 48), (128, 48), (16, 96), (1000, 48)] {
            let x = data(m * n);
            let (w, b) = (data(n), data(n));
            let mut out = vec![0.0; m * n];
            let (rows, _) = time(|| {
                layer_norm_rows(black_box(&x), m, n, Some(&w), Some(&b), 1e-5, &mut out).unwrap();
                black_box(&out);
            });
            let (cols, _) = time(|| {
                layer_norm_cols(black_box(&x), n, m, Some(&w), Some(&b), 1e-5, &mut out).unwrap();
                black_box(&out);
            });
            println!(
                "{:>9} layer norm {m}x{n}: rows {rows:.0} ns, cols {cols:.0} ns",
                isa.name()
            );
        }
    });
}

/// The seven products of the module bench's residual MLP at batch 1, one after another with
/// distinct weights (88 KB, more than a first-level cache: as in a call, they come from the
/// second level), on the active instruction set.
#[test]
#[ignore = "timing; run in release with --ignored --nocapture"]
fn bench_linear_chain() {
    let ws: Vec<Vec<f32>> = MLP_PRODUCTS.iter().map(|&(k, n)| data(n * k)).collect();
    let bs: Vec<Vec<f32>> = MLP_PRODUCTS.iter().map(|&(_, n)| data(n)).collect();
    let x = data(96);
    let mut out = vec![0.0; 96];
    let (ns, _) = time(|| {
        for (i, &(k, n)) in MLP_PRODUCTS.iter().enumerate() {
            linear(
                black_box(&x[..k]),
                1,
                k,
                black_box(&ws[i]),
                n,
                Some(&bs[i]),
                &mut out[..n],
            )
            .unwrap();
        }
        black_box(&out);
    });
    println!(
        "{:>9} seven products at batch 1, chained: {ns:.0} ns",
        active_isa().name()
    );
}
