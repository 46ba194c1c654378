//! Every row of the op tables that lists several spellings (`tf.sqrt` / `tf.math.sqrt`,
//! `tf.add` / `tf.math.add`) lists names that the pinned TensorFlow binds to one function object,
//! so the rule's one lowering is TensorFlow's answer for each of them. Checked against the real
//! TensorFlow of `REXTIO_TF_PYTHON`, else `REXTIO_PYTHON` (`cargo xtask test` sets it to the
//! project venv); the test fails without one, it never skips.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rextio_tensorflow::rules::{ARITH, MATH_UNARY};
use std::process::Command;

#[test]
fn each_rows_spellings_are_one_tensorflow_function() {
    let python = std::env::var("REXTIO_TF_PYTHON")
        .or_else(|_| std::env::var("REXTIO_PYTHON"))
        .expect("set REXTIO_TF_PYTHON (or REXTIO_PYTHON) to an interpreter with tensorflow-cpu==2.21.0; `cargo xtask test` does");
    let mut rows: Vec<Vec<&str>> = MATH_UNARY.iter().map(|u| u.targets.to_vec()).collect();
    rows.extend(ARITH.iter().map(|a| a.targets.to_vec()));
    let with_aliases = rows.iter().filter(|r| r.len() > 1).count();
    assert!(with_aliases >= 9, "{rows:?}");
    let rows_py: Vec<String> = rows
        .iter()
        .map(|r| {
            let names: Vec<String> = r.iter().map(|t| format!("{t:?}")).collect();
            format!("[{}]", names.join(", "))
        })
        .collect();
    let script = format!(
        r#"
import functools, os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import tensorflow as tf
assert tf.__version__ == "2.21.0", tf.__version__
bad = []
for row in [{}]:
    objs = [functools.reduce(getattr, name.split("."), tf) for name in row]
    if any(o is not objs[0] for o in objs):
        bad.append(row)
print("BAD", bad) if bad else print("OK", len([{}]))
"#,
        rows_py.join(", "),
        rows_py.join(", ")
    );
    let out = Command::new(&python)
        .args(["-c", &script])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.trim_end().ends_with(&format!("OK {}", rows.len())),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn tf_log_has_no_top_level_spelling_in_the_table() {
    // TensorFlow 2 has no `tf.log`: listing it would claim a name that fails at import.
    let log = MATH_UNARY.iter().find(|u| u.name == "log").unwrap();
    assert_eq!(log.targets, ["math.log"]);
}
