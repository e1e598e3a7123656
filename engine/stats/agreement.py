"""How far judges can be trusted: panel majority, agreement with humans, rank correlations.

LiveMCPBench validates its LLM judge by the agreement rate with human labels and compares two
judges by Kendall τ-b over their scores; the anchors gate uses Spearman ρ against gold scores.
Raw agreement is inflated when one label dominates, so Cohen's κ (agreement beyond chance) is
reported beside it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class PanelVote:
    """Majority of a judge panel on one pass/fail question.

    ``verdict`` is ``None`` when every judge abstained (a judge error is neither a pass nor a
    fail). ``tied`` marks an even split, resolved to the panel's tie rule.
    """

    verdict: bool | None
    passes: int
    fails: int
    abstained: int
    tied: bool


def majority_vote(votes: Sequence[bool | None], *, tie: bool = True) -> PanelVote:
    """Majority of the non-abstaining votes; an even split gives ``tie``.

    The default ``tie=True`` follows LiveMCPBench, which counts an item as passed when at least
    half of the panel says so. ``None`` votes (judge errors) are abstentions.
    """
    passes = sum(1 for v in votes if v is True)
    fails = sum(1 for v in votes if v is False)
    abstained = len(votes) - passes - fails
    if passes + fails == 0:
        return PanelVote(None, 0, 0, abstained, tied=False)
    tied = passes == fails
    verdict = tie if tied else passes > fails
    return PanelVote(verdict, passes, fails, abstained, tied)


@dataclass(frozen=True)
class Agreement:
    """Agreement of a judge with reference (human) labels.

    ``n`` counts the items compared; ``excluded`` the items skipped because one side had no
    label (``None``). ``kappa`` is ``None`` when chance agreement is 1 (both sides used one and
    the same label throughout) or nothing was compared.
    """

    n: int
    agreed: int
    rate: float | None
    kappa: float | None
    excluded: int


def agreement_with_labels(judge: Sequence[Hashable | None], human: Sequence[Hashable | None]) -> Agreement:
    """Agreement rate and Cohen's κ between aligned label sequences (any hashable labels)."""
    if len(judge) != len(human):
        raise ValueError(f"label sequences differ in length: {len(judge)} judge vs {len(human)} human")
    pairs = [(j, h) for j, h in zip(judge, human, strict=True) if j is not None and h is not None]
    excluded = len(judge) - len(pairs)
    n = len(pairs)
    if n == 0:
        return Agreement(0, 0, None, None, excluded)
    agreed = sum(1 for j, h in pairs if j == h)
    observed = agreed / n
    judge_counts = Counter(j for j, _ in pairs)
    human_counts = Counter(h for _, h in pairs)
    chance_pairs = sum(judge_counts[label] * human_counts[label] for label in judge_counts)
    if chance_pairs == n * n:
        return Agreement(n, agreed, observed, None, excluded)
    expected = chance_pairs / (n * n)
    kappa = (observed - expected) / (1 - expected)
    return Agreement(n, agreed, observed, kappa, excluded)


@dataclass(frozen=True)
class Correlation:
    """A rank correlation; ``value`` is ``None`` with a ``reason`` when it is undefined."""

    value: float | None
    n: int
    reason: str | None = None


def _check_pair(x: Sequence[float], y: Sequence[float]) -> None:
    if len(x) != len(y):
        raise ValueError(f"score vectors differ in length: {len(x)} vs {len(y)}")
    if not all(math.isfinite(v) for v in (*x, *y)):
        raise ValueError("score vectors must be finite")


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> Correlation:
    """Kendall τ-b (scipy.stats.kendalltau, variant b): ties in either vector are corrected for.

    Undefined, with the reason, when either vector is constant or has fewer than two items.
    """
    _check_pair(x, y)
    n = len(x)
    if n < 2:
        return Correlation(None, n, "needs at least 2 items")
    if len(set(x)) == 1 or len(set(y)) == 1:
        return Correlation(None, n, "a score vector is constant: τ-b is undefined")
    from scipy.stats import kendalltau  # imported here: scipy costs the console's start-up otherwise

    return Correlation(float(kendalltau(x, y, variant="b").statistic), n)


def spearman_rho(x: Sequence[float], y: Sequence[float]) -> Correlation:
    """Spearman ρ (scipy.stats.spearmanr: Pearson correlation of average ranks). Undefined for constant vectors."""
    _check_pair(x, y)
    n = len(x)
    if n < 2:
        return Correlation(None, n, "needs at least 2 items")
    if len(set(x)) == 1 or len(set(y)) == 1:
        return Correlation(None, n, "a score vector is constant: ρ is undefined")
    from scipy.stats import spearmanr

    return Correlation(max(-1.0, min(1.0, float(spearmanr(x, y).statistic))), n)
