//! The certification checkers' shared driver (`rextio_certify.py`, which the host writes next to
//! every checker it runs): the exit-status contract the host reads, on tiny checkers that use it
//! the way the plugins' kits do.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

const KERNELS: &str = "def double(x: int) -> int:\n    return 2 * x\n\n\ndef triple(x: int) -> int:\n    return 3 * x\n";

/// A checker whose `check_function` passes every function except those named in `FAIL`, and
/// whose `runtime()` raises when `BREAK` is set.
const CHECKER: &str = r#"import os
import rextio_certify

FAIL = set(filter(None, os.environ.get("FAIL", "").split(",")))


def kind(annotation):
    return annotation.__name__


def check_function(name, native, eager, kinds, qualname):
    ok = native(2) == eager(2) and name not in FAIL
    return {"passed": ok, "counts": {"calls": 1}, "failures": [] if ok else ["told to fail"]}


def runtime():
    if os.environ.get("BREAK"):
        raise RuntimeError("the checker broke")
    return {"python": "test"}


if __name__ == "__main__":
    rextio_certify.run(check_function, kind, runtime, "pkg.kernels")
"#;

fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let lib = rextio_host::certify::checker_library(&dir.join("lib")).unwrap();
    let path = std::env::join_paths([lib, dir.join("src")]).unwrap();
    let mut cmd = std::process::Command::new(rextio_tests::python());
    cmd.arg(dir.join("check.py"))
        .args(args)
        .env("PYTHONPATH", path);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn the_driver_exits_0_1_or_2_as_the_host_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src/pkg")).unwrap();
    std::fs::write(dir.path().join("src/pkg/__init__.py"), "").unwrap();
    std::fs::write(dir.path().join("src/pkg/kernels.py"), KERNELS).unwrap();
    std::fs::write(dir.path().join("check.py"), CHECKER).unwrap();
    let result = dir.path().join("result.json");
    let src = dir.path().join("src");
    let args = [result.to_str().unwrap(), src.to_str().unwrap()];

    let (code, out) = run(dir.path(), &args, &[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("2 passed, 0 failed"), "{out}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    assert_eq!(json["runtime"]["python"], "test");
    assert_eq!(json["functions"]["pkg.kernels.double"]["passed"], true);

    // A failing function: 1, and the result names it.
    let (code, out) = run(dir.path(), &args, &[("FAIL", "triple")]);
    assert_eq!(code, Some(1), "{out}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    assert_eq!(json["functions"]["pkg.kernels.triple"]["passed"], false);

    // SKIP leaves a function out.
    let skip = [args[0], args[1], "pkg.kernels", "triple"];
    let (code, out) = run(dir.path(), &skip, &[("FAIL", "triple")]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("1 passed, 0 failed"), "{out}");

    // The checker itself broken, or called wrongly: 2, never "some failed".
    let (code, out) = run(dir.path(), &args, &[("BREAK", "1")]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("the checker broke"), "{out}");
    let (code, out) = run(dir.path(), &[args[0]], &[]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("usage: check.py"), "{out}");
    let missing = [args[0], args[1], "pkg.nothing"];
    let (code, _) = run(dir.path(), &missing, &[]);
    assert_eq!(code, Some(2));
}

/// `compare_floats`, the one definition of "equal in the certified sense" both checkers use.
const COMPARE_CASES: &str = r#"import math, rextio_certify as rc
inf, nan = math.inf, math.nan
cases = [
    ([1.0, -2.0, 0.0], [1.0, -2.0, 0.0], None),
    ([1.0 + 5e-6], [1.0], None),
    ([1.0 + 1e-3], [1.0], "values differ (max abs diff 0.0009999999999998899)"),
    ([nan, 1.0], [nan, 1.0], None),
    ([nan, 1.0], [1.0, 1.0], "NaN masks differ"),
    ([1.0], [nan], "NaN masks differ"),
    ([inf, -inf], [inf, -inf], None),
    ([-inf], [inf], "infinity masks differ"),
    ([3e38], [inf], "infinity masks differ"),
    ([-0.0], [0.0], "signed zeros differ"),
    ([1e-7], [0.0], None),
    ([1.0], [1.0, 2.0], "1 values vs 2"),
]
for native, eager, want in cases:
    got = rc.compare_floats(native, eager, 1e-5, 1e-6)
    assert got == want, (native, eager, got, want)
print("compared", len(cases))
"#;

#[test]
fn floats_agree_only_with_the_same_nans_infinities_and_zero_signs_and_close_finite_values() {
    let dir = tempfile::tempdir().unwrap();
    let lib = rextio_host::certify::checker_library(&dir.path().join("lib")).unwrap();
    let out = std::process::Command::new(rextio_tests::python())
        .args(["-c", COMPARE_CASES])
        .env("PYTHONPATH", lib)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("compared 12"), "{text}");
}

/// A CUDA lane's checker as the kits write one, on Python stand-ins for the native function
/// (the lane library's own logic needs no GPU): `MODE` picks the outcome.
const LANE_CHECKER: &str = r#"import math, os
import rextio_certify


def boundary(x):
    if not isinstance(x, float):
        raise TypeError(f"lib: expected a float (argument 'x' at position 0 of f, got a {type(x).__name__})")
    return x


def check(lane, args):
    mode = os.environ.get("MODE", "")
    native = lane.native(math.sqrt if mode != "not_native" else (lambda x: x), "lanes.head")
    lane.parity("direct", abs(native(4.0) - 2.0))
    if mode == "fail":
        lane.fail("told to fail")
    if mode == "assert":
        assert native(4.0) == 3.0, "sqrt(4) is not 3"
    if mode == "broken":
        raise RuntimeError("the checker broke")
    rejects = {"str": (("x",), "lib: expected a float")}
    lane.rejections(boundary if mode != "accepts" else (lambda x: x), rejects)
    return {"lib_version": "1.0", "kernel_activity_verified": False}


if __name__ == "__main__":
    rextio_certify.CudaLane("rextio-lib", "lib-cuda", "cuda-lib-linux-x86_64").run(check)
"#;

#[test]
fn a_cuda_lane_writes_closed_evidence_and_exits_0_1_or_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("check.py"), LANE_CHECKER).unwrap();
    let evidence = dir.path().join("lane.json");
    let args = [
        "--project",
        "p",
        "--evidence",
        evidence.to_str().unwrap(),
        "--plugin",
        "rextio-lib",
        "--device-name",
        "Some GPU",
        "--sm",
        "sm_90",
    ];

    let (code, out) = run(dir.path(), &args, &[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("rextio-lib lib-cuda ok"), "{out}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&evidence).unwrap()).unwrap();
    assert_eq!(json["schema"], "rextio-cuda-evidence/1");
    assert_eq!(json["lane"], "lib-cuda");
    assert_eq!(json["capability"], "cuda-lib-linux-x86_64");
    assert_eq!(json["plugin"], "rextio-lib");
    assert_eq!(json["device_name"], "Some GPU");
    assert_eq!(json["sm"], "sm_90");
    assert_eq!(json["lib_version"], "1.0");
    assert_eq!(json["kernel_activity_verified"], false);
    assert_eq!(json["support_claim"], false);
    assert_eq!(json["certification_ready"], false);
    assert_eq!(json["checks"]["parity_direct"]["max_abs_diff"], 0.0);
    assert_eq!(json["checks"]["boundary_rejections"]["cases"][0], "str");
    std::fs::remove_file(&evidence).unwrap();

    // A failed check, a framework's failed comparison, a function that is not the extension's
    // or a boundary that accepts: 1, with why, and no evidence.
    for (mode, why) in [
        ("fail", "rextio-lib CUDA certification: told to fail"),
        ("assert", "rextio-lib CUDA certification: sqrt(4) is not 3"),
        (
            "not_native",
            "lanes.head is not the native extension function (function)",
        ),
        ("accepts", "boundary str: accepted"),
    ] {
        let (code, out) = run(dir.path(), &args, &[("MODE", mode)]);
        assert_eq!(code, Some(1), "{mode}: {out}");
        assert!(out.contains(why), "{mode}: {out}");
        assert!(!evidence.exists(), "{mode}");
    }
    // The checker itself broken, or called without its arguments: 2.
    let (code, out) = run(dir.path(), &args, &[("MODE", "broken")]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("the checker broke"), "{out}");
    let (code, out) = run(dir.path(), &args[..4], &[]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("--plugin"), "{out}");
}
