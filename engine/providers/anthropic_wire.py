"""Anthropic Messages wire format: the neutral conversation out, streamed content blocks in.

Raw stream events are folded here rather than by the SDK's accumulating helper, so malformed
tool-input JSON becomes a recorded malformed call instead of an error, and thinking blocks are
kept verbatim for echoing back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from proctor.engine.providers.assembly import parse_tool_arguments, turn_fingerprint
from proctor.engine.providers.base import AssistantTurn, Message, ToolOutcome, ToolResults, UserMessage
from proctor.engine.tools.toolbox import ToolSpec
from proctor.store.events import ToolCallRequest

if TYPE_CHECKING:
    from anthropic.types import RawMessageStreamEvent


def to_anthropic_messages(
    messages: list[Message],
    echo: Mapping[str, list[dict[str, Any]]] | None = None,
    wire_name: Callable[[str], str] = str,
) -> list[dict[str, Any]]:
    """The neutral conversation as Messages API turns; consecutive user-role turns are merged.

    ``echo`` maps ``turn_fingerprint`` of assistant turns this session received to their content
    exactly as received: the API rejects a tool-use continuation whose thinking blocks were
    dropped or rebuilt. ``wire_name`` gives a tool's name as the API was sent it (tool_rules.py).
    """
    wire: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, UserMessage):
            _append(wire, "user", [{"type": "text", "text": message.text}])
        elif isinstance(message, AssistantTurn):
            received = (echo or {}).get(turn_fingerprint(message.text, message.tool_calls))
            if received is not None:
                _append(wire, "assistant", [dict(block) for block in received])
                continue
            blocks: list[dict[str, Any]] = []
            if message.text:
                blocks.append({"type": "text", "text": message.text})
            for call in message.tool_calls:
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call.call_id,
                        "name": wire_name(call.name),
                        "input": call.arguments,
                    }
                )
            if blocks:
                _append(wire, "assistant", blocks)
        elif isinstance(message, ToolResults):
            _append(
                wire,
                "user",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": result.call_id,
                        "content": _tool_result_content(result),
                        "is_error": result.is_error,
                    }
                    for result in message.results
                ],
            )
    return wire


def _tool_result_content(result: ToolOutcome) -> str | list[dict[str, Any]]:
    """Text alone, or text then the images: Messages API tool results accept image blocks."""
    if not result.images:
        return result.content
    images = [
        {"type": "image", "source": {"type": "base64", "media_type": i.mime_type, "data": i.data_b64}}
        for i in result.images
    ]
    return [{"type": "text", "text": result.content}, *images]


def to_anthropic_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "name": tool.name,
            "description": tool.description,
            "input_schema": {"type": "object", **tool.input_schema},
        }
        for tool in tools
    ]


def _append(wire: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]]) -> None:
    if wire and wire[-1]["role"] == role:
        wire[-1]["content"].extend(blocks)
    else:
        wire.append({"role": role, "content": blocks})


@dataclass
class _Block:
    """One content block as it streams in: text, tool_use, thinking or redacted_thinking."""

    kind: str
    parts: list[str] = field(default_factory=list)
    call_id: str = ""
    name: str = ""
    initial_input: dict[str, Any] = field(default_factory=dict)
    signature: str = ""
    data: str = ""

    def arguments(self) -> dict[str, Any]:
        return parse_tool_arguments("".join(self.parts), when_empty=self.initial_input)

    def wire(self) -> dict[str, Any]:
        if self.kind == "tool_use":
            return {"type": "tool_use", "id": self.call_id, "name": self.name, "input": self.arguments()}
        if self.kind == "thinking":
            return {"type": "thinking", "thinking": "".join(self.parts), "signature": self.signature}
        if self.kind == "redacted_thinking":
            return {"type": "redacted_thinking", "data": self.data}
        return {"type": "text", "text": "".join(self.parts)}


@dataclass
class AnthropicStreamState:
    """Folds raw stream events into content blocks, usage and stop reason."""

    blocks: dict[int, _Block] = field(default_factory=dict)
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    stop_reason: str | None = None
    finished: bool = False

    def feed(self, event: RawMessageStreamEvent) -> str | None:
        """Apply one event; returns a text delta to show, if the event carried one."""
        if event.type == "message_start":
            self._take_usage(getattr(event.message, "usage", None))
        elif event.type == "content_block_start":
            return self._start_block(event.index, event.content_block)
        elif event.type == "content_block_delta":
            block = self.blocks.get(event.index)
            delta = event.delta
            if block is None:
                return None
            if delta.type == "text_delta" and block.kind == "text":
                block.parts.append(delta.text)
                return delta.text or None
            if delta.type == "input_json_delta" and block.kind == "tool_use":
                block.parts.append(delta.partial_json)
            elif delta.type == "thinking_delta" and block.kind == "thinking":
                block.parts.append(delta.thinking)
            elif delta.type == "signature_delta" and block.kind == "thinking":
                block.signature += delta.signature
        elif event.type == "message_delta":
            self.stop_reason = event.delta.stop_reason or self.stop_reason
            self._take_usage(getattr(event, "usage", None))
        elif event.type == "message_stop":
            self.finished = True
        return None

    def _start_block(self, index: int, block: Any) -> str | None:
        kind = getattr(block, "type", "")
        if kind == "text":
            text = block.text or ""
            self.blocks[index] = _Block("text", [text] if text else [])
            return text or None
        if kind == "tool_use":
            initial = block.input if isinstance(block.input, dict) else {}
            self.blocks[index] = _Block("tool_use", call_id=block.id, name=block.name, initial_input=initial)
        elif kind == "thinking":
            thinking = block.thinking or ""
            self.blocks[index] = _Block(
                "thinking", [thinking] if thinking else [], signature=block.signature or ""
            )
        elif kind == "redacted_thinking":
            self.blocks[index] = _Block("redacted_thinking", data=block.data)
        return None

    def _take_usage(self, usage: object) -> None:
        if usage is None:
            return
        input_tokens = getattr(usage, "input_tokens", None)
        if isinstance(input_tokens, int):
            self.input_tokens = input_tokens
        output_tokens = getattr(usage, "output_tokens", None)
        if isinstance(output_tokens, int):
            self.output_tokens = output_tokens
        cache_read = getattr(usage, "cache_read_input_tokens", None)
        if isinstance(cache_read, int):
            self.cache_read_tokens = cache_read
        cache_write = getattr(usage, "cache_creation_input_tokens", None)
        if isinstance(cache_write, int):
            self.cache_write_tokens = cache_write

    def _ordered(self) -> list[_Block]:
        return [self.blocks[index] for index in sorted(self.blocks)]

    def text(self) -> str:
        return "".join("".join(b.parts) for b in self._ordered() if b.kind == "text")

    def tool_calls(self) -> list[ToolCallRequest]:
        return [
            ToolCallRequest(call_id=b.call_id, name=b.name, arguments=b.arguments())
            for b in self._ordered()
            if b.kind == "tool_use"
        ]

    def has_thinking(self) -> bool:
        return any(b.kind in ("thinking", "redacted_thinking") for b in self.blocks.values())

    def wire_content(self) -> list[dict[str, Any]]:
        """The assistant content exactly as received, for echoing back (thinking blocks included)."""
        return [b.wire() for b in self._ordered()]
