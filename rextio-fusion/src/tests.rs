//! Planner tests: shapes, buffers, in-place chains and what declines.

use crate::ir::*;
use crate::kernels::Binary;
use crate::plan::*;

fn t(slot: u16, owned: bool) -> Input {
    Input::Tensor { slot, owned }
}

fn sh(sizes: &[usize]) -> Option<Shape> {
    Shape::of(sizes)
}

fn view<'a>(inputs: &'a [Input], ins: &'a [Ins], outputs: &'a [V]) -> ProgramView<'a> {
    ProgramView {
        inputs,
        ins,
        outputs,
    }
}

/// The scoring prologue: `(x - mean) / s` then `linear`: the two elementwise steps share
/// one temporary (the second in place), the linear writes the output tensor.
#[test]
fn a_chain_shares_one_temporary_and_writes_the_output_directly() {
    let inputs = [
        t(0, false),
        t(1, false),
        Input::Scalar { slot: 0 },
        t(2, false),
        t(3, false),
    ];
    let ins = [
        Ins::Binary {
            f: Binary::Sub,
            a: 0,
            b: 1,
            keep: false,
        },
        Ins::Scalar {
            f: Binary::Div,
            t: 5,
            s: 2,
            rev: false,
        },
        Ins::Linear {
            x: 6,
            w: 3,
            b: Some(4),
        },
    ];
    let shapes = [sh(&[4, 32]), sh(&[32]), None, sh(&[16, 32]), sh(&[16])];
    let p = plan(view(&inputs, &ins, &[7]), &shapes).unwrap();
    assert_eq!(p.shapes[7].0.sizes(), &[4, 16]);
    assert_eq!(p.store[5], Store::Temp(0));
    assert_eq!(p.store[6], Store::Temp(0));
    assert_eq!(p.in_place, vec![false, true, false]);
    assert_eq!(p.store[7], Store::Output(0));
    assert_eq!(p.temps, vec![128]);
    assert_eq!(p.macs, 4 * 32 * 16);
    assert_eq!(p.largest_product, 4 * 32 * 16);
    assert_eq!(p.output_alias, vec![None]);
}

/// The size guard reads the largest product, not the sum: a long program of small products
/// (a model's layers in one region) is as fusable as each of its products alone.
#[test]
fn the_size_guard_counts_the_largest_product_and_the_total_separately() {
    let inputs = [t(0, false), t(1, false), t(2, false)];
    let ins = [
        Ins::Linear {
            x: 0,
            w: 1,
            b: None,
        },
        Ins::Linear {
            x: 3,
            w: 2,
            b: None,
        },
    ];
    let shapes = [sh(&[128, 20]), sh(&[96, 20]), sh(&[48, 96])];
    let p = plan(view(&inputs, &ins, &[4]), &shapes).unwrap();
    assert_eq!(p.macs, 128 * 20 * 96 + 128 * 96 * 48);
    assert_eq!(p.largest_product, 128 * 96 * 48);
}

#[test]
fn an_owned_input_is_overwritten_in_place_and_becomes_the_output() {
    let inputs = [t(0, true)];
    let ins = [Ins::Unary {
        f: UnaryF::Relu,
        t: 0,
    }];
    let p = plan(view(&inputs, &ins, &[1]), &[sh(&[2, 3])]).unwrap();
    assert_eq!(p.in_place, vec![true]);
    assert_eq!(p.store[1], Store::Input(0));
    assert_eq!(p.output_alias, vec![Some(0)]);
    // A borrowed input is never written.
    let inputs = [t(0, false)];
    let p = plan(view(&inputs, &ins, &[1]), &[sh(&[2, 3])]).unwrap();
    assert_eq!(p.in_place, vec![false]);
    assert_eq!(p.store[1], Store::Output(0));
    assert_eq!(p.output_alias, vec![None]);
}

#[test]
fn layer_norm_keeps_its_input_shape_and_needs_affine_vectors_of_the_last_dim() {
    // x, n, weight, bias, eps
    let inputs = [
        t(0, false),
        Input::Scalar { slot: 0 },
        t(1, false),
        t(2, false),
        Input::Scalar { slot: 1 },
    ];
    let ins = [Ins::LayerNorm {
        x: 0,
        n: 1,
        w: Some(2),
        b: Some(3),
        eps: Some(4),
    }];
    let shapes = [sh(&[5, 48]), None, sh(&[48]), sh(&[48]), None];
    let p = plan(view(&inputs, &ins, &[5]), &shapes).unwrap();
    assert_eq!(p.shapes[5].0.sizes(), &[5, 48]);
    assert_eq!(p.store[5], Store::Output(0));
    // A weight of another size is libtorch's error to raise: declined.
    let bad = [sh(&[5, 48]), None, sh(&[47]), sh(&[48]), None];
    assert!(plan(view(&inputs, &ins, &[5]), &bad).is_none());
    // The normalised size must be a scalar input.
    let not_scalar = [
        t(0, false),
        t(3, false),
        t(1, false),
        t(2, false),
        Input::Scalar { slot: 1 },
    ];
    let shapes = [sh(&[5, 48]), sh(&[1]), sh(&[48]), sh(&[48]), None];
    assert!(plan(view(&not_scalar, &ins, &[5]), &shapes).is_none());
    assert_eq!(operands(&ins[0]).collect::<Vec<_>>(), vec![0, 1, 2, 3, 4]);
}

#[test]
fn values_read_again_or_returned_are_never_overwritten() {
    // a = relu(x); b = a * a; c = tanh(a): a is read again by c, so b (whose two operands
    // share one buffer anyway) is computed out of place; c, a's last reader, may take over
    // the owned buffer and become the output that aliases x.
    let inputs = [t(0, true)];
    let ins = [
        Ins::Unary {
            f: UnaryF::Relu,
            t: 0,
        },
        Ins::Binary {
            f: Binary::Mul,
            a: 1,
            b: 1,
            keep: false,
        },
        Ins::Unary {
            f: UnaryF::Tanh,
            t: 1,
        },
    ];
    let p = plan(view(&inputs, &ins, &[2, 3]), &[sh(&[3])]).unwrap();
    assert_eq!(p.in_place, vec![true, false, true]);
    assert_eq!(p.store[1], Store::Input(0));
    assert_eq!(p.store[2], Store::Output(0));
    assert_eq!(p.store[3], Store::Input(0));
    assert_eq!(p.output_alias, vec![None, Some(0)]);
    // An output is never the in-place target of a later instruction.
    let ins = [
        Ins::Unary {
            f: UnaryF::Relu,
            t: 0,
        },
        Ins::Unary {
            f: UnaryF::Exp,
            t: 1,
        },
    ];
    let inputs = [t(0, false)];
    let p = plan(view(&inputs, &ins, &[1, 2]), &[sh(&[3])]).unwrap();
    assert_eq!(p.in_place, vec![false, false]);
}

