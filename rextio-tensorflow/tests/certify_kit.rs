//! The certification kit (`certify/`) stays in step with the plugin: every native rule is
//! exercised by some kernel, every kernel site is one the plugin claims, and the kit the plugin
//! reports exists. The sites below mirror `certify/project/src/rxtfcert/kernels.py` by hand
//! (nothing is parsed); the test checks that the two list the same functions.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rextio_plugin_api::{ClaimOutcome, ClaimSite, Keyword, Literal, Operand, Plugin, SiteKind};
use rextio_tensorflow::types::{F32_CPU_1D, F32_CPU_2D};
use rextio_tensorflow::{rules, TensorflowPlugin};
use std::collections::BTreeSet;
use std::path::Path;

fn m() -> Operand {
    Operand::plugin(F32_CPU_2D)
}
fn v() -> Operand {
    Operand::plugin(F32_CPU_1D)
}
fn int(i: i64) -> Operand {
    Operand::literal(Literal::Int(i))
}
fn boolean(b: bool) -> Operand {
    Operand::literal(Literal::Bool(b))
}
fn kw(name: &str, value: Operand) -> Keyword {
    Keyword {
        name: name.into(),
        value,
    }
}
fn tf(name: &str, args: Vec<Operand>, keywords: Vec<Keyword>) -> ClaimSite {
    ClaimSite {
        kind: SiteKind::Call,
        target: format!("tensorflow.{name}"),
        receiver: None,
        args,
        keywords,
    }
}
fn op(o: &str, a: Operand, b: Operand) -> ClaimSite {
    ClaimSite {
        kind: SiteKind::BinOp,
        target: o.into(),
        receiver: None,
        args: vec![a, b],
        keywords: vec![],
    }
}

/// Every kernel of kernels.py with the sites it contains (operand types as the host sees them).
fn kernels() -> Vec<(String, Vec<ClaimSite>)> {
    let mut k: Vec<(String, Vec<ClaimSite>)> = vec![
        ("matmul".into(), vec![tf("matmul", vec![m(), m()], vec![])]),
        (
            "linalg_matmul".into(),
            vec![tf("linalg.matmul", vec![m(), m()], vec![])],
        ),
    ];
    // One kernel per rank for every row of the activation table.
    for act in rextio_tensorflow::rules::ACTIVATIONS.iter().map(|a| a.name) {
        k.push((
            format!("{act}_2d"),
            vec![tf(&format!("nn.{act}"), vec![m()], vec![])],
        ));
        k.push((
            format!("{act}_1d"),
            vec![tf(&format!("nn.{act}"), vec![v()], vec![])],
        ));
    }
    for (name, target) in [
        ("abs", "abs"),
        ("negative", "negative"),
        ("square", "square"),
        ("exp", "exp"),
        ("log", "math.log"),
        ("sqrt", "math.sqrt"),
    ] {
        k.push((format!("{name}_2d"), vec![tf(target, vec![m()], vec![])]));
        k.push((format!("{name}_1d"), vec![tf(target, vec![v()], vec![])]));
    }
    // `-x` (offered as operator.neg) and the rows' other spellings.
    let neg = |a: Operand| ClaimSite {
        kind: SiteKind::Call,
        target: rextio_plugin_api::NEG_TARGET.into(),
        receiver: None,
        args: vec![a],
        keywords: vec![],
    };
    k.push(("neg_operator_2d".into(), vec![neg(m())]));
    k.push(("neg_operator_1d".into(), vec![neg(v())]));
    k.push((
        "sqrt_top_level_2d".into(),
        vec![tf("sqrt", vec![m()], vec![])],
    ));
    k.push((
        "abs_math_1d".into(),
        vec![tf("math.abs", vec![v()], vec![])],
    ));
    for (name, f, o) in [
        ("add", "add", "+"),
        ("subtract", "subtract", "-"),
        ("multiply", "multiply", "*"),
        ("divide", "divide", "/"),
    ] {
        let call = |a: Operand, b: Operand| tf(f, vec![a, b], vec![]);
        let math = |a: Operand, b: Operand| tf(&format!("math.{f}"), vec![a, b], vec![]);
        k.push((format!("{name}_call"), vec![call(m(), m()), math(m(), m())]));
        k.push((
            format!("{name}_call_1d"),
            vec![call(v(), v()), math(v(), v())],
        ));
        k.push((
            format!("{name}_call_mixed"),
            vec![call(m(), v()), math(v(), m()), call(m(), m())],
        ));
        k.push((format!("{name}_binop"), vec![op(o, m(), m())]));
        k.push((format!("{name}_binop_1d"), vec![op(o, v(), v())]));
        k.push((
            format!("{name}_binop_mixed"),
            vec![op(o, m(), v()), op(o, v(), m()), op(o, m(), m())],
        ));
    }
    for f in ["maximum", "minimum"] {
        k.push((format!("{f}_2d"), vec![tf(f, vec![m(), m()], vec![])]));
        k.push((format!("{f}_1d"), vec![tf(f, vec![v(), v()], vec![])]));
    }
    for r in ["reduce_mean", "reduce_sum"] {
        let math = format!("math.{r}");
        k.push((
            format!("{r}_axis1"),
            vec![
                tf(r, vec![m()], vec![kw("axis", int(1))]),
                tf(&math, vec![m(), int(1)], vec![]),
                tf(
                    r,
                    vec![m()],
                    vec![kw("axis", int(1)), kw("keepdims", boolean(false))],
                ),
                op("+", v(), v()),
            ],
        ));
        k.push((
            format!("{r}_axis0"),
            vec![
                tf(r, vec![m()], vec![kw("axis", int(0))]),
                tf(
                    &math,
                    vec![m(), int(0)],
                    vec![kw("keepdims", boolean(false))],
                ),
                op("+", v(), v()),
            ],
        ));
        k.push((
            format!("{r}_keepdims"),
            vec![
                tf(r, vec![m(), int(0)], vec![kw("keepdims", boolean(true))]),
                tf(
                    &math,
                    vec![m()],
                    vec![kw("axis", int(1)), kw("keepdims", boolean(true))],
                ),
                op("+", m(), m()),
            ],
        ));
    }
    k.push((
        "softmax_1d".into(),
        vec![
            tf("nn.softmax", vec![v()], vec![]),
            tf("nn.softmax", vec![v()], vec![kw("axis", int(0))]),
            tf("nn.softmax", vec![v(), int(0)], vec![]),
            op("+", v(), v()),
        ],
    ));
    k.push((
        "softmax_2d".into(),
        vec![
            tf("nn.softmax", vec![m()], vec![kw("axis", int(1))]),
            tf("nn.softmax", vec![m(), int(1)], vec![]),
            op("+", m(), m()),
        ],
    ));
    for axis in [0, 1] {
        k.push((
            format!("argmax_axis{axis}"),
            vec![tf("argmax", vec![m()], vec![kw("axis", int(axis))])],
        ));
        k.push((
            format!("argmax_axis{axis}_positional"),
            vec![tf("argmax", vec![m(), int(axis)], vec![])],
        ));
    }
    k.push(("transpose".into(), vec![tf("transpose", vec![m()], vec![])]));
    k.push((
        "bias_add".into(),
        vec![
            tf("nn.bias_add", vec![m(), v()], vec![]),
            tf(
                "nn.bias_add",
                vec![m(), v()],
                vec![kw(
                    "data_format",
                    Operand::literal(Literal::Str("NHWC".into())),
                )],
            ),
            op("+", m(), m()),
        ],
    ));
    let pipeline = |labels: bool| {
        let mut s = vec![
            op("-", m(), v()),
            op("/", m(), v()),
            tf("matmul", vec![m(), m()], vec![]),
            tf("nn.bias_add", vec![m(), v()], vec![]),
            tf("nn.relu", vec![m()], vec![]),
            tf("nn.tanh", vec![m()], vec![]),
            op("+", m(), v()),
            tf("nn.softmax", vec![m()], vec![kw("axis", int(1))]),
        ];
        if labels {
            s.push(tf("argmax", vec![m()], vec![kw("axis", int(1))]));
        }
        s
    };
    k.push(("scoring".into(), pipeline(true)));
    k.push(("scoring_probabilities".into(), pipeline(false)));
    k.push((
        "labels_or_argmax".into(),
        vec![tf("argmax", vec![m()], vec![kw("axis", int(1))])],
    ));
    k
}

