//! Unit tests of the runtime's per-site ops on libtorch tensors made here: results follow
//! eager's semantics (values worked out by hand, specials included), owned temporaries are
//! written in place only where the result keeps their shape, views come back as fresh tensors,
//! and every libtorch error is a Python exception of the kind eager raises, with libtorch's
//! message and without its C++ backtrace. Run by `cargo xtask test` (`--features runtime`).

use super::*;
use rextio_plugin_api::runtime::memo::{Stamp, Stamping};
use tch::Tensor;

fn t1(v: &[f32]) -> RxtTorchTensor {
    RxtTorchTensor::from_tensor(Tensor::from_slice(v))
}

fn t2(rows: usize, v: &[f32]) -> RxtTorchTensor {
    let cols = i64::try_from(v.len() / rows).unwrap();
    let rows = i64::try_from(rows).unwrap();
    RxtTorchTensor::from_tensor(Tensor::from_slice(v).reshape([rows, cols]))
}

fn values(t: &RxtTorchTensor) -> Vec<f32> {
    Vec::<f32>::try_from(t.tensor().flatten(0, -1)).unwrap()
}

fn ints(t: &RxtTorchTensor) -> Vec<i64> {
    Vec::<i64>::try_from(t.tensor().flatten(0, -1)).unwrap()
}

fn sizes(t: &RxtTorchTensor) -> Vec<i64> {
    t.tensor().size()
}

/// The error's Python type name and message.
fn error(e: PyErr) -> (String, String) {
    Python::initialize();
    Python::attach(|py| {
        let name = e.get_type(py).name().unwrap().to_string();
        (name, e.value(py).to_string())
    })
}

