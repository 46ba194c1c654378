"""torch.nn.Module classes: compiled methods against the eager original (values, dtypes, shapes,
NaN/inf masks) at several sizes, and the runtime contract of the built classes: grad and training
fall back to the original Python methods (with one warning per class for grad), hooks on
submodules and global hooks make the original run so every hook fires as in eager, changed
dtypes or submodule classes run the original, weights are never stale, bad inputs raise, the
class stays the user's class (state_dict, deepcopy, pickling, subclassing), and threads agree.

`__rextio_method_stats__()` of each built module tells which path ran; in
REXTIO_NATIVE_MODE=fallback it may be absent and only the parity checks apply.

The eager reference is the original package from REXTIO_FIXTURE_SRC imported under another
name (`eager_mdl`), so its relative imports resolve to the original sources, never to the built
package on sys.path."""

import collections
import copy
import importlib
import importlib.util
import io
import os
import sys
import threading
import warnings

import torch
from torch import nn

import rxcheck
from rxcheck import assert_same, is_native

# Whole models, not single operations: a dozen float32 products and normalisations in a row, each
# summed in a different order by the native kernels and by the BLAS eager calls, so last-bit
# differences grow with depth. Per-operation parity (1e-5 / 1e-6) is certified by the plugin's
# certification kit; here a model is compared as a user would compare it.
RTOL, ATOL = 1e-4, 1e-5
rxcheck.RTOL, rxcheck.ATOL = RTOL, ATOL

import mdl.blocks as blocks
import mdl.model as model

mode = os.environ["REXTIO_NATIVE_MODE"]
NATIVE = mode != "fallback"
ACCEPTED = (TypeError, ValueError, RuntimeError)


def load_eager_package(package, alias):
    """Import the original package `package` from the fixture sources as `alias`."""
    root = os.path.join(os.environ["REXTIO_FIXTURE_SRC"], package)
    spec = importlib.util.spec_from_file_location(
        alias, os.path.join(root, "__init__.py"), submodule_search_locations=[root]
    )
    pkg = importlib.util.module_from_spec(spec)
    sys.modules[alias] = pkg
    spec.loader.exec_module(pkg)
    return pkg


load_eager_package("mdl", "eager_mdl")
eblocks = importlib.import_module("eager_mdl.blocks")
emodel = importlib.import_module("eager_mdl.model")
assert emodel.ResidualBlock is eblocks.ResidualBlock and emodel.blocks is eblocks, "eager imports leaked"
assert emodel.Scorer is not model.Scorer and eblocks.ResidualBlock is not blocks.ResidualBlock

BIG = dict(features=20, width=48, hidden=96, classes=5, depth=2, temperature=0.7)
SMALL = dict(features=7, width=16, hidden=33, classes=3, depth=3, temperature=1.5)
SCORER = "mdl.model.Scorer"
ENCODER = "mdl.model.Encoder"
MODE_CONTEXTS = (("inference_mode", torch.inference_mode), ("no_grad", torch.no_grad))


# ---- observability ----------------------------------------------------------------------------


def counters(mod, qualname):
    if not NATIVE:
        return {}
    stats = mod.__rextio_method_stats__()
    assert isinstance(stats, dict), f"{mod.__name__}.__rextio_method_stats__() returned {type(stats)}"
    return {k: int(v) for k, v in stats.get(qualname, {}).items()}


class ran:
    """The calls inside the block run `qualname` exactly `n` times, each on the path `category`:
    "native", or a fallback reason category ("grad", "training", "hook", "state")."""

    def __init__(self, mod, qualname, category, n=1):
        self.mod, self.qualname, self.category, self.n = mod, qualname, category, n

    def __enter__(self):
        self.before = counters(self.mod, self.qualname)
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None or not NATIVE:
            return False
        after = counters(self.mod, self.qualname)
        delta = {k: after.get(k, 0) - self.before.get(k, 0) for k in set(after) | set(self.before)}
        delta = {k: v for k, v in delta.items() if v}
        what = f"{self.qualname}: expected {self.n} x {self.category!r}, counters moved by {delta}"
        assert sum(delta.values()) == self.n, what
        for key in delta:
            if self.category == "native":
                assert key == "native", what
            else:
                assert key.startswith(self.category + ":"), what
        return False


# ---- comparisons ------------------------------------------------------------------------------


def close(got, want, what):
    """Values, dtype and shape as eager; for results that may carry grad."""
    assert isinstance(got, torch.Tensor), f"{what}: {type(got)}"
    assert got.dtype == want.dtype and got.shape == want.shape, (
        f"{what}: {got.dtype}{tuple(got.shape)} != {want.dtype}{tuple(want.shape)}"
    )
    got, want = got.detach(), want.detach()
    assert torch.equal(torch.isnan(got), torch.isnan(want)), f"{what}: NaN mask differs"
    assert torch.allclose(got, want, rtol=RTOL, atol=ATOL, equal_nan=True), (
        f"{what}: max abs diff {(got - want).abs().max().item()}"
    )


def compare(got, want, what, logits=None):
    """assert_same, except that class labels may differ where eager's logits are a near tie."""
    if logits is not None and isinstance(got, torch.Tensor) and got.shape == want.shape and got.dtype == want.dtype:
        for row in (got != want).nonzero().flatten().tolist():
            a, b = logits[row, got[row]].item(), logits[row, want[row]].item()
            assert abs(a - b) <= 1e-5 * max(1.0, abs(b)), f"{what}: row {row} label {got[row]} != {want[row]}"
        got = torch.where(got == want, got, want)
    assert_same(got, want, what)


def call(m, method, *args):
    """`forward` goes through Module.__call__ (hooks included); other methods are called."""
    return m(*args) if method == "forward" else getattr(m, method)(*args)


def outcome(built_fn, eager_fn, what, free_function=False):
    """Both return the same result, or both raise (the built one an accepted type or eager's).

    A method falls back to the original for arguments its native body does not cover, so where
    eager returns, the built method returns the same. A free function is the native builtin and
    rejects off-marker arguments (ValueError/TypeError, the documented divergence)."""
    try:
        want = eager_fn()
    except Exception as e:  # noqa: BLE001
        try:
            built_fn()
        except ACCEPTED + (type(e),):
            return None
        except Exception as got:  # noqa: BLE001
            raise AssertionError(f"{what}: built raised {type(got).__name__}: {got}; eager {type(e).__name__}") from got
        raise AssertionError(f"{what}: eager raised {type(e).__name__}: {e}, built returned")
    if free_function and NATIVE:
        try:
            got = built_fn()
        except (TypeError, ValueError):
            return None
    else:
        got = built_fn()
    assert_same(got, want, what)
    return got


def same_state(b, e, what):
    sb, se = b.state_dict(), e.state_dict()
    assert list(sb) == list(se), f"{what}: state_dict keys {list(sb)} != {list(se)}"
    for k in sb:
        assert torch.equal(sb[k], se[k]), f"{what}: {k} differs"


# ---- models and inputs ------------------------------------------------------------------------


def perturb(m, seed, std=0.2):
    """Move every float entry of the state (gate zeros, scale ones, LayerNorm affine too)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for t in m.state_dict().values():
            if t.is_floating_point():
                t.add_(torch.randn(t.shape, generator=g) * std)


def pair(built_mod, eager_mod, name, seed, *args, **kwargs):
    """The same class from the built and the eager package, with identical weights, in eval mode."""
    torch.manual_seed(seed)
    b = getattr(built_mod, name)(*args, **kwargs)
    torch.manual_seed(seed)
    e = getattr(eager_mod, name)(*args, **kwargs)
    # __init__ stays Python: the same seed gives the same parameters.
    same_state(b, e, f"{name} init")
    perturb(e, seed + 1000)
    b.load_state_dict(e.state_dict())
    same_state(b, e, f"{name} loaded")
    return b.eval(), e.eval()


def change_both(b, e, change, seed):
    """Apply `change` to the built and the eager model (same seed for any new weights), then give
    the built one the eager one's weights."""
    for m in (b, e):
        torch.manual_seed(seed)
        change(m)
    b.load_state_dict(e.state_dict())


