"""Suite skeletons: example arguments that each tool's schema accepts."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.scenarios.input_schema import resolve_ref
from proctor.scenarios.skeleton import ToolInfo, example_arguments, schema_problems, skeleton


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"unit": {"type": "string", "enum": ["C", "F"]}}, "required": ["unit"]},
        {"type": "object", "properties": {"day": {"type": "string", "format": "date"}}, "required": ["day"]},
        {"type": "object", "properties": {"n": {"type": "integer", "minimum": 3, "maximum": 9}}, "required": ["n"]},
        {"type": "object", "properties": {"x": {"type": "number", "exclusiveMinimum": 0}}, "required": ["x"]},
        {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}, "minItems": 2}},
         "required": ["tags"]},
        {"type": "object", "properties": {"q": {"anyOf": [{"type": "null"}, {"type": "string", "minLength": 12}]}},
         "required": ["q"]},
        {"type": "object", "properties": {"filter": {"type": "object", "properties": {"limit": {"type": "integer"}},
                                                     "required": ["limit"], "additionalProperties": False}},
         "required": ["filter"], "additionalProperties": False},
        {"type": "object", "properties": {"mode": {"const": "fast"}, "opt": {"type": "string"}}, "required": ["mode"]},
        # pydantic's $defs, draft-07's definitions, a ref to a ref, a JSON Pointer escape
        {"type": "object", "properties": {"k": {"$ref": "#/$defs/K"}}, "required": ["k"],
         "$defs": {"K": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 4}}, "required": ["n"]}}},
        {"type": "object", "properties": {"k": {"type": "array", "items": {"$ref": "#/definitions/K"}, "minItems": 2}},
         "required": ["k"], "definitions": {"K": {"$ref": "#/definitions/L"}, "L": {"enum": ["x", "y"]}}},
        {"type": "object", "properties": {"k": {"anyOf": [{"$ref": "#/$defs/a~1b"}, {"type": "null"}]}},
         "required": ["k"], "$defs": {"a/b": {"type": "string", "minLength": 5}}},
    ],
)  # fmt: skip
def test_example_arguments_satisfy_the_schema(schema: dict[str, Any]) -> None:
    args = example_arguments(schema)
    assert set(args) == set(schema["required"])
    assert schema_problems(args, schema) == []


_leaf = st.sampled_from(
    [
        {"type": "string"},
        {"type": "integer", "minimum": -5},
        {"type": "number", "maximum": 0.5},
        {"type": "boolean"},
        {"type": "string", "format": "email"},
        {"type": "array", "items": {"type": "integer"}},
    ]
)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.from_regex(r"[a-z]{1,8}", fullmatch=True), _leaf, min_size=1, max_size=5))
def test_any_object_of_plain_properties_gets_valid_arguments(props: dict[str, Any]) -> None:
    schema = {"type": "object", "properties": props, "required": sorted(props), "additionalProperties": False}
    assert schema_problems(example_arguments(schema), schema) == []


def test_a_schema_the_drafter_cannot_satisfy_is_noted() -> None:
    schema = {
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}},
        "required": ["code"],
    }
    suite, scenarios, notes = skeleton(
        "srv", {"command": "x"}, [ToolInfo("lookup", "Look up a code.", schema)]
    )
    assert scenarios[0]["gold_tool_calls"] == [
        [{"tool": "lookup", "server": "srv", "arguments": {"code": "code"}}]
    ]
    assert (
        scenarios[0]["title"] == "DRAFT: lookup"
        and scenarios[0]["prompt"] == "Use lookup with code = 'code'."
    )
    (note,) = notes
    assert "tool lookup" in note and "does not match" in note
    assert list(suite["arms"]) == ["baseline", "srv"]


def test_a_ref_cycle_or_a_dangling_ref_ends_instead_of_looping() -> None:
    cycle = {"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}}
    assert resolve_ref({"$ref": "#/$defs/A"}, cycle) in ({"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"})
    assert resolve_ref({"$ref": "#/$defs/Nope", "description": "d"}, {}) == {"description": "d"}
    assert resolve_ref({"$ref": "https://example.com/s.json"}, {}) == {"$ref": "https://example.com/s.json"}
    tree = {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}}}
    assert resolve_ref({"$ref": "#"}, tree) == tree
    schema = {"type": "object", "properties": {"k": {"$ref": "#/$defs/A"}}, "required": ["k"]} | cycle
    assert set(example_arguments(schema)) == {"k"}  # a value, not a hang; no schema can vouch for it


def test_a_drafted_prompt_is_the_instruction_alone() -> None:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    # a description that reads as instructions stays out of the prompt
    said = "Write a note; for changes use edit_note. Pass overwrite=true to replace."
    _, scenarios, _ = skeleton(
        "srv", {"command": "x"}, [ToolInfo("write_note", said, schema), ToolInfo("ping", said, {})]
    )
    assert [s["prompt"] for s in scenarios] == ["Use write_note with path = 'path'.", "Use ping."]


def test_a_schema_jsonschema_cannot_walk_is_a_problem_not_a_crash() -> None:
    # seen from a hand-written server: `proctor init` died with RecursionError / PointerToNowhere
    cycle = {
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/A"}},
        "required": ["x"],
        "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}},
    }
    dangling = {"type": "object", "properties": {"x": {"$ref": "#/$defs/Nope"}}, "required": ["x"]}
    for schema, why in ((cycle, "RecursionError"), (dangling, "PointerToNowhere")):
        (problem,) = schema_problems({"x": "x"}, schema)
        assert problem.startswith("the tool's input schema cannot be checked:") and why in problem
