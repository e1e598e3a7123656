"""What a judge is given, what it must return, and how a verdict is validated.

A verdict is JSON validated against ``Verdict``; anything that does not validate is a judge
error, recorded as such, never a pass or a fail. Every judgment carries the judge's identity,
prompt version and hash, rubric hash and temperature, so a score can be traced to exactly
what produced it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from proctor.store.events import Usage
from proctor.store.records import JudgmentMeta

if TYPE_CHECKING:  # a report reads verdicts without loading the scenarios' schema or the scorers
    from proctor.scenarios.schema import Scenario


class CriterionScore(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    score: float = Field(ge=0, le=1)
    rationale: str = ""


class ClaimJudgment(BaseModel):
    model_config = ConfigDict(extra="forbid")

    claim: str
    verdict: Literal["fulfilled", "partially", "not"]
    justification: str = ""


class Verdict(BaseModel):
    """A judge's verdict on one trial; ``score`` is its overall quality in [0, 1]."""

    model_config = ConfigDict(extra="forbid")

    score: float = Field(ge=0, le=1)
    criteria: list[CriterionScore] = []
    claims: list[ClaimJudgment] = []
    key_points_success: bool | None = None
    failure_mode: str | None = None
    rationale: str = ""


@dataclass(frozen=True)
class JudgeSubject:
    """Everything a judge may look at: the task, the scored answer, and the tool trace."""

    scenario: Scenario
    answer_text: str
    audit_text: str
    arm: str
    model: str


@dataclass(frozen=True)
class JudgeOutcome:
    verdict: Verdict | None
    error: str
    meta: JudgmentMeta
    usage: Usage = field(default_factory=Usage)
    attempts: int = 1
    cost_usd: float | None = None


class Judge(Protocol):
    @property
    def judge_id(self) -> str: ...

    async def judge(self, subject: JudgeSubject, pass_no: int) -> JudgeOutcome: ...


NOT_JUDGED = "not judged: the scenario defines no claims, key points, keywords, rubric or gold calls"
NOTHING_TO_JUDGE_ON = "the offline judge matches claims, key points and a rubric, and the scenario has none"
NOTHING_TO_MATCH = (
    f"no judge verdict: {NOTHING_TO_JUDGE_ON} (an LLM judge grades the answer against its task alone)"
)


def can_judge(judge: Judge, scenario: Scenario) -> bool:
    """Whether ``judge`` has anything to grade ``scenario``'s answers on.

    An LLM judge grades an answer against its task alone. A judge that only matches criteria
    (``needs_criteria``: the offline lexical judge) has nothing to say without claims, key points
    or a rubric, and a score from it would be a constant (it gave 1.0 to any answer).
    """
    needs_criteria = bool(getattr(judge, "needs_criteria", False))
    return not needs_criteria or bool(scenario.claims or scenario.key_points or scenario.rubric)


def non_answer_verdict(verdict: Verdict) -> Verdict:
    """The verdict a non-answer gets from any judge: nothing fulfilled, score 0."""
    return Verdict(
        score=0.0,
        criteria=[c.model_copy(update={"score": 0.0}) for c in verdict.criteria],
        claims=[c.model_copy(update={"verdict": "not"}) for c in verdict.claims],
        key_points_success=False if verdict.key_points_success is not None else None,
        failure_mode=verdict.failure_mode,
        rationale="non-answer (empty, a refusal, or nothing found): never rewarded. Judge said: "
        + verdict.rationale,
    )


async def judge_answer(judge: Judge, subject: JudgeSubject, pass_no: int) -> JudgeOutcome:
    """One judge pass, with the rule every judge obeys: a non-answer is never rewarded."""
    from proctor.engine.scoring.non_answer import is_non_answer  # the scorers: only when judging

    outcome = await judge.judge(subject, pass_no)
    if outcome.verdict is not None and is_non_answer(subject.answer_text):
        outcome = replace(outcome, verdict=non_answer_verdict(outcome.verdict))
    return outcome


def rubric_hash(scenario: Scenario) -> str:
    """SHA-256 of what the judge is asked to check: rubric, claims, key points, keywords."""
    payload = {
        "rubric": [c.model_dump() for c in scenario.rubric],
        "claims": scenario.claims,
        "key_points": scenario.key_points,
        "keywords": scenario.keywords.model_dump(),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