def after_change(b, e, cls, methods, change, categories, seed):
    """`change` applied to both models; then each method (16 features, batch 16) takes the path
    its category names and returns what eager returns, or raises as eager does."""
    change_both(b, e, change, seed)
    x = inputs(16, seed + 1)["batch 16"]
    for method, category in zip(methods, categories):
        with torch.inference_mode(), ran(model, f"{cls}.{method}", category):
            outcome(lambda: call(b, method, x), lambda: call(e, method, x),
                    f"{cls} {method} after a change")


def inputs(features, seed):
    g = torch.Generator().manual_seed(seed)
    xs = {f"batch {n}": torch.randn(n, features, generator=g) for n in (1, 16, 128)}
    x = torch.randn(9, features, generator=g)
    x[0, 0], x[1, 1 % features], x[2, 2 % features] = float("nan"), float("inf"), -float("inf")
    x[3, :] = float("inf")
    xs["nan/inf"] = x
    xs["transposed"] = torch.randn(features, 5, generator=g).t()
    xs["strided"] = torch.randn(6, 2 * features, generator=g)[:, ::2]
    xs["empty"] = torch.randn(0, features, generator=g)
    return xs


def parity(b, e, mod, cls, methods, xs, tag):
    """Each method on each input, under inference_mode and no_grad, runs native and matches."""
    for ctx_name, ctx in MODE_CONTEXTS:
        for key, x in xs.items():
            logits = None
            for method in methods:
                what = f"{tag} {method} {key} {ctx_name}"
                with ctx():
                    want = call(e, method, x)
                with ran(mod, f"{cls}.{method}", "native"), ctx():
                    got = call(b, method, x)
                if method == "forward":
                    logits = want
                compare(got, want, what, logits if method == "predict" else None)
    assert torch.is_grad_enabled() and not torch.is_inference_mode_enabled()


SCORER_METHODS = ("forward", "predict", "probs")

# ---- 1. parity at two sizes; the routes visible from Python -----------------------------------

assert is_native(blocks.mix) == NATIVE, f"mdl.blocks.mix in {mode}"
for mod in (blocks, model):
    if NATIVE:
        assert callable(getattr(mod, "__rextio_method_stats__", None)), f"{mod.__name__} lacks stats"

big_b, big_e = pair(model, emodel, "Scorer", 1, **BIG)
parity(big_b, big_e, model, SCORER, SCORER_METHODS, inputs(BIG["features"], 2), "big")
small_b, small_e = pair(model, emodel, "Scorer", 3, **SMALL)
parity(small_b, small_e, model, SCORER, SCORER_METHODS, inputs(SMALL["features"], 4), "small")

enc_b, enc_e = pair(model, emodel, "Encoder", 5, 24, 40, 2)
parity(enc_b, enc_e, model, ENCODER, ("forward", "weights"), inputs(24, 6), "encoder")
for name, args, width in (("ResidualBlock", (16, 33), 16), ("Gate", (48,), 48), ("Mixer", (16, 3), 16)):
    bb, be = pair(blocks, eblocks, name, 7, *args)
    parity(bb, be, blocks, f"mdl.blocks.{name}", ("forward",), inputs(width, 8), name)

# Two module lists written out at their stated lengths, and looped once either one changes.
TOWERS = "mdl.model.Towers"
tw_b, tw_e = pair(model, emodel, "Towers", 40, 16, 24)
parity(tw_b, tw_e, model, TOWERS, ("forward",), inputs(16, 41), "towers")
for change in (
    lambda m: setattr(m, "flag", False),
    lambda m: m.pre.__delitem__(0),
    lambda m: m.post.append(type(m.post[0])(16, 24)),
    lambda m: m.pre.insert(0, nn.Sequential(nn.Linear(16, 16), nn.ReLU())),
):
    change_both(tw_b, tw_e, change, 42)
    for key, x in inputs(16, 43).items():
        with torch.inference_mode(), ran(model, f"{TOWERS}.forward", "native"):
            got = tw_b(x)
        with torch.inference_mode():
            assert_same(got, tw_e(x), f"towers after a change, {key}")

# A list filled by appends (three blocks: written out at that length) and enumerated from 1, a
# Parameter and a scalar from arithmetic in `__init__`, a Sequential head.
STACK = "mdl.model.Stack"
st_b, st_e = pair(model, emodel, "Stack", 44, 16, 24)
parity(st_b, st_e, model, STACK, ("forward", "ends", "joined", "zipped", "ranged"), inputs(16, 45),
       "stack")
# `self.layers[-1]` is the last of the three layers `__init__` appends: with a fourth, the
# original runs (and finds the new last one); `self.layers[0]` and `self.head[0]` are read live.
for change, category in (
    (lambda m: m.layers.append(type(m.layers[0])(16, 24)), "state"),
    (lambda m: m.layers.__delitem__(0), "native"),
):
    change_both(st_b, st_e, change, 50)
    x = inputs(16, 51)["batch 16"]
    for method in ("ends", "joined", "zipped", "ranged"):
        # `ranged` loops over any length.
        expected = "native" if method == "ranged" else category
        with torch.inference_mode(), ran(model, f"{STACK}.{method}", expected):
            got = call(st_b, method, x)
        with torch.inference_mode():
            assert_same(got, call(st_e, method, x), f"stack {method} after a change")
st_b, st_e = pair(model, emodel, "Stack", 44, 16, 24)
for change, category in (
    (lambda m: m.layers.append(type(m.layers[0])(16, 24)), "native"),
    (lambda m: m.layers.__delitem__(0), "native"),
    (lambda m: setattr(m, "scale", 2.0), "native"),
    (lambda m: m.head.append(nn.ReLU()), "state"),
    (lambda m: m.head.__delitem__(2), "native"),
    (lambda m: m.head.__delitem__(1), "state"),
):
    change_both(st_b, st_e, change, 46)
    for key, x in inputs(16, 47).items():
        with torch.inference_mode(), ran(model, f"{STACK}.forward", category):
            got = st_b(x)
        with torch.inference_mode():
            assert_same(got, st_e(x), f"stack after a change, {key}")

# A class derived from Stack: inherited `forward` (Stack's compiled body, on a Tuned instance),
# its own `ends` and `stacked` through `super()` (Stack's `stacked` calls `self.ranged` and
# `self.forward`, which a Tuned instance dispatches to Stack's), and `both` calling methods
# through `self`. A subclass of it that overrides `ends` makes `both` run the original, which
# dispatches as eager does.
TUNED = "mdl.model.Tuned"
tu_b, tu_e = pair(model, emodel, "Tuned", 52, 16, 24)
parity(tu_b, tu_e, model, STACK, ("forward",), inputs(16, 53), "tuned (inherited)")
parity(tu_b, tu_e, model, TUNED, ("ends", "both", "stacked"), inputs(16, 53), "tuned")


# A subclass defined outside the project that overrides nothing dispatches every call to the
# compiled methods: they run natively on its instances.
class BuiltPlain(model.Tuned):
    pass


class EagerPlain(emodel.Tuned):
    pass


torch.manual_seed(56)
pb = BuiltPlain(16, 24).eval()
torch.manual_seed(56)
pe = EagerPlain(16, 24).eval()
parity(pb, pe, model, TUNED, ("both", "stacked"), inputs(16, 57), "plain subclass")
parity(pb, pe, model, STACK, ("forward",), inputs(16, 57), "plain subclass (inherited)")
# An instance attribute shadows the method for `self.ranged(...)`: the original runs and calls it.
for m in (pb, pe):
    m.ranged = lambda x: x * 2.0
x = inputs(16, 58)["batch 16"]
with torch.inference_mode(), ran(model, f"{STACK}.stacked", "state"):
    got = pb.stacked(x)
with torch.inference_mode():
    assert_same(got, pe.stacked(x), "stacked() with `ranged` set on the instance")
