"""A service package: constants, decorated helpers, helpers called across modules, tuple returns,
shape arithmetic and glue that stays on Python. Parity with eager (values, dtypes, shapes, NaN/inf
masks), the grad contract, and the three REXTIO_NATIVE_MODEs (set by the caller).

The eager reference is the same package run with REXTIO_NATIVE_MODE=fallback in a child process:
its modules import each other, so only a whole-package run is a faithful eager run."""

import os
import subprocess
import sys
import tempfile

import torch

from rxcheck import assert_same, is_native

import svc.api as api
import svc.heads as heads
import svc.layers as layers

H, C = 24, 5


def inputs():
    torch.manual_seed(3)
    params = (
        torch.randn(H, H) * 0.3,
        torch.randn(H),
        torch.rand(H) + 0.5,
        torch.randn(H),
        torch.randn(C, H),
        torch.randn(C),
    )
    xs = []
    for batch in (1, 7, 33):
        x = torch.randn(batch, H)
        if batch == 7:
            x[0, 0], x[1, 1], x[2, 2] = float("nan"), float("inf"), -float("inf")
        xs.append(x)
    return params, xs


def compute():
    (w, b, g, beta, wo, bo), xs = inputs()
    out = {}
    for i, x in enumerate(xs):
        for depth in (0, 1, 3):
            out[f"encode {i} {depth}"] = heads.encode(x, w, b, g, beta, depth)
        out[f"classify {i}"] = heads.classify(x, w, b, g, beta, wo, bo)
        out[f"confident {i}"] = heads.confident(x, w, b, g, beta, wo, bo)
        out[f"summary {i}"] = heads.summary(x)
        out[f"norm {i}"] = layers.norm(x, g, beta)
        out[f"handle {i}"] = api.handle(x, w, b, g, beta, wo, bo)
    return out


reference_path = os.environ.get("REXTIO_SERVICE_REFERENCE")
if reference_path:
    torch.save(compute(), reference_path)
    sys.exit(0)

mode = os.environ["REXTIO_NATIVE_MODE"]
for mod, names in {heads: ["encode", "classify", "confident", "summary"], layers: ["norm", "block"]}.items():
    for n in names:
        assert is_native(getattr(mod, n)) == (mode != "fallback"), f"{mod.__name__}.{n} in {mode}"
assert not is_native(api.handle) and not is_native(layers.scale_for)

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "reference.pt")
    env = dict(os.environ, REXTIO_NATIVE_MODE="fallback", REXTIO_SERVICE_REFERENCE=path)
    subprocess.run([sys.executable, __file__], env=env, check=True)
    expected = torch.load(path)

got = compute()
assert got.keys() == expected.keys()
for key, want in expected.items():
    have = got[key]
    if isinstance(want, tuple):
        assert isinstance(have, tuple) and len(have) == len(want), (key, have)
        for a, e in zip(have, want):
            assert_same(a, e, key)
    else:
        assert_same(have, want, key)

# Grad contract: outputs never require grad; the caller's grad mode is restored.
(w, b, g, beta, _, _), _ = inputs()
xg = torch.randn(4, H, requires_grad=True)
out = heads.encode(xg, w, b, g, beta, 2)
assert (not out.requires_grad) or mode == "fallback"
assert torch.is_grad_enabled()
print(f"service ok ({mode})")