#[test]
fn dead_temporaries_are_reused_but_never_by_their_own_reader() {
    // t1 = x + 1; t2 = linear(t1, w); t3 = t2 - 1 (in place); out = linear(t3, w)
    let inputs = [t(0, false), Input::Scalar { slot: 0 }, t(1, false)];
    let ins = [
        Ins::Scalar {
            f: Binary::Add,
            t: 0,
            s: 1,
            rev: false,
        },
        Ins::Linear {
            x: 3,
            w: 2,
            b: None,
        },
        Ins::Scalar {
            f: Binary::Sub,
            t: 4,
            s: 1,
            rev: false,
        },
        Ins::Linear {
            x: 5,
            w: 2,
            b: None,
        },
    ];
    let p = plan(view(&inputs, &ins, &[6]), &[sh(&[2, 4]), None, sh(&[4, 4])]).unwrap();
    // The linear cannot write the buffer it reads; the in-place step keeps t2's buffer.
    assert_ne!(p.store[3], p.store[4]);
    assert_eq!(p.store[4], p.store[5]);
    assert_eq!(p.temps.len(), 2);
}

#[test]
fn shapes_outside_the_kernels_decline() {
    let inputs = [t(0, false), t(1, false)];
    let sub = [Ins::Binary {
        f: Binary::Sub,
        a: 0,
        b: 1,
        keep: false,
    }];
    // Same shape, and a row vector on the right: fine.
    assert!(plan(view(&inputs, &sub, &[2]), &[sh(&[2, 3]), sh(&[2, 3])]).is_some());
    assert!(plan(view(&inputs, &sub, &[2]), &[sh(&[2, 3]), sh(&[3])]).is_some());
    // A vector minus a matrix, a column broadcast, a single element: broadcast as torch.
    assert!(plan(view(&inputs, &sub, &[2]), &[sh(&[3]), sh(&[2, 3])]).is_some());
    assert!(plan(view(&inputs, &sub, &[2]), &[sh(&[2, 3]), sh(&[2, 1])]).is_some());
    assert_eq!(
        broadcast(sh(&[2, 1]).unwrap(), sh(&[1, 3]).unwrap()),
        Some((sh(&[2, 3]).unwrap(), Role::Col, Role::Row))
    );
    assert_eq!(
        broadcast(sh(&[1]).unwrap(), sh(&[4]).unwrap()),
        Some((sh(&[4]).unwrap(), Role::Single, Role::Full))
    );
    // Mismatched sizes: libtorch raises its own error.
    assert!(plan(view(&inputs, &sub, &[2]), &[sh(&[2, 3]), sh(&[4])]).is_none());
    assert!(plan(view(&inputs, &sub, &[2]), &[sh(&[2, 3]), sh(&[3, 3])]).is_none());
    let add = [Ins::Binary {
        f: Binary::Add,
        a: 0,
        b: 1,
        keep: false,
    }];
    let p = plan(view(&inputs, &add, &[2]), &[sh(&[3]), sh(&[2, 3])]).unwrap();
    assert_eq!(p.shapes[2].0.sizes(), &[2, 3]);
    // An update in place (`a += b` in the framework) keeps `a`'s shape: a broadcast that would
    // grow `a` declines (the framework raises), one into it is planned.
    let update = [Ins::Binary {
        f: Binary::Add,
        a: 0,
        b: 1,
        keep: true,
    }];
    assert!(plan(view(&inputs, &update, &[2]), &[sh(&[3]), sh(&[2, 3])]).is_none());
    assert!(plan(view(&inputs, &update, &[2]), &[sh(&[2, 1]), sh(&[2, 3])]).is_none());
    assert!(plan(view(&inputs, &update, &[2]), &[sh(&[2, 3]), sh(&[1, 3])]).is_some());
    assert!(plan(view(&inputs, &update, &[2]), &[sh(&[2, 3]), sh(&[2, 1])]).is_some());
    let p = plan(view(&inputs, &update, &[2]), &[sh(&[2, 3]), sh(&[3])]).unwrap();
    assert_eq!(p.shapes[2].0.sizes(), &[2, 3]);
    // Linear with a wrong inner size, a 1-D weight: libtorch raises its own error.
    let lin = [Ins::Linear {
        x: 0,
        w: 1,
        b: None,
    }];
    assert!(plan(view(&inputs, &lin, &[2]), &[sh(&[2, 3]), sh(&[4, 2])]).is_none());
    assert!(plan(view(&inputs, &lin, &[2]), &[sh(&[2, 3]), sh(&[3])]).is_none());
    let p = plan(view(&inputs, &lin, &[2]), &[sh(&[3]), sh(&[5, 3])]).unwrap();
    assert_eq!(p.shapes[2].0.sizes(), &[5]);
    // Reductions over an empty dim, or to a 0-dim tensor: libtorch.
    let one = [t(0, false)];
    let amax = [Ins::Reduce {
        f: ReduceF::Amax,
        t: 0,
        dim: 1,
        keepdim: false,
    }];
    assert!(plan(view(&one, &amax, &[1]), &[sh(&[2, 0])]).is_none());
    assert!(plan(view(&one, &amax, &[1]), &[sh(&[4])]).is_none());
    let keep = [Ins::Argmax {
        t: 0,
        dim: 0,
        keepdim: true,
        finite_only: false,
    }];
    let p = plan(view(&one, &keep, &[1]), &[sh(&[2, 5])]).unwrap();
    assert_eq!(p.shapes[1], (Shape::of(&[1, 5]).unwrap(), Dt::I64));
    // A missing tensor shape, a wrong input count.
    assert!(plan(view(&one, &keep, &[1]), &[None]).is_none());
    assert!(plan(view(&one, &keep, &[1]), &[]).is_none());
}