for m in (pb, pe):
    del m.ranged
with torch.inference_mode(), ran(model, f"{TUNED}.stacked", "native"):
    got = pb.stacked(x)
with torch.inference_mode():
    assert_same(got, pe.stacked(x), "stacked() once the instance attribute is gone")
# A method replaced on its class after import: compiled callers see the replacement is not the
# compiled method and run the original, which calls it; putting the compiled one back restores
# the native path.
compiled_ranged, eager_ranged = model.Stack.ranged, emodel.Stack.ranged
model.Stack.ranged = emodel.Stack.ranged = lambda self, x: x * -1.5
try:
    with torch.inference_mode(), ran(model, f"{STACK}.stacked", "state"):
        got = pb.stacked(x)
    with torch.inference_mode():
        assert_same(got, pe.stacked(x), "stacked() with Stack.ranged replaced")
finally:
    model.Stack.ranged, emodel.Stack.ranged = compiled_ranged, eager_ranged
with torch.inference_mode(), ran(model, f"{TUNED}.stacked", "native"):
    got = pb.stacked(x)
with torch.inference_mode():
    assert_same(got, pe.stacked(x), "stacked() with Stack.ranged put back")


class BuiltRetuned(model.Tuned):
    def ends(self, x):
        return x * 3.0


class EagerRetuned(emodel.Tuned):
    def ends(self, x):
        return x * 3.0


torch.manual_seed(54)
rb = BuiltRetuned(16, 24).eval()
torch.manual_seed(54)
re_ = EagerRetuned(16, 24).eval()
x = inputs(16, 55)["batch 16"]
with torch.inference_mode(), ran(model, f"{TUNED}.both", "state"):
    got = rb.both(x)
with torch.inference_mode():
    assert_same(got, re_.both(x), "both() of a subclass overriding ends()")
# `stacked` calls neither `ends` nor anything else the subclass overrides: native.
with torch.inference_mode(), ran(model, f"{TUNED}.stacked", "native"):
    got = rb.stacked(x)
with torch.inference_mode():
    assert_same(got, re_.stacked(x), "stacked() of a subclass overriding ends()")


# A subclass overriding a method that a compiled `self.name(...)` call would reach runs the
# original, which calls the override as eager does.
class BuiltRanged(model.Tuned):
    def ranged(self, x):
        return x - 1.0


class EagerRanged(emodel.Tuned):
    def ranged(self, x):
        return x - 1.0


torch.manual_seed(59)
gb_ = BuiltRanged(16, 24).eval()
torch.manual_seed(59)
ge_ = EagerRanged(16, 24).eval()
with torch.inference_mode(), ran(model, f"{TUNED}.stacked", "state"):
    got = gb_.stacked(x)
with torch.inference_mode():
    assert_same(got, ge_.stacked(x), "stacked() of a subclass overriding ranged()")

# A method under `@torch.no_grad()` runs natively with grad on and parameters and inputs that
# require grad: its original would record nothing either. No warning, no grad on the result.
st_b, st_e = pair(model, emodel, "Stack", 60, 16, 24)
x = inputs(16, 61)["batch 16"].clone().requires_grad_(True)
assert torch.is_grad_enabled() and all(p.requires_grad for p in st_b.parameters())
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with ran(model, f"{STACK}.frozen", "native"):
        got = st_b.frozen(x)
assert not [w for w in caught if "rextio" in str(w.message).lower()], [str(w.message) for w in caught]
want = st_e.frozen(x)
assert not got.requires_grad and not want.requires_grad
assert_same(got, want, "frozen() under grad mode")
assert torch.is_grad_enabled()

# `self.training` is read at every call: train mode takes the other branch, natively (Stack holds
# no dropout), and a non-bool flag runs the original.
st_b, st_e = pair(model, emodel, "Stack", 49, 16, 24)
for flag, category in ((True, "native"), (False, "native"), (1, "state")):
    for m in (st_b, st_e):
        m.training = flag
    x = inputs(16, 48)["batch 16"]
    with torch.inference_mode(), ran(model, f"{STACK}.forward", category):
        got = st_b(x)
    with torch.inference_mode():
        assert_same(got, st_e(x), f"stack with training={flag!r}")

# Sequentials from an OrderedDict: elements found by their names, every call checks them.
NAMED = "mdl.model.Named"
nm_b, nm_e = pair(model, emodel, "Named", 52, 16, 24)
parity(nm_b, nm_e, model, NAMED, ("forward", "parts"), inputs(16, 53), "named")
for change, categories in (
    # A new weight under the same name is read at the next call.
    (lambda m: setattr(m.body, "fc", nn.Linear(16, 24)), ("native", "native")),
    # GELU switched to its exact form: the call was proven with the tanh form, so the original
    # runs.
    (lambda m: setattr(m.body.act, "approximate", "none"), ("approximate", "approximate")),
    (lambda m: setattr(m.body.act, "approximate", "tanh"), ("native", "native")),
    # One element more: `forward` runs the original (which calls all four); `parts` names its
    # elements and counts none from the end of `tail`, so it stays native.
    (lambda m: m.tail.add_module("extra", nn.ReLU()), ("state", "native")),
    # The same names in another order (`fc` deleted and added again, so last): eager calls them
    # in the new order, so both run the original (and raise as eager does, on the widths).
    (lambda m: (delattr(m.body, "fc"), m.body.add_module("fc", nn.Linear(16, 24))),
     ("state", "state")),
    # The element named `act` gone: both run the original (eager's `parts` raises then).
    (lambda m: m.body.__delitem__(1), ("state", "state")),
):
    after_change(nm_b, nm_e, NAMED, ("forward", "parts"), change, categories, 54)

# Containers built from lists in `__init__`: the Sequential holds as many layers as the default
# depth gives; a model built deeper runs the original, with the same results.
LAYERED = "mdl.model.Layered"
ly_b, ly_e = pair(model, emodel, "Layered", 56, 16, 24)
parity(ly_b, ly_e, model, LAYERED, ("forward",), inputs(16, 57), "layered")
ly_b, ly_e = pair(model, emodel, "Layered", 58, 16, 24, depth=3)
x = inputs(16, 59)["batch 16"]
with torch.inference_mode(), ran(model, f"{LAYERED}.forward", "state"):
    got = ly_b(x)
with torch.inference_mode():
    assert_same(got, ly_e(x), "layered, deeper than the default")

# BatchNorm1d: eval mode reads the running statistics natively; a training-mode call runs the
# original, which updates them (in both models alike), and the next eval call sees them.
TABULAR = "mdl.model.Tabular"
tb_b, tb_e = pair(model, emodel, "Tabular", 60, 16, 24)
parity(tb_b, tb_e, model, TABULAR, ("forward",), inputs(16, 61), "tabular")
x = inputs(16, 62)["batch 16"]
for m in (tb_b, tb_e):
    m.train()
with torch.no_grad(), ran(model, f"{TABULAR}.forward", "training"):
    got = tb_b(x)
with torch.no_grad():
    assert_same(got, tb_e(x), "tabular in training mode")
same_state(tb_b, tb_e, "tabular running statistics after a training call")
for m in (tb_b, tb_e):
    m.eval()
parity(tb_b, tb_e, model, TABULAR, ("forward",), inputs(16, 63), "tabular after training")

# A ModuleDict: heads read by key and by attribute name. A new head under the same key is read
# at the next call; a head of another class, or a key gone, runs the original (which raises as
# eager does when the key is gone).
HEADS = "mdl.model.Heads"
hd_b, hd_e = pair(model, emodel, "Heads", 67, 16, 24)
parity(hd_b, hd_e, model, HEADS, ("forward", "regress"), inputs(16, 68), "heads")
for change, categories in (
    (lambda m: m.heads.__setitem__("cls", nn.Linear(24, 3)), ("native", "native")),
    (lambda m: m.heads.__setitem__("cls", nn.Sequential(nn.Linear(24, 3))), ("state", "native")),
    (lambda m: m.heads.__delitem__("reg"), ("state", "state")),
):
    after_change(hd_b, hd_e, HEADS, ("forward", "regress"), change, categories, 69)

