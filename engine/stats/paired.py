"""Paired comparisons of two arms over the same scenarios.

Both tests use the pairing: every scenario is its own control, so differences in scenario
difficulty do not blur the comparison. McNemar is exact (a binomial test on the discordant
pairs, no χ² approximation), as LiveMCPBench uses it for small matched samples. The bootstrap
CI resamples scenarios, keeping each scenario's two scores together.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

DEFAULT_RESAMPLES = 10_000
_DRAWS_PER_BATCH = 1_000_000


def pair_by_key(first: Mapping[K, V], second: Mapping[K, V]) -> list[tuple[V, V]]:
    """Pairs (first[k], second[k]) for keys both sides have, in ``first``'s key order.

    Use it to pair per-scenario results of two arms: a scenario only one arm ran is dropped.
    """
    return [(value, second[key]) for key, value in first.items() if key in second]


@dataclass(frozen=True)
class McNemarResult:
    """Exact McNemar test of arm A against arm B.

    ``b``: A passed and B failed; ``c``: A failed and B passed. ``p_value`` is the two-sided
    exact binomial p-value on the b + c discordant pairs, or ``None`` when there are none:
    then the data say nothing about a difference, which ``reason`` states.
    """

    b: int
    c: int
    n_pairs: int
    p_value: float | None
    reason: str

    @property
    def discordant(self) -> int:
        return self.b + self.c

    def significant(self, alpha: float = 0.05) -> bool:
        return self.p_value is not None and self.p_value < alpha


def binomial_two_sided_half(k: int, n: int) -> float:
    """Exact two-sided p-value of k successes in n trials under p = 1/2 (scipy.stats.binomtest)."""
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k={k}, n={n}")
    from scipy.stats import binomtest  # imported here: scipy costs the console's start-up otherwise

    return min(1.0, float(binomtest(k, n, 0.5, alternative="two-sided").pvalue))


def mcnemar_exact(pairs: Iterable[tuple[bool, bool]]) -> McNemarResult:
    """Exact McNemar on per-scenario (A passed, B passed) pairs."""
    b = c = n = 0
    for a_passed, b_passed in pairs:
        n += 1
        if a_passed and not b_passed:
            b += 1
        elif b_passed and not a_passed:
            c += 1
    if b + c == 0:
        reason = (
            "no pairs to compare"
            if n == 0
            else f"no discordant pairs in {n}: both arms passed and failed the same scenarios"
        )
        return McNemarResult(b, c, n, None, reason)
    p_value = binomial_two_sided_half(b, b + c)
    return McNemarResult(b, c, n, p_value, f"{b} A-only vs {c} B-only passes among {n} pairs")


@dataclass(frozen=True)
class BootstrapCI:
    """Percentile CI of the mean paired delta (second minus first)."""

    mean_delta: float
    low: float
    high: float
    n: int
    confidence: float
    n_resamples: int
    seed: int


def paired_bootstrap_ci(
    pairs: Sequence[tuple[float, float]],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    seed: int = 0,
) -> BootstrapCI:
    """Bootstrap CI of mean(second − first) over per-scenario score pairs.

    ``scipy.stats.bootstrap`` with the percentile method: each resample draws n scenarios with
    replacement from a ``numpy.random.Generator`` seeded with ``seed``, so the same inputs and
    seed give the same interval; the bounds are the (1 − confidence)/2 and (1 + confidence)/2
    percentiles of the resampled means. A positive delta means the second arm scored higher.
    """
    if not pairs:
        raise ValueError("paired bootstrap needs at least one pair")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    deltas = np.array([second - first for first, second in pairs], dtype=np.float64)
    if not np.all(np.isfinite(deltas)):
        raise ValueError("paired bootstrap needs finite scores")
    n = len(deltas)
    mean_delta = math.fsum(deltas.tolist()) / n
    if np.all(deltas == deltas[0]):
        # Every resample is the same multiset: the interval is the point, exactly.
        mean_delta = low = high = float(deltas[0])
    else:
        low, high = _percentile_interval(deltas, n_resamples, confidence, seed)
    return BootstrapCI(
        mean_delta=mean_delta,
        low=low,
        high=high,
        n=n,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )


def _percentile_interval(
    deltas: np.ndarray[tuple[int], np.dtype[np.float64]], n_resamples: int, confidence: float, seed: int
) -> tuple[float, float]:
    from scipy.stats import bootstrap  # imported here: scipy costs the console's start-up otherwise

    result = bootstrap(
        (deltas,),
        np.mean,
        n_resamples=n_resamples,
        confidence_level=confidence,
        method="percentile",
        vectorized=True,
        # Bounds memory: scipy otherwise draws every resample at once (n_resamples x n floats).
        batch=max(1, _DRAWS_PER_BATCH // len(deltas)),
        random_state=np.random.default_rng(seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)
