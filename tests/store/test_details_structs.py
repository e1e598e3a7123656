"""A score's detail read from its msgspec Struct is the value its pydantic model reads, and
details msgspec refuses are read (or refused) by the model."""

from __future__ import annotations

import copy
import json
import random
import typing
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

ODD_VALUES: list[Any] = [None, True, 0, 1, 2**70, 1.5, "", "x", "tool_result", [], [1], {}, {"a": 1}]


def _mutants(obj: Any, rng: random.Random, n: int) -> list[Any]:
    """``obj`` with keys dropped, added or retyped, at any depth."""
    out = []
    for _ in range(n):
        m = copy.deepcopy(obj)
        for _ in range(rng.randint(1, 3)):
            node = m
            while isinstance(node, dict | list) and node and rng.random() < 0.5:
                child = node[rng.choice(list(node))] if isinstance(node, dict) else rng.choice(node)
                if not isinstance(child, dict | list) or not child:
                    break
                node = child
            if isinstance(node, dict) and node:
                key = rng.choice(list(node))
                r = rng.random()
                if r < 0.3:
                    node.pop(key)
                elif r < 0.5:
                    node["unknown"] = rng.choice(ODD_VALUES)
                else:
                    node[key] = copy.deepcopy(rng.choice(ODD_VALUES))
            elif isinstance(node, list) and node:
                node[rng.randrange(len(node))] = copy.deepcopy(rng.choice(ODD_VALUES))
        out.append(m)
    return out


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
    cases = [stored, {}, *_mutants(stored, random.Random(str(path)), 300)]
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


def _mirrored(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _STRUCT_OF[annotation]
    args = typing.get_args(annotation)
    origin = typing.get_origin(annotation)
    if not args or origin is typing.Literal:
        return annotation
    mirrored = tuple(_mirrored(a) for a in args)
    if origin in (typing.Union, type(int | None)):
        out = mirrored[0]
        for a in mirrored[1:]:
            out = out | a
        return out
    return origin[mirrored]


_STRUCT_OF: dict[type[BaseModel], type[msgspec.Struct]] = {
    **DETAILS_STRUCT,
    GroundingCounts: GroundingCountsStruct,
    CitationDetails: CitationDetailsStruct,
}


@pytest.mark.parametrize(("model", "struct"), list(_STRUCT_OF.items()), ids=lambda x: x.__name__)
def test_each_details_struct_mirrors_its_model_field_for_field(
    model: type[BaseModel], struct: type[msgspec.Struct]
) -> None:
    fields = {f.name: f for f in msgspec.structs.fields(struct)}
    assert set(fields) == set(model.model_fields)
    for name, f in model.model_fields.items():
        assert f.alias is None and f.validation_alias is None, name  # a Struct reads keys by name
        assert fields[name].type == _mirrored(f.annotation), name
        assert fields[name].required == f.is_required(), name
        if not f.is_required():
            mine = fields[name].default
            mine = fields[name].default_factory() if mine is msgspec.NODEFAULT else mine
            theirs = f.get_default(call_default_factory=True)
            assert (msgspec.to_builtins(mine) if isinstance(mine, msgspec.Struct) else mine) == (
                theirs.model_dump() if isinstance(theirs, BaseModel) else theirs
            ), name
    assert model.model_config.get("extra") == "ignore" and not struct.__struct_config__.forbid_unknown_fields
    assert (
        not model.__pydantic_decorators__.field_validators
        and not model.__pydantic_decorators__.model_validators
    )
