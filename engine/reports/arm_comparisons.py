"""Comparisons across arm × model entries: ranking with ties, paired tests against the baseline,
the cost/score Pareto frontier, and judge variance by layer against the floor.

Ranking and paired tests use fairness (the layer a baseline can win); trials are paired by
(scenario, epoch), which share a seed (engine/matrix.py). Judge variance is measured per judge,
per trial, from the stored verdicts: criterion scores, their mean per step (one step per
trial here), and the scenario score.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from proctor.engine.judges.panel import is_human, latest_per_pass
from proctor.engine.reports.aggregate import ArmModelSummary, Verdicts, value
from proctor.engine.reports.attribution import Attribution, attribution, is_baseline
from proctor.engine.stats import (
    ArmModelVariance,
    BootstrapCI,
    CostScorePoint,
    JudgeScoreRow,
    McNemarResult,
    ParetoFrontier,
    Ranking,
    ScenarioMean,
    judge_variance,
    mcnemar_exact,
    paired_bootstrap_ci,
    pareto_frontier,
    rank_arms,
)
from proctor.store.reader import JudgmentRecord, ScoreRecord, TrialRecord
from proctor.store.scores import ScoreName

PairKey = tuple[str, int]


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


@dataclass(frozen=True)
class JudgeVariance:
    judge: str
    floor: float
    by_arm_model: tuple[ArmModelVariance, ...]


def fairness_ranking(
    trials: Sequence[TrialRecord], scores: Mapping[int, Mapping[ScoreName, ScoreRecord]], floor: float
) -> Ranking:
    """Rank arm × model by mean scenario-level fairness (epochs averaged); sub-floor gaps tie."""
    cells: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for t in trials:
        v = value(scores.get(t.id, {}), ScoreName.FAIRNESS)
        if v is not None:
            cells[(t.arm, t.model, t.scenario)].append(v)
    means = [ScenarioMean(a, m, s, statistics.fmean(vs), len(vs)) for (a, m, s), vs in cells.items()]
    return rank_arms(means, floor)


def _by_pair(trials: Sequence[TrialRecord], arm: str, model: str) -> dict[PairKey, TrialRecord]:
    return {(t.scenario, t.epoch): t for t in trials if t.arm == arm and t.model == model}


def baseline_comparisons(
    trials: Sequence[TrialRecord], scores: Mapping[int, Mapping[ScoreName, ScoreRecord]]
) -> list[BaselineComparison]:
    """Every non-baseline arm against the baseline arm run with the same model."""
    baselines = sorted({t.arm for t in trials if is_baseline(scores.get(t.id, {}))})
    if not baselines:
        baselines = ["baseline"] if any(t.arm == "baseline" for t in trials) else []
    if not baselines:
        return []
    base = baselines[0]
    out = []
    entries = list(dict.fromkeys((t.arm, t.model) for t in trials))
    for arm, model in entries:
        if arm in baselines:
            continue
        first, second = _by_pair(trials, base, model), _by_pair(trials, arm, model)
        shared = [k for k in first if k in second]
        if not shared:
            continue
        passes = [
            (bool(first[k].passed), bool(second[k].passed))
            for k in shared
            if first[k].passed is not None and second[k].passed is not None
        ]
        fair = [
            (a, b)
            for k in shared
            if (a := value(scores.get(first[k].id, {}), ScoreName.FAIRNESS)) is not None
            and (b := value(scores.get(second[k].id, {}), ScoreName.FAIRNESS)) is not None
        ]
        delta = paired_bootstrap_ci(fair, n_resamples=2000, seed=0) if fair else None
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
            )
        )
    return out


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
    by_id = {t.id: t for t in trials}
    parsed = verdicts or Verdicts()
    rows: list[JudgeScoreRow] = []
    for j in latest_per_pass(judgments):
        trial = by_id.get(j.trial_id)
        verdict = parsed.of(j) if j.judge == judge else None
        if trial is None or verdict is None:
            continue
        cell = f"{trial.scenario}@e{trial.epoch}"
        scored = {c.name: c.score for c in reversed(verdict.criteria)} or {"overall": verdict.score}
        for name, score in sorted(scored.items()):
            if math.isfinite(score):
                rows.append(JudgeScoreRow(trial.arm, trial.model, cell, 0, name, j.pass_no, score))
    return rows


def variance_by_judge(
    trials: Sequence[TrialRecord],
    judgments: Sequence[JudgmentRecord],
    floor: float,
    verdicts: Verdicts | None = None,
) -> list[JudgeVariance]:
    judges = sorted({j.judge for j in judgments if not is_human(j.source)})
    parsed = verdicts or Verdicts()
    return [
        JudgeVariance(judge, floor, judge_variance(judge_score_rows(trials, judgments, judge, parsed)))
        for judge in judges
    ]


__all__ = [
    "BaselineComparison",
    "JudgeVariance",
    "baseline_comparisons",
    "cost_frontier",
    "fairness_ranking",
    "judge_score_rows",
    "variance_by_judge",
]
