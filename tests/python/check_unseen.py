"""An unseen project: routes, parity, Python int semantics and the documented divergences."""

import torch

from rxcheck import assert_same, is_native, load_eager, raises, same_outcome
from unseen import model

eager = load_eager("unseen.model")
native = ["nested", "bias_first", "halving", "early", "int_semantics", "ratio", "counted", "scaled", "refine"]
python = ["uses_global", "data_dependent", "transposed"]
for name in native:
    assert is_native(getattr(model, name)), name
for name in python:
    assert not is_native(getattr(model, name)), name
torch.manual_seed(2)
x, w, b = torch.randn(5, 6), torch.randn(6, 6) * 0.4, torch.randn(6)
v = torch.randn(6)
assert_same(model.nested(x, w, b), eager.nested(x, w, b), "nested")
assert_same(model.bias_first(b, x), eager.bias_first(b, x), "bias_first")
for n in (-4, 0, 1, 2, 7, 27, 1000):
    assert_same(model.halving(x, w, n), eager.halving(x, w, n), f"halving {n}")
for mode in (-1, 0, 1, 5):
    for gain in (0.0, 2.5, 3.0, float("nan"), float("inf")):
        assert_same(model.early(x, w, mode, gain), eager.early(x, w, mode, gain), f"early {mode} {gain}")
for a in (-7, -6, 0, 5, 7, 123456789):
    for bb in (-3, -2, 1, 2, 7):
        same_outcome(model.int_semantics, eager.int_semantics, x, a, bb, what=f"int {a} {bb}")
        for flag in (True, False):
            same_outcome(model.ratio, eager.ratio, x, a, bb, flag, what=f"ratio {a} {bb}")
x0 = x.clone()
for n in (0, 1, 2, 5):
    assert_same(model.refine(x, w, n), eager.refine(x, w, n), f"refine {n}")
assert torch.equal(x, x0), "refine mutated its input"
# Large ints: true division is correctly rounded as in Python (no double rounding).
for a, bb in [(4865782901354085936, -129944532029), (-8659086330061188717, 713073860282), (2**63 - 1, 3), (2**53 + 1, 1)]:
    for flag in (True, False):
        same_outcome(model.ratio, eager.ratio, x, a, bb, flag, what=f"ratio {a} {bb} {flag}")
# Zero division raises ZeroDivisionError in both.
same_outcome(model.int_semantics, eager.int_semantics, x, 3, 0)
same_outcome(model.ratio, eager.ratio, x, 3, 0, True)
for n in (0, 1, 5, 20):
    same_outcome(model.counted, eager.counted, v, n, what=f"counted {n}")
# Documented divergence: Python ints grow without bound, native ints are 64-bit and raise.
assert isinstance(eager.counted(v, 60), int) and eager.counted(v, 60) > 2**63
raises(OverflowError, model.counted, v, 60)
# Python-routed functions still work through the wrapper.
assert_same(model.softmax_head(x), eager.softmax_head(x), "softmax")
assert_same(model.transposed(x), eager.transposed(x), "transposed fallback")
for k in (2.0, -0.5, 0.0):
    for n in (1, 3, -2, 0):
        assert_same(model.scaled(x, k, n), eager.scaled(x, k, n), f"scaled {k} {n}")
print("unseen ok")
