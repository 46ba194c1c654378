import torch

from rxbench import parity


def test_matching_results_pass_with_their_max_difference():
    ref = torch.tensor([1.0, 2.0, 3.0])
    v = parity.compare(ref + 1e-7, ref)
    assert v.ok and v.detail.startswith("max |diff|")
    assert parity.compare(torch.tensor([1, 2]), torch.tensor([1, 2])).detail == "exact"


def test_float_results_outside_tolerance_are_wrong():
    ref = torch.tensor([1.0, 2.0])
    v = parity.compare(ref + 1e-3, ref)
    assert not v.ok and "max |diff|" in v.detail


def test_nan_must_match_nan():
    ref = torch.tensor([float("nan"), 1.0])
    assert parity.compare(ref.clone(), ref).ok
    assert not parity.compare(torch.tensor([0.0, 1.0]), ref).ok
    assert not parity.compare(torch.tensor([float("nan"), float("nan")]), torch.tensor([0.0, 0.0])).ok


def test_dtype_shape_and_type_must_match():
    ref = torch.zeros(2, 3)
    assert "dtype" in parity.compare(ref.double(), ref).detail
    assert "shape" in parity.compare(torch.zeros(3, 2), ref).detail
    assert "returned list" in parity.compare([0.0], ref).detail


def test_integer_labels_must_match_exactly():
    ref = torch.tensor([3, 1, 4], dtype=torch.int64)
    v = parity.compare(torch.tensor([3, 1, 5]), ref)
    assert not v.ok and "1 of 3 values differ" in v.detail


def test_check_reports_exceptions_instead_of_raising():
    def boom(x):
        raise RuntimeError("rextio-torch: expected a CPU tensor\nmore detail")

    v = parity.check(boom, (torch.zeros(1),), torch.zeros(1))
    assert not v.ok and v.detail == "raised RuntimeError: rextio-torch: expected a CPU tensor"


def test_check_rejects_a_lane_that_writes_its_inputs():
    def in_place_relu(x):
        return x.relu_()

    x = torch.tensor([-1.0, 2.0])
    ref = x.relu()
    v = parity.check(in_place_relu, (x,), ref)
    assert not v.ok and v.detail == "wrote to input argument 0"


def test_check_passes_a_correct_lane_with_scalar_arguments():
    def f(x, n):
        return x * n

    x = torch.arange(4.0)
    assert parity.check(f, (x, 3), x * 3).ok


def test_first_line_cuts_long_text():
    assert parity.first_line("\n  hello \nworld") == "hello"
    assert parity.first_line("x" * 300, limit=10) == "x" * 9 + "…"
    assert parity.first_line("") == ""