fn kernels_py() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("certify/project/src/rxtfcert/kernels.py");
    std::fs::read_to_string(p).unwrap()
}

#[test]
fn every_kernel_site_is_claimed_and_every_native_rule_is_exercised() {
    let plugin = TensorflowPlugin::new();
    let mut covered = BTreeSet::new();
    for (name, sites) in kernels() {
        for site in sites {
            match plugin.claim(&site) {
                ClaimOutcome::Claimed { rule_id, .. } => {
                    covered.insert(rule_id);
                }
                other => panic!(
                    "{name}: {} {:?} is not claimed: {other:?}",
                    site.target, site.args
                ),
            }
        }
    }
    // The CUDA lane's rules are certified on a GPU host (`cargo xtask certify --cuda`), never by
    // this CPU kit.
    let native: BTreeSet<String> = rules::native_ids()
        .into_iter()
        .filter(|id| !rules::CUDA_RULES.contains(&id.as_str()))
        .collect();
    let missing: Vec<&String> = native.difference(&covered).collect();
    assert!(
        missing.is_empty(),
        "native rules without a kernel: {missing:?}"
    );
    assert!(covered.is_subset(&native));
}

#[test]
fn the_table_and_kernels_py_list_the_same_functions() {
    let text = kernels_py();
    let in_py: BTreeSet<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("def "))
        .filter_map(|l| l.split('(').next())
        .map(str::to_owned)
        .collect();
    let in_table: BTreeSet<String> = kernels().into_iter().map(|(n, _)| n).collect();
    assert_eq!(in_py, in_table);
    // Only the plugin's import-free markers and tensorflow are imported.
    let imports: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("import ") || l.starts_with("from "))
        .collect();
    assert_eq!(
        imports,
        [
            "import tensorflow as tf",
            "from rextio_tensorflow.types import TensorF32Cpu1D as V, TensorF32Cpu2D as M, TensorI64Cpu1D as L",
        ]
    );
}

#[test]
fn the_plugin_reports_its_kit() {
    let kit = TensorflowPlugin::new().certification_kit().unwrap();
    let project = Path::new(&kit.project_dir);
    assert!(project.is_absolute() && project.join("rextio.toml").is_file());
    let toml = std::fs::read_to_string(project.join("rextio.toml")).unwrap();
    assert!(toml.contains("enabled = [\"rextio-tensorflow\"]"), "{toml}");
    assert!(project.join("src/rxtfcert/kernels.py").is_file());
    let checker = Path::new(&kit.checker);
    assert!(checker.is_absolute() && checker.is_file());
    let text = std::fs::read_to_string(checker).unwrap();
    assert!(text.contains("\"rxtfcert.kernels\""));
    assert!(text.contains("rextio-tensorflow: "));
}
