"""Comparisons across arm × model entries: ranking with ties, paired tests against the baseline,
the cost/score Pareto frontier, and judge variance by layer against the floor.

Ranking and paired tests use fairness (the layer a baseline can win); trials are paired by
(scenario, epoch), which share a seed (engine/matrix.py). Judge variance is measured per judge,
per trial, from the stored verdicts: criterion scores, the judge's overall score per step (one
step per trial here: the score llm_quality and fairness are made of), and the scenario score.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from proctor.engine.judges.panel import is_human, latest_per_pass
from proctor.engine.judges.verdict_read import VerdictRead
from proctor.engine.reports.aggregate import (
    ArmModelSummary,
    LayerColumns,
    Verdicts,
    interval_requests,
    layer_columns,
)
from proctor.engine.reports.attribution import Attribution, attribution
from proctor.engine.stats import (
    DEFAULT_SD,
    ArmModelVariance,
    BootstrapCI,
    CostScorePoint,
    CriterionCells,
    JudgeScoreRow,
    McNemarResult,
    ParetoFrontier,
    RankedCells,
    RankedScoreRow,
    Ranking,
    ScenarioMean,
    SdConvention,
    mcnemar_exact,
    paired_bootstrap_ci,
    pareto_frontier,
    rank_arms,
    variance_of_cells,
)
from proctor.store.read.reader import JudgmentRecord, ScoreRecord, TrialRecord
from proctor.store.scores import PassedDetails, ScoreName, UnreadableScore

PairKey = tuple[str, int]
DELTA_RESAMPLES = 2000


@dataclass(frozen=True)
class BaselineComparison:
    """``arm`` against ``baseline`` (same model): McNemar A = baseline, B = arm; delta = arm − baseline."""

    arm: str
    model: str
    baseline: str
    pairs: int
    mcnemar: McNemarResult
    fairness_delta: BootstrapCI | None
    attribution: Attribution
    tools_not_offered: int = 0
    """Shared pairs without a Δ because one side cannot make the scenario's gold calls."""


@dataclass(frozen=True)
class JudgeVariance:
    judge: str
    floor: float
    by_arm_model: tuple[ArmModelVariance, ...]
    sd: SdConvention = DEFAULT_SD


def fairness_ranking(
    trials: Sequence[TrialRecord],
    scores: Mapping[int, Mapping[ScoreName, ScoreRecord]],
    floor: float,
    columns: LayerColumns | None = None,
) -> Ranking:
    """Rank arm × model by mean scenario-level fairness (epochs averaged); sub-floor gaps tie."""
    fairness = (layer_columns(trials, scores) if columns is None else columns).fairness
    cells: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for t in trials:
        v = fairness.get(t.id)
        if v is not None:
            cells[(t.arm, t.model, t.scenario)].append(v)
    means = [ScenarioMean(a, m, s, statistics.fmean(vs), len(vs)) for (a, m, s), vs in cells.items()]
    return rank_arms(means, floor)


def _by_pair(trials: Sequence[TrialRecord], arm: str, model: str) -> dict[PairKey, TrialRecord]:
    return {(t.scenario, t.epoch): t for t in trials if t.arm == arm and t.model == model}


def _pairings(
    trials: Sequence[TrialRecord], columns: LayerColumns
) -> Iterator[tuple[str, str, str, dict[PairKey, TrialRecord], dict[PairKey, TrialRecord], list[PairKey]]]:
    """(arm, model, baseline arm, its trials by pair, the arm's, the pairs both have) of every
    non-baseline arm that shares pairs with the baseline arm run with the same model."""
    baselines = sorted({t.arm for t in trials if t.id in columns.baseline})
    if not baselines:
        baselines = ["baseline"] if any(t.arm == "baseline" for t in trials) else []
    if not baselines:
        return
    base = baselines[0]
    for arm, model in dict.fromkeys((t.arm, t.model) for t in trials):
        if arm in baselines:
            continue
        first, second = _by_pair(trials, base, model), _by_pair(trials, arm, model)
        shared = [k for k in first if k in second]
        if shared:
            yield arm, model, base, first, second, shared


def _passes(
    first: Mapping[PairKey, TrialRecord], second: Mapping[PairKey, TrialRecord], shared: Sequence[PairKey]
) -> list[tuple[bool, bool]]:
    return [
        (bool(first[k].passed), bool(second[k].passed))
        for k in shared
        if first[k].passed is not None and second[k].passed is not None
    ]


