"""What a report reads of each model call, judge call and tool event: its facts, one definition
used twice.

A report needs a few numbers of each of these events (on 10,000 trials about 165,000 of them,
200 MB of payloads: tool results, model texts, verdicts). The writer works them out once, from
the payload it stores, and keeps them beside the event in ``event_facts`` (schema 4), a compact
JSON array each; a report reads those small rows and decodes a payload only for an event that
has none (written before schema 4). Both sides call ``payload_fact``, so a fact is what the
report would have read from the payload, by construction; ``decode_fact`` gives back the very
values (tuples, floats, booleans) that ``fact_of_kind(kind)`` returned.
"""

from __future__ import annotations

import functools
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
    if not isinstance(event, ModelResponseStruct):
        return None
    return event.usage.input_tokens, event.tool_io_tokens, event.usage.output_tokens


def judge_call(event: ReportEvent) -> JudgeUsage | None:
    """(input_tokens, output_tokens, cost_usd) of a judge pass that recorded its own usage."""
    if not isinstance(event, JudgedStruct) or event.usage is None:
        return None
    return event.usage.input_tokens, event.usage.output_tokens, event.cost_usd


def result_bytes(result: ToolResultStruct) -> int:
    """Text bytes as stored plus the bytes of binary blocks (their text is only a label)."""
    binary = sum(b.size_bytes or 0 for b in result.blocks if b.text is None and b.size_bytes)
    content = result.content
    # An ASCII string's UTF-8 length is its length (and str knows whether it is ASCII).
    return (len(content) if content.isascii() else len(content.encode("utf-8"))) + binary


def tool_row(event: ReportEvent | None) -> ToolRow | None:
    """What the tool counter reads of a tool event; None for any other event."""
    if isinstance(event, ToolsListedStruct):
        return "tools_listed", [(t.server, t.name) for t in event.tools]
    if isinstance(event, ToolCallStruct):
        return "tool_call", (event.call_id, event.server, event.tool)
    if isinstance(event, ToolResultStruct):
        content = event.content
        truncated = content.endswith(" kept]") and bool(_TRUNCATED.search(content))
        return "tool_result", (event.call_id, event.server, event.tool, event.is_error, event.latency_s,
                               result_bytes(event), truncated)  # fmt: skip
    return None


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
    """``payload_fact`` of a payload as the writer serialized it (JSON), as stored
    (``encode_fact``): what the writer puts in ``event_facts``."""
    if kind == "tools_listed":
        return _listed_fact(payload)
    return encode_fact(kind, payload_fact(kind, "json", payload))


@functools.lru_cache(maxsize=64)
def _listed_fact(payload: bytes) -> bytes | None:
    """An arm's tool list is the same payload in each of its trials (and the costliest to decode):
    its fact is worked out once."""
    return encode_fact("tools_listed", payload_fact("tools_listed", "json", payload))


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
    "encode_fact",
    "fact_of_kind",
    "judge_call",
    "model_call",
    "payload_fact",
    "read_payload",
    "result_bytes",
    "stored_fact",
    "tool_row",
]
