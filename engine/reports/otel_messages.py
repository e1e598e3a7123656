"""A trial's conversation as GenAI semantic-convention messages, rebuilt from its stored events.

Trace viewers (Arize Phoenix, Langfuse, Jaeger) show a span's input and output from
``gen_ai.input.messages``, ``gen_ai.output.messages`` and ``gen_ai.system_instructions``: JSON
lists of ``{"role", "parts": [...]}`` with ``text``, ``tool_call`` and ``tool_call_response``
parts (open-telemetry/semantic-conventions, gen-ai-input-messages.json). The store keeps the
model's replies, the tool results and the step prompts, not each request's message list, so the
list a model call saw is rebuilt here the way the agent loop grows it: the step's user prompt,
then per turn the assistant's reply and one ``tool`` message per result.

Every string is redacted when it enters the conversation (once, not per span that repeats it);
a part's text is cut at ``MAX_PART_CHARS`` and a list's JSON kept under ``MAX_JSON_CHARS`` by
dropping the oldest messages after the first, so the attribute always stays valid JSON.
"""

from __future__ import annotations

import json
from typing import Any

from proctor.engine.reports.redacted_tree import redacted
from proctor.store.events import ModelResponse, ToolResult

Message = dict[str, Any]
MAX_PART_CHARS = 4000
MAX_JSON_CHARS = 32000


class MessagesJson(str):
    """An attribute value that is already redacted, sized and valid JSON: written as it is."""

    __slots__ = ()


def _cut(text: str) -> str:
    return text if len(text) <= MAX_PART_CHARS else text[:MAX_PART_CHARS] + "…[truncated]"


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "content": _cut(redacted(text))}


def encode(value: list[Any]) -> MessagesJson:
    """``value`` as JSON; when too long, the first message and as many of the latest as fit."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) <= MAX_JSON_CHARS or len(value) < 2:
        return MessagesJson(text if len(text) <= MAX_JSON_CHARS else "[]")
    head, tail = value[:1], value[1:]
    while tail:
        tail = tail[1:]
        text = json.dumps(head + tail, ensure_ascii=False, default=str)
        if len(text) <= MAX_JSON_CHARS:
            break
    return MessagesJson(text)


def system_instructions(text: str) -> MessagesJson:
    return encode([_text_part(text)])


def answer_messages(text: str, finish_reason: str | None) -> MessagesJson:
    """The agent's final answer as ``gen_ai.output.messages``."""
    message: Message = {"role": "assistant", "parts": [_text_part(text)] if text else []}
    if finish_reason:
        message["finish_reason"] = finish_reason
    return encode([message])


def user_messages(prompts: list[str]) -> MessagesJson:
    return encode([{"role": "user", "parts": [_text_part(p)]} for p in prompts])


def _reply(ev: ModelResponse) -> Message:
    parts = [_text_part(ev.text)] if ev.text else []
    parts += [
        {"type": "tool_call", "id": c.call_id, "name": c.name, "arguments": redacted(c.arguments)}
        for c in ev.tool_calls
    ]
    return {"role": "assistant", "parts": parts, "finish_reason": ev.stop_reason}


class Conversation:
    """The messages a trial's model calls saw, in the order the agent loop appended them."""

    def __init__(self) -> None:
        self.prompts: list[str] = []
        self.messages: list[Message] = []
        self._next_prompt = 0
        self._step_open = False

    def request(self) -> MessagesJson:
        """A model call starts: a new step's prompt first, then the list as the model got it."""
        if not self._step_open and self._next_prompt < len(self.prompts):
            self.messages.append({"role": "user", "parts": [_text_part(self.prompts[self._next_prompt])]})
            self._next_prompt += 1
        self._step_open = True
        return encode(self.messages)

    def response(self, ev: ModelResponse) -> MessagesJson:
        """The reply as ``gen_ai.output.messages``; a reply without tool calls ends the step."""
        reply = _reply(ev)
        self.messages.append({"role": "assistant", "parts": reply["parts"]})
        if not ev.tool_calls:
            self._step_open = False
        return encode([reply])

    def result(self, ev: ToolResult) -> None:
        response = redacted(ev.structured if ev.structured and not ev.content else ev.content)
        part = {
            "type": "tool_call_response",
            "id": ev.call_id,
            "response": _cut(response) if isinstance(response, str) else response,
        }
        self.messages.append({"role": "tool", "parts": [part]})


__all__ = [
    "MAX_JSON_CHARS",
    "MAX_PART_CHARS",
    "Conversation",
    "MessagesJson",
    "answer_messages",
    "encode",
    "system_instructions",
    "user_messages",
]