def _fairness_pairs(
    first: Mapping[PairKey, TrialRecord],
    second: Mapping[PairKey, TrialRecord],
    shared: Sequence[PairKey],
    columns: LayerColumns,
) -> list[tuple[float, float]]:
    fairness = columns.fairness
    return [
        (a, b)
        for k in shared
        if (a := fairness.get(first[k].id)) is not None and (b := fairness.get(second[k].id)) is not None
    ]


def baseline_comparisons(
    trials: Sequence[TrialRecord],
    scores: Mapping[int, Mapping[ScoreName, ScoreRecord]],
    columns: LayerColumns | None = None,
) -> list[BaselineComparison]:
    """Every non-baseline arm against the baseline arm run with the same model."""
    cols = layer_columns(trials, scores) if columns is None else columns
    out = []
    for arm, model, base, first, second, shared in _pairings(trials, cols):
        passes = _passes(first, second, shared)
        fair = _fairness_pairs(first, second, shared, cols)
        delta = paired_bootstrap_ci(fair, n_resamples=DELTA_RESAMPLES, seed=0) if fair else None
        arm_trials = [t for t in trials if t.model == model]
        out.append(
            BaselineComparison(
                arm,
                model,
                base,
                len(shared),
                mcnemar_exact(passes),
                delta,
                attribution(arm, arm_trials, scores),
                sum(
                    any(_tools_not_offered(scores.get(t.id, {})) for t in (first[k], second[k]))
                    for k in shared
                    if first[k].id not in cols.fairness or second[k].id not in cols.fairness
                ),
            )
        )
    return out


def _tools_not_offered(scores: Mapping[ScoreName, ScoreRecord]) -> bool:
    """Whether the trial's arm cannot make its scenario's gold calls (an unreadable ``passed``
    says nothing; the report lists it as unreadable)."""
    passed = scores.get(ScoreName.PASSED)
    try:
        return passed is not None and bool(passed.detail(PassedDetails, "tools_not_offered"))
    except UnreadableScore:
        return False


def bootstrap_requests(
    trials: Sequence[TrialRecord],
    scores: Mapping[int, Mapping[ScoreName, ScoreRecord]],
    columns: LayerColumns | None = None,
) -> list[tuple[list[tuple[float, float]], int, int]]:
    """Every bootstrap the arms' summaries and comparisons draw, as (pairs, resamples, seed):
    what a report can draw ahead (``intervals_ahead``) while it builds its other sections."""
    cols = layer_columns(trials, scores) if columns is None else columns
    deltas = [
        (fair, DELTA_RESAMPLES, 0)
        for _arm, _model, _base, first, second, shared in _pairings(trials, cols)
        if (fair := _fairness_pairs(first, second, shared, cols))
    ]
    return interval_requests(trials, scores, cols) + deltas


def cost_frontier(summaries: Sequence[ArmModelSummary]) -> ParetoFrontier:
    """Mean agent cost per trial against mean fairness; unknown cost is listed, not placed."""
    points = []
    for s in summaries:
        if s.fairness is None:
            continue
        cost = None if s.cost_usd is None or not s.finished else s.cost_usd / max(1, s.finished + s.errors)
        points.append(CostScorePoint(s.arm, s.model, cost, s.fairness.mean))
    return pareto_frontier(points)


def judge_score_rows(
    trials: Sequence[TrialRecord],
    judgments: Sequence[JudgmentRecord],
    judge: str,
    verdicts: Verdicts | None = None,
) -> list[JudgeScoreRow]:
    """One row per criterion score (or the overall score when a verdict has no criteria) of ``judge``."""
    return _score_rows(_cells(trials), latest_per_pass(judgments), judge, verdicts or Verdicts())


def judge_ranked_rows(
    trials: Sequence[TrialRecord],
    judgments: Sequence[JudgmentRecord],
    judge: str,
    verdicts: Verdicts | None = None,
) -> list[RankedScoreRow]:
    """One row per pass of ``judge``'s overall score of each trial: the number that is ranked."""
    cells, parsed = _cells(trials), verdicts or Verdicts()
    rows: list[RankedScoreRow] = []
    for j in latest_per_pass(judgments):
        cell = cells.get(j.trial_id)
        verdict = parsed.of(j) if j.judge == judge and cell is not None else None
        if cell is not None and verdict is not None and math.isfinite(verdict.score):
            rows.append(RankedScoreRow(cell[0], cell[1], cell[2], 0, j.pass_no, verdict.score))
    return rows


def _cells(trials: Sequence[TrialRecord]) -> dict[int, tuple[str, str, str]]:
    """Per trial, (arm, model, cell): the cell of its variance, its scenario at its epoch."""
    return {t.id: (t.arm, t.model, f"{t.scenario}@e{t.epoch}") for t in trials}


