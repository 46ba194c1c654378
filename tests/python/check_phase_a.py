"""Phase A chain: parity, grad contract, non-mutation, boundary rejects, lifetime."""

import gc
import inspect

import torch

from rxcheck import assert_same, is_native, load_eager, raises
from phasea import kernels

eager = load_eager("phasea.kernels")
f = kernels.inference
assert is_native(f), f"inference is not native: {f!r}"
assert list(inspect.signature(f).parameters) == ["x", "weight", "bias"], inspect.signature(f)
torch.manual_seed(0)

# Parity over shapes, including an empty batch and non-contiguous operands.
for b, i, o in [(1, 32, 32), (8, 64, 64), (64, 128, 64), (0, 16, 8), (3, 1, 1)]:
    x, w, bias = torch.randn(b, i), torch.randn(o, i), torch.randn(o)
    assert_same(f(x, w, bias), eager.inference(x, w, bias), f"shape {b}/{i}/{o}")
x, w, bias = torch.randn(8, 16), torch.randn(16, 12).t(), torch.randn(24)[::2]
assert not w.is_contiguous() and not bias.is_contiguous()
assert_same(f(x, w, bias), eager.inference(x, w, bias), "non-contiguous")
assert_same(f(x=x, weight=w, bias=bias), eager.inference(x, w, bias), "keywords")

# Special values propagate as in eager.
x = torch.tensor([[float("nan"), 1.0], [float("inf"), -float("inf")], [-0.0, 0.0]])
w, bias = torch.eye(2), torch.zeros(2)
assert_same(f(x, w, bias), eager.inference(x, w, bias), "special values")

# Grad contract: outputs never require grad; the caller's grad mode is restored.
x, w, bias = (t.requires_grad_() for t in (torch.randn(4, 8), torch.randn(6, 8), torch.randn(6)))
out = f(x, w, bias)
assert not out.requires_grad and out.grad_fn is None
assert torch.is_grad_enabled()
with torch.no_grad():
    f(x, w, bias)
    assert not torch.is_grad_enabled()
assert torch.is_grad_enabled()
raises(RuntimeError, f, torch.randn(4, 8), torch.randn(6, 9), torch.randn(6))
assert torch.is_grad_enabled(), "grad mode not restored after an error"

# Inputs are never mutated (values and version counters).
x, w, bias = torch.randn(4, 8), torch.randn(6, 8), torch.randn(6)
copies = [t.clone() for t in (x, w, bias)]
versions = [t._version for t in (x, w, bias)]
f(x, w, bias)
for t, c, v in zip((x, w, bias), copies, versions):
    assert torch.equal(t, c) and t._version == v, "input mutated"

# Output lifetime: valid after the inputs are gone. Against eager within tolerance (the last bits
# of a product depend on the BLAS kernel the host picks), and bit for bit against what the call
# returned while its inputs were alive.
x, w, bias = torch.randn(5, 3), torch.randn(4, 3), torch.randn(4)
expected = eager.inference(x, w, bias).clone()
out = f(x, w, bias)
returned = out.clone()
del x, w, bias
gc.collect()
assert torch.equal(out, returned), "the output changed after its inputs were freed"
assert_same(out, expected, "output lifetime")

# Boundary rejects (native mode: no fallback can mask them).
x, w, bias = torch.randn(2, 3), torch.randn(4, 3), torch.randn(4)
# Each message is the boundary's, then where and what (argument, position, function, given).
WHERE = "of phasea.kernels.inference, got"
e = raises(TypeError, f, [[1.0]], w, bias)
assert str(e) == f"rextio-torch: expected a torch.Tensor (argument 'x' at position 0 {WHERE} a list)", str(e)
e = raises(ValueError, f, x.double(), w, bias)
assert str(e) == f"rextio-torch: expected a float32 tensor (argument 'x' at position 0 {WHERE} a rank-2 torch.float64 Tensor on cpu)", str(e)
e = raises(ValueError, f, x, w.to(torch.int64), bias)
assert str(e) == f"rextio-torch: expected a float32 tensor (argument 'weight' at position 1 {WHERE} a rank-2 torch.int64 Tensor on cpu)", str(e)
e = raises(ValueError, f, x, w, bias.reshape(1, 4))
assert str(e) == f"rextio-torch: expected rank-1 tensor, got rank 2 (argument 'bias' at position 2 {WHERE} a rank-2 torch.float32 Tensor on cpu)", str(e)
e = raises(ValueError, f, torch.randn(3), w, bias)
assert str(e) == f"rextio-torch: expected rank-2 tensor, got rank 1 (argument 'x' at position 0 {WHERE} a rank-1 torch.float32 Tensor on cpu)", str(e)
e = raises(TypeError, f, x, None, bias)
assert str(e) == f"rextio-torch: expected a torch.Tensor (argument 'weight' at position 1 {WHERE} None)", str(e)
e = raises(ValueError, f, x, w, torch.nn.Parameter(bias.double()))
assert str(e) == f"rextio-torch: expected a float32 tensor (argument 'bias' at position 2 {WHERE} a rank-1 torch.float64 Parameter on cpu)", str(e)
raises(TypeError, f, x, w)
# A libtorch shape error is a RuntimeError, as in eager.
raises(RuntimeError, eager.inference, x, torch.randn(4, 5), bias)
raises(RuntimeError, f, x, torch.randn(4, 5), bias)
raises(RuntimeError, f, x, w, torch.randn(5))
print("phase_a ok")
