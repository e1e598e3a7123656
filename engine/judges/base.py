"""What a judge is given, what it must return, and how a verdict is validated.

A verdict is JSON validated against ``Verdict``; anything that does not validate is a judge
error, recorded as such, never a pass or a fail. Every judgment carries the judge's identity,
prompt version and hash, rubric hash and temperature, so a score can be traced to exactly
what produced it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from proctor.scenarios.schema import Scenario
from proctor.store.events import Usage
from proctor.store.writer import JudgmentMeta


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