#[test]
fn every_kernel_op_has_an_ir_function_and_back() {
    use crate::kernels::{GeluEdges, Unary};
    for u in Unary::ALL {
        let f = UnaryF::of_kernel(u);
        assert_eq!(f.kernel(GeluEdges::PRODUCT_FORM), u, "{u:?}");
    }
    for f in UnaryF::ALL {
        assert_eq!(UnaryF::of_kernel(f.kernel(GeluEdges::PRODUCT_FORM)), f);
    }
    assert_eq!(UnaryF::ALL.len(), Unary::ALL.len());
}

#[test]
fn activations_with_an_epilogue_fuse_into_the_product_and_the_rest_do_not() {
    use crate::kernels::{Epilogue, GeluEdges};
    let e = GeluEdges::PRODUCT_FORM;
    assert_eq!(UnaryF::Relu.epilogue(e), Some(Epilogue::Relu));
    assert_eq!(UnaryF::Silu.epilogue(e), Some(Epilogue::Silu));
    assert_eq!(UnaryF::Gelu.epilogue(e), Some(Epilogue::Gelu(e)));
    for f in [UnaryF::Exp, UnaryF::Abs, UnaryF::Square, UnaryF::Erf] {
        assert_eq!(f.epilogue(e), None, "{f:?}");
    }
}

#[test]
fn transpose_plans_the_swapped_shape_and_needs_a_matrix() {
    let inputs = [t(0, true)];
    let ins = [Ins::Transpose { t: 0 }];
    let p = plan(view(&inputs, &ins, &[1]), &[sh(&[3, 5])]).unwrap();
    assert_eq!(p.shapes[1].0.sizes(), &[5, 3]);
    // Never in place, even over an owned operand: every element moves.
    assert_eq!(p.in_place, vec![false]);
    assert_eq!(p.store[1], Store::Output(0));
    assert!(plan(view(&inputs, &ins, &[1]), &[sh(&[5])]).is_none());
}

#[test]
fn transpose_moves_every_element_bit_for_bit() {
    use crate::kernels::{with_isa, Isa};
    let shapes = [
        (1, 1),
        (1, 7),
        (7, 1),
        (8, 8),
        (9, 17),
        (16, 20),
        (33, 65),
        (64, 32),
        (3, 100),
        (128, 5),
        (40, 48),
    ];
    for isa in [Isa::Avx512, Isa::Avx2Fma, Isa::Portable] {
        if !isa.is_available() {
            continue;
        }
        for (m, n) in shapes {
            let x: Vec<f32> = (0..m * n)
                .map(|i| match i % 5 {
                    0 => -0.0,
                    1 => f32::NAN,
                    _ => i as f32 * 0.5,
                })
                .collect();
            let mut out = vec![1.0f32; m * n];
            with_isa(isa, || crate::kernels::transpose(&x, m, n, &mut out))
                .unwrap()
                .unwrap();
            for i in 0..m {
                for j in 0..n {
                    assert_eq!(
                        out[j * m + i].to_bits(),
                        x[i * n + j].to_bits(),
                        "{isa:?} {m}x{n}"
                    );
                }
            }
        }
    }
    let mut out = vec![0.0f32; 5];
    assert!(crate::kernels::transpose(&[0.0; 6], 2, 3, &mut out).is_err());
}

/// A host whose tensors are plain vectors: the executor's contract without a framework.
mod vec_host {
    use crate::exec::{Edges, Host};
    use crate::kernels::GeluEdges;
    use crate::plan::{Dt, Shape};
    use std::cell::RefCell;
    use std::rc::Rc;

    /// A float32 or int64 tensor.
    #[derive(Clone, Debug)]
    pub struct T {
        pub shape: Vec<usize>,
        pub f: Rc<RefCell<Vec<f32>>>,
        pub i: Rc<RefCell<Vec<i64>>>,
        pub float: bool,
    }

    impl T {
        pub fn f32(shape: &[usize], data: Vec<f32>) -> T {
            T {
                shape: shape.to_vec(),
                f: Rc::new(RefCell::new(data)),
                i: Rc::new(RefCell::new(Vec::new())),
                float: true,
            }
        }
        pub fn data(&self) -> Vec<f32> {
            self.f.borrow().clone()
        }
    }

    pub struct VecHost {
        pub allocs: RefCell<usize>,
        /// What `may_overwrite` answers.
        pub overwrite: bool,
    }

    impl Host for VecHost {
        type Tensor = T;
        type Error = String;
        fn view(&self, t: &T, _writable: bool) -> Result<Option<(Shape, *mut f32)>, String> {
            if !t.float {
                return Ok(None);
            }
            Ok(Shape::of(&t.shape).map(|s| (s, t.f.borrow_mut().as_mut_ptr())))
        }
        fn share(&self, t: &T) -> T {
            t.clone()
        }
        fn may_overwrite(&self, _t: &T) -> bool {
            self.overwrite
        }
        fn alloc(&self, shape: Shape, dt: Dt) -> Result<(T, *mut u8), String> {
            *self.allocs.borrow_mut() += 1;
            let n = shape.numel();
            let t = T {
                shape: shape.sizes().to_vec(),
                f: Rc::new(RefCell::new(vec![
                    f32::NAN;
                    if dt == Dt::F32 { n } else { 0 }
                ])),
                i: Rc::new(RefCell::new(vec![-1; if dt == Dt::I64 { n } else { 0 }])),
                float: dt == Dt::F32,
            };
            let ptr = match dt {
                Dt::F32 => t.f.borrow_mut().as_mut_ptr().cast(),
                Dt::I64 => t.i.borrow_mut().as_mut_ptr().cast(),
            };
            Ok((t, ptr))
        }
        fn edges(&self, _one: bool, _many: bool) -> Option<Edges> {
            Some(Edges {
                gelu_one: GeluEdges::PRODUCT_FORM,
                gelu_many: GeluEdges::PRODUCT_FORM,
            })
        }
        fn run_kernels<R: Send>(&self, _work: usize, kernels: impl FnOnce() -> R + Send) -> R {
            kernels()
        }
        fn internal(&self, what: &str) -> String {
            what.to_owned()
        }
        fn setting_error(what: &str) -> String {
            format!("setting: {what}")
        }
    }
}

