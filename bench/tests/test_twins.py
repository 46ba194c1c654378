"""The numpy twins and the ONNX export compute what the eager torch functions compute."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch

from rxbench import onnxlane, parity, twins
from rxbench.workloads import WORKLOADS

ROOT = Path(__file__).resolve().parents[2]
# Function workloads (a module workload has no numpy twin; tests/test_modules.py covers it).
TORCH_WORKLOADS = [w for w in WORKLOADS if w.framework == "torch" and not w.model]
SOURCES = {
    "phase_a": ROOT / "tests/fixtures/phase_a",
    "control_flow": ROOT / "tests/fixtures/control_flow",
    "scoring": ROOT / "bench/projects/scoring",
}


def eager(w):
    path = SOURCES[w.project] / w.source
    spec = importlib.util.spec_from_file_location(f"twin_test_{w.name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, w.function)


def as_numpy(args):
    return tuple(a.numpy() if isinstance(a, torch.Tensor) else a for a in args)


@pytest.mark.parametrize("w", TORCH_WORKLOADS, ids=lambda w: w.name)
def test_every_torch_workload_has_a_numpy_twin_that_matches_eager_on_every_cell(w):
    fn, twin = eager(w), getattr(twins, w.twin)
    for index, cell in enumerate(w.cells):
        args = w.make_inputs(cell, index)
        before = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
        out = twin(*as_numpy(args))
        assert isinstance(out, np.ndarray)
        verdict = parity.compare(torch.from_numpy(out), fn(*args))
        assert verdict.ok, (cell.label, verdict.detail)
        assert all(torch.equal(a, b) for a, b in zip(args, before) if isinstance(a, torch.Tensor))


def test_scoring_twin_probabilities_sum_to_one():
    w = next(w for w in WORKLOADS if w.name == "scoring")
    probs = twins.scoring_probabilities(*as_numpy(w.make_inputs(w.cells[1], 0)))
    assert probs.dtype == np.float32 and np.allclose(probs.sum(axis=1), 1.0, atol=1e-6)


@pytest.mark.parametrize("w", TORCH_WORKLOADS, ids=lambda w: w.name)
def test_onnx_export_unrolls_the_cell_and_matches_eager(w):
    pytest.importorskip("onnxruntime")
    fn = eager(w)
    cell = w.cells[1]
    args = w.make_inputs(cell, 7)
    lane = onnxlane.build(fn, args)
    tensors, ints = onnxlane.split_args(args)
    assert len(lane.input_names) == len(tensors)
    assert lane.note.startswith("torch.onnx.export(dynamo=False")
    assert ("unrolled" in lane.note) == bool(ints)
    verdict = parity.compare(lane.call(*args), fn(*args))
    assert verdict.ok, verdict.detail
    raw = lane.session.run([lane.output_name], lane.feed(args))[0]
    assert torch.equal(torch.from_numpy(raw), lane.call(*args))


def test_split_args_requires_tensors_first():
    x = torch.zeros(2)
    assert onnxlane.split_args((x, x, 3, 1)) == ([x, x], [3, 1])
    with pytest.raises(ValueError):
        onnxlane.split_args((x, 3, x))
