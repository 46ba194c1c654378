import pytest
import torch

from rxbench.workloads import WORKLOADS, by_name


def params(name):
    return [c.params for c in by_name([name])[0].cells]


def test_cells_are_the_issue_s_cells():
    assert [(p["batch"], p["in"], p["out"]) for p in params("phase_a")] == [
        (1, 32, 32), (1, 128, 64), (8, 64, 64), (16, 128, 64), (64, 128, 64), (256, 256, 128)]
    assert [(p["batch"], p["width"], p["depth"], p["phase"]) for p in params("phase_b")] == [
        (1, 16, 4, 0), (1, 32, 8, 1), (4, 32, 16, 0), (8, 64, 16, 1), (32, 128, 8, 0), (64, 128, 16, 1)]
    assert [p["batch"] for p in params("scoring")] == [1, 16, 128]


def test_each_workload_marks_exactly_one_compile_subset_cell():
    for w in WORKLOADS:
        assert [c.compile_subset for c in w.cells].count(True) == 1, w.name


def test_inputs_are_seeded_and_shaped():
    w = by_name(["scoring"])[0]
    a = w.make_inputs(w.cells[1], 3)
    b = w.make_inputs(w.cells[1], 3)
    c = w.make_inputs(w.cells[1], 4)
    assert all(torch.equal(x, y) for x, y in zip(a[:-1], b[:-1]))
    assert not torch.equal(a[0], c[0])
    x, mean, scale, w1, b1, w2, b2, rounds = a
    assert x.shape == (16, 32) and w1.shape == (32, 32) and w2.shape == (8, 32) and rounds == 4
    assert bool((scale > 0).all())
    x, weight, bias, depth, phase = by_name(["phase_b"])[0].make_inputs(by_name(["phase_b"])[0].cells[3], 0)
    assert x.shape == (8, 64) and weight.shape == (64, 64) and (depth, phase) == (16, 1)
    x, weight, bias = by_name(["phase_a"])[0].make_inputs(by_name(["phase_a"])[0].cells[5], 0)
    assert x.shape == (256, 256) and weight.shape == (128, 256) and bias.shape == (128,)
    assert all(t.dtype == torch.float32 for t in (x, weight, bias))


def test_by_name_keeps_order_and_rejects_unknown_names():
    assert [w.name for w in by_name(["scoring", "phase_a"])] == ["phase_a", "scoring"]
    assert by_name([]) == WORKLOADS
    with pytest.raises(ValueError, match="unknown workload"):
        by_name(["phase_c"])
