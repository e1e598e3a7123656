from __future__ import annotations

import itertools
import math
import statistics
from random import Random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from proctor.engine.stats.variance import (
    JudgeScoreRow,
    RankedScoreRow,
    ScenarioMean,
    cell_spread,
    judge_variance,
    layer_variance,
    means_by_pass,
    population_sd,
    rank_arms,
    sample_sd,
    scenario_means,
)


def row(
    scenario: str, step: int, criterion: str, pass_no: int, score: float, arm: str = "mcp"
) -> JudgeScoreRow:
    return JudgeScoreRow(arm, "offline:a", scenario, step, criterion, pass_no, score)


# s1 has two steps; s2 has one step whose two criteria move in opposite directions.
ROWS = [
    row("s1", 0, "c1", 1, 0.8),
    row("s1", 0, "c2", 1, 0.6),
    row("s1", 1, "c1", 1, 1.0),
    row("s1", 0, "c1", 2, 0.6),
    row("s1", 0, "c2", 2, 0.6),
    row("s1", 1, "c1", 2, 0.7),
    row("s2", 0, "c1", 1, 0.9),
    row("s2", 0, "c2", 1, 0.5),
    row("s2", 0, "c1", 2, 0.7),
    row("s2", 0, "c2", 2, 0.7),
]


def test_layers_by_hand() -> None:
    (result,) = judge_variance(ROWS, sd="population")
    assert (result.arm, result.model) == ("mcp", "offline:a")

    # Population σ over two passes is |a - b| / 2.
    # s1/0/c1: |0.8-0.6|/2 = 0.10   s1/0/c2: 0   s1/1/c1: |1.0-0.7|/2 = 0.15
    # s2/0/c1: |0.9-0.7|/2 = 0.10   s2/0/c2: |0.5-0.7|/2 = 0.10
    crit = {cell.key: cell.sd for cell in result.criterion.cells}
    assert crit == pytest.approx(
        {
            ("s1", 0, "c1"): 0.10,
            ("s1", 0, "c2"): 0.0,
            ("s1", 1, "c1"): 0.15,
            ("s2", 0, "c1"): 0.10,
            ("s2", 0, "c2"): 0.10,
        }
    )
    assert result.criterion.mean_sd == pytest.approx((0.10 + 0 + 0.15 + 0.10 + 0.10) / 5)
    assert result.criterion.max_sd == pytest.approx(0.15)

    # Steps: s1/0 = mean(0.8, 0.6) = 0.7 vs mean(0.6, 0.6) = 0.6 -> 0.05; s1/1 = 1.0 vs 0.7 -> 0.15;
    # s2/0 = mean(0.9, 0.5) = 0.7 vs mean(0.7, 0.7) = 0.7 -> 0 (the criteria's noise cancels).
    step = {cell.key: cell.sd for cell in result.step.cells}
    assert step == pytest.approx({("s1", 0): 0.05, ("s1", 1): 0.15, ("s2", 0): 0.0})
    assert result.step.mean_sd == pytest.approx((0.05 + 0.15 + 0.0) / 3)

    # Scenarios: s1 = mean(0.7, 1.0) = 0.85 vs mean(0.6, 0.7) = 0.65 -> 0.10, mean 0.75; s2 -> 0, mean 0.7.
    scen = {cell.key: (cell.sd, cell.mean, cell.n_passes) for cell in result.scenario.cells}
    assert scen[("s1",)] == pytest.approx((0.10, 0.75, 2))
    assert scen[("s2",)] == pytest.approx((0.0, 0.7, 2))
    assert result.scenario.mean_sd == pytest.approx(0.05)


def test_the_default_sd_is_the_sample_sd_of_the_first_sources_reference_values() -> None:
    # Two passes 0.10 apart: the sample SD is 0.10 / sqrt(2) = 0.0707 (luuuc/sense publishes
    # "max 0.071" for its criteria), the population SD 0.05.
    rows = [row("s", 0, "c", 1, 0.8), row("s", 0, "c", 2, 0.7)]
    (sample,) = judge_variance(rows)
    (population,) = judge_variance(rows, sd="population")
    assert sample.criterion.max_sd == pytest.approx(0.1 / math.sqrt(2))
    assert population.criterion.max_sd == pytest.approx(0.05)
    assert sample_sd([0.8, 0.7]) == pytest.approx(statistics.stdev([0.8, 0.7]))


