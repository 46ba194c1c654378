"""The nn.Module workload (`module-mlp`): its models and free twin, the native-path counters, the
TorchScript and ONNX lanes, the target table, and the harness's decisions on a fake build.

The fake built package is the project's source with a Python `forward` that counts its calls
the way the real built package's `__rextio_method_stats__()` does; nothing here needs
`rextio build`, and nothing asserts on a measured time.
"""

import importlib.util
import json
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import torch

import run
from rxbench import modules, onnxlane, parity, report, svg
from rxbench.model import (
    MODULE_LANES, NOT_NATIVE, TIMED, UNAVAILABLE, CellResult, LaneResult, Ratio, RunResult,
    WorkloadResult,
)
from rxbench.workloads import MODULE_OVER_FREE, Target, by_name

ROOT = Path(__file__).resolve().parents[2]
MLP = by_name(["module-mlp"])[0]
SOURCE = ROOT / MLP.source_dir / MLP.source


@pytest.fixture(autouse=True)
def forget_built_package():
    yield
    for name in [m for m in sys.modules if m == "rxb_modules" or m.startswith("rxb_modules.")]:
        del sys.modules[name]


def eager_source():
    spec = importlib.util.spec_from_file_location("modules_test_eager", SOURCE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def opts(**kw):
    base = dict(quick=True, rounds=2, block_ms=0.05, warmup_ms=0.0, resamples=20, seed=0,
                lanes=("native", "native_free", "eager", "inference_mode"), compile_subset=False)
    base.update(kw)
    return run.Options(**base)


# ---- the workload ------------------------------------------------------------------------------


def test_the_workload_is_the_issue_s_model_at_batch_1_16_128():
    assert [c.batch for c in MLP.cells] == [1, 16, 128]
    assert MLP.qualname == "rxb_modules.model.Classifier.forward"
    assert MLP.free_qualname == "rxb_modules.model.classify"
    assert (MLP.rtol, MLP.atol) == (1e-4, 1e-5)
    assert MLP.source_dir == "bench/projects/modules"
    assert (ROOT / MLP.source_dir / "rextio.toml").is_file()
    (x,) = MLP.make_inputs(MLP.cells[1], 3)
    assert x.shape == (16, 20) and x.dtype == torch.float32
    assert torch.equal(x, MLP.make_inputs(MLP.cells[1], 3)[0])

    model = eager_source().Classifier()
    assert model.inp.in_features == 20 and model.inp.out_features == 48
    assert len(model.blocks) == 2
    assert all(b.up.out_features == 96 and b.down.out_features == 48 for b in model.blocks)
    assert isinstance(model.gate.gate, torch.nn.Parameter) and "gate.scale" in dict(model.named_buffers())
    head = [type(m).__name__ for m in model.head]
    assert head == ["Linear", "Tanh", "Linear"] and model.head[2].out_features == 5


def test_the_targets_are_the_issue_s():
    targets = {t.key: t for t in MLP.targets}
    im = targets["inference_mode"]
    assert im.op == ">=" and [im.bound(b) for b in (1, 16, 128)] == [25.0, 10.0, 4.0]
    assert targets["onnxruntime"].op == ">" and targets["onnxruntime"].bound(16) == 1.0
    assert targets["compile"].op == ">" and targets["compile"].bound(128) == 1.0
    assert targets[MODULE_OVER_FREE].op == "<=" and targets[MODULE_OVER_FREE].bound(1) == 1.3
    assert im.bound(7) is None
    assert im.to_dict() == {"op": ">=", "values": [[1, 25.0], [16, 10.0], [128, 4.0]]}
    with pytest.raises(ValueError, match="unknown target op"):
        Target("eager", "==", ((0, 1.0),))


def test_module_lanes_are_the_model_forms_and_the_free_twin():
    assert MODULE_LANES == ("native", "native_free", "eager", "inference_mode", "jit", "compile",
                            "onnxruntime")


# ---- models and the free twin ------------------------------------------------------------------


def test_models_are_seeded_perturbed_and_share_weights():
    src = eager_source()
    a, b = modules.make_model(src.Classifier, 5), modules.make_model(src.Classifier, 5)
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))
    c = modules.make_model(src.Classifier, 6)
    assert not torch.equal(a.inp.weight, c.inp.weight)
    assert not a.training
    # The gate and scale are moved off their init (zeros, ones), LayerNorm's affine too.
    assert not torch.equal(a.gate.gate, torch.zeros(48)) and not torch.equal(a.gate.scale, torch.ones(48))
    assert not torch.equal(a.blocks[0].norm.weight, torch.ones(48))
    twin = modules.same_weights(src.Classifier, a)
    assert twin is not a and not twin.training
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), twin.state_dict().values()))
    assert a.inp.weight.requires_grad  # the user's model as it is: parameters require grad


