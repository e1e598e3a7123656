from __future__ import annotations

import math

import pytest
import scipy.stats

from proctor.engine.stats import spearman_gate

GOLD = {"a1": 0.1, "a2": 0.3, "a3": 0.5, "a4": 0.7, "a5": 0.9}


def test_identical_order_passes() -> None:
    result = spearman_gate({k: v / 2 for k, v in GOLD.items()}, GOLD)
    assert result.passed
    assert result.rho == pytest.approx(1.0)
    assert (result.n, result.threshold) == (5, 0.85)
    assert result.reason.startswith("passed: ρ = 1.0000 >= 0.85")


def test_one_adjacent_swap_passes_two_fail() -> None:
    # One swap: Σd² = 2, ρ = 1 - 6·2/(5·24) = 0.9 >= 0.85.
    one_swap = {"a1": 0.2, "a2": 0.1, "a3": 0.5, "a4": 0.7, "a5": 0.9}
    assert spearman_gate(one_swap, GOLD).rho == pytest.approx(0.9)
    assert spearman_gate(one_swap, GOLD).passed
    # Two swaps: Σd² = 4, ρ = 1 - 24/120 = 0.8 < 0.85.
    two_swaps = {"a1": 0.2, "a2": 0.1, "a3": 0.5, "a4": 0.9, "a5": 0.7}
    failed = spearman_gate(two_swaps, GOLD)
    assert failed.rho == pytest.approx(0.8)
    assert not failed.passed
    assert failed.reason == "failed: ρ = 0.8000 < 0.85 over 5 anchors"
    assert failed.rho == pytest.approx(
        scipy.stats.spearmanr([two_swaps[k] for k in sorted(GOLD)], [GOLD[k] for k in sorted(GOLD)]).statistic
    )


def test_rho_equal_to_threshold_passes() -> None:
    two_swaps = {"a1": 0.2, "a2": 0.1, "a3": 0.5, "a4": 0.9, "a5": 0.7}
    assert spearman_gate(two_swaps, GOLD, threshold=0.8).passed


def test_scores_are_matched_by_anchor_id_not_position() -> None:
    reordered = dict(reversed(list(GOLD.items())))
    assert spearman_gate(reordered, GOLD).rho == pytest.approx(1.0)


def test_too_few_anchors_fail() -> None:
    result = spearman_gate({"a": 0.1, "b": 0.2}, {"a": 0.1, "b": 0.2})
    assert not result.passed
    assert result.rho is None
    assert result.reason == "needs at least 3 anchors, got 2"


def test_constant_vectors_fail() -> None:
    flat = {k: 0.5 for k in GOLD}
    result = spearman_gate(flat, GOLD)
    assert (result.passed, result.rho) == (False, None)
    assert result.reason == "current scores are constant: Spearman ρ is undefined"
    both = spearman_gate(flat, flat)
    assert both.reason == "current and gold scores are constant: Spearman ρ is undefined"
    assert not both.passed


def test_mismatched_anchor_ids_fail() -> None:
    current = {"a1": 0.1, "a2": 0.3, "a3": 0.5, "a4": 0.7, "extra": 0.2}
    result = spearman_gate(current, GOLD)
    assert not result.passed
    assert result.n == 4
    assert result.reason == "no current score for a5; no gold score for extra"


def test_non_finite_scores_fail() -> None:
    current = {**GOLD, "a3": math.nan}
    result = spearman_gate(current, GOLD)
    assert not result.passed
    assert result.reason == "non-finite score for a3"