def _score_rows(
    cells: Mapping[int, tuple[str, str, str]],
    latest: Sequence[JudgmentRecord],
    judge: str,
    verdicts: Verdicts,
) -> list[JudgeScoreRow]:
    rows: list[JudgeScoreRow] = []
    for j in latest:
        if j.judge != judge:
            continue
        cell = cells.get(j.trial_id)
        verdict = verdicts.of(j)
        if cell is None or verdict is None:
            continue
        arm, model, where = cell
        scored = {c.name: c.score for c in reversed(verdict.criteria)} or {"overall": verdict.score}
        for name, score in sorted(scored.items()):
            if math.isfinite(score):
                rows.append(JudgeScoreRow(arm, model, where, 0, name, j.pass_no, score))
    return rows


def _add_in_order(
    criteria: dict[str, dict[int, float]], scored: Mapping[str, float], where: tuple[str, str, str, int]
) -> None:
    """``scored`` added to a cell that this pass scored already, in the order of its rows:
    the first criterion scored twice raises ``judge_variance``'s error."""
    arm, model, cell, pass_no = where
    for name, score in sorted(scored.items()):
        if not math.isfinite(score):
            continue
        by_pass = criteria.setdefault(name, {})
        if pass_no in by_pass:
            raise ValueError(f"duplicate judge score for {(arm, model, cell, 0, name, pass_no)}")
        by_pass[pass_no] = score


def variance_by_judge(
    trials: Sequence[TrialRecord],
    judgments: Sequence[JudgmentRecord],
    floor: float,
    verdicts: Verdicts | None = None,
    sd: SdConvention = DEFAULT_SD,
) -> list[JudgeVariance]:
    """``judge_variance(judge_score_rows(...), judge_ranked_rows(...), sd)`` of every machine
    judge, from one pass over the judgments that puts each score straight into its cell (a report
    has one per criterion, pass and trial): the same cells, checks and error as the rows give."""
    judges = sorted(
        {judge for source, judge in {(j.source, j.judge) for j in judgments} if not is_human(source)}
    )
    if not judges:
        return []
    parsed = verdicts or Verdicts()
    cells = _cells(trials)
    by_judge: dict[str, dict[tuple[str, str], CriterionCells]] = {judge: {} for judge in judges}
    ranked: dict[str, dict[tuple[str, str], RankedCells]] = {judge: {} for judge in judges}
    filled: set[tuple[str, str, str, str, int]] = set()  # (judge, arm, model, cell, pass) scored
    isfinite = math.isfinite
    last: VerdictRead | None = None
    scored: dict[str, float] = {}
    for j in parsed.latest(judgments):
        grouped = by_judge.get(j.judge)
        cell = cells.get(j.trial_id)
        if grouped is None or cell is None:
            continue
        verdict = parsed.of(j)
        if verdict is None:
            continue
        arm, model, where = cell
        of_arm = grouped.get((arm, model))
        if of_arm is None:
            of_arm = grouped[(arm, model)] = {}
        steps = of_arm.get(where)
        if steps is None:
            criteria: dict[str, dict[int, float]] = {}
            of_arm[where] = {0: criteria}
        else:
            criteria = steps[0]
        if verdict is not last:  # agreeing passes share their verdict (``Verdicts``): read it once
            last = verdict
            scored = {c.name: c.score for c in reversed(verdict.criteria)} or {"overall": verdict.score}
        pass_no = j.pass_no
        if isfinite(verdict.score):
            ranked[j.judge].setdefault((arm, model), {}).setdefault(where, {}).setdefault(0, {})[pass_no] = (
                verdict.score
            )
        mark = (j.judge, arm, model, where, pass_no)
        if mark in filled:  # another trial in this cell: the rows' order, and their error
            _add_in_order(criteria, scored, (arm, model, where, pass_no))
            continue
        filled.add(mark)
        for name, score in scored.items():
            if isfinite(score):
                by_pass = criteria.get(name)
                if by_pass is None:
                    criteria[name] = {pass_no: score}
                else:
                    by_pass[pass_no] = score
    return [
        JudgeVariance(judge, floor, variance_of_cells(by_judge[judge], ranked[judge], sd), sd)
        for judge in judges
    ]


__all__ = [
    "BaselineComparison",
    "JudgeVariance",
    "baseline_comparisons",
    "bootstrap_requests",
    "cost_frontier",
    "fairness_ranking",
    "judge_ranked_rows",
    "judge_score_rows",
    "variance_by_judge",
]
