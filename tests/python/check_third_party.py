"""A third-party plugin and rextio-torch in one function."""

import torch

from rxcheck import assert_same, is_native, load_eager
from tp import kernels

eager = load_eager("tp.kernels")
assert is_native(kernels.mixed) and is_native(kernels.scalar_only)
torch.manual_seed(3)
x, w, b = torch.randn(3, 4), torch.randn(4, 4) * 0.5, torch.randn(4)
for depth in (0, 1, 2):
    assert_same(kernels.mixed(x, w, b, depth), eager.mixed(x, w, b, depth), f"mixed {depth}")
for args in [(1.5, 2.0, 0.25), (0.1, 0.2, 0.3), (1e308, 10.0, -1e308), (float("nan"), 1.0, 1.0)]:
    got, want = kernels.scalar_only(*args), eager.scalar_only(*args)
    assert got == want or (got != got and want != want), (args, got, want)
print("third_party ok")
