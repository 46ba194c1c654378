"""Parity and speed of the natively built scoring kernels against eager PyTorch.

Run with `cargo xtask demo`, or by hand after `rextio build examples/scoring`:

    REXTIO_NATIVE_MODE=native \
    PYTHONPATH=examples/scoring/.rextio/build/python \
    .venv/bin/python examples/scoring/demo.py

The native functions come from the built wrapper package `scoring.kernels`; the eager
reference is the original source `src/scoring/kernels.py`, loaded under another module name.
The model class `scoring.model.Scorer` (an `nn.Module`) is compared the same way: `model(x)`
under `torch.inference_mode()`, with the method counters proving the native body ran.
Exits 1 if a function is not bound natively or if any result differs from eager.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
BUILD_PYTHON = HERE / ".rextio" / "build" / "python"
SOURCE = HERE / "src" / "scoring" / "kernels.py"
MODEL_SOURCE = HERE / "src" / "scoring" / "model.py"
MODEL_RTOL, MODEL_ATOL = 1e-4, 1e-5  # a whole model: several float32 products in a row
FUNCTIONS = ("inference", "deep")
RTOL = 1e-5
ATOL = 1e-6

# Never silently measure the Python fallback.
os.environ.setdefault("REXTIO_NATIVE_MODE", "native")

import torch  # noqa: E402  (torch must be imported before the native module)


def load_native() -> ModuleType:
    """The built wrapper `scoring.kernels` (PYTHONPATH, else the default build directory)."""
    if importlib.util.find_spec("scoring") is None:
        sys.path.insert(0, str(BUILD_PYTHON))
    return importlib.import_module("scoring.kernels")


def load_eager(source: Path = SOURCE, name: str = "scoring_eager_kernels") -> ModuleType:
    """The original Python source, imported under another name."""
    spec = importlib.util.spec_from_file_location(name, source)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {source}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def route_of(fn: Any) -> str:
    return "native" if type(fn).__name__ == "builtin_function_or_method" else "fallback"


def make_args(function: str, batch: int, n_in: int, n_out: int, extra: tuple[int, ...]) -> tuple:
    x = torch.randn(batch, n_in, dtype=torch.float32)
    if function == "inference":
        weight = torch.randn(n_out, n_in, dtype=torch.float32) / n_in**0.5
        bias = torch.randn(n_out, dtype=torch.float32) * 0.1
        return (x, weight, bias)
    # deep: square weight, hidden stays (batch, n)
    weight = torch.randn(n_in, n_in, dtype=torch.float32) / n_in**0.5
    bias = torch.randn(n_in, dtype=torch.float32) * 0.1
    return (x, weight, bias, *extra)


def cases() -> list[tuple[str, tuple[int, int, int], tuple[int, ...]]]:
    out: list[tuple[str, tuple[int, int, int], tuple[int, ...]]] = []
    for shape in [(1, 32, 32), (8, 64, 64), (64, 128, 64)]:
        out.append(("inference", shape, ()))
    for shape in [(1, 32, 32), (8, 64, 64), (64, 64, 64)]:
        for phase in (0, 1):
            out.append(("deep", shape, (8, phase)))
    return out


def per_call_us(fn: Callable[..., Any], args: tuple, calls: int) -> float:
    start = time.perf_counter_ns()
    for _ in range(calls):
        fn(*args)
    return (time.perf_counter_ns() - start) / calls / 1000.0


def parity(native_fn: Callable[..., Any], eager_fn: Callable[..., Any], args: tuple) -> tuple[bool, str]:
    try:
        native = native_fn(*args)
    except Exception as exc:  # a native error is a failure, never retried
        return False, f"raised {type(exc).__name__}: {exc}"
    eager = eager_fn(*args)
    if not isinstance(native, torch.Tensor):
        return False, f"returned {type(native).__name__}"
    if native.dtype != eager.dtype or native.shape != eager.shape:
        return False, f"{native.dtype}{tuple(native.shape)} vs {eager.dtype}{tuple(eager.shape)}"
    diff = (native - eager).abs().max().item() if native.numel() else 0.0
    ok = torch.allclose(native, eager, rtol=RTOL, atol=ATOL)
    return ok, f"{diff:.1e}"


def models(opts: argparse.Namespace) -> bool:
    """`model(x)` of the built `scoring.model.Scorer` against the original class, timed side by
    side under `torch.inference_mode()`; True when every cell ran natively and matched."""
    native_mod = importlib.import_module("scoring.model")
    eager_mod = load_eager(MODEL_SOURCE, "scoring_eager_model")
    stats = getattr(native_mod, "__rextio_method_stats__", None)
    if stats is None:
        print("model: scoring.model has no compiled methods (fallback)")
        return False
    key = "scoring.model.Scorer.forward"
    header = (f"{'model':<10} {'shape':<34} {'parity':<16} "
              f"{'native µs':>10} {'eager µs':>10} {'eager/native':>13}")
    print(header)
    print("-" * len(header))
    ok_all = True
    for batch, features, width in [(1, 32, 32), (8, 64, 64), (64, 64, 64)]:
        torch.manual_seed(batch)
        native = native_mod.Scorer(features, width).eval()
        eager = eager_mod.Scorer(features, width).eval()
        eager.load_state_dict(native.state_dict())
        x = torch.randn(batch, features)
        shape = f"b={batch} in={features} width={width}"
        with torch.inference_mode():
            before = stats()[key]["native"]
            got, want = native(x), eager(x)
            ran = stats()[key]["native"] - before
            ok = ran == 1 and torch.allclose(got, want, rtol=MODEL_RTOL, atol=MODEL_ATOL)
            detail = f"{(got - want).abs().max().item():.1e}"
            if not ok:
                ok_all = False
                why = "the original ran" if ran != 1 else detail
                print(f"{'Scorer':<10} {shape:<34} FAIL {why}")
                continue
            per_call_us(native, (x,), opts.warmup)
            per_call_us(eager, (x,), opts.warmup)
            native_t: list[float] = []
            eager_t: list[float] = []
            for r in range(opts.rounds):
                lanes = [(native, native_t), (eager, eager_t)]
                if r % 2:
                    lanes.reverse()
                for fn, sink in lanes:
                    sink.append(per_call_us(fn, (x,), opts.calls))
        native_us = statistics.median(native_t)
        eager_us = statistics.median(eager_t)
        print(f"{'Scorer':<10} {shape:<34} {'ok ' + detail:<16} "
              f"{native_us:>10.2f} {eager_us:>10.2f} {eager_us / native_us:>12.2f}x")
    return ok_all


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20, help="interleaved timing rounds")
    parser.add_argument("--calls", type=int, default=200, help="calls per round and lane")
    parser.add_argument("--warmup", type=int, default=50, help="warm-up calls per lane")
    opts = parser.parse_args()

    torch.set_num_threads(1)
    try:
        native_mod = load_native()
    except ImportError as exc:
        print(f"demo: cannot import the built module scoring.kernels ({exc}); build it first "
              "with `cargo xtask demo` or `rextio build examples/scoring`", file=sys.stderr)
        return 1
    eager_mod = load_eager()

    print(f"torch {torch.__version__}, threads={torch.get_num_threads()}, "
          f"REXTIO_NATIVE_MODE={os.environ.get('REXTIO_NATIVE_MODE')}")
    print(f"native module: {getattr(native_mod, '__file__', '?')}")
    print(f"eager source:  {SOURCE}")

    failed = False
    for name in FUNCTIONS:
        route = route_of(getattr(native_mod, name, None))
        print(f"route {name}: {route}")
        if route != "native":
            failed = True
    print()

    header = (f"{'function':<10} {'shape':<34} {'parity':<16} "
              f"{'native µs':>10} {'eager µs':>10} {'eager/native':>13}")
    print(header)
    print("-" * len(header))
    for index, (name, (batch, n_in, n_out), extra) in enumerate(cases()):
        torch.manual_seed(index)
        args = make_args(name, batch, n_in, n_out, extra)
        native_fn = getattr(native_mod, name)
        eager_fn = getattr(eager_mod, name)
        shape = f"b={batch} in={n_in} out={n_out}"
        if extra:
            shape += f" depth={extra[0]} phase={extra[1]}"

        ok, detail = parity(native_fn, eager_fn, args)
        if not ok:
            failed = True
            print(f"{name:<10} {shape:<34} FAIL {detail}")
            continue

        per_call_us(native_fn, args, opts.warmup)
        per_call_us(eager_fn, args, opts.warmup)
        native_t: list[float] = []
        eager_t: list[float] = []
        for r in range(opts.rounds):
            lanes = [(native_fn, native_t), (eager_fn, eager_t)]
            if r % 2:
                lanes.reverse()
            for fn, sink in lanes:
                sink.append(per_call_us(fn, args, opts.calls))
        native_us = statistics.median(native_t)
        eager_us = statistics.median(eager_t)
        ratio = eager_us / native_us if native_us > 0 else float("inf")
        print(f"{name:<10} {shape:<34} {'ok ' + detail:<16} "
              f"{native_us:>10.2f} {eager_us:>10.2f} {ratio:>12.2f}x")

    print()
    failed |= not models(opts)
    print()
    if failed:
        print("demo: FAILED (a function is not native or parity failed)")
        return 1
    print("demo: ok (all functions native, parity within "
          f"rtol={RTOL:g} atol={ATOL:g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
