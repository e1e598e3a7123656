"""Read the engine's score rows into what the screens show.

The console state admits only rows whose details fit their score's model (store/scores.py);
the others are kept apart and shown as unreadable with the field that failed, never as an empty
panel. Text from details is untrusted and is sanitized where it is displayed.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rich.text import Text

from proctor.engine.drift.runs_diff import REPLAYED_STOP
from proctor.engine.reports.attribution import attribution, is_baseline, trial_misses
from proctor.engine.reports.error_causes import cause_of
from proctor.store.read.reader import ScoreRecord, TrialRecord
from proctor.store.scores import (
    CitationDetails,
    FailureModeDetails,
    GroundingCounts,
    GroundingDetails,
    PassedDetails,
    ScoreDetails,
    ScoreName,
    UnreadableScore,
)
from proctor.store.verdict_reason import NO_VERDICT, verdict_reason
from proctor.widgets.arms_panel import ArmRow
from proctor.widgets.grounding_panel import GroundingRow
from proctor.widgets.sanitize import one_line
from proctor.widgets.transcript_model import CitationBadge
from proctor.widgets.trial_matrix import STATUS_GLYPH

Scores = Mapping[ScoreName, ScoreRecord]


@dataclass(frozen=True)
class TrialCitations:
    """A trial's citations as its grounding score checked them, and the commit they point into."""

    citations: tuple[CitationDetails, ...]
    commit: str
    repo: str

    def badges(self) -> list[CitationBadge]:
        return [CitationBadge(c.raw, c.status) for c in self.citations]


@dataclass(frozen=True)
class FailureInfo:
    mode: str
    evidence: str
    first_failing_call_id: str


def citations_of(scores: Scores) -> TrialCitations | None:
    record = scores.get(ScoreName.GROUNDING)
    if record is None:
        return None
    d = record.parsed(GroundingDetails)
    return TrialCitations(tuple(d.citations), d.commit, d.repo)


def failure_of(scores: Scores) -> FailureInfo | None:
    record = scores.get(ScoreName.FAILURE_MODE)
    if record is None:
        return None
    d = record.parsed(FailureModeDetails)
    if not d.mode:
        return None
    return FailureInfo(d.mode, d.evidence, d.first_failing_call_id or "")


def verdict_line(
    trial: TrialRecord,
    status: str,
    scores: Scores,
    *,
    judge_errors: Sequence[str] = (),
    scoring_error: str | None = None,
) -> str | None:
    """Why the trial has the verdict it shows (store/verdict_reason.py), or why it broke; None
    while it is queued, running or being scored."""
    if status == "error":
        return f"error: {cause_of(trial.error)}"
    if status not in ("passed", "failed", "not judged"):
        return None
    if trial.stop == REPLAYED_STOP:
        return f"{NO_VERDICT}replayed: its calls were made again without a model, so nothing was judged"
    record = scores.get(ScoreName.PASSED)
    try:
        details = None if record is None else record.parsed(PassedDetails)
    except UnreadableScore as err:
        return f"{'no verdict' if status == 'not judged' else status}: the passed score is unreadable ({err})"
    passed = None if status == "not judged" else status == "passed"
    return verdict_reason(passed, details, judge_errors=judge_errors, scoring_error=scoring_error)


VERDICT_STYLE = {"passed": "green", "failed": "bold red", "not judged": "magenta", "error": "bold red"}


def verdict_text(status: str, line: str | None, *, indent: str = "") -> Text:
    """``verdict_line`` as the screens print it: the status glyph, then the reason, sanitized
    (rules quote judges' and servers' errors); dim while there is no verdict yet."""
    if line is None:
        return Text(f"{indent}{STATUS_GLYPH.get(status, '?')} {status}", style="dim")
    return Text(
        f"{indent}{STATUS_GLYPH.get(status, '?')} {one_line(line, 400)}", style=VERDICT_STYLE.get(status, "")
    )


def is_not_judged(record: ScoreRecord) -> bool:
    """Whether a ``passed`` score says its scenario has no check (so the trial has no verdict)."""
    return record.parsed(PassedDetails).not_judged


def not_applicable(record: ScoreRecord) -> str | None:
    """Why a score has no value: its details' ``na``."""
    return record.parsed(ScoreDetails).na or None


def grounding_rows(
    trials: Mapping[int, TrialRecord],
    scores: Mapping[int, Scores],
    unreadable: Mapping[int, Mapping[str, str]],
) -> list[GroundingRow]:
    """Per arm, its trials' grounding counts summed, the trials without citations, and the
    trials whose grounding row could not be read (shown as such, never as zeros)."""
    counts: dict[str, list[GroundingCounts]] = defaultdict(list)
    uncited: Counter[str] = Counter()
    broken: Counter[str] = Counter()
    for trial_id, problems in unreadable.items():
        trial = trials.get(trial_id)
        if ScoreName.GROUNDING in problems and trial is not None:
            broken[trial.arm] += 1
    for trial_id, by_name in scores.items():
        record = by_name.get(ScoreName.GROUNDING)
        trial = trials.get(trial_id)
        if record is None or trial is None:
            continue
        counts[trial.arm].append(record.parsed(GroundingDetails).counts)
        uncited[trial.arm] += record.value is None
    return [
        GroundingRow(arm, GroundingCounts.summed(counts[arm]), len(counts[arm]), uncited[arm], broken[arm])
        for arm in sorted(counts.keys() | broken.keys())
    ]


def score_value(scores: Scores, name: ScoreName) -> float | None:
    record = scores.get(name)
    return None if record is None else record.value


__all__ = [
    "FailureInfo",
    "TrialCitations",
    "arm_rows",
    "citations_of",
    "failure_of",
    "grounding_rows",
    "is_not_judged",
    "not_applicable",
    "score_value",
    "verdict_line",
    "verdict_text",
]


def _misses(trials: Sequence[TrialRecord], scores: Mapping[int, Scores]) -> int | None:
    """The arm's misses over its trials that counted them (the report's figure); None if none did."""
    counted = [n for t in trials if (n := trial_misses(scores.get(t.id, {}))) is not None]
    return sum(counted) if counted else None


def arm_rows(
    trials: Mapping[int, TrialRecord], scores: Mapping[int, Scores], arms: Sequence[str]
) -> list[ArmRow]:
    """Per arm, over its ended trials: judged passes, mean fairness, calls to its own tools."""
    out = []
    for arm in arms:
        ended = [t for t in trials.values() if t.arm == arm and t.status in ("finished", "error")]
        judged = [t for t in ended if t.passed is not None]
        fair = [v for t in ended if (v := score_value(scores.get(t.id, {}), ScoreName.FAIRNESS)) is not None]
        who = attribution(arm, ended, scores)
        out.append(
            ArmRow(
                arm=arm,
                baseline=any(is_baseline(scores.get(t.id, {})) for t in ended),
                passed=sum(bool(t.passed) for t in judged),
                judged=len(judged),
                fairness=statistics.fmean(fair) if fair else None,
                tool_calls=who.tool_calls,
                attributable=who.attributable,
                misses=_misses(ended, scores),
            )
        )
    return out
