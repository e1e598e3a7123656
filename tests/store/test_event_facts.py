"""The fact the writer stores of an event reads as what a report takes from the event's payload.

The writer reads its fact off the pydantic event it serializes; a report reading a database
without facts decodes the payload into a msgspec Struct and reads that. Both must give the very
same values, whatever the event holds, or a report would depend on when its database was written.
"""

from __future__ import annotations

import math
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.store.event_facts import FACT_KINDS, decode_fact, encode_fact, event_fact, payload_fact
from proctor.store.events import (
    ContentBlock,
    Event,
    Judged,
    ListedTool,
    ModelResponse,
    ToolCall,
    ToolResult,
    ToolsListed,
    Usage,
)


def _as_a_report_reads_it(event: Event) -> Any:
    """What a report takes of ``event`` as the writer stores it: its fact, or the payload's."""
    stored = event_fact(event)
    if stored is not None:
        return decode_fact(event.kind, stored)
    return payload_fact(event.kind, "json", event.model_dump_json().encode())


def _from_the_payload(event: Event) -> Any:
    return payload_fact(event.kind, "json", event.model_dump_json().encode())


def _result(content: str, latency: float, blocks: list[ContentBlock] | None = None) -> ToolResult:
    return ToolResult(
        call_id="c",
        server="s",
        tool="t",
        content=content,
        is_error=False,
        latency_s=latency,
        blocks=blocks or [],
    )


def _response(usage: Usage, tool_io: int = 0) -> ModelResponse:
    return ModelResponse(turn=1, model="m", text="é", tool_calls=[], stop_reason="end", usage=usage,
                         tool_io_tokens=tool_io, cost_usd=None, latency_s=0.5)  # fmt: skip


EVENTS: list[Event] = [
    _response(Usage(input_tokens=10, output_tokens=3), tool_io=4),
    _response(Usage(input_tokens=2**70)),  # past 64 bits: JSON and msgspec carry it
    Judged(pass_no=1, judge="j", verdict={"a": 1}, usage=Usage(input_tokens=5, output_tokens=1), cost_usd=2),
    Judged(pass_no=1, judge="j", verdict=None, usage=Usage(), cost_usd=math.nan),  # the payload says null
    Judged(pass_no=2, judge="j", verdict=None, usage=Usage(), cost_usd=math.inf),
    Judged(pass_no=3, judge="j", verdict=None, error="no usage"),
    ToolsListed(tools=[ListedTool(name="n", server="s", description="", input_schema={}, title="T")]),
    ToolCall(call_id="c", server="s", tool="t", arguments={"x": [1, "é"]}),
    _result("abc\n…[truncated: stored 9,000 characters, 3 kept]", 0.25),
    _result("caf\u00e9 ✓ \x00", 1e-320),
    _result("", 2, [ContentBlock(type="image", mime_type="image/png", size_bytes=10, sha256="0" * 64)]),
    _result("x", math.inf),  # the payload's latency is null: a report cannot read that result
    _result("x", math.nan),
    _result("x", -0.0),
]


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: e.kind)
def test_the_stored_fact_reads_as_the_payload_does(event: Event) -> None:
    assert event.kind in FACT_KINDS
    # repr: a tuple is not a list, 2.0 is not 2, True is not 1, -0.0 is not 0.0
    assert repr(_as_a_report_reads_it(event)) == repr(_from_the_payload(event))


def test_a_value_json_cannot_carry_is_not_stored() -> None:
    assert event_fact(_result("x", math.inf)) is None
    assert event_fact(Judged(pass_no=1, judge="j", verdict=None, usage=Usage(), cost_usd=math.nan)) is None
    assert encode_fact("model_response", (1, 2, 3)) == b"[1,2,3]"
    with pytest.raises(msgspec.DecodeError):
        decode_fact("tool_call", b'["tool_call",[1,2]]')


@settings(max_examples=150, deadline=None)
@given(
    content=st.text(max_size=60),
    latency=st.floats(allow_nan=True, allow_infinity=True),
    is_error=st.booleans(),
    sizes=st.lists(st.one_of(st.none(), st.integers(min_value=-5, max_value=2**40)), max_size=3),
    cut=st.booleans(),
)
def test_any_tool_result_reads_as_its_payload(
    content: str, latency: float, is_error: bool, sizes: list[int | None], cut: bool
) -> None:
    if cut:
        content += "\n…[truncated: stored 1,000 characters, 9 kept]"
    blocks = [ContentBlock(type="image", mime_type="image/png", size_bytes=n) for n in sizes]
    event = ToolResult(
        call_id="c",
        server="s",
        tool="t",
        content=content,
        is_error=is_error,
        latency_s=latency,
        blocks=blocks,
    )
    assert repr(_as_a_report_reads_it(event)) == repr(_from_the_payload(event))
