import contextlib
import gc

import pytest

from rxbench import schedule


def fake_block(name, log, per_call=100):
    def block(k):
        log.append((name, k))
        return per_call * k

    return block


def test_every_round_times_every_lane_once_in_a_shuffled_seeded_order():
    log = []
    blocks = {n: fake_block(n, log, per_call=i + 1) for i, n in enumerate("abcde")}
    samples, orders = schedule.interleaved_rounds(blocks, k=7, rounds=30, seed=4)
    assert len(orders) == 30
    for order in orders:
        assert sorted(order) == list("abcde")
    assert len({tuple(o) for o in orders}) > 1, "orders must vary between rounds"
    assert [name for name, _ in log] == [n for o in orders for n in o]
    assert all(k == 7 for _, k in log)
    assert samples["a"] == [1.0] * 30 and samples["e"] == [5.0] * 30
    again, orders_again = schedule.interleaved_rounds(
        {n: fake_block(n, [], i + 1) for i, n in enumerate("abcde")}, k=7, rounds=30, seed=4)
    assert orders_again == orders and again == samples


def test_interleaved_rounds_rejects_empty_work():
    with pytest.raises(ValueError):
        schedule.interleaved_rounds({"a": fake_block("a", [])}, k=0, rounds=1, seed=0)
    with pytest.raises(ValueError):
        schedule.interleaved_rounds({"a": fake_block("a", [])}, k=1, rounds=0, seed=0)


def test_warm_up_runs_enough_calls_and_returns_the_per_call_estimate():
    log = []
    estimate = schedule.warm_up(fake_block("a", log, per_call=250), min_calls=20, min_ns=10_000)
    assert estimate == 250
    calls = sum(k for _, k in log)
    assert calls >= 40  # 10_000 ns at 250 ns per call
    assert [k for _, k in log][:3] == [1, 2, 4]


def test_calls_per_block_targets_the_slowest_lane_and_clamps():
    assert schedule.calls_per_block(1_000, 2_000_000) == 2000
    assert schedule.calls_per_block(10_000_000, 2_000_000) == 3
    assert schedule.calls_per_block(1, 2_000_000) == 20000
    assert schedule.calls_per_block(0, 2_000_000) == 20000
    with pytest.raises(ValueError):
        schedule.calls_per_block(1, 1, lo=0)


def test_python_block_calls_k_times_inside_one_context_with_gc_paused():
    calls, entered = [], []
    ticks = iter([1_000, 4_000])

    @contextlib.contextmanager
    def ctx():
        entered.append(gc.isenabled())
        yield

    def fn(a, b):
        calls.append((a, b, gc.isenabled()))

    block = schedule.python_block(fn, (1, 2), context=ctx, clock=lambda: next(ticks))
    gc.enable()
    assert block(5) == 3_000
    assert len(calls) == 5 and all(c == (1, 2, False) for c in calls)
    assert entered == [False]
    assert gc.isenabled()


def test_gc_paused_restores_a_disabled_collector():
    gc.disable()
    try:
        with schedule.gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