/// `argmax(maximum(relu(x @ w + b)ᵀ, c), dim=0)` and the intermediate, against plain loops.
#[test]
fn a_program_runs_end_to_end_on_a_host_of_vectors() {
    use vec_host::{VecHost, T};
    static PROGRAM: Program = Program {
        inputs: &[
            Input::Tensor {
                slot: 0,
                owned: false,
            },
            Input::Tensor {
                slot: 1,
                owned: false,
            },
            Input::Tensor {
                slot: 2,
                owned: false,
            },
            Input::Tensor {
                slot: 3,
                owned: false,
            },
        ],
        ins: &[
            Ins::Matmul { a: 0, b: 1 },
            Ins::Binary {
                f: Binary::Add,
                a: 4,
                b: 2,
                keep: false,
            },
            Ins::Unary {
                f: UnaryF::Relu,
                t: 5,
            },
            Ins::Transpose { t: 6 },
            Ins::Binary {
                f: Binary::Max,
                a: 7,
                b: 3,
                keep: false,
            },
            Ins::Argmax {
                t: 8,
                dim: 0,
                keepdim: false,
                finite_only: false,
            },
        ],
        outputs: &[8, 9],
    };
    let (m, k, n) = (3, 4, 5);
    let xv: Vec<f32> = (0..m * k).map(|i| (i as f32 - 5.0) * 0.25).collect();
    let wv: Vec<f32> = (0..k * n)
        .map(|i| ((i * 7) % 11) as f32 * 0.1 - 0.5)
        .collect();
    let bv: Vec<f32> = (0..n).map(|j| j as f32 * 0.1 - 0.2).collect();
    let cv: Vec<f32> = (0..m).map(|i| i as f32 * 0.05).collect();
    let (x, w, b, c) = (
        T::f32(&[m, k], xv.clone()),
        T::f32(&[k, n], wv.clone()),
        T::f32(&[n], bv.clone()),
        T::f32(&[m], cv.clone()),
    );
    let host = VecHost {
        allocs: Default::default(),
        overwrite: true,
    };
    let [y, idx] = crate::exec::run::<VecHost, 2>(&host, &PROGRAM, &[&x, &w, &b, &c], &[], None)
        .unwrap()
        .unwrap();
    // Reference: plain loops, in f64.
    let mut h = vec![0.0f64; m * n];
    for i in 0..m {
        for j in 0..n {
            let s: f64 = (0..k)
                .map(|q| f64::from(xv[i * k + q]) * f64::from(wv[q * n + j]))
                .sum();
            h[i * n + j] = (s + f64::from(bv[j])).max(0.0);
        }
    }
    assert_eq!(y.shape, vec![n, m]);
    let yd = y.data();
    for j in 0..n {
        for i in 0..m {
            let want = h[i * n + j].max(f64::from(cv[i]));
            assert!((f64::from(yd[j * m + i]) - want).abs() < 1e-5, "{j},{i}");
        }
    }
    assert_eq!(idx.shape, vec![m]);
    let got = idx.i.borrow().clone();
    for i in 0..m {
        let col: Vec<f32> = (0..n).map(|j| yd[j * m + i]).collect();
        let best = (0..n).fold(0, |a, j| if col[j] > col[a] { j } else { a });
        assert_eq!(got[i], best as i64, "{i}");
    }
    assert_eq!(*host.allocs.borrow(), 2);
    // Inputs are never written.
    assert_eq!(x.data(), xv);
    assert_eq!(b.data(), bv);
    // A shape the plan declines writes nothing and allocates nothing.
    let bad = T::f32(&[n + 1], vec![0.0; n + 1]);
    let declined =
        crate::exec::run::<VecHost, 2>(&host, &PROGRAM, &[&x, &w, &bad, &c], &[], None).unwrap();
    assert!(declined.is_none());
    assert_eq!(*host.allocs.borrow(), 2);
}

/// TensorFlow's kernels read denormals as zero and flush denormal results; under
/// `with_denormals_flushed` every kernel does too (on every ISA), and the mode is restored.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[test]
fn flushed_denormals_read_as_zero_in_every_kernel_on_every_isa() {
    use crate::kernels::{self, Unary};
    let tiny = f32::from_bits(1); // the smallest denormal
    for isa in kernels::available_isas() {
        kernels::with_isa(isa, || {
            let xs = [tiny, -tiny, 1e-39, -1e-39, 2.0];
            let mut ys = [0.0f32; 5];
            let run = |op: Unary, ys: &mut [f32; 5]| {
                kernels::with_denormals_flushed(|| kernels::unary(op, &xs, ys).unwrap());
            };
            run(Unary::Log, &mut ys);
            assert!(
                ys[..4].iter().all(|y| *y == f32::NEG_INFINITY),
                "{isa:?} log {ys:?}"
            );
            run(Unary::Sqrt, &mut ys);
            assert!(ys[..4].iter().all(|y| *y == 0.0), "{isa:?} sqrt {ys:?}");
            run(Unary::Square, &mut ys);
            assert_eq!(ys[..4], [0.0; 4], "{isa:?}");
            // TensorFlow's ELU (`x < 0 ? exp(x) - 1 : x`): a denormal read as zero is not below
            // zero, so it comes back as it came (TensorFlow 2.21 gives elu(-1e-40) = -1e-40).
            run(Unary::EluExpMinusOne, &mut ys);
            assert_eq!(
                ys[..4].iter().map(|y| y.to_bits()).collect::<Vec<_>>(),
                xs[..4].iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                "{isa:?} elu {ys:?}"
            );
            // A product that underflows to a denormal is flushed.
            let mut out = [1.0f32];
            kernels::with_denormals_flushed(|| {
                kernels::binary(
                    Binary::Mul,
                    1,
                    1,
                    kernels::Operand::Full(&[1e-30]),
                    kernels::Operand::Scalar(1e-10),
                    &mut out,
                )
                .unwrap()
            });
            assert_eq!(out[0], 0.0, "{isa:?}");
            // Outside, denormals are values again.
            kernels::unary(Unary::Log, &xs, &mut ys).unwrap();
            assert!(ys[0].is_finite() && ys[0] < -100.0, "{isa:?} {ys:?}");
        })
        .unwrap();
    }
}

