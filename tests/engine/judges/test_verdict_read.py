"""The report's verdict structs read a stored verdict exactly as ``Verdict`` validates it."""

from __future__ import annotations

import random
from typing import Annotated, Any

import msgspec
import pytest
from annotated_types import Ge, Le
from pydantic import BaseModel, ValidationError

from proctor.engine.judges.base import ClaimJudgment, CriterionScore, Verdict
from proctor.engine.judges.verdict_read import ClaimRead, CriterionRead, VerdictRead, read_verdict
from tests.store.struct_mirrors import ODD_VALUES, assert_mirrors, mutants

CLAIM = {"claim": "c", "verdict": "partially", "justification": "j"}
CRITERION = {"name": "cap", "score": 0.5, "rationale": "r"}
FULL = {
    "score": 0.6875,
    "criteria": [CRITERION, {"name": "x", "score": 1}],
    "claims": [CLAIM, {"claim": "d", "verdict": "not"}],
    "key_points_success": True,
    "failure_mode": "wrong tool",
    "rationale": "because",
}
STORED: list[Any] = [
    FULL,
    {"score": 0},
    {"score": 1},
    {"score": -0.0},
    # what pydantic's lax mode accepts and the structs refuse: read through ``Verdict``
    {"score": True},
    {"score": "0.5"},
    {"score": 0.5, "criteria": [{"name": "a", "score": "1"}]},
    {"score": 0.5, "key_points_success": 1},
    {"score": 0.5, "key_points_success": "true"},
    # unreadable
    {"score": float("nan")},
    {"score": float("inf")},
    {"score": 1.0000001},
    {"score": 10**400},
    {},
    {"score": None},
    {"score": 0.5, "extra": 1},
    {"score": 0.5, "criteria": [{"name": "a", "score": float("nan")}]},
    {"score": 0.5, "criteria": [{"name": 1, "score": 0.5}]},
    {"score": 0.5, "criteria": [{**CRITERION, "x": 1}]},
    {"score": 0.5, "criteria": None},
    {"score": 0.5, "claims": [{"claim": "c", "verdict": "Fulfilled"}]},
    {"score": 0.5, "claims": [{**CLAIM, "justification": None}]},
    {"score": 0.5, "failure_mode": 3},
    {"score": 0.5, "rationale": None},
    [],
    "x",
    1,
]


def _validated(data: Any) -> dict[str, Any] | None:
    try:
        return Verdict.model_validate(data).model_dump()
    except ValidationError:
        return None


@pytest.mark.parametrize("data", STORED, ids=[repr(d)[:50] for d in STORED])
def test_a_stored_verdict_is_read_exactly_when_verdict_validates_it_with_its_values(data: Any) -> None:
    read = read_verdict(data)
    expected = _validated(data)
    if expected is None:
        assert read is None
        return
    assert read is not None
    got = msgspec.to_builtins(read)
    assert got == expected
    # the same types too: an integer score is read as the float ``Verdict`` makes of it
    assert [type(v) for v in got.values()] == [type(v) for v in expected.values()]
    assert all(type(c["score"]) is float for c in got["criteria"])


STRUCT_OF: dict[type[BaseModel], type[msgspec.Struct]] = {
    Verdict: VerdictRead,
    CriterionScore: CriterionRead,
    ClaimJudgment: ClaimRead,
}


@pytest.mark.parametrize(("model", "struct"), list(STRUCT_OF.items()))
def test_each_struct_mirrors_its_model_field_for_field(
    model: type[BaseModel], struct: type[msgspec.Struct]
) -> None:
    unit = Annotated[float, msgspec.Meta(ge=0, le=1)]  # ``Field(ge=0, le=1)``, checked below
    assert_mirrors(model, struct, STRUCT_OF, types={"score": unit})
    assert model.model_config.get("extra") == "forbid" and struct.__struct_config__.forbid_unknown_fields
    assert (
        not model.__pydantic_decorators__.field_validators
        and not model.__pydantic_decorators__.model_validators
    )
    if "score" in model.model_fields:
        assert model.model_fields["score"].metadata == [Ge(ge=0), Le(le=1)]


def test_mutated_verdicts_are_read_as_verdict_validates_them() -> None:
    for data in mutants(
        FULL, random.Random(7), 400, [*ODD_VALUES, -1, 0.25, "not", "fulfilled", float("nan")]
    ):
        read = read_verdict(data)
        expected = _validated(data)
        assert (None if read is None else msgspec.to_builtins(read)) == expected, data
