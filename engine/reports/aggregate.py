"""Per arm × model aggregates of a finished run, computed with engine/stats from plain records.

Pure: the report reads the store and hands the records here. Means come with seeded bootstrap
confidence intervals (resampling trials); fairness and adoption stay separate layers; the
baseline's adoption is a structural n/a, never a 0 that would drag a mean down.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

from proctor.engine.judges.panel import is_human
from proctor.engine.reports.attribution import is_baseline, trial_misses
from proctor.engine.reports.verdicts import CLAIM_VALUE, Verdicts, judged_coverage
from proctor.engine.stats import PassKSummary, fmean, paired_bootstrap_ci, pass_k_over_tasks, sum_known
from proctor.store.read.reader import JudgmentRecord, ScoreRecord, TrialRecord
from proctor.store.scores import (
    CitationCounts,
    GroundingCounts,
    GroundingDetails,
    PassedDetails,
    ScoreName,
    ToolMatchDetails,
)

CLAIM_THRESHOLDS = (0.75, 0.5)  # MCP-Atlas reports both; the suite's own threshold is added
BOOTSTRAP_RESAMPLES = 2000


@dataclass(frozen=True)
class TrialUsage:
    """Tokens of one trial by phase: reasoning = model input that was not tool output."""

    reasoning: int = 0
    tool_io: int = 0
    output: int = 0
    judge: int = 0
    judge_cost_usd: float | None = 0.0


@dataclass(frozen=True)
class ReportInputs:
    trials: Sequence[TrialRecord]
    scores: Mapping[int, Mapping[ScoreName, ScoreRecord]]
    judgments: Sequence[JudgmentRecord]
    usage: Mapping[int, TrialUsage]
    claims_threshold: float = 0.75
    verdicts: Verdicts | None = None  # shared with the report's other sections
    judged_coverage: Mapping[int, float] | None = None  # ``judged_coverage(...)``, when already known
    columns: LayerColumns | None = None  # ``layer_columns(trials, scores)``, when known


@dataclass(frozen=True)
class MeanCI:
    """Mean over trials with a 95% bootstrap CI (the interval is the point for one value)."""

    mean: float
    low: float
    high: float
    n: int


@dataclass(frozen=True)
class Tokens:
    reasoning: int
    tool_io: int
    output: int
    judge: int
    estimated: bool


@dataclass(frozen=True)
class ArmModelSummary:
    arm: str
    model: str
    baseline: bool
    trials: int
    finished: int
    errors: int
    passed: int
    judged: int
    fairness: MeanCI | None
    adoption: MeanCI | None
    llm_quality: MeanCI | None
    grounding: GroundingCounts
    claims_pass: dict[float, float | None]
    claims_trials: int
    tfs: float | None
    tool_match: str | None
    not_judged: int
    tool_match_by_epoch: tuple[tuple[int, float | None, float | None], ...]
    tefs: float | None
    tokens: Tokens
    cost_usd: float | None
    judge_cost_usd: float | None
    pass_k: tuple[PassKSummary, ...] = field(default_factory=tuple)
    misses: int | None = None  # built-in search/read calls beside the arm's MCP tools, over ...
    misses_trials: int = 0  # ... the trials that counted them (engine/scoring/misses.py)

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.judged if self.judged else None


def mean_ci(values: Sequence[float], seed: int = 0) -> MeanCI | None:
    if not values:
        return None
    if len(values) == 1:
        return MeanCI(values[0], values[0], values[0], 1)
    ci = paired_bootstrap_ci([(0.0, v) for v in values], n_resamples=BOOTSTRAP_RESAMPLES, seed=seed)
    return MeanCI(ci.mean_delta, ci.low, ci.high, ci.n)


def value(scores: Mapping[ScoreName, ScoreRecord], name: ScoreName) -> float | None:
    s = scores.get(name)
    return None if s is None or s.value is None or not math.isfinite(s.value) else s.value


@dataclass(frozen=True)
class LayerColumns:
    """Each trial's fairness, adoption and LLM quality (``value``: finite ones only) and whether it
    ran as a baseline (``is_baseline``), read once from its scores: the arms' summaries, their
    bootstraps, the ranking and the comparisons with the baseline all read them, and reading them
    again per section was a tenth of a second on 10,000 trials."""

    fairness: Mapping[int, float]
    adoption: Mapping[int, float]
    llm_quality: Mapping[int, float]
    baseline: frozenset[int]


def layer_columns(
    trials: Sequence[TrialRecord], scores: Mapping[int, Mapping[ScoreName, ScoreRecord]]
) -> LayerColumns:
    """The columns of these trials (the sections read no other trial's scores)."""
    columns: tuple[dict[int, float], dict[int, float], dict[int, float]] = ({}, {}, {})
    baseline = []
    names = (ScoreName.FAIRNESS, ScoreName.ADOPTION, ScoreName.LLM_QUALITY)
    for t in trials:
        of_trial = scores.get(t.id)
        if of_trial is None:
            continue
        for name, column in zip(names, columns, strict=True):
            if (v := value(of_trial, name)) is not None:
                column[t.id] = v
        if is_baseline(of_trial):
            baseline.append(t.id)
    return LayerColumns(*columns, baseline=frozenset(baseline))


def claims_coverage(
    trial_id: int, scores: Mapping[ScoreName, ScoreRecord], verdicts: Mapping[tuple[str, int], Sequence[Any]]
) -> float | None:
    """Judged claims coverage (mean over machine-judge passes that judged claims), else the lexical one."""
    per_pass = [
        fmean([CLAIM_VALUE[c.verdict] for c in v.claims])
        for (judge, tid), vs in verdicts.items()
        if tid == trial_id
        for v in vs
        if v.claims
    ]
    return fmean(per_pass) if per_pass else value(scores, ScoreName.CLAIMS)


def _grounding(scores: Mapping[ScoreName, ScoreRecord]) -> CitationCounts | None:
    g = scores.get(ScoreName.GROUNDING)
    # The counts as ``detail`` reads them (a Struct's ints as stored, else the validated model's),
    # summed as they are: a GroundingCounts per trial would validate them again.
    return None if g is None else cast(CitationCounts, g.detail(GroundingDetails, "counts"))


def _mean(values: Sequence[float]) -> float | None:
    return fmean(values) if values else None


def _gold_weighted(scores: Sequence[Mapping[ScoreName, ScoreRecord]], name: ScoreName) -> float | None:
    """TFS/TEFS across trials as MCPAgentBench defines them: each trial weighs its gold calls."""
    total = weight = 0.0
    for s in scores:
        v = value(s, name)
        if v is None:
            continue
        calls = cast(int | None, s[name].detail(ToolMatchDetails, "gold_calls"))
        w = float(calls) if calls is not None and calls > 0 else 1.0
        total += v * w
        weight += w
    return total / weight if weight else None


def match_mode(scores: Sequence[Mapping[ScoreName, ScoreRecord]]) -> str | None:
    """The tool-match mode that scored TFS/TEFS ("mixed" when trials differ), for the report."""
    modes = {
        cast(str, s[ScoreName.TFS].detail(ToolMatchDetails, "mode"))
        for s in scores
        if value(s, ScoreName.TFS) is not None
    }
    return None if not modes else modes.pop() if len(modes) == 1 else "mixed"


def _tool_match_by_epoch(
    trials: Sequence[TrialRecord], scores: Sequence[Mapping[ScoreName, ScoreRecord]]
) -> tuple[tuple[int, float | None, float | None], ...]:
    """(epoch, TFS, TEFS) per epoch: a benchmark publishes one figure per run, an epoch here."""
    by_epoch: dict[int, list[Mapping[ScoreName, ScoreRecord]]] = defaultdict(list)
    for t, s in zip(trials, scores, strict=True):
        if value(s, ScoreName.TFS) is not None:
            by_epoch[t.epoch].append(s)
    return tuple(
        (e, _gold_weighted(by_epoch[e], ScoreName.TFS), _gold_weighted(by_epoch[e], ScoreName.TEFS))
        for e in sorted(by_epoch)
    )


def _pass_k(trials: Sequence[TrialRecord]) -> tuple[PassKSummary, ...]:
    outcomes: dict[str, list[bool]] = defaultdict(list)
    for t in trials:
        if t.passed is not None:
            outcomes[t.scenario].append(t.passed)
    if not outcomes:
        return ()
    top = min(len(v) for v in outcomes.values())
    ks = sorted({1, top}) if top >= 1 else []
    return tuple(pass_k_over_tasks(outcomes, k) for k in ks)


def _groups(trials: Sequence[TrialRecord]) -> dict[tuple[str, str], list[TrialRecord]]:
    groups: dict[tuple[str, str], list[TrialRecord]] = {}
    for t in trials:
        groups.setdefault((t.arm, t.model), []).append(t)
    return groups


def summarize(inputs: ReportInputs) -> list[ArmModelSummary]:
    """One summary per arm × model, in first-seen order of the trial matrix."""
    return with_usage(summarize_scores(inputs), inputs.trials, inputs.usage)


def with_usage(
    summaries: Sequence[ArmModelSummary], trials: Sequence[TrialRecord], usage: Mapping[int, TrialUsage]
) -> list[ArmModelSummary]:
    """``summaries`` (of these trials, as ``summarize_scores`` made them) with their tokens by
    phase and judge cost from ``usage``, which the report reads apart from the scores."""
    out = []
    for s, ((arm, model), group) in zip(summaries, _groups(trials).items(), strict=True):
        assert (s.arm, s.model) == (arm, model)
        used = [usage.get(t.id, TrialUsage()) for t in group]
        tokens = Tokens(
            reasoning=sum(u.reasoning for u in used),
            tool_io=sum(u.tool_io for u in used),
            output=sum(u.output for u in used),
            judge=sum(u.judge for u in used),
            estimated=s.tokens.estimated,
        )
        out.append(replace(s, tokens=tokens, judge_cost_usd=sum_known([u.judge_cost_usd for u in used])))
    return out


def _baseline(
    arm: str,
    trials: Sequence[TrialRecord],
    scores: Mapping[int, Mapping[ScoreName, ScoreRecord]],
    columns: LayerColumns,
) -> bool:
    return any(t.id in columns.baseline for t in trials) or (
        arm == "baseline" and not any(scores.get(t.id) for t in trials)
    )


def _layers(
    trials: Sequence[TrialRecord], columns: LayerColumns
) -> tuple[list[float], list[float], list[float]]:
    """The fairness, adoption and LLM quality values of an arm × model's trials."""
    return tuple(  # type: ignore[return-value]
        [v for t in trials if (v := column.get(t.id)) is not None]
        for column in (columns.fairness, columns.adoption, columns.llm_quality)
    )


def interval_requests(
    trials: Sequence[TrialRecord],
    scores: Mapping[int, Mapping[ScoreName, ScoreRecord]],
    columns: LayerColumns | None = None,
) -> list[tuple[list[tuple[float, float]], int, int]]:
    """The bootstraps ``summarize_scores`` draws (``mean_ci``) as (pairs, resamples, seed), for a
    report to draw them ahead (``intervals_ahead``)."""
    cols = layer_columns(trials, scores) if columns is None else columns
    out = []
    for index, ((arm, _model), group) in enumerate(_groups(trials).items()):
        fair, adopt, quality = _layers(group, cols)
        for values in (fair, quality) if _baseline(arm, group, scores, cols) else (fair, adopt, quality):
            if len(values) > 1:
                out.append(([(0.0, v) for v in values], BOOTSTRAP_RESAMPLES, index))
    return out


def summarize_scores(inputs: ReportInputs) -> list[ArmModelSummary]:
    """``summarize`` but for what depends on ``inputs.usage``: no tokens, no judge cost (see ``with_usage``)."""
    groups = _groups(inputs.trials)
    judged = inputs.judged_coverage
    if judged is None:
        judged = judged_coverage([j for j in inputs.judgments if not is_human(j.source)], inputs.verdicts)
    columns = layer_columns(inputs.trials, inputs.scores) if inputs.columns is None else inputs.columns
    out = []
    for index, ((arm, model), trials) in enumerate(groups.items()):
        scores = [inputs.scores.get(t.id, {}) for t in trials]
        done = [t for t in trials if t.status in ("finished", "error")]
        baseline = _baseline(arm, trials, inputs.scores, columns)
        coverage = [  # the lexical coverage only where no judge's is known
            c
            for t, s in zip(trials, scores, strict=True)
            if (c := judged[t.id] if t.id in judged else value(s, ScoreName.CLAIMS)) is not None
        ]
        fair, adopt, quality = _layers(trials, columns)
        out.append(
            ArmModelSummary(
                arm=arm,
                model=model,
                baseline=baseline,
                trials=len(trials),
                finished=sum(t.status == "finished" for t in trials),
                errors=sum(t.status == "error" for t in trials),
                passed=sum(t.passed is True for t in trials),
                judged=sum(t.passed is not None for t in trials),
                not_judged=sum(
                    cast(bool, s[ScoreName.PASSED].detail(PassedDetails, "not_judged"))
                    for s in scores
                    if ScoreName.PASSED in s
                ),
                fairness=mean_ci(fair, seed=index),
                adoption=None if baseline else mean_ci(adopt, seed=index),
                llm_quality=mean_ci(quality, seed=index),
                grounding=GroundingCounts.summed(g for s in scores if (g := _grounding(s)) is not None),
                claims_pass={
                    th: (sum(c >= th for c in coverage) / len(coverage) if coverage else None)
                    for th in sorted({*CLAIM_THRESHOLDS, inputs.claims_threshold}, reverse=True)
                },
                claims_trials=len(coverage),
                tfs=_gold_weighted(scores, ScoreName.TFS),
                tefs=_gold_weighted(scores, ScoreName.TEFS),
                tool_match=match_mode(scores),
                tool_match_by_epoch=_tool_match_by_epoch(trials, scores),
                tokens=Tokens(0, 0, 0, 0, estimated=any(t.tokens_estimated for t in trials)),
                cost_usd=sum_known([t.cost_usd for t in done]),
                judge_cost_usd=None,
                pass_k=_pass_k(trials),
                misses=sum(missed) if (missed := _misses(scores)) else None,
                misses_trials=len(missed),
            )
        )
    return out


def _misses(scores: Sequence[Mapping[ScoreName, ScoreRecord]]) -> list[int]:
    """The misses of each of the arm's trials that counted them."""
    return [n for s in scores if (n := trial_misses(s)) is not None]


__all__ = [
    "CLAIM_THRESHOLDS",
    "ArmModelSummary",
    "LayerColumns",
    "MeanCI",
    "ReportInputs",
    "Tokens",
    "TrialUsage",
    "Verdicts",
    "claims_coverage",
    "interval_requests",
    "is_baseline",
    "judged_coverage",
    "layer_columns",
    "mean_ci",
    "summarize",
    "summarize_scores",
    "value",
    "with_usage",
]
