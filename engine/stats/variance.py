"""Judge variance by layer (criterion, step, scenario) and a ranking that respects the noise floor.

LLM judges are stochastic: the same transcript judged twice gets different criterion scores.
Averaging criteria into a step score, and steps into a scenario score, cancels part of that
noise, so each layer has its own spread. Ranking uses scenario-level means only, and a delta
between arms smaller than the variance floor is reported as a tie rather than a win.

σ is the *population* standard deviation across passes (divide by the number of passes), the
convention of the benchmark article the default floor (0.05) and its reference values come from.
With two passes it is half the gap between them. With a single pass there is no spread to
measure, so σ is ``None``, never 0.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal, NamedTuple

Layer = Literal["criterion", "step", "trial", "scenario"]
"""The report's layers are criterion, step and scenario; the console also shows ``trial`` (the
spread of a verdict's overall score), from the same functions (``cell_spread``, ``layer_variance``)."""

DEFAULT_FLOOR = 0.05
_FLOOR_TOLERANCE = 1e-12


class JudgeScoreRow(NamedTuple):
    """One criterion score from one judge pass over one trial step (a tuple: a large run has
    one per criterion, pass and trial)."""

    arm: str
    model: str
    scenario: str
    step: int
    criterion: str
    pass_no: int
    score: float


class CellSpread(NamedTuple):
    """Spread across passes of one cell of a layer.

    ``key`` is (scenario,) for the scenario layer, (scenario, step) for the step layer and
    (scenario, step, criterion) for the criterion layer. A tuple: there is one per cell.
    """

    key: tuple[str | int, ...]
    n_passes: int
    mean: float
    sd: float | None


@dataclass(frozen=True)
class LayerVariance:
    """All cells of one layer for one arm × model (sorted by key), with their σ summarised.

    ``mean_sd`` and ``max_sd`` are over cells that have at least two passes; both are ``None``
    when no cell has.
    """

    layer: Layer
    cells: tuple[CellSpread, ...]
    mean_sd: float | None
    max_sd: float | None

    @property
    def measured(self) -> int:
        """The cells with a σ: those judged at least twice."""
        return sum(c.sd is not None for c in self.cells)


@dataclass(frozen=True)
class ArmModelVariance:
    arm: str
    model: str
    criterion: LayerVariance
    step: LayerVariance
    scenario: LayerVariance


@dataclass(frozen=True)
class ScenarioMean:
    """Scenario-level score of one arm × model, averaged over judge passes."""

    arm: str
    model: str
    scenario: str
    mean: float
    n_passes: int


def _mean_sd(values: Sequence[float]) -> tuple[float, float | None]:
    # fsum is correctly rounded, so neither the mean nor σ depends on the order of the passes.
    n = len(values)
    mean = math.fsum(values) / n
    return mean, None if n < 2 else math.sqrt(math.fsum([(v - mean) ** 2 for v in values]) / n)


def population_sd(values: Sequence[float]) -> float | None:
    """σ with divisor n; ``None`` for fewer than two values (no spread can be observed)."""
    return _mean_sd(values)[1] if len(values) >= 2 else None


def cell_spread(key: tuple[str | int, ...], by_pass: Mapping[int, float]) -> CellSpread:
    """One cell's mean and σ across the passes that scored it (at least one)."""
    return _spread_of(key, list(by_pass.values()))


def _spread_of(key: tuple[str | int, ...], values: list[float]) -> CellSpread:
    """``cell_spread`` of the passes' scores: ``_mean_sd`` written out, as a report takes one per
    cell (tens of thousands)."""
    n = len(values)
    mean = math.fsum(values) / n
    if n < 2:
        return CellSpread(key, n, mean, None)
    return CellSpread(key, n, mean, math.sqrt(math.fsum([(v - mean) ** 2 for v in values]) / n))


def layer_variance(layer: Layer, cells: Iterable[CellSpread]) -> LayerVariance:
    """The cells of one layer with their σ summarised: mean and max over the cells that have one."""
    kept = tuple(cells)
    sds = [c.sd for c in kept if c.sd is not None]
    return LayerVariance(
        layer=layer,
        cells=kept,
        mean_sd=math.fsum(sds) / len(sds) if sds else None,
        max_sd=max(sds) if sds else None,
    )


