"""The tools one trial can call, whatever serves them (built-in, MCP, or retrieval over MCP)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

from proctor.store.events import ContentBlock, ListedTool, McpNotice, ServerConnected, ToolResult


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model sees it. ``name`` is unique within one trial."""

    name: str
    description: str
    input_schema: dict[str, Any]
    server: str = ""
    server_description: str = ""
    # The rest of the server's definition (``tools/list``): not sent to the model, but pinned by a
    # tool lock (engine/tools/surface.py), since a client may show or act on them.
    title: str | None = None
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None
    builtin: bool = False
    """Answered by proctor itself (the baseline's tools, the router's), not by an MCP server."""

    def listed(self) -> ListedTool:
        """The ``tools_listed`` entry of this tool: its whole definition, so a run and its replay
        record the same surface for a tool lock to compare."""
        return ListedTool(
            name=self.name,
            server=self.server,
            description=self.description,
            input_schema=self.input_schema,
            title=self.title,
            output_schema=self.output_schema,
            annotations=self.annotations,
            builtin=self.builtin,
        )


@dataclass(frozen=True)
class ToolCallOutcome:
    """What happened when one tool was called; errors are outcomes, not exceptions."""

    server: str
    tool: str
    content: str
    is_error: bool
    latency_s: float
    error_type: str = ""
    structured: dict[str, Any] | None = None
    blocks: tuple[ContentBlock, ...] = ()
    blobs: tuple[Blob, ...] = ()
    notices: tuple[McpNotice, ...] = ()
    raw: dict[str, Any] | None = None  # the JSON-RPC result, kept only for calls made by hand
    builtin: bool = False  # answered by proctor itself, not by an MCP server

    def as_result(self, call_id: str) -> ToolResult:
        """The ``tool_result`` event of this outcome, uncapped (calls made by hand)."""
        return ToolResult(
            call_id=call_id,
            server=self.server,
            tool=self.tool,
            content=self.content,
            is_error=self.is_error,
            error_type=self.error_type,
            latency_s=self.latency_s,
            structured=self.structured,
            blocks=list(self.blocks),
            builtin=self.builtin,
        )


@dataclass(frozen=True)
class SampleRequest:
    """A server's sampling request, reduced to what any model API takes."""

    system: str
    messages: tuple[tuple[str, str], ...]  # (role, text)
    max_tokens: int


@dataclass(frozen=True)
class SampleReply:
    text: str
    model: str


Sampler = Callable[[SampleRequest], Awaitable[SampleReply]]
# The trial's model, for servers allowed to sample through it (``sampling: model``). Set by the
# agent loop around each tool call, in that call's own task, so concurrent trials never mix.
CURRENT_SAMPLER: ContextVar[Sampler | None] = ContextVar("proctor_current_sampler", default=None)


@dataclass(frozen=True)
class Blob:
    """Binary tool output (an image, audio, a blob resource), stored once by its hash."""

    sha256: str
    mime_type: str
    data: bytes


class Toolbox(Protocol):
    def specs(self) -> list[ToolSpec]: ...

    def connected(self) -> list[ServerConnected]:
        """Who serves these tools (MCP servers' own name, version, capabilities); may be empty."""
        ...

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolCallOutcome: ...

    async def aclose(self) -> None: ...


class EmptyToolbox:
    """A baseline without a repository: the model answers from what it knows."""

    def specs(self) -> list[ToolSpec]:
        return []

    def connected(self) -> list[ServerConnected]:
        return []

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolCallOutcome:
        return ToolCallOutcome(
            "", name, f"unknown tool {name!r}: no tools are available", True, 0.0, "unknown_tool"
        )

    async def aclose(self) -> None:
        return None