/// A `finite_only` softmax runs on finite rows and declines after the run on any other, with no
/// output seen; a program holding one never writes an owned input.
#[test]
fn finite_only_ops_decline_after_the_run_on_specials() {
    use std::rc::Rc;
    use vec_host::{VecHost, T};
    static SOFTMAX: Program = Program {
        inputs: &[Input::Tensor {
            slot: 0,
            owned: false,
        }],
        ins: &[
            Ins::Softmax {
                t: 0,
                dim: 1,
                log: false,
                finite_only: true,
            },
            Ins::Argmax {
                t: 1,
                dim: 1,
                keepdim: false,
                finite_only: true,
            },
        ],
        outputs: &[2],
    };
    static OWNED: Program = Program {
        inputs: &[Input::Tensor {
            slot: 0,
            owned: true,
        }],
        ins: &[Ins::Softmax {
            t: 0,
            dim: 1,
            log: false,
            finite_only: true,
        }],
        outputs: &[1],
    };
    let host = VecHost {
        allocs: Default::default(),
        overwrite: true,
    };
    let x = T::f32(&[2, 3], vec![1.0, 3.0, 2.0, 0.5, -1.0, 0.25]);
    let [idx] = crate::exec::run::<VecHost, 1>(&host, &SOFTMAX, &[&x], &[], None)
        .unwrap()
        .unwrap();
    assert_eq!(*idx.i.borrow(), vec![1, 0]);
    for special in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let y = T::f32(&[2, 3], vec![1.0, 3.0, 2.0, 0.5, special, 0.25]);
        let r = crate::exec::run::<VecHost, 1>(&host, &SOFTMAX, &[&y], &[], None).unwrap();
        assert!(r.is_none(), "{special}");
    }
    // An owned input of such a call is read, never written: the result is a fresh tensor.
    let before = *host.allocs.borrow();
    let [p] = crate::exec::run::<VecHost, 1>(&host, &OWNED, &[&x], &[], None)
        .unwrap()
        .unwrap();
    assert_eq!(*host.allocs.borrow(), before + 1);
    assert!(!Rc::ptr_eq(&p.f, &x.f));
    assert_eq!(x.data(), vec![1.0, 3.0, 2.0, 0.5, -1.0, 0.25]);
    let y = T::f32(&[2, 3], vec![1.0, f32::NAN, 2.0, 0.5, -1.0, 0.25]);
    assert!(
        crate::exec::run::<VecHost, 1>(&host, &OWNED, &[&y], &[], None)
            .unwrap()
            .is_none()
    );
    assert!(y.data()[1].is_nan() && y.data()[0] == 1.0);
}

/// An owned input is overwritten in place only where the host allows it; otherwise the same
/// program reads it and writes a fresh output (and each choice has its own cached plan).
#[test]
fn owned_inputs_are_written_only_where_the_host_allows() {
    use std::rc::Rc;
    use vec_host::{VecHost, T};
    static CHAIN: Program = Program {
        inputs: &[Input::Tensor {
            slot: 0,
            owned: true,
        }],
        ins: &[
            Ins::Unary {
                f: UnaryF::Neg,
                t: 0,
            },
            Ins::Unary {
                f: UnaryF::Exp,
                t: 1,
            },
        ],
        outputs: &[2],
    };
    for overwrite in [true, false, true] {
        let host = VecHost {
            allocs: Default::default(),
            overwrite,
        };
        let x = T::f32(&[2], vec![0.0, 1.0]);
        let [y] = crate::exec::run::<VecHost, 1>(&host, &CHAIN, &[&x], &[], None)
            .unwrap()
            .unwrap();
        assert_eq!(y.data(), vec![1.0, (-1.0f32).exp()], "{overwrite}");
        assert_eq!(Rc::ptr_eq(&y.f, &x.f), overwrite);
        assert_eq!(*host.allocs.borrow(), usize::from(!overwrite));
        if !overwrite {
            assert_eq!(x.data(), vec![0.0, 1.0]);
        }
    }
}

/// `|tanh(a @ b + bias)|` runs as one product whose rows are finished as stored (bias, then
/// tanh as the epilogue), matching the instructions run one by one: bit for bit where the
/// product runs on the active instruction set, within rounding where a narrow one (8 columns or
/// fewer) runs its AVX2 blocks on an AVX-512 host.
#[test]
fn a_product_its_bias_and_activation_match_the_separate_kernels() {
    use crate::kernels::{self, Epilogue};
    use vec_host::{VecHost, T};
    static DENSE: Program = Program {
        inputs: &[
            Input::Tensor {
                slot: 0,
                owned: false,
            },
            Input::Tensor {
                slot: 1,
                owned: false,
            },
            Input::Tensor {
                slot: 2,
                owned: false,
            },
        ],
        ins: &[
            Ins::Matmul { a: 0, b: 1 },
            Ins::Binary {
                f: Binary::Add,
                a: 3,
                b: 2,
                keep: false,
            },
            Ins::Unary {
                f: UnaryF::Tanh,
                t: 4,
            },
            Ins::Unary {
                f: UnaryF::Abs,
                t: 5,
            },
        ],
        outputs: &[6],
    };
    let host = VecHost {
        allocs: Default::default(),
        overwrite: true,
    };
    for (m, k, n) in [(1, 5, 3), (7, 16, 8), (33, 20, 40), (5, 9, 64)] {
        let av: Vec<f32> = (0..m * k)
            .map(|i| ((i * 37) % 23) as f32 * 0.11 - 1.2)
            .collect();
        let bv: Vec<f32> = (0..k * n)
            .map(|i| ((i * 13) % 17) as f32 * 0.07 - 0.5)
            .collect();
        let cv: Vec<f32> = (0..n).map(|i| i as f32 * 0.3 - 1.0).collect();
        let (a, b, c) = (
            T::f32(&[m, k], av.clone()),
            T::f32(&[k, n], bv.clone()),
            T::f32(&[n], cv.clone()),
        );
        let [y] = crate::exec::run::<VecHost, 1>(&host, &DENSE, &[&a, &b, &c], &[], None)
            .unwrap()
            .unwrap();
        let mut sum = vec![0.0f32; m * n];
        kernels::matmul(&av, m, k, &bv, n, &mut sum).unwrap();
        kernels::binary_inplace(Binary::Add, m, n, &mut sum, kernels::Operand::Row(&cv)).unwrap();
        // The bias is added to the rounded product: the same as a separate add, bit for bit.
        let mut with_bias = vec![0.0f32; m * n];
        kernels::matmul_fused(&av, m, k, &bv, n, Some(&cv), Epilogue::None, &mut with_bias)
            .unwrap();
        assert_eq!(with_bias, sum, "{m}x{k}x{n}");
        let mut want = sum;
        kernels::unary_inplace(kernels::Unary::Tanh, &mut want);
        kernels::unary_inplace(kernels::Unary::Abs, &mut want);
        let got = y.data();
        for (g, w) in got.iter().zip(&want) {
            if n > 8 {
                assert_eq!(g.to_bits(), w.to_bits(), "{m}x{k}x{n}");
            } else {
                assert!((g - w).abs() <= 2e-7, "{m}x{k}x{n}: {g} vs {w}");
            }
        }
    }
}

