//! Route and diagnostic table: each function is analysed by the real host and torch plugin.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use rextio_host::{Project, Registry};

/// (function source, expected route, expected error/info codes in order).
const CASES: &[(&str, &str, &[&str])] = &[
    ("def phase_a(x: M, w: M, b: V) -> V:\n    return F.linear(x, w, b).relu().mean(dim=1, keepdim=False)\n", "native-plugin:rextio-torch", &[]),
    ("def nested(x: M, w: M, b: V) -> M:\n    return (x @ w + b).relu()\n", "native-plugin:rextio-torch", &[]),
    ("def nested2(x: M, w: M, b: V) -> V:\n    return (torch.matmul(x, w).tanh().matmul(w) + b).sigmoid().sum(keepdim=False, dim=1)\n", "native-plugin:rextio-torch", &[]),
    ("def loop_while(x: M, w: M, n: int) -> M:\n    h = x\n    i = 0\n    while i < n and i < 100:\n        h = (h @ w).tanh()\n        i += 1\n    return h\n", "native-plugin:rextio-torch", &[]),
    ("def early(x: M, w: M, n: int) -> M:\n    if n <= 0:\n        return x\n    elif n == 1:\n        return x @ w\n    else:\n        y = x @ w\n    return y.relu()\n", "native-plugin:rextio-torch", &[]),
    ("def brk(x: M, w: M, n: int) -> M:\n    h = x\n    for i in range(0, n, 2):\n        if i % 3 == 1:\n            continue\n        if i // 7 > 2:\n            break\n        h = (h @ w).relu()\n    return h\n", "native-plugin:rextio-torch", &[]),
    ("def strings(x: \"M\", n: \"int\") -> \"torch_types.TensorF32Cpu2D\":\n    return x.relu()\n", "native-plugin:rextio-torch", &[]),
    ("def bad_string(x: \"not a type\") -> M:\n    return x.relu()\n", "fallback-python", &["RXT001"]),
    ("def doc(x: M) -> M:\n    \"\"\"Docstring.\"\"\"\n    pass\n    return x.relu()\n", "native-plugin:rextio-torch", &[]),
    ("def scalars(n: int, f: float) -> float:\n    return n / 2 + f\n", "fallback-python", &["RXT016"]),
    ("def softmax(x: M) -> M:\n    return torch.softmax(x, dim=-3)\n", "fallback-python", &["RXTP-TORCH-013"]),
    ("def topk(x: M) -> M:\n    return torch.cumsum(x, 1)\n", "fallback-python", &["RXT005"]),
    ("def bad_mean(x: M) -> V:\n    return x.mean()\n", "fallback-python", &["RXTP-TORCH-008"]),
    ("def bad_linear(x: V, w: M, b: V) -> M:\n    return F.linear(x, w, b)\n", "fallback-python", &["RXTP-TORCH-002"]),
    ("def mul(x: M, y: M) -> M:\n    return x * y\n", "native-plugin:rextio-torch", &[]),
    ("def pw(x: M, y: M) -> M:\n    return x ** y\n", "fallback-python", &["RXTP-TORCH-010"]),
    ("def scal(x: M, k: float, n: int) -> M:\n    return (2.0 - x * k) / n + 1\n", "native-plugin:rextio-torch", &[]),
    ("def head(x: M, w: M, b: V) -> L:\n    return F.linear(x, w, b).softmax(dim=1).argmax(dim=1)\n", "native-plugin:rextio-torch", &[]),
    ("def labels_math(x: M) -> L:\n    return x.argmax(dim=1) + 1\n", "fallback-python", &["RXTP-TORCH-015"]),
    ("def tensor_cond(x: M) -> M:\n    if x.sum(dim=1, keepdim=False):\n        return x\n    return x.relu()\n", "fallback-python", &["RXT008"]),
    ("def no_ann(x, w: M) -> M:\n    return x @ w\n", "fallback-python", &["RXT001"]),
    ("def no_ret(x: M, w: M):\n    return x @ w\n", "fallback-python", &["RXT002"]),
    ("def dflt(x: M, w: M, n: int = 3) -> M:\n    return x @ w\n", "fallback-python", &["RXT010"]),
    ("def glob(x: M) -> M:\n    return (x @ WEIGHT).relu()\n", "fallback-python", &["RXT007"]),
    ("def maybe(x: M, w: M, n: int) -> M:\n    for i in range(n):\n        y = x @ w\n    return y\n", "fallback-python", &["RXT007"]),
    ("def falls(x: M, w: M, n: int) -> M:\n    if n > 0:\n        return x @ w\n", "fallback-python", &["RXT011"]),
    ("def wrong_ret(x: M, w: M) -> V:\n    return x @ w\n", "fallback-python", &["RXT011"]),
    ("def rebind(x: M) -> V:\n    x = x.sum(dim=1, keepdim=False)\n    return x\n", "fallback-python", &["RXT006"]),
    ("def aug(x: M, b: V) -> M:\n    h = x @ x\n    h += b\n    return h\n", "native-plugin:rextio-torch", &[]),
    ("def aug_param(x: M, b: V) -> M:\n    x += b\n    return x\n", "fallback-python", &["RXTP-TORCH-004"]),
    ("def aug_attr(x: M, b: V) -> M:\n    x.data += b\n    return x\n", "fallback-python", &["RXT003"]),
    ("@torch.no_grad()\ndef deco(x: M) -> M:\n    return x.relu()\n", "native-plugin:rextio-torch", &[]),
    ("@torch.enable_grad()\ndef deco_other(x: M) -> M:\n    return x.relu()\n", "fallback-python", &["RXT015"]),
    ("def listfor(x: M) -> M:\n    for i in [1, 2]:\n        x = x.relu()\n    return x\n", "fallback-python", &["RXT009"]),
    ("def attr(x: M) -> int:\n    return x.shape\n", "fallback-python", &["RXT011"]),
    ("def module_attr(x: M) -> M:\n    y = torch.float32\n    return x\n", "fallback-python", &["RXT004"]),
    ("def fdiv(x: M, f: float) -> M:\n    g = f // 2.0\n    return x.relu()\n", "fallback-python", &["RXT012"]),
    ("def trying(x: M) -> M:\n    try:\n        return x.relu()\n    finally:\n        pass\n", "fallback-python", &["RXT003"]),
    ("def big(x: M, n: int) -> M:\n    k = n + 99999999999999999999\n    return x.relu()\n", "fallback-python", &["RXT012"]),
    ("def unary(x: M) -> M:\n    return ~x\n", "fallback-python", &["RXT004"]),
    // `-x` reaches the plugin as operator.neg(x): torch claims it as torch.neg.
    ("def neg(x: M) -> M:\n    return -x\n", "native-plugin:rextio-torch", &[]),
    ("def keyword_bias(x: M, w: M, b: V) -> M:\n    return F.linear(x, w, bias=b)\n", "native-plugin:rextio-torch", &[]),
    ("def extra_kw(x: M, w: M, b: V) -> M:\n    return F.linear(x, w, b, bias=b)\n", "fallback-python", &["RXTP-TORCH-001"]),
    ("def cat_list(x: M, y: M) -> M:\n    return torch.cat([x, y.relu()], dim=1)\n", "native-plugin:rextio-torch", &[]),
    ("def cat_tuple_local(x: M, y: M) -> M:\n    xs = (x, y)\n    return torch.cat(xs, -1)\n", "native-plugin:rextio-torch", &[]),
    ("def cat_list_local(x: M, y: M) -> M:\n    xs = [x, y]\n    return torch.cat(xs)\n", "fallback-python", &["RXT004"]),
    ("def cat_ranks(x: M, v: V) -> M:\n    return torch.cat([x, v])\n", "fallback-python", &["RXTP-TORCH-029"]),
    ("def cat_dim(x: M, d: int) -> M:\n    return torch.cat([x, x], dim=d)\n", "fallback-python", &["RXTP-TORCH-030"]),
    ("def ln_list(x: M) -> M:\n    return F.layer_norm(x, [x.shape[-1]])\n", "native-plugin:rextio-torch", &[]),
];

