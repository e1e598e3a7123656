"""OpenAI Chat Completions wire format: the neutral conversation out, streamed chunks in.

Tool-call deltas may arrive whole or in pieces, several calls interleaved; ``OpenAIStreamState``
reassembles them by index. Usage comes from the final chunk (``stream_options.include_usage``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from proctor.engine.providers.assembly import parse_tool_arguments, raw_arguments, turn_fingerprint
from proctor.engine.providers.base import AssistantTurn, Message, ToolOutcome, ToolResults, UserMessage
from proctor.engine.tools.toolbox import ToolSpec
from proctor.store.events import ToolCallRequest, Usage
from proctor.store.outcomes import END_TURN, MAX_TOKENS, REFUSAL, TOOL_USE, UNREPORTED

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionChunk

TOOL_ERROR_PREFIX = "Error: "
_STOP_REASONS = {
    "stop": END_TURN,
    "tool_calls": TOOL_USE,
    "function_call": TOOL_USE,
    "length": MAX_TOKENS,
    "content_filter": REFUSAL,
}
USD_PER_XAI_TICK = 1e-10
"""xAI's ``cost_in_usd_ticks``: a grok-3-mini recording's ticks are its list price to the tick."""
_THINK = re.compile(r"^\s*<think>(.*?)</think>\s*", re.DOTALL)


def split_think(text: str) -> tuple[str, str | None]:
    """``<think>…</think>`` that some OpenAI-compatible servers put before the answer (DeepSeek R1
    distills on Groq, ollama, vLLM without a reasoning parser), as (answer, reasoning)."""
    found = _THINK.match(text)
    if found is None:
        return text, None
    return text[found.end() :], found.group(1).strip()


def to_openai_messages(
    system: str,
    messages: list[Message],
    wire_name: Callable[[str], str] = str,
    reasoning: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """The neutral conversation as Chat Completions messages (tool results as role ``tool``).

    Chat Completions has no error flag on tool results, so a failed tool's output is prefixed
    with ``Error: ``. A malformed call's arguments go back as the text the model wrote.
    ``wire_name`` gives a tool's name as the API was sent it; ``reasoning`` maps the
    ``turn_fingerprint`` of assistant turns to the ``reasoning_content`` they came with, for
    the APIs that refuse a tool-calling turn without it (DeepSeek, Kimi: model_rules.py).
    """
    wire: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        if isinstance(message, UserMessage):
            wire.append({"role": "user", "content": message.text})
        elif isinstance(message, AssistantTurn):
            if not message.text and not message.tool_calls:
                continue
            turn: dict[str, Any] = {"role": "assistant", "content": message.text or None}
            thought = (reasoning or {}).get(turn_fingerprint(message.text, message.tool_calls))
            if thought:
                turn["reasoning_content"] = thought
            if message.tool_calls:
                turn["tool_calls"] = [
                    {
                        "id": call.call_id,
                        "type": "function",
                        "function": {
                            "name": wire_name(call.name),
                            "arguments": _arguments_text(call.arguments),
                        },
                    }
                    for call in message.tool_calls
                ]
            wire.append(turn)
        elif isinstance(message, ToolResults):
            for result in message.results:
                content = TOOL_ERROR_PREFIX + result.content if result.is_error else result.content
                wire.append({"role": "tool", "tool_call_id": result.call_id, "content": content})
            images = _images_message(message.results)
            if images is not None:
                wire.append(images)
    return wire


def _images_message(results: list[ToolOutcome]) -> dict[str, Any] | None:
    """Chat Completions tool messages hold text only, so tools' images follow as one user message."""
    parts: list[dict[str, Any]] = []
    for result in results:
        if result.images:
            parts.append(
                {"type": "text", "text": f"Images returned by tool call {result.call_id} ({result.name}):"}
            )
            parts += [
                {"type": "image_url", "image_url": {"url": f"data:{i.mime_type};base64,{i.data_b64}"}}
                for i in result.images
            ]
    return {"role": "user", "content": parts} if parts else None


def to_openai_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": {"type": "object", **tool.input_schema},
            },
        }
        for tool in tools
    ]


def _arguments_text(arguments: dict[str, Any]) -> str:
    raw = raw_arguments(arguments)
    return raw if raw is not None else json.dumps(arguments, ensure_ascii=False)


def _reasoning_delta(delta: object) -> str:
    """DeepSeek, Kimi and xAI stream ``reasoning_content``; OpenRouter, Groq and ollama ``reasoning``
    (fields the SDK keeps as extras)."""
    for name in ("reasoning_content", "reasoning"):
        value = getattr(delta, name, None)
        if isinstance(value, str) and value:
            return value
    return ""


@dataclass
class _CallSlot:
    call_id: str | None = None
    name: str = ""
    argument_parts: list[str] = field(default_factory=list)


