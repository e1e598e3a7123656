"""What a report reads of each model call, judge call and tool event: its facts, one definition
used twice.

A report needs a few numbers of each of these events (on 10,000 trials about 165,000 of them,
200 MB of payloads: tool results, model texts, verdicts). The writer works them out once, as it
stores the event, and keeps them beside it in ``event_facts`` (schema 4), a compact JSON array
each; a report reads those small rows and decodes a payload only for an event that has none
(written before schema 4, or a fact JSON cannot carry). Both read an event through the same
functions (``model_call``, ``judge_call``, ``tool_row``, each reading the fields an event's
msgspec Struct and its pydantic model share), the report from the Struct of the payload, the
writer from the event it serializes into that payload (or from the payload, once redaction
changed it); ``decode_fact`` gives back the very values (tuples, floats, booleans) they returned.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final, TypeVar

import msgspec

from proctor.store.event_structs import (
    JudgedStruct,
    ModelResponseStruct,
    ReportEvent,
    ToolCallStruct,
    ToolResultStruct,
    ToolsListedStruct,
    decode_report_event,
)
from proctor.store.events import Event, Judged, ModelResponse, ToolCall, ToolResult, ToolsListed

T = TypeVar("T")

ModelCallUsage = tuple[int, int, int]
JudgeUsage = tuple[int, int, float | None]
ToolRow = tuple[str, Any]
"""What the tool counter reads of an event: ("tools_listed", [(server, tool), ...]), ("tool_call",
(call_id, server, tool)) or ("tool_result", (call_id, server, tool, is_error, latency_s,
result bytes, truncated))."""

_TRUNCATED = re.compile(r"\n…\[truncated: stored [\d,]+ characters, [\d,]+ kept\]\Z")


def model_call(event: ReportEvent) -> ModelCallUsage | None:
    """(input_tokens, tool_io_tokens, output_tokens) of a model call."""
    return _model_call(event) if isinstance(event, ModelResponseStruct) else None


def judge_call(event: ReportEvent) -> JudgeUsage | None:
    """(input_tokens, output_tokens, cost_usd) of a judge pass that recorded its own usage."""
    return _judge_call(event) if isinstance(event, JudgedStruct) else None


def tool_row(event: ReportEvent | None) -> ToolRow | None:
    """What the tool counter reads of a tool event; None for any other event."""
    if isinstance(event, ToolsListedStruct):
        return _listed_row(event)
    if isinstance(event, ToolCallStruct):
        return _call_row(event)
    if isinstance(event, ToolResultStruct):
        return _result_row(event)
    return None


# Each fact is read off the event by one of these, whether the event is the msgspec Struct a
# report decodes from the payload or the pydantic model the writer serializes into it: they
# have the same fields with the same values (each Struct mirrors its model).


def _model_call(e: ModelResponseStruct | ModelResponse) -> ModelCallUsage:
    return e.usage.input_tokens, e.tool_io_tokens, e.usage.output_tokens


def _judge_call(e: JudgedStruct | Judged) -> JudgeUsage | None:
    return None if e.usage is None else (e.usage.input_tokens, e.usage.output_tokens, e.cost_usd)


def _listed_row(e: ToolsListedStruct | ToolsListed) -> ToolRow:
    return "tools_listed", [(t.server, t.name) for t in e.tools]


def _call_row(e: ToolCallStruct | ToolCall) -> ToolRow:
    return "tool_call", (e.call_id, e.server, e.tool)


def _result_row(e: ToolResultStruct | ToolResult) -> ToolRow:
    content = e.content
    truncated = content.endswith(" kept]") and bool(_TRUNCATED.search(content))
    return "tool_result", (e.call_id, e.server, e.tool, e.is_error, e.latency_s, result_bytes(e), truncated)


def result_bytes(result: ToolResultStruct | ToolResult) -> int:
    """Text bytes as stored plus the bytes of binary blocks (their text is only a label)."""
    binary = sum(b.size_bytes or 0 for b in result.blocks if b.text is None and b.size_bytes)
    content = result.content
    # An ASCII string's UTF-8 length is its length (and str knows whether it is ASCII).
    return (len(content) if content.isascii() else len(content.encode("utf-8"))) + binary


_OF_EVENT: Final[dict[str, Callable[[Any], Any]]] = {
    "model_response": _model_call,
    "judgment": _judge_call,
    "tools_listed": _listed_row,
    "tool_call": _call_row,
    "tool_result": _result_row,
}


_FACT_OF_KIND: Final[dict[str, Callable[[ReportEvent], Any]]] = {
    "model_response": model_call,
    "judgment": judge_call,
    "tools_listed": tool_row,
    "tool_call": tool_row,
    "tool_result": tool_row,
}
FACT_KINDS: Final = frozenset(_FACT_OF_KIND)
"""The event kinds that have facts."""
TOOL_KINDS: Final = ("tools_listed", "tool_call", "tool_result")
"""The kinds whose fact is a ``tool_row``."""

# Each kind's fact as msgspec decodes it back: the same tuples, floats and booleans (an int
# written for a float reads as that float, as the Struct read it).
_DECODERS: Final[dict[str, msgspec.json.Decoder[Any]]] = {
    "model_response": msgspec.json.Decoder(tuple[int, int, int] | None),
    "judgment": msgspec.json.Decoder(tuple[int, int, float | None] | None),
    "tools_listed": msgspec.json.Decoder(tuple[str, list[tuple[str, str]]] | None),
    "tool_call": msgspec.json.Decoder(tuple[str, tuple[str, str, str]] | None),
    "tool_result": msgspec.json.Decoder(tuple[str, tuple[str, str, str, bool, float, int, bool]] | None),
}
_encode = msgspec.json.Encoder().encode


def fact_of_kind(kind: str) -> Callable[[ReportEvent], Any]:
    """The function whose value is an event's fact: ``model_call``, ``judge_call`` or ``tool_row``."""
    return _FACT_OF_KIND[kind]


