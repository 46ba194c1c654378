"""Fused regions against eager, on the path REXTIO_TORCH_PATH forces (auto, fused, per-op):
values, NaN masks, signed zeros, dtypes, shapes; inputs never written; layouts and shapes the
fused path declines (non-contiguous views, broadcasts it does not take, mismatched sizes,
sizes above the auto guard) still match, errors included."""

import os

import torch

from rxcheck import assert_same, is_native, load_eager, raises, same_outcome
from fusedk import kernels

eager = load_eager("fusedk.kernels")
path = os.environ.get("REXTIO_TORCH_PATH", "auto")
names = [n for n in dir(eager) if not n.startswith("_") and callable(getattr(eager, n)) and getattr(getattr(eager, n), "__module__", "") == eager.__name__]
for n in names:
    assert is_native(getattr(kernels, n)), n

SPECIAL = [float("nan"), float("inf"), -float("inf"), -0.0, 0.0]


def spiked(t):
    t = t.clone()
    flat = t.view(-1)
    for i, v in enumerate(SPECIAL):
        if i * 3 < flat.numel():
            flat[i * 3] = v
    return t


def check(name, *args, signed_zero=True):
    before = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    native = getattr(kernels, name)(*args)
    expected = getattr(eager, name)(*args)
    outs = native if isinstance(native, tuple) else (native,)
    refs = expected if isinstance(expected, tuple) else (expected,)
    assert len(outs) == len(refs), name
    for i, (o, r) in enumerate(zip(outs, refs)):
        assert_same(o, r, f"{name}[{i}] ({path})")
        if signed_zero and o.dtype == torch.float32:
            zeros = (r == 0) & ~torch.isnan(r)
            assert torch.equal(torch.signbit(o[zeros]), torch.signbit(r[zeros])), f"{name}[{i}]: signed zeros differ ({path})"
    for a, b in zip(args, before):
        if isinstance(a, torch.Tensor):
            assert torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(), b.nan_to_num()), f"{name}: an input was written"


torch.manual_seed(7)
F_, H, C = 12, 16, 5
# Batch 1 again at the end: plans cached for earlier shapes are reused, not confused.
for batch in (1, 3, 17, 1):
    x = torch.randn(batch, F_)
    mean, scale = torch.randn(F_), torch.rand(F_) + 0.5
    w1, b1, w2, b2 = torch.randn(H, F_) * 0.4, torch.randn(H), torch.randn(C, H) * 0.4, torch.randn(C)
    for rounds in (0, 1, 4):
        check("scoring", x, mean, scale, w1, b1, w2, b2, rounds)
    check("scoring", spiked(x), mean, scale, w1, b1, w2, b2, 3)
    w = torch.randn(H, F_) * 0.5
    check("two_outputs", x, w)
    check("two_outputs", spiked(x), w)
    check("reuse", spiked(x), torch.randn(F_, F_))
    check("heads", spiked(x))
    check("heads", x)
    check("reductions", x)
    check("reductions", spiked(x))
    check("column_reductions", spiked(x))
    check("keepdim_center", spiked(x))
    check("matmuls", x, torch.randn(F_, 7) * 0.3)
    check("scalars", spiked(x), 1.5, 3)
    check("scalars", x, -0.25, -2)
    check("vector_and_matrix", torch.rand(F_) + 0.5, spiked(x))
    check("column_argmax", spiked(x))
    check("column_argmax", x)
    check("activations", spiked(x))
    check("wide", x, w)
    g, beta = torch.rand(F_) + 0.5, torch.randn(F_)
    check("normed", x, g, beta, w)
    check("normed", spiked(x), g, beta, w)
    check("normed", x * 1e3 + 5.0, g, beta, w)
    check("normed_plain", x[0].clone(), 1e-3)
    check("normed_plain", spiked(x)[0].clone(), 1e-5)
    check("normed_n", x, F_, g)
    check("gated", x, w, torch.randn(H, batch))
    check("gated", spiked(x), w, spiked(torch.randn(H, batch)))
    check("rebound", x, w, b1)
    check("rebound", spiked(x), w, b1)
    sq, v = torch.randn(F_, F_) * 0.4, torch.randn(F_)
    check("updated", x, sq, torch.randn(batch, F_), v)
    check("updated", spiked(x), sq, torch.randn(batch, 1), spiked(v))
    check("updated", x, sq, torch.randn(1, F_), torch.randn(1))
    # An update that would grow its tensor raises eager's error (on every path).
    err = same_outcome(kernels.updated, eager.updated, x, sq[:1], torch.randn(batch, F_), v)
    assert isinstance(err, RuntimeError) and "doesn't match the broadcast shape" in str(err), err
    same_outcome(kernels.updated, eager.updated, x, sq, torch.randn(batch, 3), v)
    # A normalised size that is not the last dim: eager's error, whichever path runs.
    same_outcome(kernels.normed_n, eager.normed_n, x, F_ - 1, g)
