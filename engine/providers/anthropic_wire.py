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
from proctor.store.events import AnswerCitation, ToolCallRequest

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


TEXT_BLOCK_RUN_SEPARATOR = "\n\n"
"""Between text that other blocks (a tool call, a search) interrupt; adjacent text blocks (the
spans a citation splits a sentence into) are one text, joined as they are."""


@dataclass
class _Block:
    """One content block as it streams in: text (with its citations), tool_use, thinking,
    redacted_thinking, or another kind (server tools and their results) kept as received."""

    kind: str
    parts: list[str] = field(default_factory=list)
    call_id: str = ""
    name: str = ""
    initial_input: dict[str, Any] = field(default_factory=dict)
    signature: str = ""
    data: str = ""
    citations: list[dict[str, Any]] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)

    def arguments(self) -> dict[str, Any]:
        return parse_tool_arguments("".join(self.parts), when_empty=self.initial_input)

    def wire(self) -> dict[str, Any]:
        if self.kind == "tool_use":
            return {"type": "tool_use", "id": self.call_id, "name": self.name, "input": self.arguments()}
        if self.kind == "thinking":
            return {"type": "thinking", "thinking": "".join(self.parts), "signature": self.signature}
        if self.kind == "redacted_thinking":
            return {"type": "redacted_thinking", "data": self.data}
        if self.kind == "text":
            out: dict[str, Any] = {"type": "text", "text": "".join(self.parts)}
            if self.citations:
                out["citations"] = list(self.citations)
            return out
        if self.parts:  # a server tool's input, streamed as JSON like a tool_use's
            return {**self.raw, "input": self.arguments()}
        return dict(self.raw)

    def answer_citations(self) -> list[AnswerCitation]:
        text = "".join(self.parts)
        return [
            AnswerCitation(
                type=str(c.get("type", "")),
                cited_text=str(c.get("cited_text", "")),
                title=str(c.get("title") or c.get("document_title") or ""),
                url=str(c.get("url", "")),
                supports=text,
            )
            for c in self.citations
        ]


@dataclass
class AnthropicStreamState:
    """Folds raw stream events into content blocks, usage and stop reason."""

    blocks: dict[int, _Block] = field(default_factory=dict)
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    thinking_tokens: int | None = None
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
            if delta.type == "citations_delta" and block.kind == "text":
                block.citations.append(_plain(delta.citation))
            elif delta.type == "input_json_delta" and block.kind not in ("text", "thinking"):
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
            citations = [_plain(c) for c in getattr(block, "citations", None) or []]
            self.blocks[index] = _Block("text", [text] if text else [], citations=citations)
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
        else:
            raw = _plain(block)
            initial = raw.get("input") if isinstance(raw.get("input"), dict) else {}
            self.blocks[index] = _Block(kind, raw=raw, initial_input=initial)
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
        details = _plain(getattr(usage, "output_tokens_details", None))
        thinking = details.get("thinking_tokens") if isinstance(details, dict) else None
        if isinstance(thinking, int):
            self.thinking_tokens = thinking

    def continued_by(self, more: AnthropicStreamState) -> AnthropicStreamState:
        """This paused reply and its continuation as one reply: the blocks in order, the usage summed."""

        def total(a: int | None, b: int | None) -> int | None:
            return None if a is None and b is None else (a or 0) + (b or 0)

        offset = max(self.blocks, default=-1) + 1
        return AnthropicStreamState(
            blocks={**self.blocks, **{offset + i: b for i, b in more.blocks.items()}},
            input_tokens=total(self.input_tokens, more.input_tokens),
            output_tokens=total(self.output_tokens, more.output_tokens),
            cache_read_tokens=self.cache_read_tokens + more.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + more.cache_write_tokens,
            thinking_tokens=total(self.thinking_tokens, more.thinking_tokens),
            stop_reason=more.stop_reason,
            finished=more.finished,
        )

    def _ordered(self) -> list[_Block]:
        return [self.blocks[index] for index in sorted(self.blocks)]

    def text(self) -> str:
        """The answer's text: adjacent text blocks joined as they are (citations split sentences
        into blocks), runs of them that other blocks interrupt apart as paragraphs."""
        runs: list[str] = []
        current: list[str] | None = None
        for block in self._ordered():
            if block.kind != "text":
                current = None
                continue
            if current is None:
                current = []
                runs.append("")
            runs[-1] += "".join(block.parts)
        return TEXT_BLOCK_RUN_SEPARATOR.join(r.strip("\n") for r in runs if r.strip())

    def citations(self) -> list[AnswerCitation]:
        return [c for b in self._ordered() if b.kind == "text" for c in b.answer_citations()]

    def reasoning(self) -> list[tuple[str, bool]]:
        """(text, redacted) of each thinking block, in order."""
        out: list[tuple[str, bool]] = []
        for b in self._ordered():
            if b.kind == "thinking":
                out.append(("".join(b.parts), False))
            elif b.kind == "redacted_thinking":
                out.append(("", True))
        return out

    def tool_calls(self) -> list[ToolCallRequest]:
        return [
            ToolCallRequest(call_id=b.call_id, name=b.name, arguments=b.arguments())
            for b in self._ordered()
            if b.kind == "tool_use"
        ]

    def has_thinking(self) -> bool:
        return any(b.kind in ("thinking", "redacted_thinking") for b in self.blocks.values())

    def needs_echo(self) -> bool:
        """Whether the next request must carry this reply's content exactly as received: the API
        refuses a continuation whose thinking blocks or server-tool results were rebuilt."""
        return any(b.kind not in ("text", "tool_use") for b in self.blocks.values())

    def wire_content(self) -> list[dict[str, Any]]:
        """The assistant content exactly as received, for echoing back (thinking blocks included)."""
        return [b.wire() for b in self._ordered()]


def _plain(value: object) -> Any:
    """An SDK model (or a dict) as plain JSON-able data, the fields the API sent."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json", exclude_none=True, by_alias=True)
    return value if isinstance(value, dict) else {}