def fmean(values: Sequence[float]) -> float:
    """``statistics.fmean`` of a sequence, which is fsum over n, without the cost of its
    generality: a report takes one per judge and trial."""
    return math.fsum(values) / len(values)


def _mean(values: Iterable[float]) -> float:
    return fmean(list(values))


def _check_rows(rows: Iterable[JudgeScoreRow]) -> list[JudgeScoreRow]:
    seen: set[tuple[str, str, str, int, str, int]] = set()
    checked: list[JudgeScoreRow] = []
    for row in rows:
        if not math.isfinite(row.score):
            raise ValueError(f"non-finite score {row.score!r} in {row}")
        key = (row.arm, row.model, row.scenario, row.step, row.criterion, row.pass_no)
        if key in seen:
            raise ValueError(f"duplicate judge score for {key}")
        seen.add(key)
        checked.append(row)
    return checked


def means_by_pass(
    cells: Iterable[tuple[tuple[str | int, ...], Mapping[int, float]]], parent: int
) -> dict[tuple[str | int, ...], dict[int, float]]:
    """Per parent cell (the first ``parent`` parts of a cell's key), each pass's mean over the
    cells it scored in it."""
    gathered: dict[tuple[str | int, ...], dict[int, list[float]]] = {}
    for key, by_pass in cells:
        lists = gathered.setdefault(key[:parent], {})
        for pass_no, score in by_pass.items():
            scores = lists.get(pass_no)
            if scores is None:
                lists[pass_no] = [score]
            else:
                scores.append(score)
    fsum = math.fsum  # ``fmean`` written out: one per parent cell and pass
    return {
        key: {p: fsum(scores) / len(scores) for p, scores in lists.items()} for key, lists in gathered.items()
    }


CriterionCells = dict[str, dict[int, dict[str, dict[int, float]]]]
"""One arm × model's criterion scores: scenario -> step -> criterion -> pass -> score."""


def _arm_model_variance(arm: str, model: str, scenarios: CriterionCells) -> ArmModelVariance:
    """The three layers' cells in one walk down the nested cells, each level sorted (the order of
    the layers' sorted keys); means and σ as ``means_by_pass`` and ``_spread_of`` take them."""
    fsum = math.fsum
    criterion_cells: list[CellSpread] = []
    step_cells: list[CellSpread] = []
    scenario_cells: list[CellSpread] = []

    for scenario in sorted(scenarios):
        steps = scenarios[scenario]
        scenario_by_pass: dict[int, list[float]] = {}
        for step in sorted(steps):
            criteria = steps[step]
            step_by_pass: dict[int, list[float]] = {}
            for criterion in sorted(criteria):
                by_pass = criteria[criterion]
                criterion_cells.append(_spread_of((scenario, step, criterion), list(by_pass.values())))
                for pass_no, score in by_pass.items():
                    scores = step_by_pass.get(pass_no)
                    if scores is None:
                        step_by_pass[pass_no] = [score]
                    else:
                        scores.append(score)
            step_means = [fsum(scores) / len(scores) for scores in step_by_pass.values()]
            step_cells.append(_spread_of((scenario, step), step_means))
            for pass_no, mean in zip(step_by_pass, step_means, strict=True):
                means = scenario_by_pass.get(pass_no)
                if means is None:
                    scenario_by_pass[pass_no] = [mean]
                else:
                    means.append(mean)
        scenario_means = [fsum(means) / len(means) for means in scenario_by_pass.values()]
        scenario_cells.append(_spread_of((scenario,), scenario_means))
    return ArmModelVariance(
        arm=arm,
        model=model,
        criterion=layer_variance("criterion", criterion_cells),
        step=layer_variance("step", step_cells),
        scenario=layer_variance("scenario", scenario_cells),
    )


def judge_variance(rows: Iterable[JudgeScoreRow]) -> tuple[ArmModelVariance, ...]:
    """σ across judge passes at each layer, per arm × model, sorted by (arm, model).

    A pass's step score is the mean of the criteria that pass scored in that step, and its
    scenario score the mean of its step scores (steps weigh equally). Duplicate rows (same
    cell and pass) and non-finite scores raise ``ValueError``.
    """
    grouped: dict[tuple[str, str], CriterionCells] = {}
    for row in _check_rows(rows):
        scenarios = grouped.get((row.arm, row.model))
        if scenarios is None:
            scenarios = grouped[(row.arm, row.model)] = {}
        steps = scenarios.setdefault(row.scenario, {})
        criteria = steps.setdefault(row.step, {})
        criteria.setdefault(row.criterion, {})[row.pass_no] = row.score
    return variance_of_cells(grouped)


