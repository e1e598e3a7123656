"""How far a judge panel can be trusted: its majority, the judges' rank agreement, and humans.

Every judge of a panel judges every pass; ``passed`` is the panel's majority (see
engine/grading/evaluation.py). This module summarises stored judgments: Kendall τ-b between each pair
of judges over their per-trial scores, and agreement (rate and Cohen's κ) of each judge and of
the majority with human labels, taken from ``Scenario.human_labels`` (keyed by trial key, see
``trial_key``) or from imported judgments whose source mentions "human".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from operator import attrgetter

from pydantic import ValidationError

from proctor.engine.judges.base import Verdict
from proctor.engine.judges.verdict_read import VerdictRead
from proctor.engine.stats import (
    Agreement,
    Correlation,
    PanelVote,
    agreement_with_labels,
    fmean,
    kendall_tau_b,
    majority_vote,
)
from proctor.store.read.reader import JudgmentRecord, TrialRecord

_CLAIM_VALUE = {"fulfilled": 1.0, "partially": 0.5, "not": 0.0}


def trial_key(arm: str, model: str, epoch: int) -> str:
    """How ``Scenario.human_labels`` names a trial: ``ARM/MODEL/EPOCH`` (``ARM/MODEL`` for every epoch)."""
    return f"{arm}/{model}/{epoch}"


def human_label(labels: Mapping[str, bool], arm: str, model: str, epoch: int) -> bool | None:
    exact = labels.get(trial_key(arm, model, epoch))
    return exact if exact is not None else labels.get(f"{arm}/{model}")


def is_human(source: str) -> bool:
    return "human" in source.lower()


def verdicts_pass(verdicts: Sequence[Verdict | VerdictRead], claims_threshold: float) -> bool | None:
    """One judge's pass/fail over its passes: claims coverage, else key points, else mean score."""
    if not verdicts:
        return None
    with_claims = [v for v in verdicts if v.claims]
    if with_claims:
        coverage = fmean([fmean([_CLAIM_VALUE[c.verdict] for c in v.claims]) for v in with_claims])
        return coverage >= claims_threshold
    key_points = [v.key_points_success for v in verdicts if v.key_points_success is not None]
    if key_points:
        return sum(key_points) * 2 >= len(key_points)
    return fmean([v.score for v in verdicts]) >= 0.5


# Sort keys taken in C: a report sorts every judgment by both.
_BY_ID = attrgetter("id")
_BY_JUDGE_TRIAL_PASS = attrgetter("judge", "trial_id", "pass_no")


def latest_per_pass(judgments: Iterable[JudgmentRecord]) -> list[JudgmentRecord]:
    """One row per (trial, judge, pass): the latest, since a re-run trial is judged again from pass 1."""
    latest: dict[tuple[int, str, int], JudgmentRecord] = {}
    for j in sorted(judgments, key=_BY_ID):
        latest[(j.trial_id, j.judge, j.pass_no)] = j
    return sorted(latest.values(), key=_BY_JUDGE_TRIAL_PASS)


def parsed_verdicts(judgments: Iterable[JudgmentRecord]) -> dict[tuple[str, int], list[Verdict]]:
    """(judge, trial) -> valid verdicts in pass order; judge errors and unreadable rows left out."""
    out: dict[tuple[str, int], list[Verdict]] = defaultdict(list)
    for j in latest_per_pass(judgments):
        if j.verdict is None:
            continue
        try:
            out[(j.judge, j.trial_id)].append(Verdict.model_validate(j.verdict))
        except ValidationError:
            continue
    return dict(out)


@dataclass(frozen=True)
class JudgePair:
    """Two judges compared: rank agreement of their scores, and Cohen's κ of their pass/fail."""

    first: str
    second: str
    tau_b: Correlation
    agreement: Agreement


@dataclass(frozen=True)
class SuccessRate:
    """How often a judge (or the humans) said success, over the trials it gave a verdict on."""

    judge: str
    passed: int
    n: int

    @property
    def rate(self) -> float | None:
        return self.passed / self.n if self.n else None


@dataclass(frozen=True)
class HumanAgreement:
    """``judge`` is a judge id, or ``"panel majority"``."""

    judge: str
    agreement: Agreement


@dataclass(frozen=True)
class PanelSummary:
    judges: tuple[str, ...]
    human_judges: tuple[str, ...]
    majority: dict[int, PanelVote]
    panel: tuple[str, ...]
    panel_source: str
    pairs: tuple[JudgePair, ...]
    human: tuple[HumanAgreement, ...]
    human_labelled: int
    success: tuple[SuccessRate, ...] = ()
    human_success: SuccessRate | None = None
    any_judge: Agreement | None = None


