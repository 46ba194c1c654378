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


def test_non_torch_references_are_compared_as_numpy_arrays():
    import numpy as np

    ref = np.array([[1.0, 2.0]], dtype=np.float32)
    assert parity.compare(ref + np.float32(1e-7), ref).ok
    assert "max |diff|" in parity.compare(ref + np.float32(1e-3), ref).detail
    assert "dtype float64" in parity.compare(ref.astype(np.float64), ref).detail
    assert "shape (2, 1)" in parity.compare(ref.T, ref).detail
    assert "expected a tensor or numpy array" in parity.compare([1.0, 2.0], ref).detail
    labels = np.array([3, 1], dtype=np.int64)
    assert parity.compare(labels.copy(), labels).detail == "exact"
    assert "1 of 2 values differ" in parity.compare(np.array([3, 2]), labels).detail


class FakeEager:
    """Stands in for a TensorFlow EagerTensor: `.numpy()` gives its values."""

    def __init__(self, array):
        self.array = array

    def numpy(self):
        return self.array


def test_eager_tensor_like_results_and_inputs_are_checked():
    import numpy as np

    x = np.array([-1.0, 2.0], dtype=np.float32)
    ref = FakeEager(np.maximum(x, 0))
    assert parity.check(lambda t: FakeEager(np.maximum(t.numpy(), 0)), (FakeEager(x),), ref).ok

    def writes(t):
        np.maximum(t.numpy(), 0, out=t.numpy())
        return FakeEager(t.numpy().copy())

    v = parity.check(writes, (FakeEager(x.copy()),), ref)
    assert not v.ok and v.detail == "wrote to input argument 0"
