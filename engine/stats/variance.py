"""Judge variance by layer (criterion, step, scenario) and a ranking that respects the noise floor.

LLM judges are stochastic: the same transcript judged twice gets different scores. Each layer
measures the spread of a number that is used: a criterion's score; a step's score, which is the
judge's overall (weighted) score for it, the number ``llm_quality``, fairness and the ranking
are made of; and a scenario's score, the mean of its step scores. Averaging steps into a scenario
cancels part of the noise, so each layer has its own spread. Ranking uses scenario-level means
only, and a delta between arms smaller than the variance floor is reported as a tie rather than
a win. Without a step's overall score (rows that only give criteria), its score is the mean of
the criteria its pass scored.

σ is the *sample* standard deviation across passes by default (divide by n − 1): the convention
of the first source's harness, whose published reference values and 0.05 floor are sample SDs
(luuuc/sense ``bench/lib/variance.py``: two passes 0.10 apart give 0.071). ``population``
(divide by n; two passes 0.10 apart give 0.050) is the other convention a suite may choose
(``judge: {sd: population}``); the floor is compared with σ in the convention chosen. With a
single pass there is no spread to measure, so σ is ``None``, never 0.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal, NamedTuple

SdConvention = Literal["sample", "population"]
DEFAULT_SD: SdConvention = "sample"
SD_TEXT: dict[SdConvention, str] = {"sample": "sample SD (n − 1)", "population": "population SD (n)"}
"""How a report names each convention."""


def sd_convention(config: Mapping[str, object]) -> SdConvention:
    """A run's σ convention from its recorded config (``judge.sd``); the default for a run
    recorded before the option existed."""
    judge = config.get("judge")
    return "population" if isinstance(judge, Mapping) and judge.get("sd") == "population" else DEFAULT_SD


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


class RankedScoreRow(NamedTuple):
    """One judge pass's overall score of one trial step: the number that is ranked."""

    arm: str
    model: str
    scenario: str
    step: int
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


def _spread(values: Sequence[float], mean: float, sd: SdConvention) -> float:
    # fsum is correctly rounded, so neither the mean nor σ depends on the order of the passes.
    divisor = len(values) - 1 if sd == "sample" else len(values)
    return math.sqrt(math.fsum([(v - mean) ** 2 for v in values]) / divisor)


def standard_deviation(values: Sequence[float], sd: SdConvention = DEFAULT_SD) -> float | None:
    """σ of ``values`` in convention ``sd``; ``None`` for fewer than two (no spread observed)."""
    if len(values) < 2:
        return None
    return _spread(values, math.fsum(values) / len(values), sd)


def population_sd(values: Sequence[float]) -> float | None:
    """σ with divisor n; ``None`` for fewer than two values (no spread can be observed)."""
    return standard_deviation(values, "population")


def sample_sd(values: Sequence[float]) -> float | None:
    """σ with divisor n − 1; ``None`` for fewer than two values (no spread can be observed)."""
    return standard_deviation(values, "sample")


def cell_spread(
    key: tuple[str | int, ...], by_pass: Mapping[int, float], sd: SdConvention = DEFAULT_SD
) -> CellSpread:
    """One cell's mean and σ across the passes that scored it (at least one)."""
    return _spread_of(key, list(by_pass.values()), sd)


def _spread_of(key: tuple[str | int, ...], values: list[float], sd: SdConvention) -> CellSpread:
    """``cell_spread`` of the passes' scores, as a report takes one per cell (tens of thousands)."""
    n = len(values)
    mean = math.fsum(values) / n
    return CellSpread(key, n, mean, None if n < 2 else _spread(values, mean, sd))


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

RankedCells = dict[str, dict[int, dict[int, float]]]
"""One arm × model's ranked scores (a judge's overall score): scenario -> step -> pass -> score."""


