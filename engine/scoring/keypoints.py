"""LiveMCPBench-style binary task success from key points (offline, lexical).

LiveMCPBench's evaluator decides success from the task's key points *and the trajectory*:
a key point is an atomic step anchored to a tool call or an observable signal. Offline, a key
point is satisfied when the evidence, i.e. the answer text plus the audit text (tool names,
arguments and results), contains all its numbers and literal values and at least
``min_term_ratio`` (default 0.6) of its terms (see ``lexical``; tool names are split into words,
so "search papers" matches a call to ``arxiv_search_papers``).

success = a non-empty answer and every key point satisfied; None when there are no key points.
Key points may be met by the trajectory alone, but the task only succeeds if an answer was given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from proctor.store.scores import KeyPointDetails, KeyPointsDetails

from .lexical import Match, evidence, match, statement

DEFAULT_MIN_TERM_RATIO = 0.6


@dataclass(frozen=True)
class KeyPointCheck:
    key_point: str
    satisfied: bool
    in_answer: bool
    in_trajectory: bool
    justification: str


@dataclass(frozen=True)
class KeyPointsResult:
    success: bool | None
    checks: tuple[KeyPointCheck, ...]
    reason: str

    @property
    def satisfied(self) -> int:
        return sum(c.satisfied for c in self.checks)

    def to_details(self) -> KeyPointsDetails:
        return KeyPointsDetails(
            judge="offline:lexical",
            success=self.success,
            satisfied=self.satisfied,
            total=len(self.checks),
            reason=self.reason,
            checks=[
                KeyPointDetails(
                    key_point=c.key_point,
                    satisfied=c.satisfied,
                    in_answer=c.in_answer,
                    in_trajectory=c.in_trajectory,
                    justification=c.justification,
                )
                for c in self.checks
            ],
        )


def judge_key_points(
    key_points: Sequence[str],
    answer_text: str,
    audit_text: str,
    min_term_ratio: float = DEFAULT_MIN_TERM_RATIO,
) -> KeyPointsResult:
    points = [k for k in key_points if k.strip()]
    if not points:
        return KeyPointsResult(None, (), "no key points")
    ev_all = evidence(answer_text + "\n" + audit_text)
    ev_answer = evidence(answer_text)
    ev_trace = evidence(audit_text)
    checks: list[KeyPointCheck] = []
    for kp in points:
        st = statement(kp)
        m = match(st, ev_all)
        ok = _meets(m, min_term_ratio)
        in_answer = _meets(match(st, ev_answer), min_term_ratio)
        in_trace = _meets(match(st, ev_trace), min_term_ratio)
        checks.append(KeyPointCheck(kp, ok, in_answer, in_trace, m.explain()))
    unmet = [c for c in checks if not c.satisfied]
    if not answer_text.strip():
        return KeyPointsResult(False, tuple(checks), "no answer was given")
    if unmet:
        return KeyPointsResult(False, tuple(checks), f"{len(unmet)} of {len(checks)} key points not met")
    return KeyPointsResult(True, tuple(checks), f"all {len(checks)} key points met")


def _meets(m: Match, min_term_ratio: float) -> bool:
    return m.all_numbers and m.term_ratio >= min_term_ratio
