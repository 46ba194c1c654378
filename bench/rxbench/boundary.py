"""Two measurements beside the workload tables, both on the scoring project's built module:

- the boundary: a native one-op function with seven tensor arguments and one output
  (`rxb_scoring.kernels.boundary`), median µs per call, next to eager and to an empty Python
  function taking the same arguments;
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
    calls, rounds = (2000, 5) if quick else (20000, 15)
    for f in (fn, eager.boundary, _empty):
        _per_call_us(f, args, calls // 10, 1)
    native_us = _per_call_us(fn, args, calls, rounds)
    eager_us = _per_call_us(eager.boundary, args, calls, rounds)
    empty_us = _per_call_us(_empty, args, calls, rounds)
    return {
        "function": "rxb_scoring.kernels.boundary (7 tensors in, x.relu() out, batch 1)",
        "native_us": round(native_us, 3),
        "eager_us": round(eager_us, 3),
        "python_call_us": round(empty_us, 3),
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
