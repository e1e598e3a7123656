from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.engine.stats import (
    binomial_two_sided_half,
    intervals_ahead,
    mcnemar_exact,
    pair_by_key,
    paired,
    paired_bootstrap_ci,
)


def pairs_from(both: int, a_only: int, b_only: int, neither: int) -> list[tuple[bool, bool]]:
    return (
        [(True, True)] * both
        + [(True, False)] * a_only
        + [(False, True)] * b_only
        + [(False, False)] * neither
    )


def test_mcnemar_by_hand() -> None:
    # b = 1, c = 6: P(X <= 1 | n=7, p=1/2) = (C(7,0) + C(7,1)) / 2^7 = 8/128; two-sided: 16/128 = 0.125
    result = mcnemar_exact(pairs_from(both=5, a_only=1, b_only=6, neither=3))
    assert (result.b, result.c, result.n_pairs, result.discordant) == (1, 6, 15, 7)
    assert result.p_value == 16 / 128
    assert not result.significant(0.05)


def test_mcnemar_significant_and_symmetric() -> None:
    # b = 0, c = 8: 2 * C(8,0) / 2^8 = 2/256 = 0.0078125
    forward = mcnemar_exact(pairs_from(0, 0, 8, 0))
    backward = mcnemar_exact(pairs_from(0, 8, 0, 0))
    assert forward.p_value == backward.p_value == 2 / 256
    assert forward.significant(0.05)


def test_mcnemar_balanced_is_one() -> None:
    # b = c = 3: twice the lower tail exceeds 1, so p = 1.
    assert mcnemar_exact(pairs_from(2, 3, 3, 2)).p_value == 1.0


def test_mcnemar_without_discordant_pairs() -> None:
    result = mcnemar_exact(pairs_from(4, 0, 0, 2))
    assert result.p_value is None
    assert not result.significant(0.99)
    assert "no discordant pairs in 6" in result.reason
    empty = mcnemar_exact([])
    assert (empty.n_pairs, empty.p_value, empty.reason) == (0, None, "no pairs to compare")


@settings(deadline=None)  # scipy's binomtest is called: timing it is not the point
@given(st.integers(0, 400), st.integers(0, 400))
def test_binomial_is_the_exact_value_and_agrees_with_scipy(b: int, c: int) -> None:
    if b + c == 0:
        return
    n, low = b + c, min(b, c)
    exact = Fraction(2 * sum(math.comb(n, i) for i in range(low + 1)), 2**n)
    got = binomial_two_sided_half(b, n)
    assert got == (1.0 if 2 * b == n else float(min(Fraction(1), exact)))
    assert got == pytest.approx(scipy.stats.binomtest(b, n, 0.5).pvalue, rel=1e-12)


def test_binomial_is_correctly_rounded_where_scipy_is_not() -> None:
    # 4 of 30: 2 * (1 + 30 + 435 + 4060 + 27405) / 2^30, rounded once. scipy gives
    # 5.9476122260093696e-05, an ulp away, as on most counts (measured: 293,412 of 321,200 pairs
    # k ≤ n ≤ 800 differ, by at most 8e-14 relative).
    assert binomial_two_sided_half(4, 30) == float(Fraction(2 * 31931, 2**30)) == 5.947612226009369e-05
    assert scipy.stats.binomtest(4, 30, 0.5).pvalue != binomial_two_sided_half(4, 30)