#[test]
fn slots_number_tensors_and_scalars_each_in_order() {
    let mut inputs = [
        Input::Scalar { slot: 9 },
        t(7, true),
        Input::Unused,
        t(7, false),
        Input::Scalar { slot: 9 },
    ];
    number_slots(&mut inputs);
    assert_eq!(
        inputs,
        [
            Input::Scalar { slot: 0 },
            t(0, true),
            Input::Unused,
            t(1, false),
            Input::Scalar { slot: 1 },
        ]
    );
}

#[test]
fn a_path_policy_makes_its_host_only_when_the_mode_may_fuse() {
    use crate::exec::{Limits, PathMode, PathPolicy};
    use std::cell::Cell;
    use vec_host::{VecHost, T};
    static RELU: Program = Program {
        inputs: &[Input::Tensor {
            slot: 0,
            owned: false,
        }],
        ins: &[Ins::Unary {
            f: UnaryF::Relu,
            t: 0,
        }],
        outputs: &[1],
    };
    let x = T::f32(&[3], vec![-1.0, 0.5, 2.0]);
    let roomy = Limits {
        max_macs: 8,
        max_numel: 8,
    };
    let made = Cell::new(0);
    let host = |give: bool| {
        made.set(made.get() + 1);
        Ok(give.then(|| VecHost {
            allocs: Default::default(),
            overwrite: false,
        }))
    };
    let run = |mode: Result<PathMode, String>, auto: Limits, give: bool| {
        PathPolicy::read_as(mode, auto).run::<VecHost, 1>(&RELU, &[&x], &[], || host(give))
    };
    let [y] = run(Ok(PathMode::Auto), roomy, true).unwrap().unwrap();
    assert_eq!(y.data(), vec![0.0, 0.5, 2.0]);
    assert_eq!(made.get(), 1);
    // `per-op` and an unreadable mode never make the host.
    assert!(run(Ok(PathMode::PerOp), roomy, true).unwrap().is_none());
    let err = run(Err("bad mode".into()), roomy, true).err();
    assert_eq!(err.as_deref(), Some("setting: bad mode"));
    assert_eq!(made.get(), 1);
    // A host that declines, and `auto` limits the call exceeds, run the per-op path; `fused`
    // ignores the limits.
    assert!(run(Ok(PathMode::Fused), roomy, false).unwrap().is_none());
    let tight = Limits {
        max_macs: 8,
        max_numel: 2,
    };
    assert!(run(Ok(PathMode::Auto), tight, true).unwrap().is_none());
    assert!(run(Ok(PathMode::Fused), tight, true).unwrap().is_some());
}

#[test]
fn each_path_mode_has_its_limits() {
    use crate::exec::{Limits, PathMode};
    let auto = Limits {
        max_macs: 3,
        max_numel: 5,
    };
    assert_eq!(PathMode::PerOp.limits(auto), None);
    assert_eq!(PathMode::Fused.limits(auto), Some(None));
    assert_eq!(PathMode::Auto.limits(auto), Some(Some(auto)));
}

#[test]
fn region_inputs_prefer_a_tensor_read_then_a_scalar_one_and_number_slots_on_assembly() {
    let inputs = region_inputs(4, &[true, false, true], &[true, true], |i| i == 2);
    assert_eq!(
        inputs,
        vec![
            t(0, false),
            Input::Scalar { slot: 0 },
            t(0, true),
            Input::Unused
        ]
    );
    let ins = vec![Ins::Binary {
        f: Binary::Add,
        a: 0,
        b: 2,
        keep: false,
    }];
    let prog = ProgramBuf::assemble(inputs, ins.clone(), &[0]).expect("a program");
    assert_eq!(
        prog.inputs,
        vec![
            t(0, false),
            Input::Scalar { slot: 0 },
            t(1, true),
            Input::Unused
        ]
    );
    assert_eq!(prog.outputs, vec![4]);
    // A program that yields nothing is not assembled.
    assert_eq!(ProgramBuf::assemble(vec![t(0, false)], ins, &[]), None);
}

/// A layer norm declines inputs eager's row moments overflow on (and non-finite ones), whether
/// its input is the program's (checked before anything runs) or computed in it (checked when it
/// runs); an in-domain input runs fused.
#[test]
fn layer_norm_declines_inputs_outside_its_domain() {
    use vec_host::{VecHost, T};
    static OF_INPUT: Program = Program {
        inputs: &[
            Input::Tensor {
                slot: 0,
                owned: true,
            },
            Input::Scalar { slot: 0 },
        ],
        ins: &[
            Ins::LayerNorm {
                x: 0,
                n: 1,
                w: None,
                b: None,
                eps: None,
            },
            Ins::Unary {
                f: UnaryF::Relu,
                t: 2,
            },
        ],
        outputs: &[3],
    };
    static OF_COMPUTED: Program = Program {
        inputs: &[
            Input::Tensor {
                slot: 0,
                owned: false,
            },
            Input::Scalar { slot: 0 },
            Input::Scalar { slot: 1 },
        ],
        ins: &[
            Ins::Scalar {
                f: Binary::Mul,
                t: 0,
                s: 2,
                rev: false,
            },
            Ins::LayerNorm {
                x: 3,
                n: 1,
                w: None,
                b: None,
                eps: None,
            },
        ],
        outputs: &[4],
    };
    let host = VecHost {
        allocs: Default::default(),
        overwrite: true,
    };
    let row = |v: f32| T::f32(&[2, 3], vec![1.0, 2.0, 4.0, v, v, v]);
    let ok = crate::exec::run::<VecHost, 1>(&host, &OF_INPUT, &[&row(3.0)], &[3.0], None)
        .unwrap()
        .unwrap();
    assert!(ok[0].data().iter().all(|v| v.is_finite()));
    for v in [1e30, -1e20, f32::INFINITY, f32::NAN] {
        let x = row(v);
        let r = crate::exec::run::<VecHost, 1>(&host, &OF_INPUT, &[&x], &[3.0], None).unwrap();
        assert!(r.is_none(), "{v}");
        // Declined before anything ran: the owned input is as it was.
        assert_eq!(x.data()[..3], [1.0, 2.0, 4.0], "{v}");
    }
    // A computed operand: 1e3 is inside the domain, 1e3 * 1e12 is not.
    let x = row(1e3);
    assert!(
        crate::exec::run::<VecHost, 1>(&host, &OF_COMPUTED, &[&x], &[3.0, 1.0], None)
            .unwrap()
            .is_some()
    );
    assert!(
        crate::exec::run::<VecHost, 1>(&host, &OF_COMPUTED, &[&x], &[3.0, 1e12], None)
            .unwrap()
            .is_none()
    );
}

