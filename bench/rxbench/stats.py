"""Medians, percentiles and the bootstrap interval of a latency ratio."""

from __future__ import annotations

import random
from collections.abc import Sequence

from .model import Ratio


def median(xs: Sequence[float]) -> float:
    """The median; the mean of the two middle values for an even count."""
    if not xs:
        raise ValueError("median of no samples")
    s = sorted(xs)
    mid = len(s) // 2
    return float(s[mid]) if len(s) % 2 else (s[mid - 1] + s[mid]) / 2.0


def percentile(xs: Sequence[float], q: float) -> float:
    """The `q`-quantile (0 <= q <= 1) with linear interpolation between order statistics."""
    if not xs:
        raise ValueError("percentile of no samples")
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile must be within [0, 1], got {q}")
    s = sorted(xs)
    pos = q * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return float(s[lo] + (s[hi] - s[lo]) * (pos - lo))


def bootstrap_ratio(
    native: Sequence[float],
    other: Sequence[float],
    *,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> Ratio:
    """`median(other) / median(native)` with a percentile bootstrap interval.

    Samples are per-round per-call times. When both lanes have one sample per round (the
    harness's case: every round times every lane, interleaved), rounds are resampled as pairs,
    so load that hit both lanes in one round stays paired; otherwise each side is resampled on
    its own. The generator is seeded: the same samples give the same interval.
    """
    if not native or not other:
        raise ValueError("bootstrap_ratio needs samples on both sides")
    if resamples < 1:
        raise ValueError("bootstrap_ratio needs at least one resample")
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be within (0, 1), got {level}")
    base = median(native)
    if base <= 0:
        raise ValueError("the native median must be positive")
    point = median(other) / base

    rng = random.Random(seed)
    paired = len(native) == len(other)
    n_nat, n_oth = len(native), len(other)
    ratios = []
    for _ in range(resamples):
        if paired:
            idx = rng.choices(range(n_nat), k=n_nat)
            nat = [native[i] for i in idx]
            oth = [other[i] for i in idx]
        else:
            nat = rng.choices(native, k=n_nat)
            oth = rng.choices(other, k=n_oth)
        denom = median(nat)
        if denom > 0:
            ratios.append(median(oth) / denom)
    if not ratios:
        raise ValueError("every resample had a non-positive native median")
    alpha = (1.0 - level) / 2.0
    return Ratio(value=point, lo=percentile(ratios, alpha), hi=percentile(ratios, 1.0 - alpha))
