"""torch.cat of rank-2 tensors against eager: values, NaN/inf masks, signed zeros, shapes, dtype;
size mismatches raise eager's exception type; inputs are never mutated and results never alias
them; outputs never require grad; the rejected forms run their Python bodies."""

import torch

from rxcheck import assert_same, is_native, load_eager, raises

import joins.ops as native

eager = load_eager("joins.ops")

NATIVE = ["rows", "columns", "last_dim", "tuple_local", "single"]
PYTHON = ["list_variable", "mixed_ranks", "dim_out_of_range", "dynamic_dim"]


def same(got, want, what):
    """assert_same plus infinity masks and signed zeros."""
    assert_same(got, want, what)
    assert torch.equal(torch.isposinf(got), torch.isposinf(want)), f"{what}: +inf mask differs"
    assert torch.equal(torch.isneginf(got), torch.isneginf(want)), f"{what}: -inf mask differs"
    zeros = want == 0
    assert torch.equal(torch.signbit(got[zeros]), torch.signbit(want[zeros])), f"{what}: signed zeros differ"


def specials(rows, cols, shift):
    base = torch.tensor([float("-inf"), -3.0, -1.0, -0.0, 0.0, 1.0, 3.0, float("inf"), float("nan")])
    return torch.roll(base, shift).repeat(rows * cols // 9 + 1)[: rows * cols].reshape(rows, cols)


def run(name, *args):
    """Native and eager on fresh copies; inputs must come back unchanged."""
    inputs = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    versions = [a._version if isinstance(a, torch.Tensor) else None for a in inputs]
    got = getattr(native, name)(*inputs)
    want = getattr(eager, name)(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])
    for before, after, v in zip(args, inputs, versions):
        if isinstance(before, torch.Tensor):
            assert torch.equal(torch.nan_to_num(before), torch.nan_to_num(after)) and after._version == v, f"{name}: an input was mutated"
            assert got.data_ptr() != after.data_ptr() or got.numel() == 0, f"{name}: the result aliases an input"
    same(got, want, name)
    return got


for name in NATIVE:
    assert is_native(getattr(native, name)), f"{name} is not native"
for name in PYTHON:
    assert not is_native(getattr(native, name)), f"{name} should stay on Python"

torch.manual_seed(7)
w = torch.randn(3, 3)
for shape in [(1, 3), (4, 3), (5, 3)]:
    a, b, c = torch.randn(*shape), torch.randn(*shape), torch.randn(*shape)
    assert run("rows", a, b).shape == (2 * shape[0], 3)
    assert run("columns", a, b, c).shape == (shape[0], 9)
    assert run("last_dim", a, w).shape == (shape[0], 9)
    for n in (0, 1, 3):
        assert run("tuple_local", a, b, n).shape == ((2 + n) * shape[0], 3)
    assert run("single", a).shape == shape

# Special values: NaN, infinities and signed zeros keep their places.
a, b, c = specials(3, 3, 0), specials(3, 3, 1), specials(3, 3, 4)
for name, args in [("rows", (a, b)), ("columns", (a, b, c)), ("last_dim", (a, torch.eye(3))), ("tuple_local", (a, b, 2)), ("single", (a,))]:
    run(name, *args)

# Sizes of the other dim must match: the same exception type as eager, libtorch's message.
for name, args in [
    ("rows", (torch.randn(2, 3), torch.randn(2, 4))),
    ("columns", (torch.randn(2, 3), torch.randn(3, 3), torch.randn(2, 3))),
    ("last_dim", (torch.randn(2, 3), torch.randn(4, 4))),
]:
    want = raises(Exception, getattr(eager, name), *args)
    got = raises(type(want), getattr(native, name), *args)
    assert type(got) is type(want), f"{name}: {type(got).__name__} vs {type(want).__name__}"
    if name != "last_dim":
        assert "Sizes of tensors must match" in str(got), f"{name}: {got}"

# Empty and non-contiguous inputs.
run("rows", torch.empty(0, 3), torch.randn(2, 3))
run("columns", torch.randn(3, 0), torch.randn(3, 2), torch.randn(3, 1))
run("columns", torch.randn(3, 4).t(), torch.randn(4, 3), torch.randn(2, 4).t())

# A one-element cat is a fresh tensor: writing it leaves the input alone.
a = torch.randn(2, 3)
out = native.single(a)
out.add_(1.0)
assert torch.equal(out, a + 1.0), "single: the result aliases its input"

# The grad contract: outputs never require grad, the caller's mode is restored.
a, b = torch.randn(2, 3, requires_grad=True), torch.randn(2, 3, requires_grad=True)
out = native.rows(a, b)
assert not out.requires_grad and out.grad_fn is None and torch.is_grad_enabled()

# Boundary rejects.
b = torch.randn(2, 3)
raises(TypeError, native.rows, [[1.0, 2.0, 3.0]], b, match="rextio-torch: expected a torch.Tensor (argument 'a' at position 0 of joins.ops.rows, got a list)")
raises(ValueError, native.rows, b.double(), b, match="rextio-torch: expected a float32 tensor (argument 'a' at position 0 of joins.ops.rows, got a rank-2 torch.float64 Tensor on cpu)")
raises(ValueError, native.rows, b.reshape(-1), b, match="rextio-torch: expected rank-2 tensor, got rank 1 (argument 'a' at position 0 of joins.ops.rows, got a rank-1 torch.float32 Tensor on cpu)")
# A scalar of the wrong type names its parameter too.
e = raises(TypeError, native.tuple_local, b, b, 2.5)
assert str(e) == "'float' object cannot be interpreted as an integer (argument 'n' at position 2 of joins.ops.tuple_local, got a float (2.5))", str(e)
e = raises(TypeError, native.tuple_local, b, b, None)
assert str(e).endswith(" (argument 'n' at position 2 of joins.ops.tuple_local, got None)"), str(e)

# The rejected forms run their Python bodies: same results, same exceptions.
a, b, v = torch.randn(2, 3), torch.randn(2, 3), torch.randn(3)
same(native.list_variable(a, b), eager.list_variable(a, b), "list_variable")
same(native.dynamic_dim(a, b, 1), eager.dynamic_dim(a, b, 1), "dynamic_dim")
want = raises(Exception, eager.mixed_ranks, a, v)
raises(type(want), native.mixed_ranks, a, v)
want = raises(Exception, eager.dim_out_of_range, a, b)
raises(type(want), native.dim_out_of_range, a, b)

print("concat ok")