/// A residual MLP step with every instruction that has a feature-major form: linears with bias
/// and a fused activation, layer norms of a program input and of a computed value, GELU in
/// place, a residual add, row (`[h]`) and column (`[m, 1]`) operands, a scalar, softmax, argmax
/// and a reduction over the batch. Inputs: `x [m, f]` (owned), `w1 [h, f]`, `b1 [h]`, `lw [h]`,
/// `lb [h]`, `g [h]`, `col [m, 1]`, `w2 [o, h]`, `b2 [o]`; scalars `h`, `s`, `f`.
static FEATURE_MAJOR: Program = Program {
    inputs: &[
        Input::Tensor {
            slot: 0,
            owned: true,
        },
        Input::Tensor {
            slot: 1,
            owned: false,
        },
        Input::Tensor {
            slot: 2,
            owned: false,
        },
        Input::Tensor {
            slot: 3,
            owned: false,
        },
        Input::Tensor {
            slot: 4,
            owned: false,
        },
        Input::Tensor {
            slot: 5,
            owned: false,
        },
        Input::Tensor {
            slot: 6,
            owned: false,
        },
        Input::Tensor {
            slot: 7,
            owned: false,
        },
        Input::Tensor {
            slot: 8,
            owned: false,
        },
        Input::Scalar { slot: 0 },
        Input::Scalar { slot: 1 },
        Input::Scalar { slot: 2 },
    ],
    ins: &[
        // 12: a = linear(x, w1, b1)
        Ins::Linear {
            x: 0,
            w: 1,
            b: Some(2),
        },
        // 13: layer_norm(a, (h,), lw, lb)
        Ins::LayerNorm {
            x: 12,
            n: 9,
            w: Some(3),
            b: Some(4),
            eps: None,
        },
        // 14: gelu, in place
        Ins::Unary {
            f: UnaryF::Gelu,
            t: 13,
        },
        // 15: a + gelu(...)
        Ins::Binary {
            f: Binary::Add,
            a: 12,
            b: 14,
            keep: false,
        },
        // 16: sigmoid(g), a vector
        Ins::Unary {
            f: UnaryF::Sigmoid,
            t: 5,
        },
        // 17: * sigmoid(g) (a row operand)
        Ins::Binary {
            f: Binary::Mul,
            a: 15,
            b: 16,
            keep: false,
        },
        // 18: - col (a column operand)
        Ins::Binary {
            f: Binary::Sub,
            a: 17,
            b: 6,
            keep: false,
        },
        // 19: * s
        Ins::Scalar {
            f: Binary::Mul,
            t: 18,
            s: 10,
            rev: false,
        },
        // 20: linear(.., w2, b2), then tanh as its epilogue (21)
        Ins::Linear {
            x: 19,
            w: 7,
            b: Some(8),
        },
        Ins::Unary {
            f: UnaryF::Tanh,
            t: 20,
        },
        // 22: softmax over classes
        Ins::Softmax {
            t: 21,
            dim: 1,
            log: false,
            finite_only: false,
        },
        // 23: argmax over classes
        Ins::Argmax {
            t: 22,
            dim: 1,
            keepdim: false,
            finite_only: false,
        },
        // 24: sum over the batch
        Ins::Reduce {
            f: ReduceF::Sum,
            t: 21,
            dim: 0,
            keepdim: false,
        },
        // 25: layer_norm(x, (f,)) of the program input
        Ins::LayerNorm {
            x: 0,
            n: 11,
            w: None,
            b: None,
            eps: None,
        },
    ],
    outputs: &[21, 22, 23, 24, 25],
};

