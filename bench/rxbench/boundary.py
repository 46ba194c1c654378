"""Two measurements beside the workload tables, both on the scoring project's built module:

- the boundary: a native one-op function with seven tensor arguments and one output
  (`rxb_scoring.kernels.boundary`), median µs per call, next to eager and to an empty Python
  function taking the same arguments, and split in two: the same seven arguments returning the
  first one unchanged (`boundary_args`: the argument side), and `torch.empty_like` of the output
  from Python (what creating and freeing one torch tensor costs at all);
- threads: calls per second of `classify` at a batch large enough for the native code to release
  the GIL, from one and from two Python threads, and their ratio (2.0 would be perfect scaling;
  bounded by the machine's free cores).
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

import torch

from .workloads import Cell, scoring_inputs


def _per_call_us(fn: Callable[..., Any], args: tuple[Any, ...], calls: int, rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter_ns()
        for _ in range(calls):
            fn(*args)
        samples.append((time.perf_counter_ns() - start) / calls / 1000.0)
    return statistics.median(samples)


def _empty(x, mean, scale, w1, b1, w2, b2):  # noqa: ANN001, ANN202 - the baseline call
    return x


def measure_boundary(native: ModuleType, eager: ModuleType, quick: bool) -> dict[str, Any]:
    """µs per call of the one-op function natively, eagerly, and of an empty Python function."""
    args = scoring_inputs(Cell("b=1", {"batch": 1}), 0)[:7]
    fn = getattr(native, "boundary")
    if type(fn).__name__ != "builtin_function_or_method":
        return {"error": "rxb_scoring.kernels.boundary is not native in this build"}
    expected = eager.boundary(*args)
    got = fn(*args)
    if not (got.shape == expected.shape and bool((got == expected).all())):
        return {"error": "the native boundary function does not match eager"}
    args_fn = getattr(native, "boundary_args", None)
    if type(args_fn).__name__ != "builtin_function_or_method":
        return {"error": "rxb_scoring.kernels.boundary_args is not native in this build"}
    if args_fn(*args) is not args[0]:
        return {"error": "the native boundary_args did not return its first argument"}
    calls, rounds = (2000, 5) if quick else (20000, 15)
    lanes = {"native": (fn, args), "eager": (eager.boundary, args), "python_call": (_empty, args),
             "args": (args_fn, args), "alloc": (torch.empty_like, (expected,))}
    for f, a in lanes.values():
        _per_call_us(f, a, calls // 10, 1)
    # Rounds interleave the lanes, so a slow phase of the machine touches them all alike.
    samples: dict[str, list[float]] = {k: [] for k in lanes}
    for _ in range(rounds):
        for k, (f, a) in lanes.items():
            samples[k].append(_per_call_us(f, a, calls, 1))
    med = {k: round(statistics.median(v), 3) for k, v in samples.items()}
    return {
        "function": "rxb_scoring.kernels.boundary (7 tensors in, x.relu() out, batch 1)",
        "native_us": med["native"],
        "eager_us": med["eager"],
        "python_call_us": med["python_call"],
        "args_only_us": med["args"],
        "empty_like_us": med["alloc"],
        "target_us": 1.0,
    }


def measure_threads(native: ModuleType, batch: int, quick: bool) -> dict[str, Any]:
    """Throughput of `classify` from one and two Python threads."""
    args = scoring_inputs(Cell(f"b={batch}", {"batch": batch}), 0)
    fn = getattr(native, "classify")
    calls = 300 if quick else 3000

    def work() -> None:
        for _ in range(calls):
            fn(*args)

    work()
    rates = {}
    for threads in (1, 2):
        best = 0.0
        for _ in range(3):
            ts = [threading.Thread(target=work) for _ in range(threads)]
            start = time.perf_counter()
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            best = max(best, threads * calls / (time.perf_counter() - start))
        rates[threads] = best
    return {
        "function": f"rxb_scoring.kernels.classify, batch {batch}",
        "calls_per_s_1_thread": round(rates[1]),
        "calls_per_s_2_threads": round(rates[2]),
        "scaling": round(rates[2] / rates[1], 2),
    }