# In-place activations: `forward` writes only into tensors it made, so it runs natively, matches
# and leaves the input as it was. `stem` and `shared` run the original: `stem` writes into the
# caller's tensor as eager does, and `shared` returns `2·relu(h)` as eager does.
INPLACE = "mdl.model.InPlace"
ip_b, ip_e = pair(model, emodel, "InPlace", 64, 16, 24)
parity(ip_b, ip_e, model, INPLACE, ("forward", "residual"), inputs(16, 65), "in place")
x = inputs(16, 66)["batch 16"]
before = x.clone()
with torch.inference_mode(), ran(model, f"{INPLACE}.forward", "native"):
    ip_b(x)
assert torch.equal(x, before), "a native forward wrote into its input"
with torch.inference_mode(), ran(model, f"{INPLACE}.residual", "native"):
    ip_b.residual(x)
assert torch.equal(x, before), "a native residual wrote into its input"
# In training mode the in-place dropout draws a mask: the original runs, with eager's draws.
for m in (ip_b, ip_e):
    m.train()
torch.manual_seed(5)
with torch.no_grad(), ran(model, f"{INPLACE}.forward", "training"):
    got = ip_b(x)
torch.manual_seed(5)
with torch.no_grad():
    want = ip_e(x)
assert_same(got, want, "in place, training mode")
for m in (ip_b, ip_e):
    m.eval()
for method in ("stem", "shared", "accumulate"):
    xb_, xe_ = x.clone(), x.clone()
    with torch.inference_mode():
        got, want = call(ip_b, method, xb_), call(ip_e, method, xe_)
    assert_same(got, want, f"in place {method}")
    assert_same(xb_, xe_, f"in place {method}: the input after the call")
    if method in ("stem", "accumulate"):
        assert not torch.equal(xe_, x), f"eager's {method} no longer writes into its input; stale fixture"

# Functional dropout: `training=self.training` is the identity in eval mode and eager's own
# kernel in training mode, so the same seed draws the same mask natively (no Dropout module in
# the tree, so training mode stays native under no_grad); `noisy` keeps F.dropout's default
# training=True and drops in eval mode too, as eager does.
REGULARIZED = "mdl.model.Regularized"
rg_b, rg_e = pair(model, emodel, "Regularized", 70, 16, 24)
parity(rg_b, rg_e, model, REGULARIZED, ("forward",), inputs(16, 71), "dropout")
x = inputs(16, 72)["batch 128"]
for training in (False, True):
    for m in (rg_b, rg_e):
        m.train(training)
    for method in ("forward", "noisy"):
        drawn = []
        for seed in (1, 2):
            torch.manual_seed(seed)
            with torch.no_grad(), ran(model, f"{REGULARIZED}.{method}", "native"):
                got = call(rg_b, method, x)
            after = torch.rand(1)
            torch.manual_seed(seed)
            with torch.no_grad():
                want = call(rg_e, method, x)
            assert_same(got, want, f"dropout {method} training={training} seed {seed}")
            # The native call drew from the generator exactly what eager drew.
            assert_same(after, torch.rand(1), f"dropout {method} training={training}: draws")
            drawn.append(got)
        masked = training or method == "noisy"
        assert torch.equal(drawn[0], drawn[1]) != masked, f"dropout {method} training={training}"
for m in (rg_b, rg_e):
    m.eval()
P_MESSAGE = "dropout probability has to be between 0 and 1, but got 1.5"
for m in (rg_b, rg_e):
    m.p = 1.5
    with torch.inference_mode():
        try:
            m(x)
        except ValueError as exc:
            assert str(exc) == P_MESSAGE, f"{type(m).__module__}: {exc!r}"
        else:
            raise AssertionError(f"{type(m).__module__}: p = 1.5 raised nothing")
rg_b.p = rg_e.p = 0.25

# Class attributes: read at each call as Python finds them, so a new value on the class, an
# instance's own value (and its removal) and a subclass's value are each seen by the next call;
# a value the method cannot use runs the original, which fails as eager does.
TEMPERED = "mdl.model.Tempered"
tp_b, tp_e = pair(model, emodel, "Tempered", 73, 16, 24)
parity(tp_b, tp_e, model, TEMPERED, ("forward",), inputs(16, 74), "class attributes")
x = inputs(16, 75)["batch 16"]


def tempered(what, category="native"):
    with torch.inference_mode(), ran(model, f"{TEMPERED}.forward", category):
        got = tp_b(x)
    with torch.inference_mode():
        want = tp_e(x)
    assert_same(got, want, f"class attributes: {what}")


tempered("as defined")
for cls in (model.Tempered, emodel.Tempered):
    cls.TEMPERATURE, cls.ROUNDS = 0.5, 3
tempered("assigned on the class")
for m in (tp_b, tp_e):
    m.TEMPERATURE = -4.0
tempered("an instance's own value")
for m in (tp_b, tp_e):
    del m.TEMPERATURE
tempered("the instance's value removed")
subclasses = [type("Cooler", (cls,), {"TEMPERATURE": 8.0}) for cls in (model.Tempered, emodel.Tempered)]
tp_b.__class__, tp_e.__class__ = subclasses
tempered("a subclass's value")
tp_b.__class__, tp_e.__class__ = model.Tempered, emodel.Tempered
for cls in (model.Tempered, emodel.Tempered):
    cls.ROUNDS = "2"
with torch.inference_mode(), ran(model, f"{TEMPERED}.forward", "state"):
    outcome(lambda: tp_b(x), lambda: tp_e(x), "class attribute of another type")
for cls in (model.Tempered, emodel.Tempered):
    cls.TEMPERATURE, cls.ROUNDS = 2.0, 2
tempered("restored")

torch.manual_seed(9)
xa, xb = torch.randn(12, 10), torch.randn(12, 10)
for alpha in (0.0, 0.5, -2.0, float("inf")):
    assert_same(blocks.mix(xa, xb, alpha), eblocks.mix(xa, xb, alpha), f"mix {alpha}")

# Methods that stay on Python still work through the built classes.
for name in ("Untyped", "Branchy"):
    bb, be = pair(model, emodel, name, 10, 16)
    for key, x in inputs(16, 11).items():
        for scale in (10.0, -10.0):  # both branches of Branchy
            with torch.inference_mode():
                assert_same(bb(x * scale), be(x * scale), f"{name} {key} {scale}")
    xg = torch.randn(4, 16)
    close(bb(xg), be(xg), f"{name} grad")

# ---- 2. grad: the original runs, autograd as eager, one warning per class ---------------------

b, e = pair(model, emodel, "Scorer", 12, **BIG)
x = inputs(BIG["features"], 13)["batch 16"]


def rextio_warnings(caught):
    found = [w for w in caught if "rextio" in str(w.message).lower()]
    for w in found:
        assert issubclass(w.category, RuntimeWarning), w
        assert "inference_mode" in str(w.message), w
    return found


def backward_matches(b, e, method, x, what):
    xb, xe = x.clone().requires_grad_(), x.clone().requires_grad_()
    with ran(model, f"{SCORER}.{method}", "grad"):
        ob = call(b, method, xb)
    oe = call(e, method, xe)
    assert ob.requires_grad, f"{what}: output lost its graph"
    close(ob, oe, what)
    (ob * torch.arange(ob.shape[1], dtype=ob.dtype)).sum().backward()
    (oe * torch.arange(oe.shape[1], dtype=oe.dtype)).sum().backward()
    close(xb.grad, xe.grad, f"{what} input grad")
    for (nb, pb), (ne, pe) in zip(b.named_parameters(), e.named_parameters()):
        assert nb == ne
        close(pb.grad, pe.grad, f"{what} grad of {nb}")
    b.zero_grad(set_to_none=True)
    e.zero_grad(set_to_none=True)