def test_a_steps_ranked_score_is_its_spread_while_the_criteria_agree() -> None:
    """The judge's overall score moves 0.04 between passes; every criterion scores 0.7 twice."""
    rows = [row("s", 0, c, p, 0.7) for c in ("c1", "c2") for p in (1, 2)]
    ranked = [
        RankedScoreRow("mcp", "offline:a", "s", 0, 1, 0.70),
        RankedScoreRow("mcp", "offline:a", "s", 0, 2, 0.74),
    ]
    (result,) = judge_variance(rows, ranked)
    assert result.criterion.max_sd == 0.0
    assert result.step.max_sd == pytest.approx(0.04 / math.sqrt(2))
    assert result.scenario.cells[0].mean == pytest.approx(0.72)
    assert result.scenario.max_sd == pytest.approx(0.04 / math.sqrt(2))
    (criteria_only,) = judge_variance(rows)  # what the layers were made of before: the criteria's mean
    assert criteria_only.step.max_sd == 0.0


def test_ranked_scores_give_a_step_without_criteria_its_cells() -> None:
    ranked = [RankedScoreRow("a", "m", "s", 0, p, v) for p, v in ((1, 0.2), (2, 0.6))]
    (result,) = judge_variance([], ranked, sd="population")
    assert (result.criterion.cells, result.step.max_sd, result.scenario.max_sd) == (
        (),
        pytest.approx(0.2),
        pytest.approx(0.2),
    )
    with pytest.raises(ValueError, match="duplicate ranked score"):
        judge_variance([], [*ranked, ranked[0]])
    with pytest.raises(ValueError, match="non-finite"):
        judge_variance([], [RankedScoreRow("a", "m", "s", 0, 1, math.inf)])


@given(st.lists(st.floats(0, 1), min_size=2, max_size=8))
def test_sample_and_population_sd_agree_with_the_statistics_module(scores: list[float]) -> None:
    assert sample_sd(scores) == pytest.approx(statistics.stdev(scores), abs=1e-12)
    assert population_sd(scores) == pytest.approx(statistics.pstdev(scores), abs=1e-12)
    assert cell_spread(("c",), dict(enumerate(scores))).sd == sample_sd(scores)


def test_cells_are_sorted_by_key_with_numeric_steps() -> None:
    rows = [row("s", step, "c", p, 0.5) for step in (10, 2) for p in (1, 2)]
    (result,) = judge_variance(rows)
    assert [cell.key for cell in result.step.cells] == [("s", 2), ("s", 10)]


def test_population_sd_matches_statistics_pstdev() -> None:
    # [0.2, 0.4, 0.6]: mean 0.4, variance (0.04 + 0 + 0.04) / 3, σ = 0.16330
    assert population_sd([0.2, 0.4, 0.6]) == pytest.approx(math.sqrt(0.08 / 3))
    assert population_sd([0.2, 0.4, 0.6]) == pytest.approx(statistics.pstdev([0.2, 0.4, 0.6]))


def test_one_pass_gives_none_not_zero() -> None:
    (result,) = judge_variance([row("s", 0, "c1", 1, 0.4), row("s", 0, "c2", 1, 0.9)])
    assert population_sd([0.4]) is None
    assert all(cell.sd is None for cell in result.criterion.cells)
    for layer in (result.criterion, result.step, result.scenario):
        assert layer.mean_sd is None
        assert layer.max_sd is None
    assert result.scenario.cells[0].mean == pytest.approx(0.65)


def test_step_score_uses_the_criteria_each_pass_scored() -> None:
    # Pass 2 lost criterion c2 (judge error): its step score is c1 alone, 0.4; pass 1 is (0.6+1.0)/2 = 0.8.
    rows = [row("s", 0, "c1", 1, 0.6), row("s", 0, "c2", 1, 1.0), row("s", 0, "c1", 2, 0.4)]
    (result,) = judge_variance(rows, sd="population")
    assert result.step.cells[0].sd == pytest.approx(0.2)
    assert [c.n_passes for c in result.criterion.cells] == [2, 1]


