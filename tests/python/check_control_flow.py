"""Seed control-flow and expanded-surface functions against eager."""

import torch

from rxcheck import assert_same, is_native, load_eager, raises, same_outcome
from cflow import kernels

eager = load_eager("cflow.kernels")
assert is_native(kernels.inference) and is_native(kernels.expanded_surface)
torch.manual_seed(1)
for n in (1, 4, 16):
    x, w, b = torch.randn(n, 8), torch.randn(8, 8) * 0.5, torch.randn(8)
    for depth in range(-1, 7):
        for phase in (0, 1, 2, -3):
            assert_same(kernels.inference(x, w, b, depth, phase), eager.inference(x, w, b, depth, phase), f"n={n} d={depth} p={phase}")
    offset = torch.randn(n)
    assert_same(kernels.expanded_surface(x, w, offset), eager.expanded_surface(x, w, offset), f"expanded n={n}")
    # A broadcast mismatch raises in both.
    same_outcome(kernels.expanded_surface, eager.expanded_surface, x, w, torch.randn(n + 2))
x, w, b = torch.randn(2, 8), torch.randn(8, 8), torch.randn(8)
# Wrong scalar types raise TypeError natively, as range() does in eager.
same_outcome(kernels.inference, eager.inference, x, w, b, 2.5, 0)
raises(TypeError, kernels.inference, x, w, b, "3", 0)
# Ints beyond 64 bits cannot enter native code.
raises(OverflowError, kernels.inference, x, w, b, 2**70, 0)
# A shape error inside the loop surfaces as RuntimeError.
raises(RuntimeError, kernels.inference, x, torch.randn(8, 3), b, 2, 0)
print("control_flow ok")
