"""The report's verdict structs read a stored verdict exactly as ``Verdict`` validates it."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from pydantic import ValidationError

from proctor.engine.judges.base import ClaimJudgment, CriterionScore, Verdict
from proctor.engine.judges.verdict_read import ClaimRead, CriterionRead, VerdictRead, read_verdict

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


@pytest.mark.parametrize(
    ("struct", "model"), [(VerdictRead, Verdict), (CriterionRead, CriterionScore), (ClaimRead, ClaimJudgment)]
)
def test_the_structs_have_the_models_fields_in_order_with_their_defaults(
    struct: type[msgspec.Struct], model: type[Verdict | CriterionScore | ClaimJudgment]
) -> None:
    fields = msgspec.structs.fields(struct)
    assert [f.name for f in fields] == list(model.model_fields)
    defaults = {f.name: f.default for f in fields if f.default is not msgspec.NODEFAULT}
    defaults |= {f.name: f.default_factory() for f in fields if f.default_factory is not msgspec.NODEFAULT}
    assert defaults == {
        n: f.get_default(call_default_factory=True)
        for n, f in model.model_fields.items()
        if not f.is_required()
    }
