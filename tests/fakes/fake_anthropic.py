"""A wire-compatible fake of Anthropic's Messages API (``POST /v1/messages``, streaming).

Replies are built here and queued on the fake: streamed text, streamed tool use (JSON input in
pieces, several blocks), usage present or absent, HTTP errors with the API's error body, and an
``event: error`` in the middle of a stream.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tests.fakes.api_rules import anthropic_refusal
from tests.fakes.http_fake import DropReply, HangReply, HttpFake, JsonReply, SseReply

MESSAGES_PATH = "/v1/messages"


@dataclass(frozen=True)
class WireUsage:
    input_tokens: int = 10
    output_tokens: int = 5
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0


@dataclass(frozen=True)
class ToolUseScript:
    """One tool_use block; ``json_pieces`` are the input_json_delta fragments in order."""

    call_id: str
    name: str
    json_pieces: list[str]


class FakeAnthropic(HttpFake):
    def __init__(self) -> None:
        super().__init__(expected_path=MESSAGES_PATH, refuse=anthropic_refusal)


def frame(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


def _message_start(usage: WireUsage | None, model: str) -> str:
    message: dict[str, Any] = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": model,
        "stop_reason": None,
        "stop_sequence": None,
    }
    if usage is not None:
        message["usage"] = {
            "input_tokens": usage.input_tokens,
            "output_tokens": 1,
            "cache_read_input_tokens": usage.cache_read_input_tokens,
            "cache_creation_input_tokens": usage.cache_creation_input_tokens,
        }
    return frame("message_start", {"type": "message_start", "message": message})


def _text_block(index: int, pieces: list[str]) -> list[str]:
    frames = [
        frame(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
        )
    ]
    for piece in pieces:
        frames.append(
            frame(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "text_delta", "text": piece},
                },
            )
        )
    frames.append(frame("content_block_stop", {"type": "content_block_stop", "index": index}))
    return frames


def _tool_block(index: int, call: ToolUseScript) -> list[str]:
    frames = [
        frame(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "tool_use", "id": call.call_id, "name": call.name, "input": {}},
            },
        )
    ]
    for piece in call.json_pieces:
        frames.append(
            frame(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": piece},
                },
            )
        )
    frames.append(frame("content_block_stop", {"type": "content_block_stop", "index": index}))
    return frames


def _thinking_block(index: int, pieces: list[str], signature: str) -> list[str]:
    def delta(body: dict[str, Any]) -> str:
        return frame("content_block_delta", {"type": "content_block_delta", "index": index, "delta": body})

    start = {"type": "thinking", "thinking": "", "signature": ""}
    frames = [
        frame("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
    ]
    frames += [delta({"type": "thinking_delta", "thinking": piece}) for piece in pieces]
    frames.append(delta({"type": "signature_delta", "signature": signature}))
    frames.append(frame("content_block_stop", {"type": "content_block_stop", "index": index}))
    return frames


def _redacted_block(index: int, data: str) -> list[str]:
    start = {"type": "redacted_thinking", "data": data}
    return [
        frame("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}),
        frame("content_block_stop", {"type": "content_block_stop", "index": index}),
    ]


def _ending(stop_reason: str, usage: WireUsage | None) -> list[str]:
    delta: dict[str, Any] = {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
    }
    if usage is not None:
        delta["usage"] = {"output_tokens": usage.output_tokens}
    return [frame("message_delta", delta), frame("message_stop", {"type": "message_stop"})]


def message_reply(
    *,
    thinking: list[str] | None = None,
    signature: str = "sig-fake",
    redacted: str | None = None,
    text: list[str] | None = None,
    tools: list[ToolUseScript] | None = None,
    usage: WireUsage | None = WireUsage(),
    stop_reason: str | None = None,
    model: str = "claude-fake",
    delay_s: float = 0.0,
) -> SseReply:
    """A complete streamed message: optional thinking, redacted thinking, text, then tool_use blocks."""
    frames = [_message_start(usage, model), frame("ping", {"type": "ping"})]
    index = 0
    if thinking:
        frames += _thinking_block(index, thinking, signature)
        index += 1
    if redacted is not None:
        frames += _redacted_block(index, redacted)
        index += 1
    if text:
        frames += _text_block(index, text)
        index += 1
    for call in tools or []:
        frames += _tool_block(index, call)
        index += 1
    reason = stop_reason or ("tool_use" if tools else "end_turn")
    return SseReply(frames + _ending(reason, usage), delay_s=delay_s)


def midstream_error_reply(error_type: str = "overloaded_error", message: str = "Overloaded") -> SseReply:
    """Some text, then ``event: error``: the SDK raises APIStatusError with status 200."""
    frames = [_message_start(WireUsage(), "claude-fake"), *_text_block(0, ["partial "])[:2]]
    frames.append(frame("error", {"type": "error", "error": {"type": error_type, "message": message}}))
    return SseReply(frames)


def truncated_reply() -> SseReply:
    """A stream that ends cleanly but before message_stop."""
    return SseReply([_message_start(WireUsage(), "claude-fake"), *_text_block(0, ["cut "])[:2]])


def hang_mid_stream_reply() -> SseReply:
    return SseReply(
        [_message_start(WireUsage(), "claude-fake"), *_text_block(0, ["waiting "])[:2]], hang_after=True
    )


def error_reply(
    status: int, error_type: str, message: str, headers: dict[str, str] | None = None
) -> JsonReply:
    return JsonReply(
        status,
        {"type": "error", "error": {"type": error_type, "message": message}},
        headers or {},
    )


def rate_limited(retry_after_s: float | None = None, message: str = "Rate limited") -> JsonReply:
    headers = {"retry-after": f"{retry_after_s:g}"} if retry_after_s is not None else {}
    return error_reply(429, "rate_limit_error", message, headers)


def overloaded() -> JsonReply:
    return error_reply(529, "overloaded_error", "Overloaded")


def server_error() -> JsonReply:
    return error_reply(500, "api_error", "Internal server error")


def unauthorized(message: str = "invalid x-api-key") -> JsonReply:
    return error_reply(401, "authentication_error", message)


HANG = HangReply()
DROP = DropReply()
