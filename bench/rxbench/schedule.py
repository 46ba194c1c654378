"""Warm-up, block-size calibration and interleaved timing rounds.

A lane is timed through a *block*: a callable that runs the lane `k` times and returns the
elapsed nanoseconds. Python lanes time a loop of calls with `time.perf_counter_ns` (garbage
collection off, as `timeit` does); the floor lane's block is a single call into Rust that
loops and times itself. Every round times every lane once, in a freshly shuffled order, so slow
drifts of the machine (other processes, frequency, caches) fall on all lanes alike.
"""

from __future__ import annotations

import contextlib
import gc
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

#: `block(k) -> elapsed nanoseconds for k calls`.
Block = Callable[[int], int]


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Garbage collection off for the duration (restored to what it was)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def python_block(
    fn: Callable[..., Any],
    args: Sequence[Any],
    context: Callable[[], contextlib.AbstractContextManager[Any]] | None = None,
    clock: Callable[[], int] = time.perf_counter_ns,
) -> Block:
    """A block calling `fn(*args)` `k` times; `context` (e.g. `torch.inference_mode`) wraps the
    whole timed loop, not each call."""
    args = tuple(args)

    def block(k: int) -> int:
        with gc_paused(), (context() if context is not None else contextlib.nullcontext()):
            start = clock()
            for _ in range(k):
                fn(*args)
            return clock() - start

    return block


def warm_up(block: Block, *, min_calls: int, min_ns: int, first_k: int = 1) -> float:
    """Run `block` with growing `k` until at least `min_calls` calls and `min_ns` nanoseconds
    have passed; returns the per-call time of the last block (the warm estimate)."""
    if min_calls < 1 or first_k < 1:
        raise ValueError("warm_up needs min_calls >= 1 and first_k >= 1")
    calls, spent, k = 0, 0, first_k
    per_call = 0.0
    while calls < min_calls or spent < min_ns:
        elapsed = max(int(block(k)), 0)
        calls += k
        spent += elapsed
        per_call = elapsed / k
        k = min(k * 2, 1 << 16)
    return per_call


def calls_per_block(slowest_ns: float, target_ns: float, *, lo: int = 3, hi: int = 20000) -> int:
    """How many calls a block makes so that the slowest lane's block lasts about `target_ns`;
    clamped to `[lo, hi]`. One block size per cell keeps the lanes comparable."""
    if lo < 1 or hi < lo:
        raise ValueError("calls_per_block needs 1 <= lo <= hi")
    if slowest_ns <= 0:
        return hi
    return max(lo, min(hi, int(target_ns / slowest_ns)))


def interleaved_rounds(
    blocks: Mapping[str, Block],
    *,
    k: int,
    rounds: int,
    seed: int,
) -> tuple[dict[str, list[float]], list[list[str]]]:
    """Time every lane once per round, each round in a new shuffled order (seeded).

    Returns the per-call nanoseconds of each lane, one value per round, and the order of each
    round (for the record).
    """
    if k < 1 or rounds < 1:
        raise ValueError("interleaved_rounds needs k >= 1 and rounds >= 1")
    rng = random.Random(seed)
    names = list(blocks)
    samples: dict[str, list[float]] = {name: [] for name in names}
    orders: list[list[str]] = []
    for _ in range(rounds):
        order = names[:]
        rng.shuffle(order)
        orders.append(order)
        for name in order:
            samples[name].append(blocks[name](k) / k)
    return samples, orders
