"""A score's detail read from its msgspec Struct is the value its pydantic model reads, and
details msgspec refuses are read (or refused) by the model."""

from __future__ import annotations

import json
import random
from typing import Any

import msgspec
import pytest
from pydantic import BaseModel

from proctor.store.details_structs import (
    DETAILS_STRUCT,
    CitationDetailsStruct,
    GroundingCountsStruct,
)
from proctor.store.records import ScoreRecord
from proctor.store.scores import (
    AdoptionDetails,
    CitationDetails,
    GroundingCounts,
    GroundingDetails,
    PassedDetails,
    ScoreName,
    ToolMatchDetails,
    UnreadableScore,
    details_model,
)
from proctor.store.stored_json import stored_object
from tests.store.struct_mirrors import assert_mirrors, mutants

DETAILS = [
    (ScoreName.GROUNDING, GroundingDetails, ("counts", "grounded")),
    (ScoreName.PASSED, PassedDetails, ("not_judged",)),
    (ScoreName.TFS, ToolMatchDetails, ("gold_calls",)),
    (ScoreName.TFS, ToolMatchDetails, ("mode",)),
    (ScoreName.ADOPTION, AdoptionDetails, ("na",)),
    (ScoreName.ADOPTION, AdoptionDetails, ("arm_calls",)),
]
STORED: dict[ScoreName, dict[str, Any]] = {
    ScoreName.GROUNDING: {
        "citations": [
            {
                "line": 17,
                "line_end": None,
                "path": "a.py",
                "raw": "a.py:17",
                "reason": "",
                "status": "grounded",
            }
        ],
        "counts": {"grounded": 1, "hallucinated": 0, "unresolved": 2},
        "label": "x",
        "tolerance": 5,
    },
    ScoreName.PASSED: {"errored": False, "not_judged": True, "rule": "r", "votes": {"j": True, "k": None}},
    ScoreName.TFS: {"gold_calls": 3, "missing": [], "mode": "strict", "unexpected": ["t"]},
    ScoreName.ADOPTION: {
        "arm_calls": 2,
        "components": {"a": None, "b": 0.5},
        "na": "baseline",
        "weights": {"a": 1},
    },
}


def _read(record: ScoreRecord, model: Any, path: tuple[str, ...]) -> tuple[str, object]:
    try:
        return "value", record.detail(model, *path)
    except UnreadableScore:
        return "unreadable", None


def _validated(name: ScoreName, details: Any, model: Any, path: tuple[str, ...]) -> tuple[str, object]:
    try:
        value: object = ScoreRecord(1, name, 1.0, details).parsed(model)
    except UnreadableScore:
        return "unreadable", None
    for step in path:
        value = getattr(value, step)
    return "value", value


@pytest.mark.parametrize(("name", "model", "path"), DETAILS, ids=lambda x: str(x))
def test_a_score_detail_reads_as_the_validated_details_do(
    name: ScoreName, model: Any, path: tuple[str, ...]
) -> None:
    assert details_model(name) in DETAILS_STRUCT
    stored = STORED[name]
    cases = [stored, {}, *mutants(stored, random.Random(str(path)), 300)]
    for details in cases:
        got = _read(ScoreRecord(1, name, 1.0, details), model, path)
        expected = _validated(name, details, model, path)
        assert got == expected and type(got[1]) is type(expected[1]), details
        # Read from the stored text (as a store hands it out): decoded straight into the Struct.
        text = json.dumps(details).encode()
        stored = stored_object(text)
        assert stored is not None, text
        got = _read(ScoreRecord(1, name, 1.0, stored), model, path)
        expected = _validated(name, json.loads(text), model, path)
        assert got == expected and type(got[1]) is type(expected[1]), text


def test_a_score_detail_is_refused_for_another_scores_model() -> None:
    record = ScoreRecord(1, ScoreName.PASSED, 1.0, STORED[ScoreName.PASSED])
    with pytest.raises(TypeError):
        record.detail(GroundingDetails, "counts", "grounded")


def test_details_only_pydantics_lax_mode_takes_are_read_by_the_model() -> None:
    for given, read in [("3", 3), (3.0, 3), (True, 1), (3, 3)]:
        record = ScoreRecord(1, ScoreName.TFS, 1.0, {"gold_calls": given})
        value = record.detail(ToolMatchDetails, "gold_calls")
        assert value == read and type(value) is int, given
    with pytest.raises(UnreadableScore):
        ScoreRecord(1, ScoreName.TFS, 1.0, {"gold_calls": "three"}).detail(ToolMatchDetails, "gold_calls")


_STRUCT_OF: dict[type[BaseModel], type[msgspec.Struct]] = {
    **DETAILS_STRUCT,
    GroundingCounts: GroundingCountsStruct,
    CitationDetails: CitationDetailsStruct,
}


@pytest.mark.parametrize(("model", "struct"), list(_STRUCT_OF.items()), ids=lambda x: x.__name__)
def test_each_details_struct_mirrors_its_model_field_for_field(
    model: type[BaseModel], struct: type[msgspec.Struct]
) -> None:
    assert_mirrors(model, struct, _STRUCT_OF)
    assert model.model_config.get("extra") == "ignore" and not struct.__struct_config__.forbid_unknown_fields
    assert (
        not model.__pydantic_decorators__.field_validators
        and not model.__pydantic_decorators__.model_validators
    )
