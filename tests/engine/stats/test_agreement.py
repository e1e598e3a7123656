from __future__ import annotations

import math

import pytest
import scipy.stats
from hypothesis import assume, given
from hypothesis import strategies as st

from proctor.engine.stats import (
    agreement_with_labels,
    kendall_tau_b,
    majority_vote,
    spearman_rho,
)


def test_majority_vote() -> None:
    assert majority_vote([True, True, False]).verdict is True
    assert majority_vote([True, False, False]).verdict is False
    vote = majority_vote([True, None, False, False])
    assert (vote.verdict, vote.passes, vote.fails, vote.abstained, vote.tied) == (False, 1, 2, 1, False)


def test_majority_vote_ties_and_abstentions() -> None:
    tied = majority_vote([True, False])
    assert (tied.verdict, tied.tied) == (True, True)  # "at least half" passes, as in LiveMCPBench
    assert majority_vote([True, False, None], tie=False).verdict is False
    nobody = majority_vote([None, None])
    assert (nobody.verdict, nobody.abstained) == (None, 2)
    assert majority_vote([]).verdict is None


def test_agreement_and_kappa_by_hand() -> None:
    judge = [True, True, True, False, False, True, False, True, True, True]
    human = [True, True, False, False, False, True, True, True, True, False]
    result = agreement_with_labels(judge, human)
    # Disagreements at positions 3, 7, 10: observed agreement 7/10.
    # Judge says yes 7/10, human 6/10: chance agreement 0.7·0.6 + 0.3·0.4 = 0.54.
    # κ = (0.70 - 0.54) / (1 - 0.54) = 0.16 / 0.46
    assert (result.n, result.agreed, result.excluded) == (10, 7, 0)
    assert result.rate == pytest.approx(0.7)
    assert result.kappa == pytest.approx(0.16 / 0.46)


def test_kappa_multiclass_by_hand() -> None:
    judge = ["a", "b", "c", "a"]
    human = ["a", "b", "a", "c"]
    # observed 2/4; judge a:2 b:1 c:1, human a:2 b:1 c:1: chance (2·2 + 1·1 + 1·1)/16 = 6/16
    # κ = (0.5 - 0.375) / 0.625 = 0.2
    assert agreement_with_labels(judge, human).kappa == pytest.approx(0.2)


def test_agreement_degenerate_cases() -> None:
    same = agreement_with_labels([True, True], [True, True])
    assert (same.rate, same.kappa) == (1.0, None)
    skipped = agreement_with_labels([True, None, False], [True, True, None])
    assert (skipped.n, skipped.agreed, skipped.excluded) == (1, 1, 2)
    nothing = agreement_with_labels([None], [True])
    assert (nothing.n, nothing.rate, nothing.kappa) == (0, None, None)
    with pytest.raises(ValueError, match="differ in length"):
        agreement_with_labels([True], [True, False])
    # Perfect disagreement with balanced labels: κ = (0 - 0.5) / 0.5 = -1.
    assert agreement_with_labels([True, False], [False, True]).kappa == pytest.approx(-1.0)


def test_kendall_by_hand() -> None:
    # One discordant pair, (2,3), out of 6: (5 - 1) / 6.
    result = kendall_tau_b([1, 2, 3, 4], [1, 3, 2, 4])
    assert result.value == pytest.approx(4 / 6)
    assert result.n == 4
    # x = [1,1,2,3], y = [1,2,2,3]: pairs (0,1) tied in x, (1,2) tied in y, the other 4 concordant.
    # τ-b = 4 / sqrt((6 - 1)(6 - 1)) = 0.8
    assert kendall_tau_b([1, 1, 2, 3], [1, 2, 2, 3]).value == pytest.approx(0.8)
    assert kendall_tau_b([1, 2, 3], [3, 2, 1]).value == pytest.approx(-1.0)


def test_kendall_undefined() -> None:
    constant = kendall_tau_b([1, 1, 1], [1, 2, 3])
    assert constant.value is None
    assert constant.reason is not None and "constant" in constant.reason
    assert kendall_tau_b([1], [2]).value is None
    with pytest.raises(ValueError, match="differ in length"):
        kendall_tau_b([1, 2], [1])
    with pytest.raises(ValueError, match="finite"):
        kendall_tau_b([1, math.nan], [1, 2])


def test_spearman_by_hand() -> None:
    # Ranks y = [1,3,2,5,4], d = [0,-1,1,-1,1], Σd² = 4: ρ = 1 - 6·4 / (5·(25 - 1)) = 0.8
    assert spearman_rho([10, 20, 30, 40, 50], [1, 3, 2, 5, 4]).value == pytest.approx(0.8)
    undefined = spearman_rho([1, 2, 3], [5, 5, 5])
    assert undefined.value is None
    assert undefined.reason is not None and "constant" in undefined.reason


score_vectors = st.integers(2, 25).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 4), min_size=n, max_size=n),
        st.lists(st.integers(0, 4), min_size=n, max_size=n),
    )
)


@given(score_vectors)
def test_kendall_matches_scipy(vectors: tuple[list[int], list[int]]) -> None:
    x, y = vectors
    assume(len(set(x)) > 1 and len(set(y)) > 1)
    tau = kendall_tau_b(x, y).value
    assert tau is not None
    assert -1.0 <= tau <= 1.0
    assert tau == pytest.approx(scipy.stats.kendalltau(x, y, variant="b").statistic, abs=1e-12)


@given(score_vectors)
def test_spearman_matches_scipy(vectors: tuple[list[int], list[int]]) -> None:
    x, y = vectors
    assume(len(set(x)) > 1 and len(set(y)) > 1)
    rho = spearman_rho(x, y).value
    assert rho is not None
    assert -1.0 <= rho <= 1.0
    assert rho == pytest.approx(scipy.stats.spearmanr(x, y).statistic, abs=1e-12)


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=30))
def test_self_correlation_is_one(x: list[float]) -> None:
    assume(len(set(x)) > 1)
    assert kendall_tau_b(x, x).value == pytest.approx(1.0)
    assert spearman_rho(x, x).value == pytest.approx(1.0)