@pytest.mark.parametrize(
    ("n", "n_resamples", "confidence", "seed", "kind"),
    [
        (2, 2000, 0.95, 0, "uniform"),
        (7, 999, 0.9, 3, "halves"),
        (40, 10_000, 0.95, 11, "rounded"),
        (401, 2000, 0.5, 5, "uniform"),
        (2500, 2000, 0.95, 1, "halves"),
        (3001, 3, 0.99, 2, "difference"),
    ],
)
def test_bootstrap_is_scipys_to_the_last_bit(
    n: int, n_resamples: int, confidence: float, seed: int, kind: str
) -> None:
    # The interval scipy.stats.bootstrap gives for the same draws, without importing scipy.stats.
    rng = np.random.default_rng(n)
    deltas = {
        "uniform": rng.random(n),
        "halves": rng.integers(0, 3, n) / 2.0,
        "rounded": np.round(rng.normal(size=n), 2),
        "difference": rng.random(n) - rng.random(n),
    }[kind]
    ci = paired_bootstrap_ci(
        [(0.0, d) for d in deltas.tolist()], n_resamples=n_resamples, confidence=confidence, seed=seed
    )
    reference = scipy.stats.bootstrap(
        (deltas,),
        np.mean,
        n_resamples=n_resamples,
        confidence_level=confidence,
        method="percentile",
        vectorized=True,
        batch=max(1, 1_000_000 // n),
        rng=np.random.default_rng(seed),
    ).confidence_interval
    assert (ci.low, ci.high) == (float(reference.low), float(reference.high))


def test_binomial_rejects_bad_counts() -> None:
    with pytest.raises(ValueError):
        binomial_two_sided_half(0, 0)
    with pytest.raises(ValueError):
        binomial_two_sided_half(5, 4)


def test_pair_by_key_keeps_shared_scenarios() -> None:
    a = {"s1": True, "s2": False, "s3": True}
    b = {"s3": False, "s1": True, "s4": True}
    assert pair_by_key(a, b) == [(True, True), (True, False)]


def test_bootstrap_two_values_by_hand() -> None:
    # Deltas [0, 1]: a resample of 2 has mean 0 (p 1/4), 0.5 (p 1/2) or 1 (p 1/4), so the
    # 2.5% and 97.5% percentiles of 10 000 resampled means are 0 and 1.
    ci = paired_bootstrap_ci([(0.5, 0.5), (0.2, 1.2)], n_resamples=10_000, seed=7)
    assert (ci.mean_delta, ci.low, ci.high, ci.n) == (0.5, 0.0, 1.0, 2)
    assert (ci.confidence, ci.n_resamples, ci.seed) == (0.95, 10_000, 7)


def sample_pairs(n: int, seed: int) -> list[tuple[float, float]]:
    rng = np.random.default_rng(seed)
    first = rng.uniform(0.3, 0.8, n)
    second = first + rng.normal(0.05, 0.1, n)
    return list(zip(first.tolist(), second.tolist(), strict=True))


def test_bootstrap_is_reproducible_and_seed_dependent() -> None:
    pairs = sample_pairs(25, seed=1)
    assert paired_bootstrap_ci(pairs, seed=3) == paired_bootstrap_ci(pairs, seed=3)
    assert paired_bootstrap_ci(pairs, seed=3) != paired_bootstrap_ci(pairs, seed=4)


def test_bootstrap_agrees_with_scipy_and_normal_theory() -> None:
    pairs = sample_pairs(40, seed=2)
    deltas = np.array([b - a for a, b in pairs])
    ci = paired_bootstrap_ci(pairs, n_resamples=20_000, seed=0)
    assert ci.mean_delta == pytest.approx(float(deltas.mean()))
    reference = scipy.stats.bootstrap(
        (deltas,), np.mean, n_resamples=20_000, method="percentile", rng=np.random.default_rng(99)
    ).confidence_interval
    assert ci.low == pytest.approx(reference.low, abs=0.005)
    assert ci.high == pytest.approx(reference.high, abs=0.005)
    # Normal theory: mean ± 1.96 · s / sqrt(n) with the plug-in (ddof=0) standard deviation.
    half_width = 1.96 * deltas.std() / math.sqrt(len(deltas))
    assert ci.low == pytest.approx(deltas.mean() - half_width, abs=0.01)
    assert ci.high == pytest.approx(deltas.mean() + half_width, abs=0.01)


def test_bootstrap_wider_at_higher_confidence() -> None:
    pairs = sample_pairs(30, seed=5)
    narrow = paired_bootstrap_ci(pairs, confidence=0.5, seed=0)
    wide = paired_bootstrap_ci(pairs, confidence=0.99, seed=0)
    assert wide.low < narrow.low < narrow.mean_delta < narrow.high < wide.high


@given(
    st.floats(-1, 1, allow_nan=False),
    st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=20),
    st.integers(0, 2**32),
)
def test_constant_deltas_give_a_point_interval(delta: float, firsts: list[float], seed: int) -> None:
    # (f + delta) - f is delta only up to rounding, so containment is checked to 1e-12.
    ci = paired_bootstrap_ci([(f, f + delta) for f in firsts], n_resamples=50, seed=seed)
    assert ci.low - 1e-12 <= ci.mean_delta <= ci.high + 1e-12
    assert ci.high - ci.low <= 1e-12
    exact = paired_bootstrap_ci([(0.0, delta)] * len(firsts), n_resamples=50, seed=seed)
    assert exact.low == exact.mean_delta == exact.high == delta