def test_the_free_twin_is_the_same_program_on_the_state_dict_in_order():
    src = eager_source()
    model = modules.make_model(src.Classifier, 0)
    weights = modules.free_args(model)
    assert len(weights) == 20 and not any(w.requires_grad for w in weights)
    for batch in (1, 16, 128):
        (x,) = MLP.make_inputs(run.Cell(f"b={batch}", {"batch": batch}), batch)
        verdict = parity.compare(src.classify(x, *weights), model(x), rtol=MLP.rtol, atol=MLP.atol)
        assert verdict.ok, (batch, verdict.detail)


# ---- native-path counters ----------------------------------------------------------------------


def test_path_counts_and_delta():
    stats = {"m.C.forward": {"native": 3, "grad: grad mode is on": 1}, "m.D.forward": {"native": 9}}
    assert modules.path_counts(lambda: stats, "m.C.forward") == {"native": 3, "grad: grad mode is on": 1}
    assert modules.path_counts(lambda: stats, "m.E.forward") == {}
    assert modules.path_counts(None, "m.C.forward") == {}
    assert modules.delta({"native": 3, "a": 1}, {"native": 5, "a": 1, "b": 2}) == {"native": 2, "b": 2}


def test_only_all_native_calls_count_as_native():
    assert modules.not_native_reason({"native": 10}, 10) == ""
    why = modules.not_native_reason({"native": 7, "grad: grad mode is enabled": 3}, 10)
    assert why.startswith("3 of 10 calls ran the original Python method") and "grad: grad mode" in why
    assert "moved by 0 for 1 calls" in modules.not_native_reason({}, 1)
    assert modules.not_native_reason({"native": 11}, 10) != ""


def test_counting_block_counts_every_call():
    cb = modules.CountingBlock(lambda k: 100 * k)
    assert cb(3) == 300 and cb(5) == 500 and cb.calls == 8


# ---- TorchScript and ONNX lanes ----------------------------------------------------------------


def test_the_jit_lane_scripts_the_rewritten_class_when_the_markers_refuse(tmp_path):
    src = eager_source()
    model = modules.make_model(src.Classifier, 0)
    (x,) = MLP.make_inputs(MLP.cells[1], 0)
    scripted, note = modules.script_model(model, "Classifier", SOURCE, tmp_path, "modules_test_jit", (x,))
    assert isinstance(scripted, torch.jit.ScriptModule)
    assert note.startswith("torch.jit.script(model) failed:") and "rewritten to torch.Tensor" in note
    assert "0x" not in note  # no process-specific addresses in the report
    assert parity.compare(scripted(x), model(x), rtol=MLP.rtol, atol=MLP.atol).ok


def test_the_jit_lane_scripts_a_plain_model_directly(tmp_path):
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh()).eval()
    scripted, note = modules.script_model(model, "Sequential", SOURCE, tmp_path, "unused",
                                          (torch.zeros(2, 4),))
    assert note == "torch.jit.script(model)"


def test_onnx_exports_a_module_with_its_weights_as_initializers():
    pytest.importorskip("onnxruntime")
    model = modules.make_model(eager_source().Classifier, 0)
    (x,) = MLP.make_inputs(MLP.cells[1], 0)
    lane = onnxlane.build(model, (x,))
    assert len(lane.input_names) == 1 and lane.note.startswith("torch.onnx.export(dynamo=False")
    verdict = parity.compare(lane.call(x), model(x), rtol=MLP.rtol, atol=MLP.atol)
    assert verdict.ok, verdict.detail


# ---- the target table --------------------------------------------------------------------------


def timed(lane, us, ratio=None):
    return LaneResult(lane, TIMED, parity="max |diff| 0.0e+00", per_call_ns=[us * 1000.0],
                      median_ns=us * 1000.0, ratio=Ratio(*ratio) if ratio else None)