#[test]
fn linear_computes_x_wt_plus_b_and_a_width_mismatch_is_a_clean_runtime_error() {
    let x = t2(1, &[1.0, 2.0]);
    let w = t2(3, &[1.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
    let b = t1(&[0.5, 0.0, -1.0]);
    let y = linear(&x, &w, Some(&b)).unwrap();
    assert_eq!(sizes(&y), [1, 3]);
    assert_eq!(values(&y), [1.5, 2.0, 2.0]);
    assert_eq!(values(&linear(&x, &w, None).unwrap()), [1.0, 2.0, 3.0]);

    let wide = t2(1, &[1.0, 2.0, 3.0]);
    let (kind, message) = error(linear(&x, &wide, None).err().unwrap());
    assert_eq!(kind, "RuntimeError");
    assert!(message.starts_with("rextio-torch: "), "{message}");
    assert!(!message.contains("Exception raised from"), "{message}");
    assert!(!message.contains("Internal torch error"), "{message}");
}

#[test]
fn an_owned_operand_is_written_in_place_only_when_the_result_keeps_its_shape() {
    let a = t2(2, &[1.0, 2.0, 3.0, 4.0]);
    let before = a.tensor().data_ptr();
    let b = t1(&[10.0, 20.0]);
    let sum = add_owned(a, &b).unwrap();
    assert_eq!(
        sum.tensor().data_ptr(),
        before,
        "a broadcast into `a` reuses its buffer"
    );
    assert_eq!(values(&sum), [11.0, 22.0, 13.0, 24.0]);

    // `[2] - [2, 2]` has the larger shape: a fresh result, and the row is left as it was.
    let row = t1(&[1.0, 2.0]);
    let row_ptr = row.tensor().data_ptr();
    let m = t2(2, &[1.0, 1.0, 5.0, 5.0]);
    let diff = sub_owned(row.clone(), &m).unwrap();
    assert_eq!(sizes(&diff), [2, 2]);
    assert_ne!(diff.tensor().data_ptr(), row_ptr);
    assert_eq!(values(&diff), [0.0, 1.0, -4.0, -3.0]);
    assert_eq!(values(&row), [1.0, 2.0]);
}

#[test]
fn reversed_scalar_ops_follow_eager() {
    let t = t1(&[1.0, 2.0, 0.0, -4.0]);
    assert_eq!(values(&rsub_scalar(&t, 3.0).unwrap()), [2.0, 1.0, 3.0, 7.0]);
    // `s / t` is `t.reciprocal() * s`: 1 / 0 is inf, and the input is untouched.
    assert_eq!(
        values(&rdiv_scalar(&t, 2.0).unwrap()),
        [2.0, 1.0, f32::INFINITY, -0.5]
    );
    assert_eq!(values(&t), [1.0, 2.0, 0.0, -4.0]);
    assert_eq!(
        values(&rdiv_scalar_owned(t1(&[4.0, -0.0]), 1.0).unwrap()),
        [0.25, f32::NEG_INFINITY]
    );
    // A float32 tensor with a Python int stays float32.
    assert_eq!(
        add_scalar(&t, 1i64).unwrap().tensor().kind(),
        tch::Kind::Float
    );
}

#[test]
fn unary_ops_and_their_owned_forms_keep_specials() {
    let x = [-1.0f32, 0.0, 4.0, f32::NAN];
    let relu = values(&unary(Unary::Relu, &t1(&x)).unwrap());
    assert_eq!(&relu[..3], [0.0, 0.0, 4.0]);
    assert!(relu[3].is_nan(), "relu keeps NaN");
    let sqrt = values(&unary_owned(Unary::Sqrt, t1(&x)).unwrap());
    assert!(sqrt[0].is_nan());
    assert_eq!(&sqrt[1..3], [0.0, 2.0]);
    let neg = values(&unary(Unary::Neg, &t1(&[1.0, -0.0])).unwrap());
    assert_eq!(neg[0], -1.0);
    assert!(
        neg[1] == 0.0 && neg[1].is_sign_positive(),
        "-(-0.0) is +0.0"
    );
    let abs = values(&unary(Unary::Abs, &t1(&[-2.5, 3.0])).unwrap());
    assert_eq!(abs, [2.5, 3.0]);
}

#[test]
fn activations_with_parameters_use_eager_defaults() {
    let x = t1(&[-2.0, 0.0, 3.0]);
    // Default slope 0.01; a given slope through `where`.
    let leaky = values(&leaky_relu(&x).unwrap());
    assert!((leaky[0] + 0.02).abs() < 1e-7, "{leaky:?}");
    assert_eq!(&leaky[1..], [0.0, 3.0]);
    assert_eq!(
        values(&leaky_relu_slope(&x, 0.5).unwrap()),
        [-1.0, 0.0, 3.0]
    );
    // softplus's threshold 20: above it the input itself.
    assert_eq!(values(&softplus(&t1(&[25.0])).unwrap()), [25.0]);
    // Other parameters through the shim: beta scales the input before the threshold test, and
    // log1p(exp(beta * x)) / beta below it; elu's alpha scales exp(x) - 1.
    let sp = values(&softplus_params(&t1(&[3.0, 0.0]), 2.0, 5.0).unwrap());
    assert!(
        sp[0] == 3.0 && (sp[1] - std::f32::consts::LN_2 / 2.0).abs() < 1e-7,
        "{sp:?}"
    );
    let ea = values(&elu_alpha(&t1(&[-1.0, 2.0]), 0.5).unwrap());
    assert!(
        (ea[0] - (-0.316_060_28)).abs() < 1e-6 && ea[1] == 2.0,
        "{ea:?}"
    );
    // elu with alpha 1: exp(x) - 1 below zero.
    let elu = values(&elu(&t1(&[-1.0, 2.0])).unwrap());
    assert!(
        (elu[0] - (-0.632_120_56)).abs() < 1e-6 && elu[1] == 2.0,
        "{elu:?}"
    );
    // clamp with min above max answers max everywhere, as eager does.
    assert_eq!(values(&clamp(&x, 2.0, 1.0).unwrap()), [1.0, 1.0, 1.0]);
}

#[test]
fn reductions_return_eager_dtypes_and_first_index_ties() {
    let m = t2(2, &[1.0, 5.0, 5.0, -1.0, -2.0, -3.0]);
    let idx = argmax(&m, 1, false).unwrap();
    assert_eq!(idx.tensor().kind(), tch::Kind::Int64);
    assert_eq!(ints(&idx), [1, 0], "a tie takes the first index");
    let (values_, indices) = max_dim(&m, 0, false).unwrap();
    assert_eq!(values(&values_), [1.0, 5.0, 5.0]);
    assert_eq!(ints(&indices), [0, 0, 0]);
    assert_eq!(values(&mean_dim(&m, 1, false).unwrap()), [11.0 / 3.0, -2.0]);
    assert_eq!(sizes(&sum_dim(&m, 0, true).unwrap()), [1, 3]);
    assert_eq!(values(&amin_dim(&m, 0, false).unwrap()), [-1.0, -2.0, -3.0]);
    let sm = values(&softmax(&t2(1, &[0.0, 0.0]), 1).unwrap());
    assert_eq!(sm, [0.5, 0.5]);
}

#[test]
fn layer_norm_normalises_the_last_dim_and_checks_its_size() {
    let x = t2(2, &[1.0, 3.0, -2.0, -2.0]);
    let w = t1(&[2.0, 1.0]);
    let b = t1(&[0.0, 1.0]);
    let y = values(&layer_norm(&x, 2, Some(&w), Some(&b), 0.0).unwrap());
    // Row 1: mean 2, variance 1 -> [-1, 1], scaled and shifted -> [-2, 2]. Row 2 is constant
    // and eps is 0: (x - mean) * rsqrt(0) is 0 * inf, NaN in eager too.
    assert_eq!(&y[..2], [-2.0, 2.0]);
    assert!(y[2].is_nan() && y[3].is_nan(), "{y:?}");
    let (kind, message) = error(layer_norm(&x, 3, None, None, 1e-5).err().unwrap());
    assert_eq!(kind, "RuntimeError");
    assert!(message.starts_with("rextio-torch: "), "{message}");
}

#[test]
fn views_come_back_as_fresh_tensors() {
    let m = t2(2, &[1.0, 2.0, 3.0, 4.0]);
    let tr = transpose(&m, 0, 1).unwrap();
    assert_eq!(values(&tr), [1.0, 3.0, 2.0, 4.0]);
    assert_ne!(tr.tensor().data_ptr(), m.tensor().data_ptr());
    assert!(tr.tensor().is_contiguous());
    let u = unsqueeze(&t1(&[1.0, 2.0]), 0).unwrap();
    assert_eq!(sizes(&u), [1, 2]);
    let f = flatten(&m, 0, 1).unwrap();
    assert_eq!(sizes(&f), [4]);
    assert_ne!(f.tensor().data_ptr(), m.tensor().data_ptr());
}

#[test]
fn cat_and_where_follow_eager_and_cat_reports_a_size_mismatch() {
    let a = t2(1, &[1.0, 2.0]);
    let b = t2(1, &[3.0, 4.0]);
    let rows = cat(&(a.clone(), b.clone()), 0).unwrap();
    assert_eq!(sizes(&rows), [2, 2]);
    let cols = cat(&(a.clone(), b.clone()), -1).unwrap();
    assert_eq!(values(&cols), [1.0, 2.0, 3.0, 4.0]);
    let single = cat(&(a.clone(),), 0).unwrap();
    assert_ne!(
        single.tensor().data_ptr(),
        a.tensor().data_ptr(),
        "never an alias"
    );
    let c = t2(1, &[1.0, 2.0, 3.0]);
    let (kind, _) = error(cat(&(a.clone(), c), 0).err().unwrap());
    assert_eq!(kind, "RuntimeError");

    let cond = gt_scalar(&a, 1.5).unwrap();
    assert_eq!(cond.tensor().kind(), tch::Kind::Bool);
    assert_eq!(values(&where_tensors(&cond, &a, &b).unwrap()), [3.0, 2.0]);
    let picked = where_tensor_scalar(&cond, &a, 0.0).unwrap();
    assert_eq!(picked.tensor().kind(), tch::Kind::Float);
    assert_eq!(values(&picked), [0.0, 2.0]);
}

#[test]
fn shape_reads_are_exact_and_out_of_range_dims_are_index_errors() {
    let m = t2(2, &[0.0; 6]);
    assert_eq!(size_dim(&m, 1).unwrap(), 3);
    assert_eq!(shape_2d(&m).unwrap(), (2, 3));
    assert_eq!(ndim(&m).unwrap(), 2);
    assert_eq!(numel(&m).unwrap(), 6);
    let (kind, message) = error(size_dim(&m, 2).err().unwrap());
    assert_eq!(kind, "IndexError");
    assert!(
        message.contains("dimension 2 out of range for a rank-2"),
        "{message}"
    );
    // Claims pass normalised literal dims; anything else is an error, never a panic.
    assert_eq!(error(size_dim(&m, -1).err().unwrap()).0, "IndexError");
    assert_eq!(error(shape_1d(&m).err().unwrap()).0, "RuntimeError");
}

#[test]
fn dropout_checks_p_as_eager_and_passes_its_input_through_out_of_training() {
    let x = t1(&[1.0, -2.0, 3.0, 4.0]);
    // Eager's check, before any kernel: a ValueError naming the probability.
    for p in [-0.25, 1.5] {
        assert_eq!(
            error(dropout(&x, p, true).unwrap_err()),
            (
                "ValueError".to_owned(),
                format!("dropout probability has to be between 0 and 1, but got {p:?}")
            )
        );
    }
    // NaN passes eager's check, and libtorch refuses it in either mode (a RuntimeError).
    for training in [false, true] {
        let (name, _) = error(dropout(&x, f64::NAN, training).unwrap_err());
        assert_eq!(name, "RuntimeError");
    }
    // Out of training mode, and at p = 0: eager's values (its input), in memory of their own
    // (lowered code may write into a result).
    for (p, training) in [(0.9, false), (0.0, true)] {
        let copy = dropout(&x, p, training).unwrap();
        assert_eq!(values(&copy), values(&x));
        assert_ne!(copy.tensor().data_ptr(), x.tensor().data_ptr());
    }
    // In training mode: p = 1 zeroes, p = 0 keeps the values in a new tensor, and otherwise
    // the kept values are scaled by 1 / (1 - p).
    assert_eq!(values(&dropout(&x, 1.0, true).unwrap()), [0.0; 4]);
    assert_eq!(values(&dropout(&x, 0.0, true).unwrap()), values(&x));
    let big = t1(&[1.0; 4096]);
    let d = values(&dropout(&big, 0.5, true).unwrap());
    assert!(d.iter().all(|&v| v == 0.0 || v == 2.0), "{:?}", &d[..8]);
    let kept = d.iter().filter(|&&v| v == 2.0).count();
    assert!(
        (1700..2400).contains(&kept),
        "{kept} of 4096 kept at p = 0.5"
    );
}

/// The stamp of a Python tensor (what lets a module method reuse the state it converted)
/// follows everything its conversion and admission depend on, and nothing else: a write of its
/// values keeps it; a new storage, a transpose in place, a resize, a swap of its contents with
/// another tensor, a dtype change through `.data`, and grad recording change it.
#[test]
fn a_tensors_stamp_follows_what_its_conversion_depends_on() {
    use pyo3::types::PyDict;
    Python::initialize();
    Python::attach(|py| {
        let g = PyDict::new(py);
        g.set_item("torch", py.import("torch").unwrap()).unwrap();
        let run = |code: &str| {
            let code = std::ffi::CString::new(code).unwrap();
            py.run(&code, Some(&g), None).unwrap();
        };
        let stamp_of = |name: &str| {
            let w = g.get_item(name).unwrap().unwrap();
            let mut out = Vec::new();
            assert!(module_stamps(&[w], Stamping::Make(&mut out)));
            out[0]
        };
        // Whether `name` still has stamp `s`, as a kept state's check asks (it must agree with
        // a fresh stamp's comparison).
        let has = |name: &str, s: Stamp| {
            let w = g.get_item(name).unwrap().unwrap();
            let checked = module_stamps(&[w], Stamping::Check(&[s]));
            assert_eq!(
                checked,
                stamp_of(name) == s,
                "the check and a fresh stamp disagree"
            );
            checked
        };
        let stamp = || stamp_of("w");
        run("w = torch.nn.Parameter(torch.randn(4, 3)); other = torch.randn(4, 3)");
        run("buf = torch.randn(4, 3)");
        run("torch.set_grad_enabled(False)");
        let s = stamp();
        assert!(has("w", s), "the same tensor, unchanged");
        run("w.add_(1.0); w.mul_(0.5)");
        assert!(has("w", s), "values written in place");
        run("torch.set_grad_enabled(True)");
        assert!(!has("w", s), "grad mode on and the parameter requires grad");
        run("w.requires_grad_(False)");
        assert!(has("w", s), "grad mode on, nothing requires grad");
        run("w.requires_grad_(True); torch.set_grad_enabled(False)");
        assert!(has("w", s));
        run("w.t_()");
        assert!(!has("w", s), "transposed in place");
        run("w.t_()");
        assert!(has("w", s), "transposed back");
        run("w.set_(torch.randn(4, 3))");
        let s = stamp();
        run("w.data = w.data.clone()");
        assert!(!has("w", s), "a new storage through .data");
        // A buffer (a parameter that requires grad cannot be resized).
        let b = stamp_of("buf");
        run("buf.resize_(2, 3)");
        assert!(!has("buf", b), "shrunk in place");
        run("buf.resize_(4, 3)");
        assert!(has("buf", b), "grown back within its storage");
        run("buf.resize_(5, 3)");
        assert!(!has("buf", b), "grown past its storage");
        let s = stamp();
        run("torch.utils.swap_tensors(w, other)");
        assert!(!has("w", s), "contents swapped with another tensor");
        let s = stamp();
        run("w.data = w.data.double()");
        assert!(!has("w", s), "float64 through .data");
        run("torch.set_grad_enabled(True)");
        // Builtin values are stamped by identity; anything else has no stamp.
        let mut out = Vec::new();
        let scalars = [
            1.5f64.into_pyobject(py).unwrap().into_any(),
            (48i64,).into_pyobject(py).unwrap().into_any(),
        ];
        assert!(module_stamps(&scalars, Stamping::Make(&mut out)) && out.len() == 2);
        assert!(out.iter().all(Stamp::is_immutable));
        assert!(module_stamps(&scalars, Stamping::Check(&out)));
        let list = pyo3::types::PyList::new(py, [1.0]).unwrap().into_any();
        assert!(!module_stamps(&[list], Stamping::Make(&mut out)));
        // A tensor's stamp is never taken for an immutable value's.
        let w = g.get_item("w").unwrap().unwrap();
        assert!(module_stamps(
            std::slice::from_ref(&w),
            Stamping::Make(&mut out)
        ));
        assert!(!out[0].is_immutable());
        assert!(!module_stamps(&[w], Stamping::Check(&[])));
    });
}

/// A small result Python has let go of is taken over by a later result of the same size (its
/// object holds the new values), and a result anything can still reach never is: one Python
/// refers to, one with a view, an attribute, a weak reference or grad state, one written in
/// place, and one made in another inference mode. Each result holds its own values throughout.
#[test]
fn a_dropped_result_is_reused_and_a_reachable_one_never_is() {
    use pyo3::types::PyDict;
    Python::initialize();
    Python::attach(|py| {
        let g = PyDict::new(py);
        g.set_item("torch", py.import("torch").unwrap()).unwrap();
        g.set_item("weakref", py.import("weakref").unwrap())
            .unwrap();
        let run = |code: &str| {
            let code = std::ffi::CString::new(code).unwrap();
            py.run(&code, Some(&g), None).unwrap();
        };
        let eval = |code: &str| {
            let code = std::ffi::CString::new(code).unwrap();
            py.eval(&code, Some(&g), None).unwrap()
        };
        // A fresh `[1, 3]` result of the runtime's own, as the fused path makes them.
        let result = |v: f32| -> Bound<'_, PyAny> {
            let (t, data) = shim::empty_cpu(&[1, 3], shim::SCALAR_FLOAT).unwrap();
            // SAFETY: `empty_cpu` gave three writable floats.
            unsafe { std::slice::from_raw_parts_mut(data.cast::<f32>(), 3) }.fill(v);
            wrap(py, RxtTorchTensor::from_tensor(t))
                .unwrap()
                .into_bound(py)
        };
        let values = |name: &str| -> Vec<f32> {
            eval(&format!("{name}.flatten().tolist()"))
                .extract()
                .unwrap()
        };
        run("torch.set_grad_enabled(False)");
        // Fill the table with results Python keeps, so that only the next one can be reused.
        for i in 0..4 {
            g.set_item(format!("held{i}"), result(-1.0)).unwrap();
        }
        let a = result(1.0);
        let first = a.as_ptr();
        drop(a);
        let b = result(2.0);
        assert_eq!(b.as_ptr(), first, "a dropped result is taken over");
        g.set_item("b", &b).unwrap();
        assert_eq!(values("b"), [2.0; 3]);
        assert_eq!(
            eval("b.shape").str().unwrap().to_string(),
            "torch.Size([1, 3])"
        );
        assert!(!eval("b.requires_grad or b.is_inference()")
            .is_truthy()
            .unwrap());
        assert_eq!(eval("b._version").extract::<u32>().unwrap(), 0);
        // Still referenced by Python: never overwritten.
        let c = result(3.0);
        assert_ne!(c.as_ptr(), b.as_ptr());
        assert_eq!(values("b"), [2.0; 3]);
        drop(c);
        drop(b);
        g.del_item("b").unwrap();
        // Each way something can still reach a dropped result, or tell it from a fresh one.
        let blockers = [
            ("kept = r.view(3)", "a view"),
            ("r.tag = 1", "an attribute"),
            ("kept = weakref.ref(r)", "a weak reference"),
            ("_ = r.add_(10.0)", "an in-place write"),
            ("_ = r.requires_grad_()", "grad state"),
        ];
        for (block, what) in blockers {
            let r = result(4.0);
            g.set_item("r", &r).unwrap();
            run(&format!("kept = None\n{block}\n_ = None"));
            let gone = r.as_ptr();
            drop(r);
            g.del_item("r").unwrap();
            let next = result(5.0);
            assert_ne!(
                next.as_ptr(),
                gone,
                "{what}: a result still reachable was reused"
            );
            g.set_item("next", next).unwrap();
            assert_eq!(values("next"), [5.0; 3], "{what}");
            if what == "a view" {
                assert_eq!(values("kept"), [4.0; 3], "the view sees its own values");
            }
            run("del kept, next");
        }
        // A result made outside inference mode is not an inference result, and the reverse.
        let r = result(6.0);
        let outside = r.as_ptr();
        drop(r);
        run("_mode = torch.inference_mode(); _mode.__enter__()");
        let inside = result(7.0);
        assert_ne!(inside.as_ptr(), outside);
        g.set_item("inside", inside).unwrap();
        assert!(eval("inside.is_inference()").is_truthy().unwrap());
        assert_eq!(values("inside"), [7.0; 3]);
        run("_mode.__exit__(None, None, None); del inside, _mode");
        for i in 0..4 {
            assert_eq!(values(&format!("held{i}")), [-1.0; 3]);
        }
        run("torch.set_grad_enabled(True)");
    });
}