with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    backward_matches(b, e, "forward", x, "grad forward")
first = rextio_warnings(caught)
if NATIVE:
    # Scorer, and at most its compiled submodule classes (ResidualBlock, Gate).
    assert 1 <= len(first) <= 3, [str(w.message) for w in caught]

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    backward_matches(b, e, "forward", x, "grad forward again")
    backward_matches(b, e, "probs", x, "grad probs")
    other_b, other_e = pair(model, emodel, "Scorer", 14, **SMALL)
    backward_matches(other_b, other_e, "forward", inputs(SMALL["features"], 15)["batch 16"], "grad small")
    # Parameters requiring grad are enough to need the graph.
    with ran(model, f"{SCORER}.forward", "grad"):
        out = b(x)
    assert out.requires_grad
    close(out, e(x), "grad params only")
    with ran(model, f"{SCORER}.predict", "grad"):
        close(b.predict(x), e.predict(x), "grad predict")
assert not rextio_warnings(caught), [str(w.message) for w in caught]

# Nothing involved requires grad: native even with grad mode on.
b.requires_grad_(False)
e.requires_grad_(False)
with ran(model, f"{SCORER}.forward", "native"):
    got = b(x)
assert_same(got, e(x), "frozen, grad mode on")
assert torch.is_grad_enabled()
# Frozen parameters but an input requiring grad: the original runs.
xb, xe = x.clone().requires_grad_(), x.clone().requires_grad_()
with ran(model, f"{SCORER}.forward", "grad"):
    ob = b(xb)
oe = e(xe)
close(ob, oe, "frozen, input requires grad")
ob.sum().backward()
oe.sum().backward()
close(xb.grad, xe.grad, "frozen input grad")
b.requires_grad_(True)
e.requires_grad_(True)
# An input requiring grad under inference_mode: grad is off, native runs.
with torch.inference_mode():
    with ran(model, f"{SCORER}.forward", "native"):
        got = b(x.clone().requires_grad_())
    assert_same(got, e(x), "input requires grad, inference_mode")

# ---- 3. training mode: Dropout active runs the original --------------------------------------

b, e = pair(model, emodel, "Scorer", 16, **BIG)
x = inputs(BIG["features"], 17)["batch 128"]
with torch.inference_mode():
    eval_out = e(x)


def dropout_matches(what, expect_category):
    for seed in (1, 2):
        with torch.inference_mode():
            torch.manual_seed(seed)
            with ran(model, f"{SCORER}.forward", expect_category):
                got = b(x)
            torch.manual_seed(seed)
            want = e(x)
        assert_same(got, want, f"{what} seed {seed}")
        if expect_category == "training":
            assert not torch.allclose(want, eval_out), f"{what}: dropout inactive"


b.train()
e.train()
dropout_matches("train()", "training")
b.eval()
e.eval()
dropout_matches("eval()", "native")
# Only the Dropout itself in training mode.
b.head[2].train()
e.head[2].train()
dropout_matches("head[2].train()", "training")
b.head[2].eval()
e.head[2].eval()
# A fresh module is in training mode.
fresh_b, fresh_e = pair(model, emodel, "Scorer", 16, **BIG)
fresh_b.train()
fresh_e.train()
with torch.inference_mode():
    torch.manual_seed(3)
    with ran(model, f"{SCORER}.predict", "training"):
        got = fresh_b.predict(x)
    torch.manual_seed(3)
    assert_same(got, fresh_e.predict(x), "fresh predict")
# A tree without Dropout gives eager's results in training mode too (either path).
enc_b.train()
enc_e.train()
with torch.inference_mode():
    for key, xi in inputs(24, 18).items():
        assert_same(enc_b(xi), enc_e(xi), f"encoder train() {key}")
enc_b.eval()
enc_e.eval()

# ---- 4. hooks ---------------------------------------------------------------------------------


def hooked(install, x, category, what):
    """Install the same hooks on the built and the eager model; outputs and the sequence of hook
    calls (by submodule name) must be the same."""
    results = []
    for m in (e, b):
        names = {id(sub): n or "<root>" for n, sub in m.named_modules()}
        log = []
        handles = install(m, log, names)
        try:
            with torch.inference_mode():
                if m is b:
                    with ran(model, f"{SCORER}.forward", category):
                        out = m(x)
                else:
                    out = m(x)
        finally:
            for h in handles:
                h.remove()
        results.append((out, log))
    (want, want_log), (got, got_log) = results
    assert want_log, f"{what}: eager hooks never fired"
    assert got_log == want_log, f"{what}: hook calls {got_log} != eager {want_log}"
    assert_same(got, want, what)


def on(sub_path, kind, change=None):
    def install(m, log, names):
        sub = m.get_submodule(sub_path)
        if kind == "forward":

            def hook(mod, args, out):
                log.append(("fwd", names.get(id(mod))))
                return None if change is None else change(out)

            return [sub.register_forward_hook(hook)]

        def pre(mod, args):
            log.append(("pre", names.get(id(mod))))
            return None if change is None else (change(args[0]),)

        return [sub.register_forward_pre_hook(pre)]

    return install


def global_hook(kind):
    def install(m, log, names):
        def hook(mod, args, out=None):
            if id(mod) in names:
                log.append((kind, names[id(mod)]))

        if kind == "fwd":
            return [torch.nn.modules.module.register_module_forward_hook(hook)]
        return [torch.nn.modules.module.register_module_forward_pre_hook(hook)]

    return install


b, e = pair(model, emodel, "Scorer", 19, **BIG)
x = inputs(BIG["features"], 20)["batch 16"]
hooked(on("blocks.0", "forward"), x, "hook", "hook on blocks.0")
hooked(on("head.1", "pre"), x, "hook", "pre-hook on head.1")
hooked(on("gate", "forward", lambda out: out * 0.5), x, "hook", "output-changing hook on gate")
hooked(on("blocks.1.up", "pre", lambda h: h + 1.0), x, "hook", "input-changing pre-hook on blocks.1.up")
hooked(global_hook("fwd"), x, "hook", "global forward hook")
hooked(global_hook("pre"), x, "hook", "global forward pre-hook")
# Hooks on the model itself run as always, and the native body still runs.
hooked(on("", "forward", lambda out: out - 1.0), x, "native", "hook on the model")
hooked(on("", "pre", lambda h: h * 2.0), x, "native", "pre-hook on the model")
# Removed hooks leave nothing behind.
with torch.inference_mode():
    with ran(model, f"{SCORER}.forward", "native"):
        got = b(x)
    assert_same(got, e(x), "after hooks removed")

# A class whose forward is compiled gets a `__call__` that runs it directly where
# Module.__call__ would only call forward; every other call goes through Module.__call__ (or
# whatever else eager would reach) exactly as in eager.
if NATIVE:
    for cls in (model.Scorer, model.Encoder, blocks.ResidualBlock, model.Stack):
        assert "__call__" in cls.__dict__, f"{cls.__name__} has no compiled __call__"
    # Tuned inherits Stack's; Untyped's forward is not compiled.
    assert "__call__" not in model.Tuned.__dict__ and "__call__" not in model.Untyped.__dict__
else:
    assert model.Scorer.__call__ is nn.Module.__call__


def entry_case(what, category, change=None, undo=None, call=lambda m: m(x), n=1):
    """`call` on the built and the eager model after the same `change`: same result, and the
    built Scorer.forward counted `n` times on `category`."""
    for m in (b, e):
        if change is not None:
            change(m)
    try:
        with torch.inference_mode():
            want = call(e)
            with ran(model, f"{SCORER}.forward", category, n=n):
                got = call(b)
        if isinstance(want, torch.Tensor):
            assert_same(got, want, what)
        else:
            assert got == want, f"{what}: {got!r} != {want!r}"
    finally:
        for m in (b, e):
            if undo is not None:
                undo(m)


entry_case("keyword argument", "native", call=lambda m: m(x=x))