def read_payload(encoding: str, payload: bytes, read: Callable[[ReportEvent], T | None]) -> T | None:
    """What ``read`` takes from a stored payload: None for a row this proctor cannot read (other
    readers show it as an ``ErrorEvent``) or whose text cannot be encoded (a lone surrogate)."""
    event = decode_report_event(encoding, payload)
    if event is None:
        return None
    try:
        return read(event)
    except UnicodeEncodeError:  # a lone surrogate in a text that is measured in UTF-8
        return None


def payload_fact(kind: str, encoding: str, payload: bytes) -> Any:
    """The fact of an event of ``kind`` (one of ``FACT_KINDS``) with this stored payload; None
    where the report reads nothing of it (an unreadable row, a judge pass without usage)."""
    return read_payload(encoding, payload, _FACT_OF_KIND[kind])


def encode_fact(kind: str, fact: Any) -> bytes | None:
    """``fact`` as stored, or None (then the event gets no facts row, and a report decodes its
    payload) for a value that would not read back the same: one JSON cannot carry (NaN, an
    infinity, an integer past 64 bits, a lone surrogate)."""
    try:
        stored = _encode(fact)
        back = _DECODERS[kind].decode(stored)
    except (msgspec.MsgspecError, OverflowError, TypeError, UnicodeEncodeError):
        return None
    return stored if back == fact else None


def stored_fact(kind: str, payload: bytes) -> bytes | None:
    """``payload_fact`` as stored (``encode_fact``), of a payload as the writer serialized it
    (JSON): the writer's fact of an event whose payload redaction changed."""
    return encode_fact(kind, payload_fact(kind, "json", payload))


def event_fact(event: Event) -> bytes | None:
    """The stored fact of an event the writer serializes (of a kind in ``FACT_KINDS``), read off
    the event itself: the payload is the event's JSON, so its Struct has these very values. Where
    the JSON cannot carry one (NaN, an infinity: the payload says null, and a report cannot read
    that payload) ``encode_fact`` stores nothing, and a report reads the payload as before."""
    kind = event.kind
    try:
        fact = _OF_EVENT[kind](event)
    except UnicodeEncodeError:  # a lone surrogate, as ``read_payload`` reads it
        fact = None
    return encode_fact(kind, fact)


def decoder(kind: str) -> Callable[[bytes], Any]:
    """``decode_fact`` of one kind, for a reader decoding many."""
    return _DECODERS[kind].decode


def decode_fact(kind: str, stored: bytes) -> Any:
    """A stored fact as ``payload_fact`` gave it; raises ``msgspec.DecodeError`` for one this
    proctor cannot read (the caller then reads the payload)."""
    return _DECODERS[kind].decode(stored)


__all__ = [
    "FACT_KINDS",
    "TOOL_KINDS",
    "JudgeUsage",
    "ModelCallUsage",
    "ToolRow",
    "decode_fact",
    "decoder",
    "encode_fact",
    "event_fact",
    "fact_of_kind",
    "judge_call",
    "model_call",
    "payload_fact",
    "read_payload",
    "result_bytes",
    "stored_fact",
    "tool_row",
]
