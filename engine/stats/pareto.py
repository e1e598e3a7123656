"""The cost/score Pareto frontier across arm × model points.

A point is worth considering only if no other point is at least as cheap and at least as good
and strictly better on one of the two. That is the whole frontier: it does not weigh cost
against score, it only discards what is beaten on both.

Ties: two points with the same cost and the same score do not dominate each other, so both stay
on the frontier (or both are dominated by a third point). A point whose cost is ``None``
(unknown, e.g. a model missing from the price table) cannot be placed on the cost axis; it is
neither on the frontier nor dominated, and is returned in ``unpriced`` so a view can list it
instead of silently dropping it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class CostScorePoint:
    arm: str
    model: str
    cost: float | None
    score: float


@dataclass(frozen=True)
class ParetoFrontier:
    """``frontier`` is sorted by cost then descending score; the other tuples keep input order."""

    frontier: tuple[CostScorePoint, ...]
    dominated: tuple[CostScorePoint, ...]
    unpriced: tuple[CostScorePoint, ...]


def dominates(a: CostScorePoint, b: CostScorePoint) -> bool:
    """True if ``a`` costs no more and scores no less than ``b``, and is strictly better in one.

    Points with an unknown cost dominate nothing and are dominated by nothing.
    """
    if a.cost is None or b.cost is None:
        return False
    no_worse = a.cost <= b.cost and a.score >= b.score
    return no_worse and (a.cost < b.cost or a.score > b.score)


def pareto_frontier(points: Iterable[CostScorePoint]) -> ParetoFrontier:
    """Split points into the frontier (minimize cost, maximize score), dominated and unpriced."""
    priced: list[CostScorePoint] = []
    unpriced: list[CostScorePoint] = []
    for point in points:
        if not math.isfinite(point.score) or (point.cost is not None and not math.isfinite(point.cost)):
            raise ValueError(f"non-finite cost or score in {point}")
        (unpriced if point.cost is None else priced).append(point)
    frontier: list[CostScorePoint] = []
    dominated: list[CostScorePoint] = []
    for point in priced:
        beaten = any(dominates(other, point) for other in priced)
        (dominated if beaten else frontier).append(point)
    frontier.sort(key=lambda p: (p.cost, -p.score, p.arm, p.model))
    return ParetoFrontier(tuple(frontier), tuple(dominated), tuple(unpriced))
