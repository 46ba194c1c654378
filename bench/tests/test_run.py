"""The orchestration's decisions: what counts as native, the parity gate before timing, outputs.

Timing runs here with tiny settings; nothing asserts on a measured time.
"""

import json
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import pytest

import run
from rxbench.model import NOT_NATIVE, TIMED, UNAVAILABLE, WRONG
from rxbench.workloads import by_name

ROOT = Path(__file__).resolve().parents[2]
PHASE_A = by_name(["phase_a"])[0]

WRAPPER = '''
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D
import torch.nn.functional as F


def inference(x: TensorF32Cpu2D, weight: TensorF32Cpu2D, bias: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.linear(x, weight, bias).relu().mean(dim=1, keepdim=False)


__rextio_fallback__ = {"inference": inference}
'''


@pytest.fixture(autouse=True)
def forget_phasea():
    yield
    for name in [m for m in sys.modules if m == "phasea" or m.startswith("phasea.")]:
        del sys.modules[name]


def opts(**kw):
    base = dict(quick=True, rounds=2, block_ms=0.05, warmup_ms=0.0, resamples=20, seed=0,
                lanes=("native", "eager", "fallback"), compile_subset=False)
    base.update(kw)
    return run.Options(**base)


def make_project(tmp_path, route, cargo="ok", build_report=True):
    root = tmp_path / "projects" / PHASE_A.project
    source = root / PHASE_A.source
    source.parent.mkdir(parents=True)
    shutil.copy(ROOT / "tests/fixtures/phase_a" / PHASE_A.source, source)
    if build_report:
        reports = root / ".rextio" / "reports"
        reports.mkdir(parents=True)
        diagnostics = [] if route.startswith("native") else [
            {"code": "RXTP-TORCH-010", "severity": "error", "message": "operator `-`", "line": 3}]
        (reports / "build.json").write_text(json.dumps({
            "modules": [{"module": PHASE_A.module, "functions": [
                {"qualname": PHASE_A.qualname, "route": route, "diagnostics": diagnostics}]}],
            "cargo": {"status": cargo},
        }))
        pkg = root / ".rextio" / "build" / "python" / "phasea"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "kernels.py").write_text(WRAPPER)
    return tmp_path / "projects"


def test_route_of_reads_the_route_and_the_errors():
    report = {"modules": [{"functions": [{"qualname": "m.f", "route": "fallback-python", "diagnostics": [
        {"code": "A", "severity": "error", "message": "x", "line": 1},
        {"code": "B", "severity": "warning", "message": "y", "line": 2}]}]}]}
    assert run.route_of(report, "m.f") == ("fallback-python", "A x (line 1)")
    assert run.route_of(report, "m.g")[0] == "missing"


def test_a_fallback_route_is_reported_not_native_and_never_timed(tmp_path):
    projects = make_project(tmp_path, "fallback-python", cargo="skipped")
    p = run.open_project(PHASE_A, projects, {}, tmp_path / "jit")
    assert p.native_status == NOT_NATIVE and "RXTP-TORCH-010" in p.native_reason
    cell = run.run_cell(p, 0, PHASE_A.cells[0], None, "no floor", opts())
    native = cell.lanes["native"]
    assert native.status == NOT_NATIVE and native.per_call_ns == [] and native.median_ns is None
    assert cell.lanes["eager"].status == TIMED and len(cell.lanes["eager"].per_call_ns) == 2
    assert cell.lanes["fallback"].status == TIMED and cell.lanes["fallback"].ratio is None


def test_a_claimed_route_whose_wrapper_binds_python_is_not_native(tmp_path):
    projects = make_project(tmp_path, "native-plugin:rextio-torch")
    p = run.open_project(PHASE_A, projects, {}, tmp_path / "jit")
    assert p.native_status == NOT_NATIVE
    assert "binds a Python function" in p.native_reason


def test_a_failed_build_makes_native_and_fallback_unavailable(tmp_path):
    projects = make_project(tmp_path, "native-plugin:rextio-torch")
    builds = {"projects": {"phase_a": {"ok": False, "error": "cargo exploded"}}}
    p = run.open_project(PHASE_A, projects, builds, tmp_path / "jit")
    cell = run.run_cell(p, 0, PHASE_A.cells[0], None, "no floor", opts())
    assert cell.lanes["native"].status == UNAVAILABLE
    assert "cargo exploded" in cell.lanes["native"].reason
    assert cell.lanes["fallback"].status == UNAVAILABLE


