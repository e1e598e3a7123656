"""Read the engine's score rows into what the screens show.

Score ``details`` are JSON written by the engine; everything here tolerates missing or
malformed fields (a half-written or older score must not crash the console) and returns plain
values. Text from details is untrusted and is sanitized where it is displayed.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from proctor.engine.reports.aggregate import is_baseline
from proctor.engine.reports.attribution import attribution
from proctor.store.reader import ScoreRecord, TrialRecord
from proctor.widgets.arms_panel import ArmRow
from proctor.widgets.grounding_panel import GroundingRow
from proctor.widgets.transcript_model import CitationBadge

STATUSES = ("grounded", "unresolved", "hallucinated")


@dataclass(frozen=True)
class CitationInfo:
    raw: str
    path: str
    line: int | None
    line_end: int | None
    symbol: str | None
    status: str
    reason: str


@dataclass(frozen=True)
class Grounding:
    citations: list[CitationInfo]
    commit: str
    repo: str

    def badges(self) -> list[CitationBadge]:
        return [CitationBadge(c.raw, c.status) for c in self.citations]


@dataclass(frozen=True)
class FailureInfo:
    mode: str
    evidence: str
    first_failing_call_id: str


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def grounding_of(scores: Mapping[str, ScoreRecord]) -> Grounding | None:
    record = scores.get("grounding")
    if record is None:
        return None
    d = record.details
    raw = d.get("citations")
    cites: list[CitationInfo] = []
    for c in raw if isinstance(raw, list) else []:
        if not isinstance(c, dict):
            continue
        status = _str(c.get("status"))
        cites.append(
            CitationInfo(
                raw=_str(c.get("raw")),
                path=_str(c.get("path")),
                line=_int(c.get("line")),
                line_end=_int(c.get("line_end")),
                symbol=c.get("symbol") if isinstance(c.get("symbol"), str) else None,
                status=status if status in STATUSES else "unresolved",
                reason=_str(c.get("reason")),
            )
        )
    return Grounding(cites, _str(d.get("commit")), _str(d.get("repo")))


def failure_of(scores: Mapping[str, ScoreRecord]) -> FailureInfo | None:
    record = scores.get("failure_mode")
    if record is None:
        return None
    d = record.details
    mode = _str(d.get("mode"))
    if not mode:
        return None
    return FailureInfo(mode, _str(d.get("evidence")), _str(d.get("first_failing_call_id")))


def grounding_rows(
    trials: Mapping[int, TrialRecord], scores: Mapping[int, Mapping[str, ScoreRecord]]
) -> list[GroundingRow]:
    acc: dict[str, list[int]] = {}
    for trial_id, by_name in scores.items():
        record = by_name.get("grounding")
        trial = trials.get(trial_id)
        if record is None or trial is None:
            continue
        counts: Any = record.details.get("counts")
        counts = counts if isinstance(counts, dict) else {}
        row = acc.setdefault(trial.arm, [0, 0, 0, 0, 0])
        for i, key in enumerate(STATUSES):
            row[i] += _int(counts.get(key)) or 0
        row[3] += 1
        row[4] += 1 if record.value is None else 0
    return [GroundingRow(arm, *values) for arm, values in sorted(acc.items())]


def score_value(scores: Mapping[str, ScoreRecord], name: str) -> float | None:
    record = scores.get(name)
    return None if record is None else record.value


__all__ = [
    "CitationInfo",
    "FailureInfo",
    "Grounding",
    "failure_of",
    "grounding_of",
    "grounding_rows",
    "score_value",
]


def arm_rows(
    trials: Mapping[int, TrialRecord], scores: Mapping[int, Mapping[str, ScoreRecord]], arms: Sequence[str]
) -> list[ArmRow]:
    """Per arm, over its ended trials: judged passes, mean fairness, calls to its own tools."""
    out = []
    for arm in arms:
        ended = [t for t in trials.values() if t.arm == arm and t.status in ("finished", "error")]
        judged = [t for t in ended if t.passed is not None]
        fair = [v for t in ended if (v := score_value(scores.get(t.id, {}), "fairness")) is not None]
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
            )
        )
    return out