def raised(fn):
    """The class of the exception `fn()` raises (None when it returns)."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001
        return type(exc)
    return None


entry_case("too many arguments", "native", call=lambda m: raised(lambda: m(x, x)), n=0)
entry_case("a per-instance compiled call", "native", n=0,
           change=lambda m: setattr(m, "_compiled_call_impl", lambda *a, **k: "compiled"),
           undo=lambda m: delattr(m, "_compiled_call_impl"))
entry_case("forward set on the instance", "native", n=0,
           change=lambda m: setattr(m, "forward", lambda t: t * 3.0),
           undo=lambda m: m.__dict__.pop("forward"))
entry_case("hook registered and removed", "native",
           change=lambda m: m.register_forward_hook(lambda *a: None).remove())


def through_patched(attr):
    """Module.`attr` replaced by a logging stand-in (as torch.fx replaces `__call__` while
    tracing): the built model's call reaches it first, as eager's does, with eager's result."""
    results = []
    for m in (e, b):
        log = []
        base = getattr(nn.Module, attr)

        def logged(self, *args, **kwargs):
            log.append(type(self).__name__)
            return base(self, *args, **kwargs)

        setattr(nn.Module, attr, logged)
        try:
            with torch.inference_mode():
                results.append(m(x))
        finally:
            setattr(nn.Module, attr, base)
        assert log and log[0] == "Scorer", f"a patched Module.{attr} was bypassed: {log}"
    assert_same(results[1], results[0], f"through a patched Module.{attr}")


through_patched("__call__")
# `_call_impl`, which Module.__call__ calls through the instance.
through_patched("_call_impl")


def python_calls(fn):
    """The names of the Python functions `fn()` calls (through sys.setprofile)."""
    seen = []

    def profile(frame, event, arg):
        if event == "call":
            seen.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return seen


if NATIVE:
    # With nothing registered, model(x) runs no Python of Module.__call__ nor of the wrapper:
    # the compiled __call__ goes straight to the native forward.
    with torch.inference_mode():
        seen = python_calls(lambda: b(x))
        assert "_call_impl" not in seen and "forward" not in seen, seen
        # A hook on the model: Module.__call__ runs, and fires it.
        h = b.register_forward_pre_hook(lambda mod, args: None)
        try:
            seen = python_calls(lambda: b(x))
        finally:
            h.remove()
        assert "_call_impl" in seen and "<lambda>" in seen, seen


class Doubled(model.Scorer):
    def forward(self, x):
        return super().forward(x) * 2.0


class EDoubled(emodel.Scorer):
    def forward(self, x):
        return super().forward(x) * 2.0


class Shifted(model.Scorer):
    def __call__(self, x):
        return super().__call__(x) + 1.0


class EShifted(emodel.Scorer):
    def __call__(self, x):
        return super().__call__(x) + 1.0


for built_cls, eager_cls, what in ((Doubled, EDoubled, "a subclass overriding forward"),
                                   (Shifted, EShifted, "a subclass calling super().__call__")):
    sb, se = built_cls(**BIG).eval(), eager_cls(**BIG).eval()
    sb.load_state_dict(e.state_dict())
    se.load_state_dict(e.state_dict())
    with torch.inference_mode():
        with ran(model, f"{SCORER}.forward", "native"):
            assert_same(sb(x), se(x), what)
    if NATIVE and built_cls is Doubled:
        # Methods assigned to the class after import: the next call sees them.
        Doubled.forward = lambda self, t: t * 5.0
        EDoubled.forward = lambda self, t: t * 5.0
        with torch.inference_mode():
            assert_same(sb(x), se(x), "forward reassigned on a subclass")

# Results are tensors of the mode the call ran in, as eager's: after native calls under
# inference_mode (whose dead temporaries the runtime keeps for reuse), a native call under
# no_grad returns a normal tensor its caller may update in place.
with torch.inference_mode():
    for _ in range(5):
        b(x)
with torch.no_grad():
    with ran(model, f"{SCORER}.forward", "native"):
        out = b(x)
    assert not out.is_inference(), "a no_grad call returned an inference tensor"
    out.add_(1.0)
    assert_same(out, e(x) + 1.0, "no_grad result updated in place")
with torch.inference_mode():
    assert b(x).is_inference() == e(x).is_inference()

# ---- 5. state the native body does not cover: the original runs -------------------------------


def both(fn):
    """Apply the same change to the built and the eager model (same seed for new weights)."""
    for m in (b, e):
        torch.manual_seed(21)
        fn(m)


def check(what, category, methods=SCORER_METHODS, xi=None):
    xi = x if xi is None else xi
    with torch.inference_mode():
        for method in methods:
            want = call(e, method, xi)
            with ran(model, f"{SCORER}.{method}", category):
                got = call(b, method, xi)
            assert_same(got, want, f"{what} {method}")


both(lambda m: m.double())
check("double()", "state", xi=x.double())
with torch.inference_mode():
    outcome(lambda: b(x), lambda: e(x), "float32 input to a double() model")
both(lambda m: m.float())
check("float() again", "native")
# The other spellings of a dtype change run the original too, and back to float32 is native.
both(lambda m: m.to(torch.float64))
check("to(torch.float64)", "state", xi=x.double())
both(lambda m: m.to(dtype=torch.float32))
check("to(dtype=torch.float32)", "native")
both(lambda m: m.to(torch.bfloat16))
check("to(torch.bfloat16)", "state", xi=x.to(torch.bfloat16))
both(lambda m: m.to("cpu", torch.float32))
check("to('cpu', torch.float32)", "native")

b, e = pair(model, emodel, "Scorer", 22, **BIG)
both(lambda m: m.head.__setitem__(1, nn.Sigmoid()))
check("head[1] Tanh -> Sigmoid", "state")
both(lambda m: m.head.__setitem__(1, nn.Tanh()))
check("head[1] Sigmoid -> Tanh", "native")
# A Sequential's call runs every module it holds: one appended (or one removed) since the method
# was proven runs the original, which calls them all, and back to its length runs native again.
both(lambda m: m.head.append(nn.Sigmoid()))
check("Sigmoid appended to head", "state")
both(lambda m: m.head.__delitem__(len(m.head) - 1))
check("appended Sigmoid removed", "native")
both(lambda m: m.head.__delitem__(2))
check("head[2] Dropout removed", "state")
both(lambda m: setattr(m, "head", nn.Linear(BIG["width"], BIG["classes"])))
check("head Sequential -> Linear", "state")
both(lambda m: setattr(m, "head", nn.Identity()))
check("head -> Identity", "state")
both(lambda m: setattr(m.blocks[0], "norm", nn.Identity()))
check("blocks.0.norm -> Identity", "state")
both(lambda m: setattr(m, "gate", None))
with torch.inference_mode():
    outcome(lambda: b(x), lambda: e(x), "gate None")

# A subclass overriding forward: predict and probs call the override, as in eager.
class BuiltFlipped(model.Scorer):
    def forward(self, x):
        return super().forward(x) * -1.0


class EagerFlipped(emodel.Scorer):
    def forward(self, x):
        return super().forward(x) * -1.0


torch.manual_seed(23)
fb = BuiltFlipped(**SMALL).eval()
torch.manual_seed(23)
fe = EagerFlipped(**SMALL).eval()
same_state(fb, fe, "subclass init")
with torch.inference_mode():
    for key, xi in inputs(SMALL["features"], 24).items():
        for method in SCORER_METHODS:
            assert_same(call(fb, method, xi), call(fe, method, xi), f"subclass {method} {key}")

# Changes to a standalone block's buffer dtype.
gb, ge = pair(blocks, eblocks, "Gate", 25, 48)
xg = torch.randn(8, 48)
for m in (gb, ge):
    m.scale = torch.linspace(0.5, 1.5, 48, dtype=torch.float64)
with torch.inference_mode():
    with ran(blocks, "mdl.blocks.Gate.forward", "state"):
        got = gb(xg)
    assert_same(got, ge(xg), "Gate float64 buffer")

# ---- 6. weights are never stale: native reflects every change ---------------------------------