#[test]
fn routes_and_codes_match_the_table() {
    let mut src = String::from(support::HEADER);
    for (f, _, _) in CASES {
        src.push_str(f);
        src.push('\n');
    }
    let dir = support::project(&[("pkg/__init__.py", ""), ("pkg/mod.py", &src)]);
    let registry = Registry::builder().with_default_plugins().build().unwrap();
    let out = Project::open(dir.path()).unwrap().check(&registry).unwrap();
    let module = out
        .report
        .modules
        .iter()
        .find(|m| m.module == "pkg.mod")
        .unwrap();
    assert_eq!(module.functions.len(), CASES.len());
    let mut failures = Vec::new();
    for (report, (src, route, codes)) in module.functions.iter().zip(CASES) {
        let got: Vec<&str> = report.diagnostics.iter().map(|d| d.code.as_str()).collect();
        if report.route != *route || got != *codes {
            failures.push(format!(
                "{}: route {} codes {:?} (expected {} {:?})\n{src}",
                report.qualname, report.route, got, route, codes
            ));
        }
        if report.route == "fallback-python" {
            assert!(
                report.plugin_claims.is_empty(),
                "fallback function {} lists claims",
                report.qualname
            );
        } else {
            assert!(!report.plugin_claims.is_empty());
        }
        for d in &report.diagnostics {
            assert!(
                d.line.is_some() && d.column.is_some(),
                "diagnostic without position: {d:?}"
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // check.json is written with the same content.
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join(".rextio/reports/check.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(json["contract_version"], "1");
    assert_eq!(
        json["modules"][1]["functions"][0]["plugin_claims"][0]["rule_id"],
        "rextio-torch/functional-linear-f32-cpu-2d"
    );
}

#[test]
fn claims_are_reported_post_order_with_positions() {
    let src = format!(
        "{}def f(x: M, w: M, b: V) -> M:\n    return (x @ w + b).relu()\n",
        support::HEADER
    );
    let dir = support::project(&[("m.py", &src)]);
    let registry = Registry::builder().with_default_plugins().build().unwrap();
    let out = Project::open(dir.path()).unwrap().check(&registry).unwrap();
    let f = &out.report.modules[0].functions[0];
    let rules: Vec<(&str, u32, u32)> = f
        .plugin_claims
        .iter()
        .map(|c| (c.rule_id.as_str(), c.line, c.column))
        .collect();
    assert_eq!(
        rules,
        vec![
            ("rextio-torch/tensor-matmul-f32-cpu-2d", 7, 13),
            ("rextio-torch/tensor-add-f32-cpu-2d-1d-broadcast", 7, 13),
            ("rextio-torch/tensor-relu-f32-cpu-2d", 7, 12),
        ]
    );
}

#[test]
fn disabled_plugin_claims_nothing_and_unknown_plugin_is_an_error() {
    let src = format!(
        "{}def f(x: M) -> M:\n    return x.relu()\n",
        support::HEADER
    );
    let dir = support::project(&[("m.py", &src)]);
    std::fs::write(dir.path().join("rextio.toml"), "[plugins]\nenabled = []\n").unwrap();
    let registry = Registry::builder().with_default_plugins().build().unwrap();
    let out = Project::open(dir.path()).unwrap().check(&registry).unwrap();
    assert_eq!(out.report.modules[0].functions[0].route, "fallback-python");
    assert_eq!(
        out.report.modules[0].functions[0].diagnostics[0].code,
        "RXT001"
    );
    std::fs::write(
        dir.path().join("rextio.toml"),
        "[plugins]\nenabled = [\"rextio-nope\"]\n",
    )
    .unwrap();
    let err = Project::open(dir.path())
        .unwrap()
        .check(&registry)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("rextio-nope") && err.contains("rextio-torch"),
        "{err}"
    );
}
