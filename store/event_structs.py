"""The five event kinds a report reads many of, as msgspec Structs, and the one decoder for them.

A report reads a few fields of every model call, judge call and tool event of a run (on 10,000
trials, about 170,000 events); building each event's pydantic model cost several times more than
the rest of the report. msgspec decodes a payload into these Structs in one pass in C, checking
every field as strictly as its JSON allows (an ``int`` is an integer, a ``bool`` is true or
false, no key the model does not have), so a payload it takes is one the pydantic model takes
with the same values. The few rows it refuses (a number written as a string, which pydantic's
lax mode converts) are parsed by the event model, as every other reader parses them, and turned
into the same Structs: whichever decoder read a row, the report reads its fields one way.

Each Struct mirrors its model in ``store.events`` field for field (tests/store/test_event_structs.py
checks it); change both together.
"""

from __future__ import annotations

import zlib
from typing import Any, Final, Literal

import msgspec

from proctor.store.events import Event, parse_event
from proctor.store.payload_codec import decode_payload


class UsageStruct(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    estimated: bool = False
    reasoning_tokens: int = 0


class ToolCallRequestStruct(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    call_id: str
    name: str
    arguments: dict[str, Any]


class ListedToolStruct(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: str
    server: str
    description: str
    input_schema: dict[str, Any]
    title: str | None = None
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None
    definition_tokens: int | None = None
    builtin: bool | None = None
    sent_as: str | None = None


class AnswerCitationStruct(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    type: str
    cited_text: str = ""
    title: str = ""
    url: str = ""
    supports: str = ""


class ContentBlockStruct(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    type: Literal["text", "image", "audio", "resource_link", "resource"]
    text: str | None = None
    mime_type: str = ""
    size_bytes: int | None = None
    sha256: str = ""
    uri: str = ""
    name: str = ""
    description: str = ""
    annotations: dict[str, Any] = {}


class _Kind(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="kind"):
    """An event's ``kind`` is the tag msgspec dispatches on, as pydantic's union does."""


class ToolsListedStruct(_Kind, frozen=True, kw_only=True, tag="tools_listed"):
    tools: list[ListedToolStruct]


class ModelResponseStruct(_Kind, frozen=True, kw_only=True, tag="model_response"):
    turn: int
    model: str
    text: str
    tool_calls: list[ToolCallRequestStruct]
    stop_reason: str
    usage: UsageStruct
    tool_io_tokens: int = 0
    cost_usd: float | None
    latency_s: float
    retries: int = 0
    citations: list[AnswerCitationStruct] = []
    cost_reported: bool = False


class ToolCallStruct(_Kind, frozen=True, kw_only=True, tag="tool_call"):
    call_id: str
    server: str
    tool: str
    arguments: dict[str, Any]
    builtin: bool | None = None


class ToolResultStruct(_Kind, frozen=True, kw_only=True, tag="tool_result"):
    call_id: str
    server: str
    tool: str
    content: str
    is_error: bool
    error_type: str = ""
    latency_s: float
    structured: dict[str, Any] | None = None
    blocks: list[ContentBlockStruct] = []
    builtin: bool | None = None


class JudgedStruct(_Kind, frozen=True, kw_only=True, tag="judgment"):
    pass_no: int
    judge: str
    verdict: dict[str, Any] | None
    error: str = ""
    usage: UsageStruct | None = None
    cost_usd: float | None = None


ReportEvent = ToolsListedStruct | ModelResponseStruct | ToolCallStruct | ToolResultStruct | JudgedStruct
"""An event of a kind the report reads, as its Struct."""

REPORT_KINDS: Final = frozenset({"tools_listed", "model_response", "tool_call", "tool_result", "judgment"})

_DECODER: Final[msgspec.json.Decoder[ReportEvent]] = msgspec.json.Decoder(ReportEvent)


def as_report_event(event: Event) -> ReportEvent | None:
    """A parsed event as its Struct (the console's tool counts read parsed events); None for a
    kind the report does not read."""
    if event.kind not in REPORT_KINDS:
        return None
    converted: ReportEvent = msgspec.convert(event, ReportEvent, from_attributes=True)
    return converted


def decode_report_event(encoding: str, payload: bytes) -> ReportEvent | None:
    """A stored payload as its Struct; None for another kind or a row this proctor cannot read
    (other readers show that one as an ``ErrorEvent``)."""
    try:
        raw = decode_payload(encoding, payload)
    except zlib.error:
        return None
    try:
        decoded: ReportEvent = _DECODER.decode(raw)
        return decoded
    except msgspec.MsgspecError:
        pass  # another kind, or a value only pydantic's lax mode takes: the model decides
    try:
        event = parse_event(raw)
    except ValueError:
        return None
    return as_report_event(event)


__all__ = [
    "REPORT_KINDS",
    "ContentBlockStruct",
    "JudgedStruct",
    "ListedToolStruct",
    "ModelResponseStruct",
    "ReportEvent",
    "ToolCallRequestStruct",
    "ToolCallStruct",
    "ToolResultStruct",
    "ToolsListedStruct",
    "UsageStruct",
    "as_report_event",
    "decode_report_event",
]
