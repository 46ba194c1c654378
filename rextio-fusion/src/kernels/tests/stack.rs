//! Every kernel, on every instruction set this CPU has, on a thread with a 256 KiB stack: Python
//! threads and server worker threads may have small stacks, and unoptimised builds give every
//! inlined block stack slots of its own (the matrix kernels once needed 2 MiB under AVX-512).

use std::io::Write;

use super::super::{
    amax_cols, amax_rows, amin_cols, amin_rows, argmax_cols, argmax_rows, available_isas, binary,
    binary_inplace, erf, exp, linear, linear_fused, linear_packed, log, log_softmax_cols,
    log_softmax_rows, matmul, mean_cols, mean_rows, sigmoid, softmax_argmax_rows, softmax_cols,
    softmax_rows, sum_cols, sum_rows, tanh, unary, unary_inplace, with_isa, Binary, Epilogue,
    GeluEdges, Isa, Operand, PackedWeight, Unary,
};

/// The stack a kernel must fit in, with the test's own frames.
const STACK: usize = 256 * 1024;

fn values(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| {
            let h = (i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed);
            (h % 2001) as f32 / 1000.0 - 1.0
        })
        .collect()
}

/// Calls every kernel with shapes that reach each of its code paths (dot and packed `linear`,
/// every register-block height of the ragged tail, narrow and wide panels, vector bodies and
/// tails) and checks a few results for sanity.
fn every_kernel() {
    for (m, k, n) in [(1, 5, 3), (7, 9, 8), (13, 17, 33), (29, 3, 40), (25, 0, 4)] {
        let x = values(m * k, 1);
        let w = values(n * k, 2);
        let b = values(n, 3);
        let mut out = vec![0.0; m * n];
        linear(&x, m, k, &w, n, Some(&b), &mut out).unwrap();
        let gelus = [GeluEdges::PRODUCT_FORM, GeluEdges::SUM_FORM];
        for e in Epilogue::ALL.into_iter().chain(gelus.map(Epilogue::Gelu)) {
            linear_fused(&x, m, k, &w, n, Some(&b), e, &mut out).unwrap();
            linear_fused(&x, m, k, &w, n, None, e, &mut out).unwrap();
            let pw = PackedWeight::new(&w, n, k).unwrap();
            linear_packed(&x, m, &pw, Some(&b), e, &mut out).unwrap();
        }
        assert!(out.iter().all(|v| v.is_finite()));
        // `w` read as a `k×n` matrix.
        let bm = values(k * n, 4);
        matmul(&x, m, k, &bm, n, &mut out).unwrap();
    }
    for (m, n) in [(1, 1), (3, 7), (5, 37), (2, 100)] {
        let len = m * n;
        let x = values(len, 5);
        let y = values(len, 6);
        let row = values(n, 7);
        let col = values(m, 8);
        let mut out = vec![0.0; len];
        for op in Unary::ALL
            .into_iter()
            .chain([Unary::Gelu(GeluEdges::SUM_FORM)])
        {
            unary(op, &x, &mut out).unwrap();
            unary_inplace(op, &mut out);
        }
        for f in [exp, log, tanh, sigmoid, erf] {
            f(&x, &mut out).unwrap();
        }
        for op in Binary::ALL {
            for rhs in [
                Operand::Full(&y),
                Operand::Row(&row),
                Operand::Col(&col),
                Operand::Scalar(0.5),
            ] {
                binary(op, m, n, Operand::Full(&x), rhs, &mut out).unwrap();
                binary(op, m, n, rhs, Operand::Full(&x), &mut out).unwrap();
                binary_inplace(op, m, n, &mut out, rhs).unwrap();
            }
        }
        let mut r = vec![0.0; m];
        let mut c = vec![0.0; n];
        let mut ri = vec![0i64; m];
        let mut ci = vec![0i64; n];
        for f in [sum_rows, mean_rows, amax_rows, amin_rows] {
            f(&x, m, n, &mut r).unwrap();
        }
        for f in [sum_cols, mean_cols, amax_cols, amin_cols] {
            f(&x, m, n, &mut c).unwrap();
        }
        for f in [
            softmax_rows,
            log_softmax_rows,
            softmax_cols,
            log_softmax_cols,
        ] {
            f(&x, m, n, &mut out).unwrap();
        }
        softmax_rows(&x, m, n, &mut out).unwrap();
        let total: f32 = out[..n].iter().sum();
        assert!((total - 1.0).abs() < 1e-5, "softmax row sums to {total}");
        argmax_rows(&x, m, n, &mut ri).unwrap();
        argmax_cols(&x, m, n, &mut ci).unwrap();
        softmax_argmax_rows(&x, m, n, &mut ri).unwrap();
    }
}

#[test]
fn every_kernel_fits_a_256_kib_stack_on_every_isa() {
    let isas: Vec<Isa> = available_isas().collect();
    for &isa in &isas {
        let done = std::thread::Builder::new()
            .name(format!("kernels-{}", isa.name()))
            .stack_size(STACK)
            .spawn(move || with_isa(isa, every_kernel))
            .unwrap()
            .join();
        match done {
            Ok(r) => r.unwrap(),
            Err(_) => panic!("the kernels panicked on {}", isa.name()),
        }
    }
    // Written past the test harness's capture, so every run says which ISAs it exercised.
    let names: Vec<&str> = isas.iter().map(|i| i.name()).collect();
    let _ = writeln!(std::io::stderr(), "kernels tested on: {}", names.join(", "));
}