/// [`FEATURE_MAJOR`] on batches of sizes from where the call runs feature-major (whole and
/// ragged vectors of batch rows) against the same program run one batch row at a time
/// (which runs row-major), and the reduction over the batch against the rows' sum. Inputs
/// other than the owned `x` are never written.
#[test]
fn a_feature_major_call_matches_the_rows_run_one_at_a_time() {
    use vec_host::{VecHost, T};
    let host = VecHost {
        allocs: Default::default(),
        overwrite: true,
    };
    // Weights (300·12 + 5·300) outweigh the transposed inputs and outputs (34 per batch row)
    // up to 150 rows: every batch below runs feature-major.
    let (f, h, o) = (12, 300, 5);
    let vals = |n: usize, seed: usize, scale: f32| -> Vec<f32> {
        (0..n)
            .map(|i| (((i * 7919 + seed * 104_729) % 2003) as f32 / 1001.5 - 1.0) * scale)
            .collect()
    };
    let params = [
        T::f32(&[h, f], vals(h * f, 1, 0.4)),
        T::f32(&[h], vals(h, 2, 0.5)),
        T::f32(&[h], vals(h, 3, 1.0)),
        T::f32(&[h], vals(h, 4, 0.3)),
        T::f32(&[h], vals(h, 5, 2.0)),
    ];
    let originals: Vec<Vec<f32>> = params.iter().map(|p| p.data()).collect();
    let (w2, b2) = (
        T::f32(&[o, h], vals(o * h, 7, 0.3)),
        T::f32(&[o], vals(o, 8, 0.1)),
    );
    let scalars = [h as f64, 0.75, f as f64];
    let run = |x: &T, col: &T| {
        let mut args: Vec<&T> = vec![x];
        args.extend(params.iter());
        args.extend([col, &w2, &b2]);
        crate::exec::run::<VecHost, 5>(&host, &FEATURE_MAJOR, &args, &scalars, None)
            .unwrap()
            .unwrap()
    };
    use crate::kernels::{linear_cols_min_rows, with_isa, Isa};
    for isa in [Isa::Avx512, Isa::Avx2Fma, Isa::Portable] {
        if !isa.is_available() {
            continue;
        }
        with_isa(isa, || {
            for m in [linear_cols_min_rows(), 16, 17, 33, 128] {
                let (xv, colv) = (vals(m * f, 10 + m, 3.0), vals(m, 11 + m, 1.0));
                let shapes: Vec<Option<Shape>> =
                    [&[m, f][..], &[h, f], &[h], &[h], &[h], &[h], &[m, 1]]
                        .iter()
                        .map(|s| Shape::of(s))
                        .chain([sh(&[o, h]), sh(&[o]), None, None, None])
                        .collect();
                let planned = plan(FEATURE_MAJOR.view(), &shapes).unwrap();
                assert_eq!(planned.layout, Layout::Cols, "{isa:?} {m}");
                assert_eq!(planned.enter, vec![0], "{m}: x enters transposed");
                assert_eq!(
                    planned.leave,
                    vec![0, 1, 4],
                    "{m}: the matrix outputs leave"
                );
                let (x, col) = (T::f32(&[m, f], xv.clone()), T::f32(&[m, 1], colv.clone()));
                let got = run(&x, &col);
                assert_eq!(x.data(), xv, "{m}: x is read through its transposed copy");
                let mut sum = vec![0.0f64; o];
                for i in 0..m {
                    let (xi, ci) = (
                        T::f32(&[1, f], xv[i * f..(i + 1) * f].to_vec()),
                        T::f32(&[1, 1], vec![colv[i]]),
                    );
                    let one = run(&xi, &ci);
                    for (k, width) in [(0, o), (1, o), (4, f)] {
                        let (g, w) = (got[k].data(), one[k].data());
                        assert_eq!(got[k].shape, vec![m, width]);
                        for c in 0..width {
                            let (g, w) = (g[i * width + c], w[c]);
                            assert!(
                                (g - w).abs() <= 2e-5 * w.abs().max(1.0),
                                "{m}: output {k} [{i}, {c}]: {g} vs {w}"
                            );
                        }
                    }
                    let p = one[1].data();
                    let best = one[2].i.borrow()[0];
                    let second = (0..o)
                        .filter(|&c| c as i64 != best)
                        .map(|c| p[c])
                        .fold(f32::MIN, f32::max);
                    if p[best as usize] - second > 1e-5 {
                        assert_eq!(got[2].i.borrow()[i], best, "{m}: label of row {i}");
                    }
                    for (c, s) in sum.iter_mut().enumerate() {
                        *s += f64::from(one[0].data()[c]);
                    }
                }
                for (c, &s) in sum.iter().enumerate() {
                    let g = f64::from(got[3].data()[c]);
                    assert!(
                        (g - s).abs() <= 1e-5 * s.abs().max(1.0),
                        "{m}: sum {c}: {g} vs {s}"
                    );
                }
                for (t, (p, v)) in params.iter().zip(&originals).enumerate() {
                    assert_eq!(&p.data(), v, "{m}: parameter {t} unchanged");
                }
            }
        })
        .unwrap();
    }
    // One batch row runs row-major.
    let shapes: Vec<Option<Shape>> = [&[1, f][..], &[h, f], &[h], &[h], &[h], &[h], &[1, 1]]
        .iter()
        .map(|s| Shape::of(s))
        .chain([sh(&[o, h]), sh(&[o]), None, None, None])
        .collect();
    assert_eq!(
        plan(FEATURE_MAJOR.view(), &shapes).unwrap().layout,
        Layout::Rows
    );
}

/// A call runs feature-major only from [`crate::kernels::linear_cols_min_rows`] batch rows, when
/// its weights outweigh the inputs and outputs it would transpose, its weights are read as
/// nothing else, and every instruction has a feature-major form.
#[test]
fn the_layout_weighs_the_transposes_against_the_weights() {
    use crate::kernels::linear_cols_min_rows;
    let inputs = [t(0, false), t(1, false), t(2, false)];
    let linear = [Ins::Linear {
        x: 0,
        w: 1,
        b: Some(2),
    }];
    let layout = |ins: &[Ins], m: usize, k: usize, n: usize| {
        let shapes = [sh(&[m, k]), sh(&[n, k]), sh(&[n])];
        plan(view(&inputs, ins, &[3]), &shapes).map(|p| p.layout)
    };
    let min = linear_cols_min_rows();
    // 48 -> 96: 4608 weights against 144 elements in and out per row.
    assert_eq!(layout(&linear, min, 48, 96), Some(Layout::Cols));
    assert_eq!(layout(&linear, 32, 48, 96), Some(Layout::Cols));
    assert_eq!(layout(&linear, min - 1, 48, 96), Some(Layout::Rows));
    assert_eq!(layout(&linear, 33, 48, 96), Some(Layout::Rows));
    // 20 -> 48: 960 weights, 68 elements per row.
    assert_eq!(layout(&linear, min, 20, 48), Some(Layout::Rows));
    // A weight also read as an activation, or a matmul in the call: row-major.
    let reread = [
        linear[0],
        Ins::Unary {
            f: UnaryF::Relu,
            t: 1,
        },
    ];
    let shapes = [sh(&[32, 48]), sh(&[96, 48]), sh(&[96])];
    assert_eq!(
        plan(view(&inputs, &reread, &[3, 4]), &shapes).map(|p| p.layout),
        Some(Layout::Rows)
    );
    let with_matmul = [linear[0], Ins::Matmul { a: 3, b: 1 }];
    let shapes = [sh(&[32, 48]), sh(&[96, 48]), sh(&[96])];
    assert_eq!(
        plan(view(&inputs, &with_matmul, &[4]), &shapes).map(|p| p.layout),
        Some(Layout::Rows)
    );
}
