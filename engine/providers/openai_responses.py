"""OpenAI's Responses API wire format: the conversation as input items, streamed output items in.

The -pro models are served by this API only (model_rules.py); a suite may choose it for any
``openai:`` model (``model_settings.MODEL.api: responses``). Requests are stateless
(``store: false``): each reply's output items (reasoning with its ``encrypted_content``,
function calls, messages) are sent back exactly as received with the turn that produced them,
as the API requires of reasoning that preceded a function call.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from proctor.engine.providers.assembly import (
    parse_tool_arguments,
    raw_arguments,
    turn_fingerprint,
)
from proctor.engine.providers.base import AssistantTurn, Message, Reasoning, ToolResults, UserMessage
from proctor.engine.providers.openai_wire import TOOL_ERROR_PREFIX
from proctor.engine.tools.toolbox import ToolSpec
from proctor.store.events import ToolCallRequest, Usage
from proctor.store.outcomes import END_TURN, MAX_TOKENS, REFUSAL, TOOL_USE


def to_responses_input(
    messages: list[Message],
    echo: Mapping[str, list[dict[str, Any]]] | None = None,
    wire_name: Callable[[str], str] = str,
) -> list[dict[str, Any]]:
    """The neutral conversation as Responses input items; an assistant turn this session
    received goes back as its output items, as received (``echo``, by ``turn_fingerprint``)."""
    items: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, UserMessage):
            items.append({"role": "user", "content": message.text})
        elif isinstance(message, AssistantTurn):
            received = (echo or {}).get(turn_fingerprint(message.text, message.tool_calls))
            if received is not None:
                items += [dict(item) for item in received]
                continue
            if message.text:
                items.append({"role": "assistant", "content": message.text})
            for call in message.tool_calls:
                raw = raw_arguments(call.arguments)
                items.append(
                    {
                        "type": "function_call",
                        "call_id": call.call_id,
                        "name": wire_name(call.name),
                        "arguments": raw
                        if raw is not None
                        else json.dumps(call.arguments, ensure_ascii=False),
                    }
                )
        elif isinstance(message, ToolResults):
            for result in message.results:
                output = TOOL_ERROR_PREFIX + result.content if result.is_error else result.content
                items.append({"type": "function_call_output", "call_id": result.call_id, "output": output})
    return items


def to_responses_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": {"type": "object", **tool.input_schema},
            "strict": False,
        }
        for tool in tools
    ]


@dataclass
class ResponsesStreamState:
    """Folds Responses stream events into output items, text, reasoning, usage and status."""

    items: dict[int, dict[str, Any]] = field(default_factory=dict)
    text_parts: list[str] = field(default_factory=list)
    argument_parts: dict[int, list[str]] = field(default_factory=dict)
    summary_parts: list[str] = field(default_factory=list)
    status: str | None = None
    incomplete_reason: str | None = None
    usage_seen: dict[str, Any] | None = None

    def feed(self, event: Any) -> str | None:
        kind = getattr(event, "type", "")
        if kind == "response.output_text.delta":
            self.text_parts.append(event.delta)
            return str(event.delta) or None
        if kind == "response.function_call_arguments.delta":
            self.argument_parts.setdefault(event.output_index, []).append(event.delta)
        elif kind == "response.reasoning_summary_text.delta":
            self.summary_parts.append(event.delta)
        elif kind in ("response.output_item.added", "response.output_item.done"):
            self.items[event.output_index] = _plain(event.item)
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            response = _plain(event.response)
            self.status = response.get("status")
            self.incomplete_reason = (response.get("incomplete_details") or {}).get("reason")
            self.usage_seen = response.get("usage")
            for index, item in enumerate(response.get("output") or []):
                self.items[index] = item
        return None

    @property
    def finished(self) -> bool:
        return self.status is not None

    def _ordered(self) -> list[dict[str, Any]]:
        return [self.items[i] for i in sorted(self.items)]

    def text(self) -> str:
        parts = [
            str(c.get("text", ""))
            for item in self._ordered()
            if item.get("type") == "message"
            for c in item.get("content") or []
            if c.get("type") == "output_text"
        ]
        return "".join(parts) if parts else "".join(self.text_parts)

    def refusal(self) -> str:
        return "".join(
            str(c.get("refusal", ""))
            for item in self._ordered()
            if item.get("type") == "message"
            for c in item.get("content") or []
            if c.get("type") == "refusal"
        )

    def tool_calls(self) -> list[ToolCallRequest]:
        calls = []
        for index, item in sorted(self.items.items()):
            if item.get("type") != "function_call":
                continue
            arguments = item.get("arguments") or "".join(self.argument_parts.get(index, []))
            calls.append(
                ToolCallRequest(
                    call_id=str(item.get("call_id") or item.get("id") or f"call_{index}"),
                    name=str(item.get("name", "")),
                    arguments=parse_tool_arguments(arguments),
                )
            )
        return calls

    def reasoning(self) -> list[Reasoning]:
        out = []
        for item in self._ordered():
            if item.get("type") != "reasoning":
                continue
            summary = "\n\n".join(str(s.get("text", "")) for s in item.get("summary") or [])
            text = "\n\n".join(str(c.get("text", "")) for c in item.get("content") or [])
            out.append(
                Reasoning(
                    text or summary, "summary" if summary and not text else "reasoning", not (text or summary)
                )
            )
        return out

    def wire_items(self) -> list[dict[str, Any]]:
        """The reply's output items as input for the next request: ids and encrypted reasoning kept."""
        out = []
        for item in self._ordered():
            kept = {k: v for k, v in item.items() if k != "status" or item.get("type") == "message"}
            if item.get("type") == "reasoning":
                kept = {k: kept[k] for k in ("type", "id", "summary", "encrypted_content") if k in kept}
            out.append(kept)
        return out

    def usage(self) -> Usage | None:
        u = self.usage_seen
        if not u:
            return None
        cached = int((u.get("input_tokens_details") or {}).get("cached_tokens") or 0)
        reasoning = int((u.get("output_tokens_details") or {}).get("reasoning_tokens") or 0)
        return Usage(
            input_tokens=max(0, int(u.get("input_tokens") or 0) - cached),
            output_tokens=int(u.get("output_tokens") or 0),
            cache_read_tokens=cached,
            reasoning_tokens=reasoning,
        )

    def stop_reason(self, has_calls: bool) -> str:
        if self.status == "incomplete":
            return REFUSAL if self.incomplete_reason == "content_filter" else MAX_TOKENS
        if self.refusal() and not self.text():
            return REFUSAL
        return TOOL_USE if has_calls else END_TURN


def _plain(value: object) -> dict[str, Any]:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        dumped = dump(mode="json", exclude_none=True)
        return dumped if isinstance(dumped, dict) else {}
    return value if isinstance(value, dict) else {}


__all__ = ["ResponsesStreamState", "to_responses_input", "to_responses_tools"]
