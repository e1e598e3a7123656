"""Recorded model API traffic served back on 127.0.0.1 to the real ``anthropic``/``openai`` SDKs.

A cassette (tests/fakes/cassettes/NAME.json, cut from a public test suite by extract.py) holds
the responses a real API sent; each request the SDK makes gets the next one, streamed frame by
frame as recorded. A recording made without streaming is streamed the way the API streams the
same message (``stream_of_completion``). Tool names can be rewritten to a real MCP server's
(``rename``), so a recorded ``get_weather`` call reaches, say, server-filesystem's
``read_text_file``. Requests are held to the APIs' documented rules (api_rules.py) first.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tests.fakes.api_rules import anthropic_refusal, openai_refusal, responses_refusal
from tests.fakes.http_fake import HttpFake, JsonReply, Reply, SseReply

CASSETTES = Path(__file__).parent / "cassettes"
Api = Literal["anthropic", "openai", "responses"]
PATHS: dict[Api, str] = {
    "anthropic": "/v1/messages",
    "openai": "/v1/chat/completions",
    "responses": "/v1/responses",
}


@dataclass(frozen=True)
class Cassette:
    name: str
    source: dict[str, str]
    derived: str
    turns: list[dict[str, Any]]

    def request(self, turn: int) -> Any:
        """The request the recording's client sent for ``turn`` (None when not recorded)."""
        return self.turns[turn]["request"]


def load_cassette(name: str) -> Cassette:
    data = json.loads((CASSETTES / f"{name}.json").read_text())
    return Cassette(name, data["source"], data.get("derived", ""), data["turns"])


def _renamed(text: str, rename: Mapping[str, str]) -> str:
    for old, new in rename.items():
        text = text.replace(f'"name":"{old}"', f'"name":"{new}"').replace(
            f'"name": "{old}"', f'"name": "{new}"'
        )
    return text


def stream_of_completion(body: dict[str, Any]) -> list[str]:
    """A non-streamed Chat Completion as Chat Completions streams the same message: a chunk with
    the role and content, one per tool call, the finish, the usage, ``[DONE]``."""
    choice = body["choices"][0]
    message = choice["message"]
    head = {k: body[k] for k in ("id", "created", "model") if k in body} | {"object": "chat.completion.chunk"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        data = head | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return f"data: {json.dumps(data)}\n\n"

    frames = [chunk({"role": "assistant", "content": message.get("content") or ""})]
    for i, call in enumerate(message.get("tool_calls") or []):
        frames.append(chunk({"tool_calls": [{"index": i, **call}]}))
    frames.append(chunk({}, choice.get("finish_reason")))
    if body.get("usage") is not None:
        frames.append(f"data: {json.dumps(head | {'choices': [], 'usage': body['usage']})}\n\n")
    frames.append("data: [DONE]\n\n")
    return frames


def replies(cassette: Cassette, api: Api, rename: Mapping[str, str] | None = None) -> list[Reply]:
    out: list[Reply] = []
    for turn in cassette.turns:
        response = turn["response"]
        if "sse" in response:
            out.append(SseReply([_renamed(f, rename or {}) for f in response["sse"]]))
        elif response["status"] != 200:
            out.append(JsonReply(response["status"], response["json"]))
        elif api == "openai":
            body = json.loads(_renamed(json.dumps(response["json"]), rename or {}))
            out.append(SseReply(stream_of_completion(body)))
        else:
            raise ValueError(f"{cassette.name}: a non-streamed {api} recording is not served as a stream")
    return out


class ReplayServer(HttpFake):
    """``with ReplayServer("deepseek_reasoner_tool_call", "openai") as server:``; then point the
    SDK at ``server.sdk_base_url``; ``requests`` holds what proctor sent."""

    def __init__(self, name: str, api: Api, *, rename: Mapping[str, str] | None = None) -> None:
        refuse = {"anthropic": anthropic_refusal, "openai": openai_refusal, "responses": responses_refusal}[
            api
        ]
        super().__init__(expected_path=PATHS[api], refuse=refuse)
        self.cassette = load_cassette(name)
        self.api = api
        self.enqueue(*replies(self.cassette, api, rename))

    @property
    def sdk_base_url(self) -> str:
        """What the SDK takes as ``base_url``: the OpenAI SDK wants ``/v1``, Anthropic's not."""
        return self.base_url if self.api == "anthropic" else f"{self.base_url}/v1"


__all__ = ["CASSETTES", "Cassette", "ReplayServer", "load_cassette", "replies", "stream_of_completion"]
