"""A wire-compatible fake of OpenAI Chat Completions (``POST /v1/chat/completions``, streaming).

Streams are ``data: {chunk}`` lines ending with ``data: [DONE]``. Tool-call deltas can be
scripted whole or in pieces, several calls interleaved by index; the final usage chunk
(``choices: []``) can be left out, as some compatible servers do.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tests.fakes.api_rules import openai_refusal
from tests.fakes.http_fake import DropReply, HangReply, HttpFake, JsonReply, SseReply

COMPLETIONS_PATH = "/v1/chat/completions"


@dataclass(frozen=True)
class WireUsage:
    prompt_tokens: int = 20
    completion_tokens: int = 7
    cached_tokens: int = 0


@dataclass(frozen=True)
class CallPiece:
    """One tool-call delta: ``call_id``/``name`` only on a call's first piece, as OpenAI sends them."""

    index: int
    arguments: str
    call_id: str | None = None
    name: str | None = None


class FakeOpenAI(HttpFake):
    def __init__(self) -> None:
        super().__init__(expected_path=COMPLETIONS_PATH, refuse=openai_refusal)

    @property
    def openai_base_url(self) -> str:
        return f"{self.base_url}/v1"


def data(payload: dict[str, Any] | str) -> str:
    return f"data: {payload if isinstance(payload, str) else json.dumps(payload)}\n\n"


def chunk(delta: dict[str, Any], finish_reason: str | None = None, model: str = "gpt-fake") -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1_800_000_000,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}],
    }


def usage_chunk(usage: WireUsage) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1_800_000_000,
        "model": "gpt-fake",
        "choices": [],
        "usage": {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.prompt_tokens + usage.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
        },
    }


def _call_delta(piece: CallPiece) -> dict[str, Any]:
    function: dict[str, Any] = {"arguments": piece.arguments}
    delta: dict[str, Any] = {"index": piece.index, "function": function}
    if piece.call_id is not None:
        delta["id"] = piece.call_id
        delta["type"] = "function"
    if piece.name is not None:
        function["name"] = piece.name
    return delta


def completion_reply(
    *,
    text: list[str] | None = None,
    calls: list[CallPiece] | None = None,
    usage: WireUsage | None = WireUsage(),
    finish_reason: str | None = None,
    calls_per_chunk: int = 1,
) -> SseReply:
    """A streamed completion: a role chunk, text pieces, tool-call pieces, finish, usage, [DONE]."""
    frames = [data(chunk({"role": "assistant", "content": ""}))]
    for piece in text or []:
        frames.append(data(chunk({"content": piece})))
    pieces = calls or []
    for start in range(0, len(pieces), calls_per_chunk):
        group = pieces[start : start + calls_per_chunk]
        frames.append(data(chunk({"tool_calls": [_call_delta(p) for p in group]})))
    reason = finish_reason or ("tool_calls" if pieces else "stop")
    frames.append(data(chunk({}, finish_reason=reason)))
    if usage is not None:
        frames.append(data(usage_chunk(usage)))
    frames.append(data("[DONE]"))
    return SseReply(frames)


def midstream_error_reply(
    error_type: str = "server_error", message: str = "The server had an error"
) -> SseReply:
    """Some text, then an ``{"error": ...}`` data line: the SDK raises APIError."""
    return SseReply(
        [
            data(chunk({"role": "assistant", "content": "partial "})),
            data({"error": {"type": error_type, "message": message, "code": None}}),
        ]
    )


def truncated_reply() -> SseReply:
    """A stream that ends cleanly without any finish_reason (and no [DONE])."""
    return SseReply([data(chunk({"role": "assistant", "content": "cut "}))])


def error_reply(
    status: int,
    message: str,
    error_type: str,
    code: str | None = None,
    headers: dict[str, str] | None = None,
) -> JsonReply:
    return JsonReply(
        status,
        {"error": {"message": message, "type": error_type, "param": None, "code": code}},
        headers or {},
    )


def rate_limited(retry_after_s: float | None = None) -> JsonReply:
    headers = {"retry-after": f"{retry_after_s:g}"} if retry_after_s is not None else {}
    return error_reply(429, "Rate limit reached", "requests", "rate_limit_exceeded", headers)


def server_error(status: int = 500) -> JsonReply:
    return error_reply(status, "The server had an error", "server_error")


def unauthorized(message: str = "Incorrect API key provided") -> JsonReply:
    return error_reply(401, message, "invalid_request_error", "invalid_api_key")


HANG = HangReply()
DROP = DropReply()
