"""A payload or a score's details that passes its shape test is read as its model reads it."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from pydantic import ValidationError

from proctor.store.events import (
    ContentBlock,
    Judged,
    ListedTool,
    ModelResponse,
    ToolCall,
    ToolCallRequest,
    ToolResult,
    ToolsListed,
    Usage,
)
from proctor.store.payload_shapes import SHAPES, model_check
from proctor.store.records import ScoreRecord
from proctor.store.scores import (
    AdoptionDetails,
    GroundingDetails,
    PassedDetails,
    ScoreName,
    ToolMatchDetails,
    UnreadableScore,
    details_model,
)

EVENTS = [
    ToolResult(
        call_id="c1",
        server="fx",
        tool="lookup",
        content="a\nb é",
        is_error=False,
        latency_s=0.25,
        structured={"k": [1, 2]},
        blocks=[ContentBlock(type="image", mime_type="image/png", size_bytes=10, sha256="a" * 64)],
    ),
    ToolCall(call_id="c1", server="fx", tool="lookup", arguments={"q": "x", "n": 2}),
    ToolsListed(
        tools=[ListedTool(name="lookup", server="fx", description="d", input_schema={"type": "object"})]
    ),
    ModelResponse(
        turn=1,
        model="m",
        text="t",
        tool_calls=[ToolCallRequest(call_id="c1", name="lookup", arguments={})],
        stop_reason="tool_use",
        usage=Usage(input_tokens=7, output_tokens=2),
        cost_usd=None,
        latency_s=0.5,
    ),
    Judged(pass_no=1, judge="j", verdict={"score": 0.5}, usage=Usage(input_tokens=3), cost_usd=0.01),
]
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


def _same_as_model(dumped: Any, given: Any) -> bool:
    """Whether the model kept every value it was given (an int for a float field is equal)."""
    if isinstance(given, dict):
        return isinstance(dumped, dict) and all(_same_as_model(dumped.get(k), v) for k, v in given.items())
    if isinstance(given, list):
        return (
            isinstance(dumped, list) and len(dumped) == len(given) and all(map(_same_as_model, dumped, given))
        )
    return bool(dumped == given) and (type(dumped) is type(given) or isinstance(given, int))


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: e.kind)
def test_a_payload_that_passes_its_shape_test_is_read_unchanged_by_its_model(event: Any) -> None:
    obj = event.model_dump(mode="json")
    check = SHAPES[event.kind]
    assert check(obj)
    passed = 0
    for mutant in _mutants(obj, random.Random(event.kind), 400):
        if not check(mutant):
            continue
        passed += 1
        parsed = type(event).model_validate(mutant)  # never raises for a payload that passed
        assert _same_as_model(parsed.model_dump(mode="python", exclude_unset=True), mutant)
    assert passed > 20  # the test saw payloads it passes, not only ones it refuses


def test_a_field_given_a_value_pydantic_would_coerce_fails_the_shape_test() -> None:
    obj = EVENTS[3].model_dump(mode="json")
    for field, value in [
        ("turn", "1"),
        ("turn", 1.0),
        ("turn", True),
        ("latency_s", "0.5"),
        ("kind", "error"),
    ]:
        assert not SHAPES["model_response"](obj | {field: value}), field
    assert not SHAPES["model_response"](obj | {"newer_field": 1})
    assert SHAPES["model_response"](obj | {"latency_s": 1})  # an int for a float: read, then converted


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
    assert model_check(details_model(name)) is not None
    stored = STORED[name]
    cases = [stored, {}, *_mutants(stored, random.Random(str(path)), 300)]
    for details in cases:
        got = _read(ScoreRecord(1, name, 1.0, details), model, path)
        expected = _validated(name, details, model, path)
        assert got == expected and type(got[1]) is type(expected[1]), details


def test_a_score_detail_is_refused_for_another_scores_model() -> None:
    record = ScoreRecord(1, ScoreName.PASSED, 1.0, STORED[ScoreName.PASSED])
    with pytest.raises(TypeError):
        record.detail(GroundingDetails, "counts", "grounded")
    with pytest.raises(ValidationError):  # the models stay what the shapes are checked against
        Usage.model_validate({"input_tokens": 1, "unknown": 2})