def test_a_wrong_lane_is_reported_wrong_and_not_timed(tmp_path):
    projects = make_project(tmp_path, "fallback-python", cargo="skipped")
    p = run.open_project(PHASE_A, projects, {}, tmp_path / "jit")
    eager = p.eager.inference
    p.native_status = TIMED
    p.wrapper = SimpleNamespace(inference=lambda x, w, b: eager(x, w, b) + 1e-3)
    floor = SimpleNamespace(phase_a=eager, phase_a_loop=lambda x, w, b, n: 1000 * n)
    cell = run.run_cell(p, 0, PHASE_A.cells[0], floor, "", opts(lanes=("native", "floor", "eager")))
    native = cell.lanes["native"]
    assert native.status == WRONG and "max |diff|" in native.reason and native.per_call_ns == []
    assert cell.lanes["eager"].status == TIMED and cell.lanes["eager"].ratio is None
    assert cell.lanes["floor"].status == TIMED and cell.lanes["floor"].per_call_ns == [1000.0, 1000.0]


def test_ratios_are_computed_against_a_timed_native_lane(tmp_path):
    projects = make_project(tmp_path, "fallback-python", cargo="skipped")
    p = run.open_project(PHASE_A, projects, {}, tmp_path / "jit")
    p.native_status, p.wrapper = TIMED, SimpleNamespace(inference=p.eager.inference)
    cell = run.run_cell(p, 0, PHASE_A.cells[0], None, "no floor",
                        opts(lanes=("native", "eager", "inference_mode", "jit", "compile")))
    for lane in ("eager", "inference_mode", "jit"):
        r = cell.lanes[lane].ratio
        assert cell.lanes[lane].status == TIMED and r is not None and r.lo <= r.value <= r.hi
    assert cell.lanes["native"].ratio is None
    assert cell.lanes["compile"].status == TIMED and cell.lanes["compile"].compile_s is not None


def test_compile_subset_skips_compile_outside_its_cell(tmp_path):
    projects = make_project(tmp_path, "fallback-python", cargo="skipped")
    p = run.open_project(PHASE_A, projects, {}, tmp_path / "jit")
    cell = run.run_cell(p, 1, PHASE_A.cells[1], None, "no floor",
                        opts(lanes=("eager", "compile"), compile_subset=True))
    assert cell.lanes["compile"].status == "skipped" and "--compile-subset" in cell.lanes["compile"].reason


def test_main_writes_json_markdown_and_svg_and_fails_without_a_native_build(tmp_path, capsys):
    projects = make_project(tmp_path, "native-plugin:rextio-torch", build_report=False)
    out = tmp_path / "out"
    code = run.main(["--out", str(out), "--projects", str(projects), "--workloads", "phase_a",
                     "--lanes", "native", "eager", "fallback", "--rounds", "2", "--block-ms", "0.05",
                     "--warmup-ms", "0", "--quick"])
    assert code == 1
    data = json.loads((out / "bench.json").read_text())
    lanes = data["workloads"][0]["cells"][0]["lanes"]
    assert lanes["native"]["status"] == UNAVAILABLE and "no build report" in lanes["native"]["reason"]
    assert lanes["eager"]["status"] == TIMED
    assert len(data["workloads"][0]["cells"]) == 6
    assert (out / "bench.md").read_text().startswith("Command: `cargo xtask bench --quick`")
    assert ET.parse(out / "bench.svg").getroot().tag.endswith("svg")
    printed = capsys.readouterr().out
    assert "Median latency per call" in printed and "Ratio other / native" in printed


def test_a_failed_floor_build_is_never_timed_from_a_stale_extension(tmp_path):
    projects = make_project(tmp_path, "fallback-python", cargo="skipped")
    out = tmp_path / "out"
    out.mkdir()
    (out / "_rextio_bench_floor.so").write_text("stale")
    (out / "builds.json").write_text(json.dumps({"projects": {}, "floor": {"ok": False, "error": "linker"}}))
    code = run.main(["--out", str(out), "--projects", str(projects), "--workloads", "phase_a",
                     "--lanes", "floor", "eager", "--rounds", "1", "--block-ms", "0.05",
                     "--warmup-ms", "0", "--quick"])
    assert code == 0
    lanes = json.loads((out / "bench.json").read_text())["workloads"][0]["cells"][0]["lanes"]
    assert lanes["floor"] == {**lanes["floor"], "status": UNAVAILABLE,
                              "reason": "building bench/floor failed: linker"}


def test_onnxruntime_and_numpy_lanes_are_parity_gated_then_timed(tmp_path):
    projects = make_project(tmp_path, "fallback-python", cargo="skipped")
    p = run.open_project(PHASE_A, projects, {}, tmp_path / "jit")
    cell = run.run_cell(p, 0, PHASE_A.cells[0], None, "no floor",
                        opts(lanes=("eager", "onnxruntime", "numpy")))
    ort, npy = cell.lanes["onnxruntime"], cell.lanes["numpy"]
    assert ort.status == TIMED and len(ort.per_call_ns) == 2 and ort.parity.startswith("max |diff|")
    assert ort.compile_s is not None and ort.note.startswith("torch.onnx.export(")
    assert npy.status == TIMED and len(npy.per_call_ns) == 2 and npy.note == ""