def module_run():
    targets = {t.key: t.to_dict() for t in MLP.targets}
    cells = [
        CellResult("b=1", {"batch": 1}, 10, {
            "native": timed("native", 4.0),
            "native_free": timed("native_free", 3.2, (0.8, 0.5, 1.0)),
            "inference_mode": timed("inference_mode", 120.0, (30.0, 28.0, 32.0)),
            "compile": LaneResult("compile", UNAVAILABLE, "could not set up the lane: boom"),
            "onnxruntime": timed("onnxruntime", 3.0, (0.75, 0.7, 0.8)),
        }),
        CellResult("b=16", {"batch": 16}, 10, {
            "native": LaneResult("native", NOT_NATIVE, "timed calls: 3 of 9 calls ran the original"),
            "native_free": timed("native_free", 5.0),
            "inference_mode": timed("inference_mode", 50.0),
            "compile": timed("compile", 90.0),
            "onnxruntime": timed("onnxruntime", 6.0),
        }),
    ]
    return RunResult(meta={"rounds": 3}, workloads=[
        WorkloadResult("module-mlp", "nn.Module MLP", MLP.qualname, "native-plugin:rextio-torch",
                       cells, targets=targets)])


def test_target_ops_and_the_module_over_free_inverse():
    assert report.target_met(">=", 25.0, 25.0) and not report.target_met(">", 1.0, 1.0)
    assert report.target_met("<=", 1.3, 1.3) and not report.target_met("<=", 1.31, 1.3)
    with pytest.raises(ValueError):
        report.target_met("==", 1.0, 1.0)
    r = report.module_over_free(module_run().workloads[0].cells[0])
    assert (r.value, r.lo, r.hi) == pytest.approx((1.25, 1.0, 2.0))
    assert report.target_bound({"values": [[1, 25.0], [0, 2.0]]}, 16) == 2.0
    assert report.target_verdict(">", Ratio(1.2, 1.1, 1.3), 1.0) == "met"
    assert report.target_verdict(">", Ratio(1.02, 0.97, 1.05), 1.0) == "borderline"
    assert report.target_verdict(">=", Ratio(8.0, 7.7, 8.2), 25.0) == "MISSED"


def test_the_target_table_says_met_or_missed_and_why_a_ratio_is_missing():
    header, rows = report.target_rows(module_run().workloads[0])
    assert header == ["workload", "cell", "native µs", "native free fns µs", "inference_mode / native",
                      "ONNX Runtime / native", "torch.compile / native", "module / free fns"]
    b1, b16 = rows
    assert b1[2:4] == ["4.00", "3.20"]
    assert b1[4] == "30.0 [28.0–32.0] met (>= 25)"
    assert b1[5] == "0.75 [0.70–0.80] MISSED (> 1)"
    assert b1[6] == "unavailable"
    assert b1[7] == "1.25 [1.00–2.00] borderline (<= 1.3)"
    assert b16[2] == "not native (fallback)"
    assert b16[4] == "n/a (not native)" and b16[7].startswith("native not native")


def test_the_target_table_is_in_the_markdown_and_survives_json(tmp_path):
    data = module_run().to_dict()
    back = RunResult.from_dict(json.loads(json.dumps(data)))
    assert back.workloads[0].targets == data["workloads"][0]["targets"]
    md = report.render_markdown(back)
    assert "**Targets of module-mlp:" in md and "| module / free fns |" in md
    assert "Targets of module-mlp" in report.render_text(back)
    # Workloads without targets get no target table.
    cells = module_run().workloads[0].cells
    plain = RunResult(meta={}, workloads=[WorkloadResult("scoring", "s", "f", "r", cells)])
    assert "Targets of" not in report.render_markdown(plain)


def test_the_plot_draws_the_free_function_lane():
    root = ET.fromstring(svg.render_svg(module_run()))
    texts = ["".join(t.itertext()) for t in root.iter() if t.tag.endswith("text")]
    assert "native free fns" in texts


# ---- the harness on a fake build ---------------------------------------------------------------

