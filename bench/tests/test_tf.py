"""The TensorFlow workloads: optional (skipped, and said so, when `import tensorflow` fails),
and their tf.function and TFLite lanes parity-gated like every other lane."""

import json
import shutil
from pathlib import Path

import pytest

import run
from rxbench import tflanes
from rxbench.model import TIMED, UNAVAILABLE, WRONG
from rxbench.workloads import by_name

ROOT = Path(__file__).resolve().parents[2]
TF_SCORING = by_name(["tf_scoring"])[0]
TF_PHASE_A = by_name(["tf_phase_a"])[0]


def opts(**kw):
    base = dict(quick=True, rounds=2, block_ms=0.05, warmup_ms=0.0, resamples=20, seed=0,
                lanes=("native", "floor", "eager", "tf_function", "tflite", "fallback"),
                compile_subset=False)
    base.update(kw)
    return run.Options(**base)


def test_tf_workloads_are_skipped_with_the_reason_when_tensorflow_does_not_import(
        tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(tflanes, "load",
                        lambda threads=1: (None, "`import tensorflow` failed: ModuleNotFoundError: x"))
    out = tmp_path / "out"
    code = run.main(["--out", str(out), "--projects", str(tmp_path), "--workloads", "tf_phase_a",
                     "tf_scoring", "--rounds", "1", "--block-ms", "0.05", "--warmup-ms", "0",
                     "--quick"])
    assert code == 0
    data = json.loads((out / "bench.json").read_text())
    assert data["meta"]["tensorflow"] is None
    assert [(w["name"], w["framework"], w["cells"]) for w in data["workloads"]] == [
        ("tf_phase_a", "tensorflow", []), ("tf_scoring", "tensorflow", [])]
    assert all(w["skipped"] == "`import tensorflow` failed: ModuleNotFoundError: x"
               for w in data["workloads"])
    printed = capsys.readouterr()
    assert "skipping the TensorFlow workloads" in printed.err
    assert "tf_scoring · whole workload · skipped: `import tensorflow` failed" in printed.out


def test_tf_workloads_have_only_their_lanes():
    from rxbench.model import FRAMEWORK_LANES

    assert FRAMEWORK_LANES["tensorflow"] == ("native", "floor", "eager", "tf_function", "tflite",
                                             "fallback")
    assert TF_SCORING.framework == "tensorflow" and TF_SCORING.twin == ""
    assert [c.params["batch"] for c in TF_SCORING.cells] == [1, 16, 128]


@pytest.fixture
def tf():
    """TensorFlow, loaded as the harness loads it (one thread, Triton first), or a skip."""
    module, reason = tflanes.load()
    if module is None:
        pytest.skip(reason)
    return module


def make_tf_project(tmp_path, w, source_dir):
    root = tmp_path / "projects" / w.project
    source = root / w.source
    source.parent.mkdir(parents=True)
    shutil.copy(ROOT / source_dir / w.source, source)
    return tmp_path / "projects"


def test_tf_inputs_are_seeded_eager_tensors(tf):
    a = TF_SCORING.make_inputs(TF_SCORING.cells[1], 3)
    b = TF_SCORING.make_inputs(TF_SCORING.cells[1], 3)
    assert all(bool((x.numpy() == y.numpy()).all()) for x, y in zip(a[:-1], b[:-1]))
    assert a[0].shape == (16, 32) and a[3].shape == (32, 32) and a[5].shape == (32, 8) and a[-1] == 4
    assert all(t.dtype == tf.float32 for t in a[:-1])


def test_tf_function_and_tflite_lanes_are_gated_then_timed_and_the_rest_reported(tf, tmp_path):
    projects = make_tf_project(tmp_path, TF_SCORING, "bench/projects/tf_scoring")
    p = run.open_project(TF_SCORING, projects, {}, tmp_path / "jit")
    cell = run.run_cell(p, 0, TF_SCORING.cells[1], None, "no TF floor", opts())
    assert set(cell.lanes) == {"native", "floor", "eager", "tf_function", "tflite", "fallback"}
    for lane in ("eager", "tf_function", "tflite"):
        assert cell.lanes[lane].status == TIMED, (lane, cell.lanes[lane].reason)
        assert len(cell.lanes[lane].per_call_ns) == 2
    assert cell.lanes["tf_function"].note.startswith("tf.function(input_signature=")
    assert "unrolled for the cell's ints [4]" in cell.lanes["tf_function"].note
    assert cell.lanes["tflite"].note.endswith("Interpreter(num_threads=1)")
    assert cell.lanes["tflite"].compile_s is not None
    assert cell.lanes["floor"].status == UNAVAILABLE and cell.lanes["floor"].reason == "no TF floor"
    assert cell.lanes["native"].status == UNAVAILABLE and "no build report" in cell.lanes["native"].reason


def test_a_wrong_tflite_model_is_reported_wrong(tf, tmp_path, monkeypatch):
    projects = make_tf_project(tmp_path, TF_PHASE_A, "bench/projects/tf_phase_a")
    p = run.open_project(TF_PHASE_A, projects, {}, tmp_path / "jit")
    real = tflanes.tf_function

    def doubled(fn, args):
        return real(lambda *a: fn(*a) * 2.0, args)

    monkeypatch.setattr(run.tflanes, "tf_function", doubled)
    cell = run.run_cell(p, 0, TF_PHASE_A.cells[0], None, "", opts(lanes=("eager", "tf_function", "tflite")))
    for lane in ("tf_function", "tflite"):
        assert cell.lanes[lane].status == WRONG and "max |diff|" in cell.lanes[lane].reason
        assert cell.lanes[lane].per_call_ns == []
    assert cell.lanes["eager"].status == TIMED


def test_tf_targets_are_the_issue_s():
    # tf_scoring: faster than TFLite at every batch and at least 20x eager at batch 1.
    targets = {t.key: t for t in TF_SCORING.targets}
    assert set(targets) == {"tflite", "eager"}
    assert targets["tflite"].op == ">" and [targets["tflite"].bound(b) for b in (1, 16, 128)] == [1.0] * 3
    assert targets["eager"].op == ">=" and targets["eager"].bound(1) == 20.0
    assert targets["eager"].bound(16) is None
    # tf_phase_a: faster than TFLite below batch 256, nothing said at 256.
    (lite,) = TF_PHASE_A.targets
    assert lite.key == "tflite" and lite.op == ">"
    assert [lite.bound(c.batch) for c in TF_PHASE_A.cells] == [1.0, 1.0, None]
