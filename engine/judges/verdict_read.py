"""Stored verdicts read back for the report: ``Verdict``'s validation without building its models.

A report reads every stored verdict (20,000 on 10,000 trials judged twice) and only looks at a
few of its fields. pydantic builds seven models for a verdict of three criteria and three
claims, 0.14 s on those 20,000; msgspec checks the same dictionary into frozen structs in a fifth
of that (tests/engine/judges/test_verdict_read.py holds the two to the same answers).

The structs accept a subset of what ``Verdict`` accepts (its lax conversions, such as a score
written as a string, are not theirs): what they refuse goes to ``Verdict`` itself, so a verdict
is readable here exactly when ``Verdict.model_validate`` accepts it, with the same values.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from pydantic import ValidationError

from proctor.engine.judges.base import Verdict

Unit = Annotated[float, msgspec.Meta(ge=0, le=1)]


class CriterionRead(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``CriterionScore``'s fields."""

    name: str
    score: Unit
    rationale: str = ""


class ClaimRead(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``ClaimJudgment``'s fields."""

    claim: str
    verdict: Literal["fulfilled", "partially", "not"]
    justification: str = ""


class VerdictRead(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``Verdict``'s fields, read only."""

    score: Unit
    criteria: list[CriterionRead] = []
    claims: list[ClaimRead] = []
    key_points_success: bool | None = None
    failure_mode: str | None = None
    rationale: str = ""


_validate_verdict = Verdict.__pydantic_validator__.validate_python  # without its Python wrapper


def read_verdict(data: Any) -> VerdictRead | None:
    """The verdict in ``data`` (a stored verdict as JSON decodes it), or None where
    ``Verdict.model_validate(data)`` would raise."""
    try:
        return msgspec.convert(data, VerdictRead)
    except msgspec.ValidationError:
        pass
    try:
        verdict = _validate_verdict(data)
    except ValidationError:
        return None
    return msgspec.convert(verdict.model_dump(), VerdictRead)


__all__ = ["ClaimRead", "CriterionRead", "VerdictRead", "read_verdict"]
