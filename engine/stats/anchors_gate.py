"""The Spearman half of anchor verification: does the current judge still rank the anchors like
the frozen gold scores?

A rubric or judge change is accepted only if ρ between its scores and the hand-graded gold
scores of the held-out anchors is at least the threshold (0.85 by default). The gate fails, with
a reason a person can act on, whenever ρ cannot be trusted: too few anchors, anchors missing
on one side, or a constant score vector (ρ undefined). It never passes by default.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from proctor.engine.stats.agreement import spearman_rho

DEFAULT_THRESHOLD = 0.85
MIN_ANCHORS = 3
_TOLERANCE = 1e-12


@dataclass(frozen=True)
class GateResult:
    rho: float | None
    n: int
    threshold: float
    passed: bool
    reason: str


def _names(keys: set[str]) -> str:
    return ", ".join(sorted(keys))


def spearman_gate(
    current_scores: Mapping[str, float],
    gold_scores: Mapping[str, float],
    threshold: float = DEFAULT_THRESHOLD,
) -> GateResult:
    """Compare current and gold scores keyed by anchor id; pass iff ρ ≥ threshold.

    ρ equal to the threshold up to 1e-12 (float rounding) passes.
    """
    current_ids, gold_ids = set(current_scores), set(gold_scores)
    if current_ids != gold_ids:
        problems = []
        if gold_ids - current_ids:
            problems.append(f"no current score for {_names(gold_ids - current_ids)}")
        if current_ids - gold_ids:
            problems.append(f"no gold score for {_names(current_ids - gold_ids)}")
        return GateResult(None, len(current_ids & gold_ids), threshold, False, "; ".join(problems))
    ids = sorted(gold_ids)
    n = len(ids)
    if n < MIN_ANCHORS:
        return GateResult(None, n, threshold, False, f"needs at least {MIN_ANCHORS} anchors, got {n}")
    current = [current_scores[i] for i in ids]
    gold = [gold_scores[i] for i in ids]
    not_finite = {i for i in ids if not (math.isfinite(current_scores[i]) and math.isfinite(gold_scores[i]))}
    if not_finite:
        return GateResult(None, n, threshold, False, f"non-finite score for {_names(not_finite)}")
    correlation = spearman_rho(current, gold)
    if correlation.value is None:
        constant = [name for name, scores in (("current", current), ("gold", gold)) if len(set(scores)) == 1]
        reason = f"{' and '.join(constant)} scores are constant: Spearman ρ is undefined"
        return GateResult(None, n, threshold, False, reason)
    rho = correlation.value
    passed = rho >= threshold - _TOLERANCE
    relation = ">=" if passed else "<"
    verdict = "passed" if passed else "failed"
    return GateResult(
        rho, n, threshold, passed, f"{verdict}: ρ = {rho:.4f} {relation} {threshold} over {n} anchors"
    )
