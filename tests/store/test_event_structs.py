"""msgspec reads a stored event as the event model does: the same Struct, or None for both."""

from __future__ import annotations

import json
import random
import zlib
from typing import Any

import msgspec
import pytest
from pydantic import BaseModel

from proctor.store import event_facts
from proctor.store.event_structs import (
    REPORT_KINDS,
    AnswerCitationStruct,
    ContentBlockStruct,
    JudgedStruct,
    ListedToolStruct,
    ModelResponseStruct,
    ReportEvent,
    ToolCallRequestStruct,
    ToolCallStruct,
    ToolResultStruct,
    ToolsListedStruct,
    UsageStruct,
    as_report_event,
    decode_report_event,
)
from proctor.store.events import (
    AnswerCitation,
    ContentBlock,
    Judged,
    ListedTool,
    ModelResponse,
    ToolCall,
    ToolCallRequest,
    ToolResult,
    ToolsListed,
    Usage,
    parse_event,
)
from tests.store.struct_mirrors import assert_mirrors, mutants

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
        usage=Usage(input_tokens=7, output_tokens=2, reasoning_tokens=1),
        cost_usd=None,
        latency_s=0.5,
        citations=[AnswerCitation(type="web_search_result_location", cited_text="c", url="u", supports="t")],
        cost_reported=True,
    ),
    Judged(pass_no=1, judge="j", verdict={"score": 0.5}, usage=Usage(input_tokens=3), cost_usd=0.01),
]
ODD_VALUES: list[Any] = [
    None, True, 0, 1, 2**70, 1.5, 5.0, "", "x", "12", "yes", "tool_result", [], [1], {}, {"a": 1},
]  # fmt: skip

MIRRORS: list[tuple[type[BaseModel], type[msgspec.Struct]]] = [
    (Usage, UsageStruct),
    (AnswerCitation, AnswerCitationStruct),
    (ToolCallRequest, ToolCallRequestStruct),
    (ListedTool, ListedToolStruct),
    (ContentBlock, ContentBlockStruct),
    (ToolsListed, ToolsListedStruct),
    (ModelResponse, ModelResponseStruct),
    (ToolCall, ToolCallStruct),
    (ToolResult, ToolResultStruct),
    (Judged, JudgedStruct),
]
_STRUCT_OF = {model: struct for model, struct in MIRRORS}


@pytest.mark.parametrize(("model", "struct"), MIRRORS, ids=lambda x: x.__name__)
def test_each_struct_mirrors_its_event_model_field_for_field(
    model: type[BaseModel], struct: type[msgspec.Struct]
) -> None:
    assert_mirrors(model, struct, _STRUCT_OF, leave_out=frozenset({"kind"}))
    config = struct.__struct_config__
    assert config.forbid_unknown_fields == (model.model_config.get("extra") == "forbid")
    if "kind" in model.model_fields:
        assert config.tag == model.model_fields["kind"].default and config.tag_field == "kind"
    assert {m.model_fields["kind"].default for m, s in MIRRORS if "kind" in m.model_fields} == REPORT_KINDS


def _by_the_model(payload: bytes) -> ReportEvent | None:
    """The plain path: the event model parses the payload (pydantic, lax), then it is converted."""
    try:
        return as_report_event(parse_event(payload))
    except ValueError:
        return None


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: e.kind)
def test_msgspec_decodes_every_payload_as_the_event_model_does(event: Any) -> None:
    obj = event.model_dump(mode="json")
    strict = msgspec.json.Decoder(ReportEvent)
    taken = refused = 0
    for mutant in [obj, *mutants(obj, random.Random(event.kind), 500, ODD_VALUES)]:
        payload = json.dumps(mutant).encode()
        expected = _by_the_model(payload)
        assert decode_report_event("json", payload) == expected, mutant
        try:
            strict.decode(payload)
            taken += 1
        except msgspec.MsgspecError:
            refused += 1
    # Both paths were exercised: payloads msgspec takes itself and ones the model has to read.
    assert taken > 10 and refused > 20


def test_values_only_pydantics_lax_mode_takes_are_read_by_the_model() -> None:
    obj = EVENTS[3].model_dump(mode="json")
    for field, value, read in [
        ("turn", "1", 1),
        ("turn", 1.0, 1),
        ("latency_s", "0.5", 0.5),
        ("latency_s", 1, 1.0),
    ]:
        got = decode_report_event("json", json.dumps(obj | {field: value}).encode())
        assert isinstance(got, ModelResponseStruct) and getattr(got, field) == read, field
        assert type(getattr(got, field)) is type(read)
    for broken in (obj | {"newer_field": 1}, obj | {"kind": "error"}, obj | {"turn": None}):
        assert decode_report_event("json", json.dumps(broken).encode()) is None


def test_a_compressed_payload_reads_as_its_json_and_a_broken_one_as_nothing() -> None:
    payload = EVENTS[0].model_dump_json().encode()
    assert decode_report_event("zlib", zlib.compress(payload)) == decode_report_event("json", payload)
    assert decode_report_event("zlib", b"not zlib") is None
    assert decode_report_event("json", payload[:-3]) is None


def test_events_of_other_kinds_are_not_report_events() -> None:
    started = b'{"kind": "trial_started", "scenario": "s", "arm": "a", "model": "m", "epoch": 0, "seed": 1, "attempt": 0}'
    assert decode_report_event("json", started) is None
    assert as_report_event(parse_event(started)) is None
    assert event_facts.model_call(as_report_event(EVENTS[1]) or pytest.fail()) is None