def test_groups_per_arm_and_model_sorted() -> None:
    rows = [row("s", 0, "c", 1, 0.5, arm="mcp"), row("s", 0, "c", 1, 0.5, arm="baseline")]
    rows.append(JudgeScoreRow("baseline", "anthropic:x", "s", 0, "c", 1, 0.1))
    assert [(r.arm, r.model) for r in judge_variance(rows)] == [
        ("baseline", "anthropic:x"),
        ("baseline", "offline:a"),
        ("mcp", "offline:a"),
    ]


def test_rejects_duplicates_and_non_finite() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        judge_variance([row("s", 0, "c", 1, 0.5), row("s", 0, "c", 1, 0.6)])
    with pytest.raises(ValueError, match="non-finite"):
        judge_variance([row("s", 0, "c", 1, math.nan)])


def test_scenario_means_average_passes() -> None:
    means = scenario_means(ROWS)
    assert [(m.scenario, m.n_passes) for m in means] == [("s1", 2), ("s2", 2)]
    assert [m.mean for m in means] == pytest.approx([0.75, 0.7])


def means(entries: dict[str, float], scenario: str = "s") -> list[ScenarioMean]:
    return [ScenarioMean(arm, "m", scenario, value, 2) for arm, value in entries.items()]


def groups(entries: dict[str, float], floor: float = 0.05) -> list[list[str]]:
    ranking = rank_arms(means(entries), floor=floor)
    return [[e.arm for e in g.entries] for g in ranking.groups]


def test_rank_ties_below_floor() -> None:
    # gaps: A-B 0.03 (tie), B-C 0.07 (difference), C-D 0.04 (tie)
    assert groups({"C": 0.70, "A": 0.80, "D": 0.66, "B": 0.77}) == [["A", "B"], ["C", "D"]]
    ranking = rank_arms(means({"A": 0.8, "B": 0.6}))
    assert [g.rank for g in ranking.groups] == [1, 2]


def test_rank_chains_sub_floor_gaps() -> None:
    # 0.80 -> 0.76 -> 0.72: each gap 0.04 < 0.05, so one group although A and C differ by 0.08.
    assert groups({"A": 0.80, "B": 0.76, "C": 0.72}) == [["A", "B", "C"]]


def test_gap_equal_to_floor_is_a_difference_despite_rounding() -> None:
    assert 0.30 - 0.25 < 0.05  # 0.04999999999999999 in binary floating point
    assert groups({"A": 0.30, "B": 0.25}) == [["A"], ["B"]]
    assert groups({"A": 0.80, "B": 0.75}) == [["A"], ["B"]]
    assert groups({"A": 0.5, "B": 0.4}, floor=0.0) == [["A"], ["B"]]
    assert groups({"A": 0.5, "B": 0.5}, floor=0.0) == [["A", "B"]]


def test_rank_uses_only_shared_scenarios() -> None:
    data = [
        ScenarioMean("A", "m", "s1", 0.9, 2),
        ScenarioMean("A", "m", "s2", 0.1, 2),
        ScenarioMean("B", "m", "s1", 0.5, 2),
    ]
    ranking = rank_arms(data)
    assert ranking.scenarios == ("s1",)
    assert ranking.excluded_scenarios == ("s2",)
    assert [(e.arm, e.mean) for g in ranking.groups for e in g.entries] == [("A", 0.9), ("B", 0.5)]


def test_rank_empty_and_invalid() -> None:
    assert rank_arms([]).groups == ()
    disjoint = [ScenarioMean("A", "m", "s1", 0.9, 2), ScenarioMean("B", "m", "s2", 0.5, 2)]
    assert rank_arms(disjoint).groups == ()
    assert rank_arms(disjoint).excluded_scenarios == ("s1", "s2")
    with pytest.raises(ValueError, match="floor"):
        rank_arms(means({"A": 0.5}), floor=-0.1)
    with pytest.raises(ValueError, match="duplicate"):
        rank_arms(means({"A": 0.5}) + means({"A": 0.6}))


def test_rank_separates_models() -> None:
    data = [ScenarioMean("mcp", "m1", "s", 0.9, 2), ScenarioMean("mcp", "m2", "s", 0.5, 2)]
    assert [(e.arm, e.model) for g in rank_arms(data).groups for e in g.entries] == [
        ("mcp", "m1"),
        ("mcp", "m2"),
    ]