# GELU: eager's answers on -0, on the zeros of x <= -5.6 and on +inf depend on the host: oneDNN
# (contiguous tensors of more than one element) answers by the instruction set its JIT picks,
# torch's own kernel (one element, or oneDNN switched off) otherwise. Native must follow the path
# eager takes on this host, also when the program switches oneDNN off and on again.
G = torch.tensor([-0.0, -9.76, -5.9, float("inf"), -float("inf"), float("nan"), 0.0, 1.0, -1.0, -30.0] * 4)
for enabled in (True, False, True):
    with torch.backends.mkldnn.flags(enabled=enabled):
        for n in (2, 3, 17, 40):
            check("gelu_only", G[:n].clone())
        for k in range(10):
            check("gelu_only", G[k : k + 1].clone())
        # Through the linear epilogue: specials from the bias; one output element, then several.
        for batch, outs in ((1, 1), (1, 10), (3, 10), (9, 10)):
            check("dense_gelu", torch.zeros(batch, F_), torch.randn(outs, F_), G[:outs].clone())
            check("dense_gelu", torch.randn(batch, F_), torch.randn(outs, F_), G[10 - outs : 10].clone())
        check("activations", spiked(torch.randn(4, F_)))
# Non-contiguous inputs (a transposed view): declined by the fused path, same results.
xt = torch.randn(F_, 4).t()
assert not xt.is_contiguous()
check("wide", xt, torch.randn(H, F_))
check("heads", xt)
check("scoring", xt, mean, scale, w1, b1, w2, b2, 2)
# A negative-bit view shares memory with values of the other sign: read through libtorch.
nv = torch._neg_view(spiked(torch.randn(5, F_)))
assert nv.is_neg() and nv.dtype == torch.float32
check("heads", nv)
check("wide", nv, torch.randn(H, F_))
# A Parameter (the one tensor subclass libtorch treats as a tensor) is an ordinary input.
check("wide", x, torch.nn.Parameter(torch.randn(H, F_), requires_grad=False))
# Threads calling the same functions with different shapes (per-thread plans and buffers).
import threading

results = {}


def worker(i):
    tx = torch.randn(1 + 7 * i, F_)
    got, want = kernels.scoring(tx, mean, scale, w1, b1, w2, b2, 3), eager.scoring(tx, mean, scale, w1, b1, w2, b2, 3)
    for _ in range(200):
        got = kernels.scoring(tx, mean, scale, w1, b1, w2, b2, 3)
    results[i] = (got, want)


threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert len(results) == 4
for i, (got, want) in results.items():
    assert_same(got, want, f"scoring in thread {i} ({path})")
# Results outlive later calls: the tensors the runtime recycles between calls are never ones a
# caller holds (outputs, tuples of outputs, results derived from intermediates).
kept = []
for i in range(40):
    tx = torch.randn(2 + i % 3, F_)
    rw = torch.randn(F_, F_)
    kept.append((tx, rw, kernels.escaped_view(tx, w), kernels.two_outputs(tx, w), kernels.scoring(tx, mean, scale, w1, b1, w2, b2, i % 4), kernels.reuse(tx, rw)))
for i, (tx, rw, v, pair, s, r) in enumerate(kept):
    assert_same(v, eager.escaped_view(tx, w), f"escaped_view call {i} after later calls ({path})")
    for o, e in zip(pair, eager.two_outputs(tx, w)):
        assert_same(o, e, f"two_outputs call {i} after later calls ({path})")
    assert_same(s, eager.scoring(tx, mean, scale, w1, b1, w2, b2, i % 4), f"scoring call {i} after later calls ({path})")
    assert_same(r, eager.reuse(tx, rw), f"reuse call {i} after later calls ({path})")
check("escaped_view", spiked(x), w)
# A loop-carried activation large enough to run without the GIL (in place, 2048 x 16 values).
# Feature-major calls (weights outweigh the features in and classes out; from 16 rows with
# AVX-512, 8 otherwise): whole and ragged vectors of rows, specials, and a batch of 2 (row-major).
hw = (torch.randn(96, F_) * 0.3, torch.randn(96), torch.rand(96) + 0.5, torch.randn(96),
      torch.randn(96, 96) * 0.1, torch.randn(96), torch.randn(C, 96) * 0.2, torch.randn(C))
for batch in (16, 33, 64, 2):
    check("residual_head", torch.randn(batch, F_) * 2.0, *hw)
    check("residual_head", spiked(torch.randn(batch, F_)), *hw)