def variance_of_cells(grouped: Mapping[tuple[str, str], CriterionCells]) -> tuple[ArmModelVariance, ...]:
    """``judge_variance`` of criterion cells already grouped by (arm, model) and checked (one
    finite score per cell and pass): what a report builds without a row per score."""
    return tuple(_arm_model_variance(arm, model, grouped[(arm, model)]) for arm, model in sorted(grouped))


def scenario_means(rows: Iterable[JudgeScoreRow]) -> tuple[ScenarioMean, ...]:
    """Scenario-level means over passes, the only layer rankings may use."""
    means: list[ScenarioMean] = []
    for result in judge_variance(rows):
        for cell in result.scenario.cells:
            means.append(ScenarioMean(result.arm, result.model, str(cell.key[0]), cell.mean, cell.n_passes))
    return tuple(means)


@dataclass(frozen=True)
class RankedEntry:
    arm: str
    model: str
    mean: float


@dataclass(frozen=True)
class TieGroup:
    """Entries whose differences are within the noise floor; ``rank`` is 1 for the best group."""

    rank: int
    entries: tuple[RankedEntry, ...]


@dataclass(frozen=True)
class Ranking:
    """Arm × model entries grouped into tiers, best first.

    Means are taken over ``scenarios``, the scenarios every entry has a mean for, so a missing
    trial cannot move an entry up or down; ``excluded_scenarios`` lists the others.
    """

    groups: tuple[TieGroup, ...]
    floor: float
    scenarios: tuple[str, ...]
    excluded_scenarios: tuple[str, ...]


def rank_arms(scenario_means: Iterable[ScenarioMean], floor: float = DEFAULT_FLOOR) -> Ranking:
    """Rank arm × model entries by their mean scenario-level score, with sub-floor deltas as ties.

    Entries are sorted by mean (descending, then arm and model for a stable order), and a new
    tie group starts where the gap to the previous entry is at least ``floor`` (a gap equal to
    the floor, within 1e-12, is a difference; equal means always tie). So entries in different groups always differ by
    at least the floor, while a group may span more than the floor through a chain of smaller
    gaps: no adjacent pair is called different on a delta that is noise.
    """
    if not math.isfinite(floor) or floor < 0:
        raise ValueError(f"floor must be a finite number >= 0, got {floor!r}")
    by_entry: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for item in scenario_means:
        if not math.isfinite(item.mean):
            raise ValueError(f"non-finite mean {item.mean!r} in {item}")
        scores = by_entry[(item.arm, item.model)]
        if item.scenario in scores:
            raise ValueError(f"duplicate scenario mean for {(item.arm, item.model, item.scenario)}")
        scores[item.scenario] = item.mean
    if not by_entry:
        return Ranking((), floor, (), ())

    all_scenarios = set().union(*(scores.keys() for scores in by_entry.values()))
    shared = set.intersection(*(set(scores) for scores in by_entry.values()))
    scenarios = tuple(sorted(shared))
    excluded = tuple(sorted(all_scenarios - shared))
    if not scenarios:
        return Ranking((), floor, scenarios, excluded)

    entries = sorted(
        (
            RankedEntry(arm, model, _mean(scores[s] for s in scenarios))
            for (arm, model), scores in by_entry.items()
        ),
        key=lambda e: (-e.mean, e.arm, e.model),
    )
    groups: list[list[RankedEntry]] = [[entries[0]]]
    for previous, entry in pairwise(entries):
        gap = previous.mean - entry.mean
        if gap < floor - _FLOOR_TOLERANCE or gap == 0:
            groups[-1].append(entry)
        else:
            groups.append([entry])
    return Ranking(
        groups=tuple(TieGroup(rank, tuple(group)) for rank, group in enumerate(groups, start=1)),
        floor=floor,
        scenarios=scenarios,
        excluded_scenarios=excluded,
    )