def panel_summary(
    trials: Sequence[TrialRecord],
    judgments: Sequence[JudgmentRecord],
    *,
    claims_threshold: float,
    scenario_labels: Mapping[str, Mapping[str, bool]] | None = None,
    verdicts: Mapping[tuple[str, int], Sequence[Verdict | VerdictRead]] | None = None,
) -> PanelSummary:
    """Majority, pairwise τ-b and human agreement over the stored judgments of a run.

    ``verdicts`` is ``parsed_verdicts(judgments)`` when the caller has it already: a report
    validates each verdict once for all its sections."""
    labels_by_scenario = scenario_labels or {}
    judged_by = {(j.source, j.judge) for j in judgments}  # a few pairs: each source looked at once
    human_judges = sorted({judge for source, judge in judged_by if is_human(source)})
    judges = sorted({judge for source, judge in judged_by if not is_human(source)})
    if verdicts is None:
        verdicts = parsed_verdicts(judgments)
    ids = [t.id for t in trials]
    passes = {
        (judge, t): verdicts_pass(verdicts.get((judge, t), []), claims_threshold)
        for judge in judges
        for t in ids
    }
    scores = {
        (judge, t): fmean([v.score for v in verdicts[(judge, t)]])
        for judge in judges
        for t in ids
        if verdicts.get((judge, t))
    }
    panel_source, panel = _panel(judged_by)
    majority = _majorities(ids, panel, passes)
    pairs = []
    for a, b in combinations(judges, 2):
        shared = [t for t in ids if (a, t) in scores and (b, t) in scores]
        pairs.append(
            JudgePair(
                a,
                b,
                kendall_tau_b([scores[(a, t)] for t in shared], [scores[(b, t)] for t in shared]),
                agreement_with_labels([passes[(a, t)] for t in ids], [passes[(b, t)] for t in ids]),
            )
        )
    success = tuple(
        SuccessRate(
            judge,
            sum(passes[(judge, t)] is True for t in ids),
            sum(passes[(judge, t)] is not None for t in ids),
        )
        for judge in judges
    )

    human: dict[int, bool] = {}
    for t in trials:
        labels = labels_by_scenario.get(t.scenario)
        label = None if not labels else human_label(labels, t.arm, t.model, t.epoch)
        if label is None and human_judges:  # no votes: no majority
            votes = [verdicts_pass(verdicts.get((h, t.id), []), claims_threshold) for h in human_judges]
            label = majority_vote(votes).verdict
        if label is not None:
            human[t.id] = label
    labelled = sorted(human)
    reference = [human[t] for t in labelled]
    agreements = [
        HumanAgreement(judge, agreement_with_labels([passes[(judge, t)] for t in labelled], reference))
        for judge in judges
    ]
    if len(panel) > 1:
        agreements.append(
            HumanAgreement(
                "panel majority", agreement_with_labels([majority[t].verdict for t in labelled], reference)
            )
        )
    return PanelSummary(
        judges=tuple(judges),
        human_judges=tuple(human_judges),
        majority=majority,
        panel=panel,
        panel_source=panel_source,
        pairs=tuple(pairs),
        human=tuple(agreements) if labelled else (),
        human_labelled=len(labelled),
        success=success,
        human_success=SuccessRate("human", sum(reference), len(reference)) if labelled else None,
        any_judge=_any_judge(panel, passes, human) if labelled and panel else None,
    )


def _panel(judged_by: Iterable[tuple[str, str]]) -> tuple[str, tuple[str, ...]]:
    """The judges whose majority is the panel's: those of the source with most judges.

    Sources are grouped by their first segment: ``proctor:...`` for proctor's judges,
    ``FORMAT:...`` for a benchmark's imported ones.
    An imported benchmark's judges and proctor's own judge of the same trials are two panels;
    mixing them would change the benchmark's published majority.
    """
    by_source: dict[str, set[str]] = defaultdict(set)
    for source, judge in judged_by:
        if not is_human(source):
            by_source[source.split(":", 1)[0]].add(judge)
    if not by_source:
        return "", ()
    source = max(sorted(by_source), key=lambda s: len(by_source[s]))
    return source, tuple(sorted(by_source[source]))


def _majorities(
    ids: Sequence[int], panel: Sequence[str], passes: Mapping[tuple[str, int], bool | None]
) -> dict[int, PanelVote]:
    """Each trial's ``majority_vote`` of the panel, taken once per distinct set of votes (a
    panel of a few judges casts a handful on ten thousand trials); a vote is frozen, so shared."""
    taken: dict[tuple[bool | None, ...], PanelVote] = {}
    out: dict[int, PanelVote] = {}
    for t in ids:
        votes = tuple([passes[(judge, t)] for judge in panel])
        vote = taken.get(votes)
        if vote is None:
            vote = taken[votes] = majority_vote(votes)
        out[t] = vote
    return out


def _any_judge(
    judges: Sequence[str], passes: Mapping[tuple[str, int], bool | None], human: Mapping[int, bool]
) -> Agreement:
    """LiveMCPBench's "any judge": a labelled trial counts when at least one judge agrees with it."""
    agreed = sum(any(passes[(j, t)] == label for j in judges) for t, label in human.items())
    return Agreement(len(human), agreed, agreed / len(human), None, 0)


__all__ = [
    "HumanAgreement",
    "JudgePair",
    "PanelSummary",
    "SuccessRate",
    "human_label",
    "is_human",
    "latest_per_pass",
    "panel_summary",
    "parsed_verdicts",
    "trial_key",
    "verdicts_pass",
]
