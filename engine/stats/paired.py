"""Paired comparisons of two arms over the same scenarios.

Both tests use the pairing: every scenario is its own control, so differences in scenario
difficulty do not blur the comparison. McNemar is exact (a binomial test on the discordant
pairs, no χ² approximation), as LiveMCPBench uses it for small matched samples. The bootstrap
CI resamples scenarios, keeping each scenario's two scores together.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, Future
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
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
    """Exact two-sided p-value of k successes in n trials under p = 1/2.

    The distribution is symmetric, so the two-sided p-value is twice the smaller tail,
    2 · Σ_{i ≤ min(k, n-k)} C(n, i) / 2ⁿ, capped at 1. It is summed in integers and divided
    once, so the float is the exact value correctly rounded. ``scipy.stats.binomtest`` agrees
    to 1e-13 (its special functions round differently), and importing scipy.stats cost the
    report about 0.6 s, more than every test it ran.
    """
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k={k}, n={n}")
    if 2 * k == n:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(k, n - k) + 1))
    return min(1.0, 2 * tail / (1 << n))


def mcnemar_counts(pairs: Iterable[tuple[bool, bool]]) -> tuple[int, int, int]:
    """(b, c, n) of ``mcnemar_exact``: A-only passes, B-only passes, pairs."""
    b = c = n = 0
    for a_passed, b_passed in pairs:
        n += 1
        if a_passed and not b_passed:
            b += 1
        elif b_passed and not a_passed:
            c += 1
    return b, c, n


def mcnemar_exact(pairs: Iterable[tuple[bool, bool]]) -> McNemarResult:
    """Exact McNemar on per-scenario (A passed, B passed) pairs."""
    b, c, n = mcnemar_counts(pairs)
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

    ``scipy.stats.bootstrap``'s percentile method (computed as scipy does, see
    ``_percentile_interval``): each resample draws n scenarios with
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
    deltas = _deltas(pairs)
    if deltas is None:
        raise ValueError("paired bootstrap needs finite scores")
    n = len(deltas)
    mean_delta = math.fsum(deltas.tolist()) / n
    if _constant(deltas):
        # Every resample is the same multiset: the interval is the point, exactly.
        mean_delta = low = high = float(deltas[0])
    else:
        jobs = _AHEAD.get()
        ahead = None if jobs is None else jobs.get((deltas.tobytes(), n_resamples, confidence, seed))
        if ahead is None:
            low, high = _percentile_interval(deltas, n_resamples, confidence, seed)
        else:
            job, index = ahead
            low, high = job.result()[index]
    return BootstrapCI(
        mean_delta=mean_delta,
        low=low,
        high=high,
        n=n,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )


_Key = tuple[bytes, int, float, int]  # the deltas' bytes, resamples, confidence, seed
_Job = tuple[Future[list[tuple[float, float]]], int]  # a job drawing several intervals, and which
_AHEAD: ContextVar[Mapping[_Key, _Job] | None] = ContextVar("_AHEAD", default=None)


@contextmanager
def intervals_ahead(
    executor: Executor,
    requests: Iterable[tuple[Sequence[tuple[float, float]], int, int]],
    confidence: float = 0.95,
) -> Iterator[None]:
    """Draws the intervals of these bootstraps, each (pairs, n_resamples, seed), on ``executor``
    (numpy draws without the GIL) for ``paired_bootstrap_ci`` to take, inside the block, when it
    is asked for the same ones: a report knows them before it builds the sections that ask. An
    interval is keyed by every input, so one asked for differently is computed as ever."""
    # Bootstraps of as many values with the same seed and resamples draw the same resamples: one
    # job draws them once for all (a report's arms and comparisons: 14 bootstraps, 4 draws).
    shared: dict[tuple[int, int, int], dict[_Key, Any]] = {}
    for pairs, n_resamples, seed in requests:
        deltas = _deltas(pairs)
        if deltas is None or len(deltas) == 0 or _constant(deltas):
            continue
        key = (deltas.tobytes(), n_resamples, confidence, seed)
        shared.setdefault((len(deltas), n_resamples, seed), {}).setdefault(key, deltas)
    jobs: dict[_Key, _Job] = {}
    for (_n, n_resamples, seed), by_key in shared.items():
        job = executor.submit(_percentile_intervals, list(by_key.values()), n_resamples, confidence, seed)
        jobs.update((key, (job, index)) for index, key in enumerate(by_key))
    token = _AHEAD.set(jobs)
    try:
        yield
    finally:
        _AHEAD.reset(token)
        for job, _index in jobs.values():
            job.cancel()


def _deltas(pairs: Sequence[tuple[float, float]]) -> Any:
    """second − first of each pair as a float64 array, or None if one is not finite."""
    import numpy as np  # here: a report of a run without comparisons does not need it

    deltas = np.array([second - first for first, second in pairs], dtype=np.float64)
    return deltas if np.all(np.isfinite(deltas)) else None


def _constant(deltas: Any) -> bool:
    import numpy as np

    return bool(np.all(deltas == deltas[0]))


def _percentile_interval(
    deltas: np.ndarray[tuple[int], np.dtype[np.float64]], n_resamples: int, confidence: float, seed: int
) -> tuple[float, float]:
    """``scipy.stats.bootstrap((deltas,), np.mean, method="percentile", vectorized=True,
    batch=..., random_state=np.random.default_rng(seed))``'s interval, computed as scipy 1.17
    computes it: the same draws in the same batches, the same means, and ``scipy.stats.quantile``'s
    linear interpolation, so the bounds are the same floats. numpy alone: importing scipy.stats
    took longer than the rest of a 10,000-trial report (tests/engine/stats/test_paired.py checks
    the equality against scipy)."""
    return _percentile_intervals([deltas], n_resamples, confidence, seed)[0]


def _percentile_intervals(
    several: Sequence[np.ndarray[tuple[int], np.dtype[np.float64]]],
    n_resamples: int,
    confidence: float,
    seed: int,
) -> list[tuple[float, float]]:
    """``_percentile_interval`` of each of ``several`` deltas of one length, drawing the resamples
    (which depend on the length, the seed and their number only) once for all of them."""
    import numpy as np

    rng = np.random.default_rng(seed)
    n = len(several[0])
    # Bounds memory: scipy otherwise draws every resample at once (n_resamples x n floats).
    batch = max(1, _DRAWS_PER_BATCH // n)
    means: list[list[Any]] = [[] for _ in several]
    for start in range(0, n_resamples, batch):
        size = min(batch, n_resamples - start)
        drawn = rng.integers(0, n, size=(size, n), dtype="int64", endpoint=False)
        for deltas, of_deltas in zip(several, means, strict=True):
            # np.take: the array scipy's deltas[..., drawn] makes, in half the time.
            of_deltas.append(np.mean(np.take(deltas, drawn), axis=-1))
    alpha = np.asarray((1 - confidence) / 2, dtype=np.float64)
    bounds = np.stack((alpha, 1 - alpha), axis=-1)
    intervals = []
    for of_deltas in means:
        low, high = _quantile_linear(np.concatenate(of_deltas, axis=-1), bounds)
        intervals.append((float(low), float(high)))
    return intervals


def _quantile_linear(
    x: np.ndarray[tuple[int], np.dtype[np.float64]], p: np.ndarray[tuple[int], np.dtype[np.float64]]
) -> np.ndarray[tuple[int], np.dtype[np.float64]]:
    """``scipy.stats.quantile(x, p, method="linear")`` of a 1-D ``x`` (Hyndman & Fan type 7), in
    scipy's own arithmetic."""
    import numpy as np

    y = np.sort(x, axis=-1)
    n = np.asarray(y.shape[-1], dtype=np.float64)
    jg = p * n + (1 - p)
    jp1 = jg // 1
    j = jp1 - 1
    g = jg % 1
    g[j < 0] = 0
    j = np.clip(j, 0.0, n - 1)
    jp1 = np.clip(jp1, 0.0, n - 1)
    below = np.take_along_axis(y, j.astype(np.int64), axis=-1)
    above = np.take_along_axis(y, jp1.astype(np.int64), axis=-1)
    result: np.ndarray[tuple[int], np.dtype[np.float64]] = (1 - g) * below + g * above
    return result