FAKE_STATS = '''

# ---- a fake of rextio's generated bindings: forward counts its path like the real one ----
import torch as _torch

_STATS = {"native": 0}
_FALLBACK_AFTER = None  # set by a test: calls after this many run "the original"
_python_forward = Classifier.forward


def _counted_forward(self, x):
    if not _torch.is_inference_mode_enabled():
        key = "grad: grad mode is enabled and a parameter or input requires grad"
    elif _FALLBACK_AFTER is not None and _STATS["native"] >= _FALLBACK_AFTER:
        key = "hook: a forward hook on a submodule"
    else:
        key = "native"
    _STATS[key] = _STATS.get(key, 0) + 1
    return _python_forward(self, x)


Classifier.forward = _counted_forward


def __rextio_method_stats__():
    return {"rxb_modules.model.Classifier.forward": dict(_STATS)}
'''


def fake_project(tmp_path, stats=True, free_route="native-plugin:rextio-torch"):
    root = tmp_path / "projects" / MLP.project
    shutil.copytree(ROOT / MLP.source_dir, root, ignore=shutil.ignore_patterns(*run.SYNC_SKIPPED))
    reports = root / ".rextio" / "reports"
    reports.mkdir(parents=True)
    functions = [{"qualname": MLP.qualname, "route": "native-plugin:rextio-torch", "diagnostics": []},
                 {"qualname": MLP.free_qualname, "route": free_route, "diagnostics": []}]
    (reports / "build.json").write_text(json.dumps({
        "modules": [{"module": MLP.module, "functions": functions}], "cargo": {"status": "ok"}}))
    pkg = root / ".rextio" / "build" / "python" / "rxb_modules"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "model.py").write_text(SOURCE.read_text() + (FAKE_STATS if stats else ""))
    return tmp_path / "projects"


def test_a_counted_native_method_is_timed_and_every_call_checked(tmp_path):
    projects = fake_project(tmp_path)
    p = run.open_project(MLP, projects, {}, tmp_path / "jit")
    assert p.native_status == TIMED and p.native_reason == ""
    # The fake's `classify` is a Python function: the free lane is not native.
    assert p.free_status == NOT_NATIVE and "binds a Python function" in p.free_reason
    cell = run.run_cell(p, 0, MLP.cells[0], None, "no floor", opts(), tmp_path / "jit")
    native = cell.lanes["native"]
    assert native.status == TIMED and len(native.per_call_ns) == 2
    assert "(rtol=0.0001, atol=1e-05)" in native.parity and "calls timed, all native" in native.parity
    assert cell.lanes["native_free"].status == NOT_NATIVE
    for lane in ("eager", "inference_mode"):
        assert cell.lanes[lane].status == TIMED and cell.lanes[lane].ratio is not None
    assert "autograd records" in cell.lanes["eager"].note


def test_timed_calls_that_ran_the_original_are_never_reported_native(tmp_path):
    projects = fake_project(tmp_path)
    p = run.open_project(MLP, projects, {}, tmp_path / "jit")
    p.wrapper._FALLBACK_AFTER = 3  # the parity call is native, the timed calls mostly not
    cell = run.run_cell(p, 0, MLP.cells[0], None, "no floor", opts(), tmp_path / "jit")
    native = cell.lanes["native"]
    assert native.status == NOT_NATIVE and native.per_call_ns == [] and native.median_ns is None
    assert native.reason.startswith("timed calls:") and "hook: a forward hook" in native.reason
    assert cell.lanes["inference_mode"].status == TIMED and cell.lanes["inference_mode"].ratio is None


def test_a_parity_call_that_ran_the_original_is_not_native(tmp_path):
    projects = fake_project(tmp_path)
    p = run.open_project(MLP, projects, {}, tmp_path / "jit")
    p.wrapper._FALLBACK_AFTER = 0
    cell = run.run_cell(p, 0, MLP.cells[0], None, "no floor", opts(), tmp_path / "jit")
    native = cell.lanes["native"]
    assert native.status == NOT_NATIVE and native.reason.startswith("parity call: 1 of 1 calls ran")


def test_a_wrapper_without_method_stats_is_not_native(tmp_path):
    projects = fake_project(tmp_path, stats=False, free_route="fallback-python")
    p = run.open_project(MLP, projects, {}, tmp_path / "jit")
    assert p.native_status == NOT_NATIVE and "__rextio_method_stats__" in p.native_reason
    assert p.free_status == NOT_NATIVE and p.free_reason.startswith("route fallback-python")


