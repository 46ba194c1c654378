//! End-to-end: a package of `torch.nn.Module` classes built by the real host, whose annotated
//! methods are compiled while `__init__` and the class itself stay the user's Python, compared
//! with the eager original in every REXTIO_NATIVE_MODE.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rextio_tests::build;

#[test]
fn module_classes_compile_their_methods_and_keep_the_eager_contract() {
    let built = build("modules");
    // Methods of module classes route as functions named `module.Class.method`: submodule calls,
    // ModuleList loops, Sequential trees, parameters, buffers, scalar attributes, calls to other
    // methods and to project free functions.
    for q in [
        "mdl.blocks.mix",
        "mdl.blocks.ResidualBlock.forward",
        "mdl.blocks.Gate.forward",
        "mdl.blocks.Mixer.forward",
        "mdl.model.Scorer.forward",
        "mdl.model.Scorer.predict",
        "mdl.model.Scorer.probs",
        "mdl.model.Encoder.forward",
        "mdl.model.Encoder.weights",
        "mdl.model.Towers.forward",
        "mdl.model.Stack.forward",
        "mdl.model.Stack.ends",
        "mdl.model.Stack.joined",
        "mdl.model.Stack.ranged",
        "mdl.model.Stack.zipped",
        "mdl.model.Stack.stacked",
        "mdl.model.Stack.frozen",
        "mdl.model.Tuned.ends",
        "mdl.model.Tuned.both",
        "mdl.model.Tuned.stacked",
        "mdl.model.Named.forward",
        "mdl.model.Named.parts",
        "mdl.model.Layered.forward",
        "mdl.model.Tabular.forward",
        "mdl.model.InPlace.forward",
        "mdl.model.InPlace.residual",
        "mdl.model.Regularized.forward",
        "mdl.model.Regularized.noisy",
        "mdl.model.Heads.forward",
        "mdl.model.Heads.regress",
        "mdl.model.Tempered.forward",
    ] {
        assert_eq!(built.route(q), "native-plugin:rextio-torch", "{q}");
    }
    // In-place activations whose write the caller could see keep the method on Python.
    for q in [
        "mdl.model.InPlace.stem",
        "mdl.model.InPlace.shared",
        "mdl.model.InPlace.accumulate",
    ] {
        assert_eq!(built.route(q), "fallback-python", "{q}");
        assert!(
            built.codes(q).contains(&"RXTP-TORCH-004".to_owned()),
            "{q}: {:?}",
            built.codes(q)
        );
    }
    // Unannotated parameters, and a branch on a tensor value, keep the method on Python.
    let untyped = built.codes("mdl.model.Untyped.forward");
    assert_eq!(built.route("mdl.model.Untyped.forward"), "fallback-python");
    assert!(untyped.contains(&"RXT001".to_owned()), "{untyped:?}");
    let branchy = built.codes("mdl.model.Branchy.forward");
    assert_eq!(built.route("mdl.model.Branchy.forward"), "fallback-python");
    assert!(!branchy.is_empty(), "Branchy.forward has no diagnostic");
    for mode in ["native", "auto", "fallback"] {
        let out = built.run_python("check_modules.py", &[("REXTIO_NATIVE_MODE", mode)]);
        assert!(out.contains(&format!("modules ok ({mode})")), "{out}");
    }
    // Both torch paths under the native bodies: the fused kernels and per-op libtorch.
    for path in ["fused", "per-op"] {
        let out = built.run_python("check_modules.py", &[("REXTIO_TORCH_PATH", path)]);
        assert!(out.contains("modules ok (native)"), "{path}: {out}");
    }
}