@given(st.lists(st.floats(-1, 1, allow_nan=False), min_size=2, max_size=15), st.floats(-1, 1))
def test_bootstrap_shift_moves_interval(deltas: list[float], shift: float) -> None:
    base = paired_bootstrap_ci([(0.0, d) for d in deltas], n_resamples=200, seed=1)
    moved = paired_bootstrap_ci([(0.0, d + shift) for d in deltas], n_resamples=200, seed=1)
    if len({d + shift for d in deltas}) == 1 or len(set(deltas)) == 1:
        return
    assert moved.low == pytest.approx(base.low + shift, abs=1e-9)
    assert moved.high == pytest.approx(base.high + shift, abs=1e-9)


def test_bootstrap_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="at least one pair"):
        paired_bootstrap_ci([])
    with pytest.raises(ValueError, match="n_resamples"):
        paired_bootstrap_ci([(0.0, 1.0)], n_resamples=0)
    with pytest.raises(ValueError, match="confidence"):
        paired_bootstrap_ci([(0.0, 1.0)], confidence=1.0)
    with pytest.raises(ValueError, match="finite"):
        paired_bootstrap_ci([(0.0, math.inf), (0.0, 1.0)])


def test_intervals_drawn_ahead_are_the_ones_drawn_when_asked() -> None:
    pairs = sample_pairs(300, seed=4)
    other = sample_pairs(50, seed=5)
    expected = [paired_bootstrap_ci(pairs, n_resamples=2000, seed=s) for s in (0, 1)]
    expected.append(paired_bootstrap_ci(other, n_resamples=500, seed=2))
    # The second request asks for another seed than the call: that call draws its own.
    requests = [(pairs, 2000, 0), (pairs, 2000, 9), ([(0.0, 1.0)] * 3, 10, 0)]
    with ThreadPoolExecutor(max_workers=1) as pool, intervals_ahead(pool, requests):
        got = [paired_bootstrap_ci(pairs, n_resamples=2000, seed=s) for s in (0, 1)]
        got.append(paired_bootstrap_ci(other, n_resamples=500, seed=2))
    assert got == expected


def test_bootstraps_sharing_their_resamples_draw_the_intervals_each_would_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Same length, seed and resamples: drawn together in one job, each is the interval drawn alone.
    several = [sample_pairs(300, seed=s) for s in (4, 5, 6)]
    expected = [paired_bootstrap_ci(p, n_resamples=1500, seed=3) for p in several]
    requests = [(p, 1500, 3) for p in several] + [(several[0], 1500, 3)]  # a repeat is drawn once

    def not_here(*args: object) -> tuple[float, float]:
        raise AssertionError("drawn when asked, not ahead")

    monkeypatch.setattr(paired, "_percentile_interval", not_here)
    with ThreadPoolExecutor(max_workers=1) as pool, intervals_ahead(pool, requests):
        got = [paired_bootstrap_ci(p, n_resamples=1500, seed=3) for p in several]
    assert got == expected
    assert len({(ci.low, ci.high) for ci in got}) == 3
