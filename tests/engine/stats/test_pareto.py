from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from proctor.engine.stats import CostScorePoint, dominates, pareto_frontier


def p(arm: str, cost: float | None, score: float) -> CostScorePoint:
    return CostScorePoint(arm, "m", cost, score)


def test_frontier_by_hand() -> None:
    cheap, a, a_twin, best = p("cheap", 0.5, 0.5), p("a", 1.0, 0.7), p("a2", 1.0, 0.7), p("best", 2.0, 0.9)
    same_cost_worse = p("c", 2.0, 0.8)  # B costs the same and scores more
    pricier_worse = p("e", 3.0, 0.85)  # B is cheaper and scores more
    worse_and_cheap = p("f", 0.5, 0.4)  # "cheap" costs the same and scores more
    unknown = p("u", None, 0.99)
    result = pareto_frontier(
        [best, same_cost_worse, a, unknown, pricier_worse, cheap, a_twin, worse_and_cheap]
    )
    # Identical points (a, a2) do not dominate each other: both stay.
    assert [x.arm for x in result.frontier] == ["cheap", "a", "a2", "best"]
    assert [x.arm for x in result.dominated] == ["c", "e", "f"]
    assert result.unpriced == (unknown,)


def test_dominates_rules() -> None:
    assert dominates(p("x", 1.0, 0.5), p("y", 1.0, 0.4))
    assert dominates(p("x", 0.9, 0.5), p("y", 1.0, 0.5))
    assert not dominates(p("x", 1.0, 0.5), p("y", 1.0, 0.5))
    assert not dominates(p("x", 0.5, 0.4), p("y", 1.0, 0.5))
    assert not dominates(p("x", None, 1.0), p("y", 1.0, 0.0))
    assert not dominates(p("x", 0.0, 1.0), p("y", None, 0.0))


def test_empty_and_invalid() -> None:
    empty = pareto_frontier([])
    assert (empty.frontier, empty.dominated, empty.unpriced) == ((), (), ())
    with pytest.raises(ValueError, match="non-finite"):
        pareto_frontier([p("x", math.nan, 0.5)])
    with pytest.raises(ValueError, match="non-finite"):
        pareto_frontier([p("x", 1.0, math.inf)])


points_strategy = st.lists(
    st.builds(
        p,
        st.sampled_from(["a", "b", "c"]),
        st.one_of(st.none(), st.sampled_from([0.0, 0.5, 1.0, 2.0]), st.floats(0, 10)),
        st.one_of(st.sampled_from([0.0, 0.5, 1.0]), st.floats(0, 1)),
    ),
    max_size=15,
)


@given(points_strategy)
def test_frontier_properties(points: list[CostScorePoint]) -> None:
    result = pareto_frontier(points)
    assert len(result.frontier) + len(result.dominated) + len(result.unpriced) == len(points)
    for point in result.frontier:
        assert not any(dominates(other, point) for other in points)
    for point in result.dominated:
        assert any(dominates(front, point) for front in result.frontier)
    costs = [(x.cost, -x.score) for x in result.frontier]
    assert costs == sorted(costs)
    # Along the frontier, paying more must buy a strictly higher score.
    for lower, higher in zip(result.frontier, result.frontier[1:], strict=False):
        assert lower.cost is not None and higher.cost is not None
        assert higher.cost == lower.cost or higher.score > lower.score