def _arm_model_variance(
    arm: str, model: str, scenarios: CriterionCells, ranked: RankedCells, sd: SdConvention
) -> ArmModelVariance:
    """The three layers' cells in one walk down the nested cells, each level sorted (the order of
    the layers' sorted keys); means and σ as ``means_by_pass`` and ``_spread_of`` take them. A
    step's score per pass is its ranked score where there is one, else its criteria's mean."""
    fsum = math.fsum
    criterion_cells: list[CellSpread] = []
    step_cells: list[CellSpread] = []
    scenario_cells: list[CellSpread] = []

    for scenario in sorted(scenarios.keys() | ranked.keys()):
        steps = scenarios.get(scenario, {})
        ranked_steps = ranked.get(scenario, {})
        scenario_by_pass: dict[int, list[float]] = {}
        for step in sorted(steps.keys() | ranked_steps.keys()):
            criteria = steps.get(step, {})
            step_by_pass: dict[int, list[float]] = {}
            for criterion in sorted(criteria):
                by_pass = criteria[criterion]
                criterion_cells.append(_spread_of((scenario, step, criterion), list(by_pass.values()), sd))
                for pass_no, score in by_pass.items():
                    scores = step_by_pass.get(pass_no)
                    if scores is None:
                        step_by_pass[pass_no] = [score]
                    else:
                        scores.append(score)
            overall = ranked_steps.get(step)
            if overall:
                step_scores = dict(overall)
            else:
                step_scores = {p: fsum(scores) / len(scores) for p, scores in step_by_pass.items()}
            step_cells.append(_spread_of((scenario, step), list(step_scores.values()), sd))
            for pass_no, mean in step_scores.items():
                means = scenario_by_pass.get(pass_no)
                if means is None:
                    scenario_by_pass[pass_no] = [mean]
                else:
                    means.append(mean)
        scenario_means = [fsum(means) / len(means) for means in scenario_by_pass.values()]
        scenario_cells.append(_spread_of((scenario,), scenario_means, sd))
    return ArmModelVariance(
        arm=arm,
        model=model,
        criterion=layer_variance("criterion", criterion_cells),
        step=layer_variance("step", step_cells),
        scenario=layer_variance("scenario", scenario_cells),
    )


def judge_variance(
    rows: Iterable[JudgeScoreRow], ranked: Iterable[RankedScoreRow] = (), sd: SdConvention = DEFAULT_SD
) -> tuple[ArmModelVariance, ...]:
    """σ across judge passes at each layer, per arm × model, sorted by (arm, model).

    A pass's step score is its ranked score (``ranked``: the judge's overall score of the step),
    or, for a step without one, the mean of the criteria that pass scored in it; its scenario
    score is the mean of its step scores (steps weigh equally). Duplicate rows (same cell and
    pass) and non-finite scores raise ``ValueError``.
    """
    grouped: dict[tuple[str, str], CriterionCells] = {}
    for row in _check_rows(rows):
        scenarios = grouped.get((row.arm, row.model))
        if scenarios is None:
            scenarios = grouped[(row.arm, row.model)] = {}
        steps = scenarios.setdefault(row.scenario, {})
        criteria = steps.setdefault(row.step, {})
        criteria.setdefault(row.criterion, {})[row.pass_no] = row.score
    overall: dict[tuple[str, str], RankedCells] = {}
    for r in ranked:
        if not math.isfinite(r.score):
            raise ValueError(f"non-finite score {r.score!r} in {r}")
        by_pass = overall.setdefault((r.arm, r.model), {}).setdefault(r.scenario, {}).setdefault(r.step, {})
        if r.pass_no in by_pass:
            raise ValueError(f"duplicate ranked score for {(r.arm, r.model, r.scenario, r.step, r.pass_no)}")
        by_pass[r.pass_no] = r.score
    return variance_of_cells(grouped, overall, sd)


def variance_of_cells(
    grouped: Mapping[tuple[str, str], CriterionCells],
    ranked: Mapping[tuple[str, str], RankedCells] | None = None,
    sd: SdConvention = DEFAULT_SD,
) -> tuple[ArmModelVariance, ...]:
    """``judge_variance`` of cells already grouped by (arm, model) and checked (one finite score
    per cell and pass): what a report builds without a row per score."""
    overall = ranked or {}
    return tuple(
        _arm_model_variance(arm, model, grouped.get((arm, model), {}), overall.get((arm, model), {}), sd)
        for arm, model in sorted(grouped.keys() | overall.keys())
    )


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