@given(
    st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=12),
    st.floats(0.001, 0.3),
)
def test_rank_groups_respect_floor(values: list[float], floor: float) -> None:
    ranking = rank_arms(means({f"arm{i}": v for i, v in enumerate(values)}), floor=floor)
    ordered = [[e.mean for e in g.entries] for g in ranking.groups]
    assert sum(len(g) for g in ordered) == len(values)
    flat = [m for g in ordered for m in g]
    assert flat == sorted(flat, reverse=True)
    for group in ordered:
        assert all(a - b < floor for a, b in itertools.pairwise(group))
    for upper, lower in itertools.pairwise(ordered):
        assert upper[-1] - lower[0] >= floor - 1e-9


def test_a_layer_summarises_the_cells_that_have_two_passes_or_more() -> None:
    """The console builds its own cells (a trial's overall score, say) and summarises them here."""
    cells = [
        cell_spread(("t1", "j"), {1: 0.2, 2: 0.6}),
        cell_spread(("t2", "j"), {1: 0.5}),
        cell_spread(("t3", "j"), {3: 0.4, 1: 0.1, 2: 0.1}),
    ]
    assert (cells[1].n_passes, cells[1].mean, cells[1].sd) == (1, 0.5, None)
    layer = layer_variance("trial", cells)
    assert layer.measured == 2
    assert layer.mean_sd == pytest.approx(
        (statistics.stdev([0.2, 0.6]) + statistics.stdev([0.1, 0.1, 0.4])) / 2
    )
    assert layer.max_sd == pytest.approx(statistics.stdev([0.2, 0.6]))
    empty = layer_variance("trial", [cell_spread(("t", "j"), {1: 0.3})])
    assert (empty.measured, empty.mean_sd, empty.max_sd) == (0, None, None)


def test_means_by_pass_average_each_pass_over_the_cells_under_one_parent() -> None:
    cells = [(("s", "j", 1), {1: 0.2, 2: 0.4}), (("s", "j", 2), {1: 0.6}), (("u", "j", 3), {2: 1.0})]
    means = means_by_pass(cells, 2)
    assert means == {("s", "j"): {1: pytest.approx(0.4), 2: 0.4}, ("u", "j"): {2: 1.0}}


@given(st.lists(st.floats(0, 1), min_size=1, max_size=8), st.randoms())
def test_a_cell_spread_is_its_sd_whatever_the_order_of_passes(scores: list[float], rnd: Random) -> None:
    passes = list(enumerate(scores, start=1))
    rnd.shuffle(passes)
    assert cell_spread(("c",), dict(passes)).sd == sample_sd(scores)
    cell = cell_spread(("c",), dict(passes), sd="population")
    assert cell.sd == population_sd(scores) and cell.n_passes == len(scores)


def _layers_cell_by_cell(rows: list[JudgeScoreRow]) -> list[tuple[str, str, list[list[object]]]]:
    """``judge_variance`` spelled out with ``means_by_pass`` and ``cell_spread``, one cell at a time."""
    out = []
    for arm, model in sorted({(r.arm, r.model) for r in rows}):
        criteria: dict[tuple[str | int, ...], dict[int, float]] = {}
        for r in rows:
            if (r.arm, r.model) == (arm, model):
                criteria.setdefault((r.scenario, r.step, r.criterion), {})[r.pass_no] = r.score
        steps = means_by_pass(criteria.items(), 2)
        scenarios = means_by_pass(steps.items(), 1)
        layers = [[cell_spread(k, cells[k]) for k in sorted(cells)] for cells in (criteria, steps, scenarios)]
        out.append((arm, model, [list(layer) for layer in layers]))
    return out


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b"]),
            st.sampled_from(["s1", "s2", "s10"]),
            st.integers(0, 2),
            st.sampled_from(["c", "d", "overall"]),
            st.integers(1, 4),
            st.floats(0, 1),
        ),
        max_size=60,
        unique_by=lambda t: t[:5],
    )
)
def test_judge_variance_gives_every_layer_exactly_as_its_cells_one_by_one(
    drawn: list[tuple[str, str, int, str, int, float]],
) -> None:
    rows = [JudgeScoreRow(arm, "m", s, step, c, p, score) for arm, s, step, c, p, score in drawn]
    got = [
        (v.arm, v.model, [list(v.criterion.cells), list(v.step.cells), list(v.scenario.cells)])
        for v in judge_variance(rows)
    ]
    assert got == _layers_cell_by_cell(rows)  # the same floats, bit for bit (σ None with one pass)