b, e = pair(model, emodel, "Scorer", 26, **BIG)
W, C, F_ = BIG["width"], BIG["classes"], BIG["features"]
check("fresh pair", "native")
with torch.no_grad():
    both(lambda m: m.inp.weight.mul_(2.0))
check("inp.weight.mul_", "native")
# Writes no version counter sees (through `.data`, through a NumPy view of the storage) reach the
# next call too, also at batches the fused path serves from its cached packed weights (6 rows)
# and where it may read them in place, feature-major (16 rows).
x6, x16 = torch.randn(6, F_), torch.randn(16, F_)
for xi in (x6, x16):
    check("before the .data writes", "native", xi=xi)
with torch.no_grad():
    both(lambda m: m.inp.weight.data.mul_(-1.5))
for xi in (x6, x16):
    check("inp.weight.data.mul_", "native", xi=xi)
both(lambda m: m.inp.weight.data.copy_(torch.linspace(-1.0, 1.0, W * F_).reshape(W, F_)))
for xi in (x6, x16):
    check("inp.weight.data.copy_", "native", xi=xi)
both(lambda m: m.inp.weight.detach().numpy().__setitem__((0, slice(None)), 3.0))
for xi in (x6, x16):
    check("inp.weight row 0 written through NumPy", "native", xi=xi)
with torch.no_grad():
    both(lambda m: m.gate.scale.mul_(0.5))
    both(lambda m: m.blocks[1].norm.bias.add_(0.3))
check("buffer and LayerNorm bias in place", "native")
third = emodel.Scorer(**BIG)
perturb(third, 27)
both(lambda m: m.load_state_dict(third.state_dict()))
check("load_state_dict", "native")
both(lambda m: setattr(m.inp, "weight", nn.Parameter(torch.randn(W, F_) * 0.3)))
check("inp.weight = Parameter", "native")
both(lambda m: setattr(m, "gate", blocks.Gate(W) if m is b else eblocks.Gate(W)))
with torch.no_grad():
    both(lambda m: m.gate.gate.copy_(torch.linspace(-2.0, 2.0, W)))
check("gate replaced by a new Gate", "native")
both(lambda m: m.blocks.__setitem__(1, (blocks if m is b else eblocks).ResidualBlock(W, BIG["hidden"])))
check("blocks[1] replaced by a new ResidualBlock", "native")
both(lambda m: m.head.__setitem__(3, nn.Linear(W, C)))
check("head[3] replaced by a new Linear", "native")
same_state(b, e, "after replacements")
# A compiled method answers the lookups of its read from the previous call's while no dictionary
# it read has changed: after many unchanged calls, a change three modules deep, a deleted and
# restored attribute, and a hook dictionary replaced wholesale (not filled through register_*)
# are each seen by the very next call.
with torch.inference_mode():
    for _ in range(50):
        b(x)
both(lambda m: setattr(m.blocks[1].norm, "eps", 0.5))
check("blocks[1].norm.eps changed after warm calls", "native")
both(lambda m: delattr(m.blocks[1].norm, "eps"))
with torch.inference_mode(), ran(model, f"{SCORER}.forward", "state"):
    outcome(lambda: b(x), lambda: e(x), "blocks[1].norm.eps deleted")
both(lambda m: setattr(m.blocks[1].norm, "eps", 1e-5))
check("blocks[1].norm.eps restored", "native")
fired = []
saved = b.head[0]._forward_hooks
b.head[0]._forward_hooks = collections.OrderedDict({0: lambda mod, args, out: fired.append(1)})
with torch.inference_mode(), ran(model, f"{SCORER}.forward", "hook"):
    b(x)
assert fired == [1], f"a replaced hook dictionary's hook fired {len(fired)} times"
b.head[0]._forward_hooks = saved
check("hook dictionary restored", "native")

# A warm call checks what the previous read depended on (dictionary tags, instance
# dictionaries, exact classes) and converts the same values again. Changes that leave every
# dictionary it looked into alone are seen by the next call as well.


class Doubled(nn.Linear):
    def forward(self, x):
        return super().forward(x) * 2.0


with torch.inference_mode():
    for _ in range(20):
        b(x)
both(lambda m: setattr(m.head[0], "__class__", Doubled))
check("head[0].__class__ reassigned after warm calls", "state")
both(lambda m: setattr(m.head[0], "__class__", nn.Linear))
check("head[0].__class__ restored", "native")
both(lambda m: setattr(m.blocks[1].norm, "__dict__", {**m.blocks[1].norm.__dict__, "eps": 0.25}))
check("blocks[1].norm.__dict__ replaced with another eps", "native")
both(lambda m: setattr(m.inp.weight, "data", torch.randn(W, F_) * 0.5))
check("inp.weight.data rebound to a new tensor", "native")
both(lambda m: setattr(m.gate.scale, "data", m.gate.scale.data.double()))
with torch.inference_mode(), ran(model, f"{SCORER}.forward", "state"):
    outcome(lambda: b(x), lambda: e(x), "gate.scale.data rebound to float64")
both(lambda m: setattr(m.gate.scale, "data", m.gate.scale.data.float()))
check("gate.scale.data back to float32", "native")
# Changes to a parameter object in place, which no dictionary sees, after warm calls: the state a
# kept read converted is used only while each tensor keeps its storage, shape, layout and dtype.
NEW_INP = torch.randn(W, F_) * 0.5
NEW_HEAD = torch.randn(W, W) * 0.5
with torch.no_grad():
    both(lambda m: m.inp.weight.set_(NEW_INP.clone()))
check("inp.weight.set_() to another storage", "native")
both(lambda m: torch.utils.swap_tensors(m.head[0].weight, nn.Parameter(NEW_HEAD.clone())))
check("head[0].weight swapped with torch.utils.swap_tensors", "native")
with torch.no_grad():
    both(lambda m: m.head[0].weight.t_())
check("head[0].weight transposed in place (not contiguous)", "native")
with torch.no_grad():
    both(lambda m: m.head[0].weight.t_())
check("head[0].weight transposed back", "native")
with torch.no_grad():
    both(lambda m: m.gate.scale.resize_(W + 1))
with torch.inference_mode(), ran(model, f"{SCORER}.forward", "native"):
    outcome(lambda: b(x), lambda: e(x), "gate.scale resized in place")
with torch.no_grad():
    both(lambda m: m.gate.scale.resize_(W).fill_(1.5))
check("gate.scale resized back", "native")
# Grad mode is read at every call: parameters that stop or start requiring grad are seen.
for m in (b, e):
    m.requires_grad_(False)
with ran(model, f"{SCORER}.forward", "native"):
    assert_same(b(x), e(x), "grad mode on, no parameter requires grad")
for m in (b, e):
    m.blocks[0].up.bias.requires_grad_(True)
with warnings.catch_warnings(), ran(model, f"{SCORER}.forward", "grad"):
    warnings.simplefilter("ignore")
    got = b(x)
assert got.requires_grad, "a parameter requiring grad again did not make the original run"
assert_same(got.detach(), e(x).detach(), "blocks[0].up.bias requires grad again")
for m in (b, e):
    m.requires_grad_(True)
# Instances of one class called in turn: each call reads its own instance's weights.
turns = [pair(model, emodel, "Scorer", 60 + i, **BIG) for i in range(6)]
with torch.inference_mode():
    for round_ in range(3):
        for i, (tb, te) in enumerate(turns):
            with ran(model, f"{SCORER}.forward", "native"):
                got = tb(x)
            assert_same(got, te(x), f"instance {i} in turn, round {round_}")
        with torch.no_grad():
            for tb, te in turns[::2]:
                tb.inp.bias.add_(0.125)
                te.inp.bias.add_(0.125)

