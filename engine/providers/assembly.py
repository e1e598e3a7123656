"""Pieces both providers need after streaming: tool arguments from JSON text, estimated usage.

A model may emit arguments that are not valid JSON; the call is kept with
``{"__raw__": text}`` so the agent loop can record a malformed call instead of crashing.
"""

from __future__ import annotations

import json
from typing import Any

from proctor.engine.providers.base import AssistantTurn, Message, ToolResults, UserMessage, estimate_tokens
from proctor.engine.tools.toolbox import ToolSpec
from proctor.store.events import ToolCallRequest, Usage

RAW_ARGUMENTS_KEY = "__raw__"


def parse_tool_arguments(text: str, *, when_empty: dict[str, Any] | None = None) -> dict[str, Any]:
    """JSON object text -> dict; empty text -> ``when_empty`` (or ``{}``); anything else -> ``{"__raw__": text}``."""
    if not text.strip():
        return dict(when_empty or {})
    try:
        value = json.loads(text)
    except ValueError:
        return {RAW_ARGUMENTS_KEY: text}
    if isinstance(value, dict):
        return value
    return {RAW_ARGUMENTS_KEY: text}


def raw_arguments(arguments: dict[str, Any]) -> str | None:
    """The original text of a malformed call's arguments, or ``None`` for a well-formed call."""
    raw = arguments.get(RAW_ARGUMENTS_KEY)
    if len(arguments) == 1 and isinstance(raw, str):
        return raw
    return None


def estimate_prompt_tokens(system: str, messages: list[Message], tools: list[ToolSpec]) -> int:
    """A rough count of what we sent, for servers that report no usage."""
    parts = [system]
    for message in messages:
        if isinstance(message, UserMessage):
            parts.append(message.text)
        elif isinstance(message, AssistantTurn):
            parts.append(message.text)
            parts.extend(_call_text(call) for call in message.tool_calls)
        elif isinstance(message, ToolResults):
            parts.extend(result.content for result in message.results)
    for tool in tools:
        parts.append(f"{tool.name} {tool.description} {json.dumps(tool.input_schema)}")
    return sum(estimate_tokens(part) for part in parts)


def estimate_completion_tokens(text: str, tool_calls: list[ToolCallRequest]) -> int:
    """A rough count of what the model produced."""
    return estimate_tokens(text) + sum(estimate_tokens(_call_text(call)) for call in tool_calls)


def estimated_usage(
    system: str,
    messages: list[Message],
    tools: list[ToolSpec],
    text: str,
    tool_calls: list[ToolCallRequest],
) -> Usage:
    return Usage(
        input_tokens=estimate_prompt_tokens(system, messages, tools),
        output_tokens=estimate_completion_tokens(text, tool_calls),
        estimated=True,
    )


def _call_text(call: ToolCallRequest) -> str:
    return f"{call.name} {json.dumps(call.arguments, ensure_ascii=False)}"


def turn_fingerprint(text: str, calls: list[ToolCallRequest]) -> str:
    """Identifies an assistant turn we produced, so its full content can be echoed back."""
    return json.dumps([text, [[c.call_id, c.name, c.arguments] for c in calls]], sort_keys=True)