check("scoring", spiked(torch.randn(2048, F_)), mean, scale, w1, b1, w2, b2, 3)
# A body whose fused work is large releases the GIL until it ends: another Python thread runs
# during the call. The switch interval is made long, so the other thread gets the GIL only when
# this one gives it up, and it counts only while a call is in flight (the flag is set and cleared
# right around the call, where nothing else can give the GIL up); it hands the GIL back at once
# with sleep(0). The per-op path keeps the GIL and is not checked.
if path != "per-op":
    import sys
    import time

    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(30.0)
    during, in_call, done = [0], [False], [False]

    def spin():
        while not done[0]:
            if in_call[0]:
                during[0] += 1
            time.sleep(0)

    big = torch.randn(16384, F_)
    spinner = threading.Thread(target=spin)
    spinner.start()
    for _ in range(20):
        in_call[0] = True
        labels = kernels.scoring(big, mean, scale, w1, b1, w2, b2, 2)
        in_call[0] = False
        del labels  # freed outside the window (freeing a tensor may release the GIL)
    done[0] = True
    spinner.join()
    sys.setswitchinterval(old_interval)
    assert during[0] > 0, f"no other thread ran during 20 large native calls ({path})"
# Sizes above the auto guard (per-op under auto, fused when forced).
check("wide", torch.randn(256, 128), torch.randn(256, 128) * 0.1)
# Long sums reorder additions (as any vectorised sum does): no cancellation in the result.
check("reductions", torch.rand(600, 600))
check("column_reductions", torch.rand(700, 300))
# Shapes the kernels do not take and mismatched sizes: libtorch's outcome, errors included.
same_outcome(kernels.wide, eager.wide, torch.randn(3, F_), torch.randn(H, F_ + 1))
same_outcome(kernels.vector_and_matrix, eager.vector_and_matrix, torch.randn(F_ + 1), torch.randn(3, F_))
same_outcome(kernels.matmuls, eager.matmuls, torch.randn(3, 4), torch.randn(5, 2))
err = raises(RuntimeError, kernels.scoring, torch.randn(2, F_), mean, scale, torch.randn(H, F_ + 2), b1, w2, b2, 1)
# Empty batches.
check("wide", torch.randn(0, F_), torch.randn(H, F_))
check("scoring", torch.randn(0, F_), mean, scale, w1, b1, w2, b2, 1)
# torch.jit.trace of code calling compiled functions records libtorch's operations (the fused
# path steps aside while a trace records): the trace answers a new input as eager does, rather
# than repeating the traced call's result. A later untraced call still matches eager.
import warnings

for name, make in (
    ("heads", lambda: (torch.randn(5, F_),)),
    ("wide", lambda: (torch.randn(5, F_), torch.randn(H, F_))),
    ("activations", lambda: (torch.randn(5, F_),)),
):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        traced = torch.jit.trace(lambda *a, f=getattr(kernels, name): f(*a) * 2.0, make())
    fresh = make()
    assert_same(traced(*fresh), getattr(eager, name)(*fresh) * 2.0, f"{name}: traced, on a new input ({path})")
    # A trace holding the call's result as a constant records only the final `* 2.0`.
    ops = str(traced.graph).count("aten::")
    assert ops > 1, f"{name}: the trace recorded none of the function's operations ({path})"
with warnings.catch_warnings():
    warnings.simplefilter("ignore", torch.jit.TracerWarning)
    traced = torch.jit.trace(lambda a, *w: kernels.scoring(a, *w, 2), (x, mean, scale, w1, b1, w2, b2))
fresh = torch.randn(9, F_)
assert_same(traced(fresh, mean, scale, w1, b1, w2, b2), eager.scoring(fresh, mean, scale, w1, b1, w2, b2, 2), f"scoring: traced ({path})")
check("heads", torch.randn(5, F_))


# torch.fx.symbolic_trace of a module (not compiled) calling compiled functions: given a Proxy,
# a compiled function runs its original, so the graph holds eager's operations and answers a new
# input as eager does; called directly afterwards, the module still runs the native functions.
class Caller(torch.nn.Module):
    def __init__(self, lib):
        super().__init__()
        self.lib = lib
        self.register_buffer("w", torch.randn(H, F_))

    def forward(self, x):
        h = self.lib.wide(x, self.w)
        return self.lib.scalars(h, 0.5, x.shape[0]) + self.lib.heads(x).sum()


caller = Caller(kernels)
graph = torch.fx.symbolic_trace(caller)
targets = {getattr(n.target, "__name__", str(n.target)) for n in graph.graph.nodes if n.op in ("call_function", "call_method")}
assert {"linear", "relu", "log_softmax", "softmax"} <= targets, f"fx recorded {sorted(targets)} ({path})"
reference = Caller(eager)
reference.w = caller.w
fresh = torch.randn(6, F_)
assert_same(graph(fresh), reference(fresh), f"fx graph, on a new input ({path})")
assert_same(caller(fresh), reference(fresh), f"fx: the module called directly ({path})")
# Anything else a compiled function refuses still raises.
raises(TypeError, kernels.wide, [[1.0] * F_], caller.w)
print(f"fused ok ({path})")
