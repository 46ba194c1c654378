//! End-to-end with TensorFlow: fixture projects built by the real host with real cargo, then
//! compared with eager TensorFlow 2.21.0 in the project venv.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rextio_tests::build;

#[test]
fn tensorflow_model_routes_as_documented_and_matches_eager() {
    let built = build("tf_model");
    for f in [
        "encode", "score", "label", "stats", "flipped", "vector", "activate", "rectify", "head",
    ] {
        assert_eq!(
            built.route(&format!("tfmodel.net.{f}")),
            "native-plugin:rextio-tensorflow",
            "{f}"
        );
    }
    for (f, code) in [
        ("typed_argmax", "RXTP-TENSORFLOW-008"),
        ("transposed_matmul", "RXTP-TENSORFLOW-001"),
        ("softmax_axis0", "RXTP-TENSORFLOW-007"),
        ("method_style", "RXT005"),
    ] {
        let q = format!("tfmodel.net.{f}");
        assert_eq!(built.route(&q), "fallback-python", "{f}");
        assert_eq!(built.codes(&q), vec![code.to_owned()], "{f}");
    }
    // Straight-line runs are fused programs of the fusion crate, with the per-op TFE path as
    // their fallback; every path matches eager.
    let lib =
        std::fs::read_to_string(built.dir.path().join(".rextio/build/crate/src/lib.rs")).unwrap();
    for want in [
        "::rextio_tensorflow::runtime::fused::<",
        "UnaryF::ReluPlusZero",
        "finite_only: true",
        "Ins::Matmul",
        "Ins::Transpose",
    ] {
        assert!(lib.contains(want), "{want} is not in the generated crate");
    }
    for path in ["auto", "fused", "per-op"] {
        let out = built.run_python("check_tf_model.py", &[("REXTIO_TF_PATH", path)]);
        assert!(out.contains("tf_model ok"), "{path}: {out}");
    }
    // A misspelt path is an error naming the variable, not a silent default.
    let run = std::process::Command::new(rextio_tests::python())
        .args([
            "-c",
            "import tensorflow as tf; from tfmodel import net; x = tf.ones([2, 3]); net.activate(x, x)",
        ])
        .env("PYTHONPATH", &built.out.python_dir)
        .env("REXTIO_NATIVE_MODE", "native")
        .env("REXTIO_TF_PATH", "fastest")
        .current_dir(rextio_tests::workspace_root())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        !run.status.success()
            && stderr.contains("REXTIO_TF_PATH must be `auto`, `fused` or `per-op`"),
        "{stderr}"
    );
    // The wheel declares what the plugin needs at run time.
    let wheel = built.out.wheel.clone().unwrap();
    let file = std::fs::File::open(&wheel).unwrap();
    let mut zip = zip::ZipArchive::new(file).unwrap();
    let mut metadata = String::new();
    std::io::Read::read_to_string(
        &mut zip.by_name("tf_model-0.0.0.dist-info/METADATA").unwrap(),
        &mut metadata,
    )
    .unwrap();
    assert!(
        metadata.contains("Requires-Dist: tensorflow-cpu==2.21.0"),
        "{metadata}"
    );
    assert!(
        metadata.contains("Requires-Dist: rextio-tensorflow-types==0.1.0"),
        "{metadata}"
    );
}

#[test]
fn a_wrong_tensorflow_is_an_import_error_so_auto_falls_back_and_native_raises() {
    let built = build("tf_model");
    // Pretend the imported tensorflow is another release: the module-init hook refuses to bind.
    let script = "import tensorflow as tf\ntf.__version__ = '2.20.0'\nimport warnings, types\nwith warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('always')\n    from tfmodel import net\nprint(isinstance(net.encode, types.FunctionType), any('unavailable' in str(x.message) for x in w))\n";
    let run = |mode: &str| {
        std::process::Command::new(rextio_tests::python())
            .args(["-c", script])
            .env("PYTHONPATH", &built.out.python_dir)
            .env("REXTIO_NATIVE_MODE", mode)
            .output()
            .unwrap()
    };
    let auto = run("auto");
    assert_eq!(
        String::from_utf8_lossy(&auto.stdout).trim(),
        "True True",
        "{}",
        String::from_utf8_lossy(&auto.stderr)
    );
    let native = run("native");
    assert!(!native.status.success());
    let err = String::from_utf8_lossy(&native.stderr);
    assert!(
        err.contains("ImportError") && err.contains("2.21.0"),
        "{err}"
    );
}

#[test]
fn both_backends_work_side_by_side_and_mixing_them_stays_python() {
    let built = build("side_by_side");
    assert_eq!(
        built.route("both.ops.torch_head"),
        "native-plugin:rextio-torch"
    );
    assert_eq!(
        built.route("both.ops.tf_head"),
        "native-plugin:rextio-tensorflow"
    );
    assert_eq!(built.route("both.ops.mixed"), "fallback-python");
    assert_eq!(built.codes("both.ops.mixed"), vec!["RXT020".to_owned()]);
    let out = built.run_python("check_side_by_side.py", &[]);
    assert!(out.contains("side_by_side ok"), "{out}");
}
