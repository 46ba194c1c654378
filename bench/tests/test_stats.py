import random

import numpy as np
import pytest

from rxbench.stats import bootstrap_ratio, median, percentile


def test_median_odd_even_and_unsorted():
    assert median([3, 1, 2]) == 2
    assert median([4, 1, 3, 2]) == 2.5
    assert median([7.0]) == 7.0


def test_median_and_percentile_reject_no_samples():
    with pytest.raises(ValueError):
        median([])
    with pytest.raises(ValueError):
        percentile([], 0.5)
    with pytest.raises(ValueError):
        percentile([1.0], 1.5)


def test_percentile_matches_numpy_linear_interpolation():
    rng = random.Random(7)
    xs = [rng.uniform(0, 100) for _ in range(37)]
    for q in (0.0, 0.025, 0.25, 0.5, 0.75, 0.975, 1.0):
        assert percentile(xs, q) == pytest.approx(float(np.percentile(xs, q * 100)))


def test_identical_lanes_give_ratio_one_with_a_degenerate_interval():
    xs = [10.0, 11.0, 12.0, 13.0, 30.0]
    r = bootstrap_ratio(xs, list(xs), resamples=200, seed=1)
    assert (r.value, r.lo, r.hi) == (1.0, 1.0, 1.0)


def test_paired_rounds_keep_an_exact_factor_exact():
    native = [10.0, 50.0, 11.0, 12.0, 9.0, 100.0, 10.5]
    other = [2 * x for x in native]
    r = bootstrap_ratio(native, other, resamples=500, seed=3)
    assert r.value == pytest.approx(2.0)
    assert r.lo == pytest.approx(2.0) and r.hi == pytest.approx(2.0)


def test_interval_brackets_the_estimate_and_is_reproducible():
    rng = random.Random(11)
    native = [10 + rng.gauss(0, 1) for _ in range(25)]
    other = [20 + rng.gauss(0, 3) for _ in range(25)]
    a = bootstrap_ratio(native, other, resamples=1000, seed=5)
    b = bootstrap_ratio(native, other, resamples=1000, seed=5)
    assert a == b
    assert a.lo <= a.value <= a.hi
    assert 1.5 < a.lo and a.hi < 2.6
    wider = bootstrap_ratio(native, other, resamples=1000, seed=5, level=0.99)
    assert wider.lo <= a.lo and wider.hi >= a.hi


def test_unequal_lengths_resample_each_side_alone():
    r = bootstrap_ratio([10.0] * 5, [30.0] * 8, resamples=100, seed=0)
    assert (r.value, r.lo, r.hi) == (3.0, 3.0, 3.0)


def test_bootstrap_rejects_bad_input():
    with pytest.raises(ValueError):
        bootstrap_ratio([], [1.0])
    with pytest.raises(ValueError):
        bootstrap_ratio([0.0, 0.0], [1.0, 1.0])
    with pytest.raises(ValueError):
        bootstrap_ratio([1.0], [1.0], level=1.0)
    with pytest.raises(ValueError):
        bootstrap_ratio([1.0], [1.0], resamples=0)