# Changes where either path is acceptable, but results must follow.
both(lambda m: setattr(m, "temperature", 0.25))
with torch.inference_mode():
    for method in SCORER_METHODS:
        assert_same(call(b, method, x), call(e, method, x), f"temperature 0.25 {method}")
    both(lambda m: setattr(m.head[0], "weight", nn.Parameter(torch.randn(W, W).t())))
    for method in SCORER_METHODS:
        assert_same(call(b, method, x), call(e, method, x), f"transposed head[0].weight {method}")
    both(lambda m: m.blocks.append((blocks if m is b else eblocks).ResidualBlock(W, BIG["hidden"])))
    for method in SCORER_METHODS:
        assert_same(call(b, method, x), call(e, method, x), f"blocks appended {method}")
    both(lambda m: setattr(m.blocks[0], "alpha", -0.5))
    assert_same(b(x), e(x), "alpha changed")
    # Back to the default depth of two blocks (the written-out path), then down to one.
    both(lambda m: m.blocks.__delitem__(0))
    assert len(b.blocks) == 2
    assert_same(b(x), e(x), "a block deleted (two left)")
    both(lambda m: m.blocks.__delitem__(0))
    assert_same(b(x), e(x), "a block deleted (one left)")
    mb, me = pair(blocks, eblocks, "Mixer", 28, 16, 2)
    xm = torch.randn(5, 16)
    for change in (lambda m: setattr(m, "residual", False), lambda m: setattr(m, "repeats", 0),
                   lambda m: setattr(m, "repeats", 4), lambda m: setattr(m, "gain", -1.0)):
        change(mb)
        change(me)
        assert_same(mb(xm), me(xm), "Mixer attribute changed")
    # Hardtanh / ReLU6 bounds are compiled as their constructor's literals: a live bound changed
    # since runs the original (the reason's category is the condition's attribute), as eager
    # computes it; restored, the bound runs native again.
    for index, attr, value in ((4, "max_val", 0.25), (5, "min_val", -1.0)):
        before = getattr(mb.acts[index], attr)
        for m in (mb, me):
            setattr(m.acts[index], attr, value)
        with ran(blocks, "mdl.blocks.Mixer.forward", attr):
            got = mb(xm)
        assert_same(got, me(xm), f"Mixer acts.{index}.{attr} changed")
        for m in (mb, me):
            setattr(m.acts[index], attr, before)
        with ran(blocks, "mdl.blocks.Mixer.forward", "native"):
            got = mb(xm)
        assert_same(got, me(xm), f"Mixer acts.{index}.{attr} restored")
    # A weight of the wrong shape raises, as in eager; never a crash.
    both(lambda m: setattr(m.inp, "weight", nn.Parameter(torch.randn(W, F_ + 1))))
    outcome(lambda: b(x), lambda: e(x), "inp.weight of the wrong shape")
    both(lambda m: setattr(m.inp, "weight", nn.Parameter(torch.randn(W + 1, F_))))
    outcome(lambda: b(x), lambda: e(x), "inp.weight with one row too many")

# ---- 7. bad inputs raise as eager does --------------------------------------------------------

b, e = pair(model, emodel, "Scorer", 29, **BIG)
torch.manual_seed(30)
bad = {
    "width + 1": torch.randn(4, F_ + 1),
    "width - 1": torch.randn(4, F_ - 1),
    "rank 1": torch.randn(F_),
    "rank 3": torch.randn(2, 3, F_),
    "rank 0": torch.tensor(1.0),
    "float64": torch.randn(4, F_, dtype=torch.float64),
    "int64": torch.ones(4, F_, dtype=torch.int64),
    "bool": torch.ones(4, F_, dtype=torch.bool),
    "None": None,
    "list": [[0.0] * F_] * 4,
    "float": 1.0,
}
for ctx_name, ctx in MODE_CONTEXTS:
    for key, xi in bad.items():
        for method in SCORER_METHODS:
            with ctx():
                outcome(lambda: call(b, method, xi), lambda: call(e, method, xi), f"bad {key} {method} {ctx_name}")
    for key, xi in bad.items():
        outcome(lambda: blocks.mix(xi, xi, 0.5), lambda: eblocks.mix(xi, xi, 0.5), f"mix bad {key}", True)
outcome(lambda: blocks.mix(torch.ones(2, 3), torch.ones(2, 3), "x"),
        lambda: eblocks.mix(torch.ones(2, 3), torch.ones(2, 3), "x"), "mix str alpha", True)
outcome(lambda: blocks.mix(torch.ones(2, 3), torch.ones(2, 4), 1.0),
        lambda: eblocks.mix(torch.ones(2, 3), torch.ones(2, 4), 1.0), "mix shapes", True)
outcome(lambda: b(), lambda: e(), "no argument")
outcome(lambda: b(x, x), lambda: e(x, x), "two arguments")

# ---- 8. the user's class ----------------------------------------------------------------------

b, e = pair(model, emodel, "Scorer", 31, **BIG)
x = inputs(F_, 32)["batch 16"]
assert isinstance(b, model.Scorer) and isinstance(b, nn.Module)
assert type(b).__name__ == "Scorer" and type(b).__module__ == "mdl.model", type(b)
assert isinstance(b.blocks[0], blocks.ResidualBlock) and isinstance(b.gate, blocks.Gate)
assert repr(b) == repr(e), f"{repr(b)}\n!=\n{repr(e)}"
assert [n for n, _ in b.named_modules()] == [n for n, _ in e.named_modules()]
assert [n for n, _ in b.named_buffers()] == [n for n, _ in e.named_buffers()] == ["gate.scale"]
assert sum(p.numel() for p in b.parameters()) == sum(p.numel() for p in e.parameters())
with torch.inference_mode():
    want = e(x)
    with ran(model, f"{SCORER}.forward", "native"):
        assert_same(b.forward(x), want, "forward called directly")
    dup = copy.deepcopy(b)
    with ran(model, f"{SCORER}.forward", "native"):
        assert_same(dup(x), want, "deepcopy")
    with torch.no_grad():
        dup.inp.bias.add_(1.0)
    assert_same(b(x), want, "deepcopy shares no weights")
    buf = io.BytesIO()
    torch.save(b, buf)
    buf.seek(0)
    loaded = torch.load(buf, weights_only=False)
    assert type(loaded) is model.Scorer
    with ran(model, f"{SCORER}.forward", "native"):
        assert_same(loaded(x), want, "torch.save / torch.load")
    buf = io.BytesIO()
    torch.save(b.state_dict(), buf)
    buf.seek(0)
    restored = model.Scorer(**BIG).eval()
    restored.load_state_dict(torch.load(buf))
    with ran(model, f"{SCORER}.predict", "native"):
        assert_same(restored.predict(x), e.predict(x), "state_dict through torch.save")
    b.to("cpu").float().requires_grad_(False)
    with ran(model, f"{SCORER}.probs", "native"):
        assert_same(b.probs(x), e.probs(x), "to('cpu').float()")

# torch.jit.trace records the operations eager runs: while it records, the original runs.
with torch.no_grad(), warnings.catch_warnings():
    warnings.simplefilter("ignore")
    with ran(model, f"{SCORER}.forward", "trace"):
        traced = torch.jit.trace(b, x, check_trace=False)
    etraced = torch.jit.trace(e, x, check_trace=False)
    x2 = inputs(F_, 35)["batch 16"]
    assert_same(traced(x2), etraced(x2), "torch.jit.trace of the model")
    with ran(model, f"{SCORER}.forward", "native"):
        assert_same(b(x2), e(x2), "after torch.jit.trace")

# ---- 9. threads -------------------------------------------------------------------------------

b, e = pair(model, emodel, "Scorer", 33, **BIG)
x = inputs(F_, 34)["batch 128"]
with torch.inference_mode():
    reference = b(x)
    assert_same(reference, e(x), "thread reference")
REPEATS = 8
results, errors = [], []


def worker():
    try:
        with torch.inference_mode():
            for _ in range(REPEATS):
                results.append(b(x))
    except BaseException as exc:  # noqa: BLE001
        errors.append(exc)


with ran(model, f"{SCORER}.forward", "native", n=4 * REPEATS):
    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
assert not errors, errors
assert len(results) == 4 * REPEATS
for r in results:
    assert torch.equal(r, reference), "threaded result differs"

print(f"modules ok ({mode})")