def test_main_records_targets_and_renders_the_target_table(tmp_path):
    projects = fake_project(tmp_path)
    out = tmp_path / "out"
    code = run.main(["--out", str(out), "--projects", str(projects), "--workloads", "module-mlp",
                     "--lanes", "native", "eager", "inference_mode", "--rounds", "2",
                     "--block-ms", "0.05", "--warmup-ms", "0", "--quick", "--no-build"])
    assert code == 0
    data = json.loads((out / "bench.json").read_text())
    w = data["workloads"][0]
    assert w["name"] == "module-mlp" and w["function"] == MLP.qualname
    assert w["targets"]["inference_mode"]["values"] == [[1, 25.0], [16, 10.0], [128, 4.0]]
    assert [c["lanes"]["native"]["status"] for c in w["cells"]] == [TIMED] * 3
    assert "projects" not in data["meta"]["builds"] or "modules" not in data["meta"]["builds"]["projects"]
    md = (out / "bench.md").read_text()
    assert "**Targets of module-mlp:" in md and "inference_mode / native" in md


# ---- building the project when xtask did not ---------------------------------------------------


def test_build_missing_projects_builds_only_unrecorded_projects_with_sources(tmp_path):
    calls = []

    def runner(argv):
        calls.append(argv)
        dest = Path(argv[-1])
        (dest / ".rextio" / "reports").mkdir(parents=True, exist_ok=True)
        (dest / ".rextio" / "reports" / "build.json").write_text(json.dumps(
            {"python": {"chosen": {"executable": sys.executable}}}))
        return 0, "ok"

    builds = {"projects": {"scoring": {"ok": True}}}
    built = run.build_missing_projects(by_name([]), tmp_path, builds, runner)
    assert built == ["modules"] and len(calls) == 1
    assert calls[0][-2:] == ["build", str(tmp_path / "modules")] and "rextio-host" in calls[0]
    assert (tmp_path / "modules" / MLP.source).is_file()
    record = builds["projects"]["modules"]
    assert record["ok"] and record["error"] is None and record["by"] == "bench/run.py"
    assert run.build_missing_projects(by_name([]), tmp_path, builds, runner) == []  # recorded now


def test_a_failed_or_foreign_build_is_recorded_and_makes_native_unavailable(tmp_path):
    builds = {}
    run.build_missing_projects(by_name(["module-mlp"]), tmp_path, builds,
                               lambda argv: (101, "error[E0425]: boom\nlast line\n"))
    record = builds["projects"]["modules"]
    assert not record["ok"] and record["error"].endswith("exited with 101: last line")
    p = run.open_project(MLP, tmp_path, builds, tmp_path / "jit")
    assert p.native_status == UNAVAILABLE and "last line" in p.native_reason
    assert p.free_status == UNAVAILABLE and "last line" in p.free_reason

    def foreign(argv):
        dest = Path(argv[-1])
        (dest / ".rextio" / "reports").mkdir(parents=True, exist_ok=True)
        (dest / ".rextio" / "reports" / "build.json").write_text(json.dumps(
            {"python": {"chosen": {"executable": "/usr/bin/python3.9"}}}))
        return 0, ""

    builds = {}
    run.build_missing_projects(by_name(["module-mlp"]), tmp_path / "b", builds, foreign)
    assert "but the bench runs" in builds["projects"]["modules"]["error"]


def test_sync_dir_copies_changes_removes_stale_and_keeps_build_outputs(tmp_path):
    src, dst = tmp_path / "src", tmp_path / "dst"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "m.py").write_text("x = 1\n")
    (src / ".rextio").mkdir()
    (src / ".rextio" / "ignored").write_text("")
    (dst / ".rextio" / "build").mkdir(parents=True)
    (dst / "stale.py").write_text("")
    run.sync_dir(src, dst)
    assert (dst / "pkg" / "m.py").read_text() == "x = 1\n"
    assert not (dst / "stale.py").exists() and (dst / ".rextio" / "build").is_dir()
    assert not (dst / ".rextio" / "ignored").exists()
    (src / "pkg" / "m.py").write_text("x = 2\n")
    run.sync_dir(src, dst)
    assert (dst / "pkg" / "m.py").read_text() == "x = 2\n"
