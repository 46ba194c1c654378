"""Two measurements beside the workload tables, on the scoring projects' built modules:

- the boundary, for each framework: a native one-op function with seven tensor arguments and one
  output (`rxb_scoring.kernels.boundary`, `rxb_tf_scoring.kernels.boundary`), median µs per call,
  next to eager and to an empty Python function taking the same arguments, and split in two: the
  same seven arguments returning the first one unchanged (`boundary_args`: the argument side),
  and, for torch, `torch.empty_like` of the output from Python (what creating and freeing one
  torch tensor costs at all; TensorFlow has no eager allocation that is not an op);
- threads: calls per second of `classify` at a batch large enough for the native code to release
  the GIL, from one and from two Python threads, and their ratio (2.0 would be perfect scaling;
  bounded by the machine's free cores).
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from .workloads import Cell, scoring_inputs, tf_scoring_inputs


@dataclass(frozen=True)
class BoundaryProbe:
    """How one framework's boundary is measured: its project, inputs, op and extra lanes."""

    framework: str
    module: str
    op: str
    #: The seven tensor arguments.
    make_args: Callable[[], tuple[Any, ...]]
    #: What `boundary_args` takes after the seven tensors (so that it returns the first one).
    args_extra: tuple[Any, ...] = ()
    #: An allocation of a tensor like the output from Python, when the framework has one that
    #: is not an op (`torch.empty_like`).
    alloc: Callable[[Any], Any] | None = None
    alloc_name: str = ""
    #: The per-call budget the project set itself, if any.
    target_us: float | None = None


def _torch_empty_like(t: Any) -> Any:
    import torch

    return torch.empty_like(t)


PROBES = {
    "torch": BoundaryProbe("torch", "rxb_scoring.kernels", "x.relu()",
                           lambda: scoring_inputs(Cell("b=1", {"batch": 1}), 0)[:7],
                           alloc=_torch_empty_like, alloc_name="torch.empty_like",
                           target_us=1.0),
    "tensorflow": BoundaryProbe("tensorflow", "rxb_tf_scoring.kernels", "tf.nn.relu(x)",
                                lambda: tf_scoring_inputs(Cell("b=1", {"batch": 1}), 0)[:7],
                                args_extra=(False,)),
}


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


def _same(got: Any, expected: Any) -> bool:
    import numpy as np

    a, b = np.asarray(got), np.asarray(expected)
    return a.shape == b.shape and a.dtype == b.dtype and bool((a == b).all())


def measure_boundary(probe: BoundaryProbe, native: ModuleType, eager: ModuleType,
                     quick: bool) -> dict[str, Any]:
    """µs per call of the one-op function natively, eagerly, and of an empty Python function."""
    args = probe.make_args()
    fn = getattr(native, "boundary")
    if type(fn).__name__ != "builtin_function_or_method":
        return {"framework": probe.framework,
                "error": f"{probe.module}.boundary is not native in this build"}
    expected = eager.boundary(*args)
    if not _same(fn(*args), expected):
        return {"framework": probe.framework,
                "error": "the native boundary function does not match eager"}
    args_fn = getattr(native, "boundary_args", None)
    if type(args_fn).__name__ != "builtin_function_or_method":
        return {"framework": probe.framework,
                "error": f"{probe.module}.boundary_args is not native in this build"}
    args_full = (*args, *probe.args_extra)
    if args_fn(*args_full) is not args[0]:
        return {"framework": probe.framework,
                "error": "the native boundary_args did not return its first argument"}
    calls, rounds = (2000, 5) if quick else (20000, 15)
    lanes = {"native": (fn, args), "eager": (eager.boundary, args), "python_call": (_empty, args),
             "args": (args_fn, args_full)}
    if probe.alloc is not None:
        lanes["alloc"] = (probe.alloc, (expected,))
    for f, a in lanes.values():
        _per_call_us(f, a, calls // 10, 1)
    # Rounds interleave the lanes, so a slow phase of the machine touches them all alike.
    samples: dict[str, list[float]] = {k: [] for k in lanes}
    for _ in range(rounds):
        for k, (f, a) in lanes.items():
            samples[k].append(_per_call_us(f, a, calls, 1))
    med = {k: round(statistics.median(v), 3) for k, v in samples.items()}
    return {
        "framework": probe.framework,
        "function": f"{probe.module}.boundary (7 tensors in, {probe.op} out, batch 1)",
        "native_us": med["native"],
        "eager_us": med["eager"],
        "python_call_us": med["python_call"],
        "args_only_us": med["args"],
        "alloc_us": med.get("alloc"),
        "alloc_name": probe.alloc_name or None,
        "target_us": probe.target_us,
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