@dataclass
class OpenAIStreamState:
    """Folds chunks into text, tool calls (by index), finish reason and usage."""

    text_parts: list[str] = field(default_factory=list)
    reasoning_parts: list[str] = field(default_factory=list)
    slots: dict[int, _CallSlot] = field(default_factory=dict)
    slot_of_index: dict[int, int] = field(default_factory=dict)
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    reasoning_outside_completion: bool = False
    reported_cost: float | None = None
    refusal_parts: list[str] = field(default_factory=list)
    got_usage: bool = False

    def feed(self, chunk: ChatCompletionChunk) -> str | None:
        """Apply one chunk; returns the text delta to show, if any."""
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self._take_usage(usage)
        shown: list[str] = []
        for choice in chunk.choices or []:
            if getattr(choice, "index", 0) not in (0, None):
                continue
            delta = choice.delta
            if delta is not None:
                thought = _reasoning_delta(delta)
                if thought:
                    self.reasoning_parts.append(thought)
                if delta.content:
                    self.text_parts.append(delta.content)
                    shown.append(delta.content)
                refusal = getattr(delta, "refusal", None)
                if isinstance(refusal, str) and refusal:
                    self.refusal_parts.append(refusal)
                for piece in delta.tool_calls or []:
                    self._take_call_piece(piece.index, piece.id, piece.function)
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason
        return "".join(shown) or None

    def _take_call_piece(self, index: int | None, call_id: str | None, function: object) -> None:
        wire_index = index if isinstance(index, int) else len(self.slot_of_index)
        key = self.slot_of_index.get(wire_index)
        if key is None or (call_id and self.slots[key].call_id not in (None, call_id)):
            key = len(self.slots)
            self.slot_of_index[wire_index] = key
            self.slots[key] = _CallSlot()
        slot = self.slots[key]
        if call_id and slot.call_id is None:
            slot.call_id = call_id
        name = getattr(function, "name", None)
        if isinstance(name, str) and name and name != slot.name:
            slot.name += name
        arguments = getattr(function, "arguments", None)
        if isinstance(arguments, str):
            slot.argument_parts.append(arguments)

    def _take_usage(self, usage: object) -> None:
        prompt = getattr(usage, "prompt_tokens", None)
        completion = getattr(usage, "completion_tokens", None)
        if isinstance(prompt, int):
            self.prompt_tokens = prompt
        if isinstance(completion, int):
            self.completion_tokens = completion
        self.got_usage = True
        details = getattr(usage, "prompt_tokens_details", None)
        cached = getattr(details, "cached_tokens", None)
        written = getattr(details, "cache_write_tokens", None)
        self.cached_tokens = cached if isinstance(cached, int) else 0
        self.cache_write_tokens = written if isinstance(written, int) else 0
        reasoning = getattr(getattr(usage, "completion_tokens_details", None), "reasoning_tokens", None)
        self.reasoning_tokens = reasoning if isinstance(reasoning, int) else 0
        total = getattr(usage, "total_tokens", None)
        # xAI counts reasoning beside completion_tokens (total = prompt + completion + reasoning);
        # OpenAI, DeepSeek and OpenRouter count it inside them.
        self.reasoning_outside_completion = (
            self.reasoning_tokens > 0
            and isinstance(total, int)
            and isinstance(prompt, int)
            and isinstance(completion, int)
            and total == prompt + completion + self.reasoning_tokens
        )
        cost = getattr(usage, "cost", None)  # OpenRouter: US dollars
        ticks = getattr(usage, "cost_in_usd_ticks", None)  # xAI
        if isinstance(ticks, int | float) and not isinstance(ticks, bool):
            self.reported_cost = ticks * USD_PER_XAI_TICK
        elif isinstance(cost, int | float) and not isinstance(cost, bool):
            self.reported_cost = float(cost)

    def text(self) -> str:
        return "".join(self.text_parts)

    def reasoning_text(self) -> str:
        """The reasoning the server streamed beside the content (``reasoning_content``, ``reasoning``)."""
        return "".join(self.reasoning_parts)

    def tool_calls(self) -> list[ToolCallRequest]:
        return [
            ToolCallRequest(
                call_id=slot.call_id or f"call_{key}",
                name=slot.name,
                arguments=parse_tool_arguments("".join(slot.argument_parts)),
            )
            for key, slot in sorted(self.slots.items())
        ]

    def usage(self) -> Usage | None:
        """Usage as reported, with cached prompt tokens split out; ``None`` if the server sent none."""
        if self.prompt_tokens is None or self.completion_tokens is None:
            return None
        extra = self.reasoning_tokens if self.reasoning_outside_completion else 0
        return Usage(
            input_tokens=max(0, self.prompt_tokens - self.cached_tokens - self.cache_write_tokens),
            output_tokens=self.completion_tokens + extra,
            cache_read_tokens=self.cached_tokens,
            cache_write_tokens=self.cache_write_tokens,
            reasoning_tokens=self.reasoning_tokens,
        )

    def complete(self) -> bool:
        """Whether the reply ended: a finish reason, or (servers that send none, kimi-k2 through
        OpenRouter) the final usage chunk, which only a finished generation sends."""
        return self.finish_reason is not None or self.got_usage

    def stop_reason(self, has_calls: bool) -> str:
        if self.finish_reason is None:
            return TOOL_USE if has_calls else (REFUSAL if self.refusal_parts else UNREPORTED)
        reason = _STOP_REASONS.get(self.finish_reason, self.finish_reason)
        if reason == END_TURN and self.refusal_parts and not self.text_parts:
            return REFUSAL
        return TOOL_USE if has_calls and reason == END_TURN else reason