def test_a_wrong_numpy_twin_or_onnx_graph_is_reported_wrong_not_timed(tmp_path, monkeypatch):
    projects = make_project(tmp_path, "fallback-python", cargo="skipped")
    p = run.open_project(PHASE_A, projects, {}, tmp_path / "jit")
    monkeypatch.setattr(run.twins, "phase_a", lambda x, w, b: (x @ w.T + b).mean(axis=1))  # no relu
    real_build = run.onnxlane.build

    def bad_build(fn, args, threads=1):
        return real_build(lambda x, w, b: fn(x, w, b) * 2.0, args, threads)

    monkeypatch.setattr(run.onnxlane, "build", bad_build)
    cell = run.run_cell(p, 0, PHASE_A.cells[2], None, "no floor",
                        opts(lanes=("eager", "onnxruntime", "numpy")))
    for lane in ("onnxruntime", "numpy"):
        lr = cell.lanes[lane]
        assert lr.status == WRONG and "max |diff|" in lr.reason, lane
        assert lr.per_call_ns == [] and lr.median_ns is None
    assert cell.lanes["onnxruntime"].note.startswith("torch.onnx.export(")
    assert cell.lanes["eager"].status == TIMED


def test_a_numpy_twin_that_writes_its_input_is_wrong(tmp_path, monkeypatch):
    projects = make_project(tmp_path, "fallback-python", cargo="skipped")
    p = run.open_project(PHASE_A, projects, {}, tmp_path / "jit")

    real = run.twins.phase_a

    def in_place(x, w, b):
        x += 1.0
        return real(x - 1.0, w, b)

    monkeypatch.setattr(run.twins, "phase_a", in_place)
    cell = run.run_cell(p, 0, PHASE_A.cells[0], None, "no floor", opts(lanes=("numpy",)))
    assert cell.lanes["numpy"].status == WRONG
    assert cell.lanes["numpy"].reason == "wrote to input argument 0"


def test_onnxruntime_lane_is_unavailable_without_the_package(tmp_path, monkeypatch):
    projects = make_project(tmp_path, "fallback-python", cargo="skipped")
    p = run.open_project(PHASE_A, projects, {}, tmp_path / "jit")
    monkeypatch.setattr(run, "ort_unavailable", lambda: "ModuleNotFoundError: onnxruntime")
    cell = run.run_cell(p, 0, PHASE_A.cells[0], None, "no floor", opts(lanes=("onnxruntime",)))
    assert cell.lanes["onnxruntime"].status == UNAVAILABLE
    assert cell.lanes["onnxruntime"].reason == "ModuleNotFoundError: onnxruntime"


def test_a_lane_that_cannot_be_exported_is_unavailable(tmp_path, monkeypatch):
    projects = make_project(tmp_path, "fallback-python", cargo="skipped")
    p = run.open_project(PHASE_A, projects, {}, tmp_path / "jit")

    def refuse(fn, args, threads=1):
        raise RuntimeError("torch.onnx.export failed: nope")

    monkeypatch.setattr(run.onnxlane, "build", refuse)
    cell = run.run_cell(p, 0, PHASE_A.cells[0], None, "no floor", opts(lanes=("onnxruntime",)))
    lr = cell.lanes["onnxruntime"]
    assert lr.status == UNAVAILABLE and "torch.onnx.export failed: nope" in lr.reason


def test_main_reports_onnxruntime_and_numpy_in_json_markdown_and_svg(tmp_path):
    projects = make_project(tmp_path, "fallback-python", cargo="skipped")
    out = tmp_path / "out"
    code = run.main(["--out", str(out), "--projects", str(projects), "--workloads", "phase_a",
                     "--lanes", "eager", "onnxruntime", "numpy", "--rounds", "2", "--block-ms",
                     "0.05", "--warmup-ms", "0", "--quick"])
    assert code == 0
    data = json.loads((out / "bench.json").read_text())
    assert data["meta"]["onnxruntime"] and data["meta"]["numpy"]
    assert data["workloads"][0]["framework"] == "torch" and data["workloads"][0]["skipped"] == ""
    for c in data["workloads"][0]["cells"]:
        assert c["lanes"]["onnxruntime"]["status"] == TIMED
        assert c["lanes"]["numpy"]["status"] == TIMED
    md = (out / "bench.md").read_text()
    assert "| ONNX Runtime | numpy |" in md and "ONNX export+session s" in md
    assert "- **ONNX Runtime**:" in md and "phase_a · ONNX Runtime: torch.onnx.export(" in md
    texts = ["".join(t.itertext()) for t in ET.parse(out / "bench.svg").getroot().iter()
             if t.tag.endswith("text")]
    assert "ONNX Runtime" in texts and "numpy" in texts
