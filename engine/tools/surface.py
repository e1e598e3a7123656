"""A server's tool surface: each tool's definition as the model is shown it, and its SHA-256.

The surface is what a review approves and what a lock pins: a tool's name, title, description,
input schema, output schema and annotations. A changed description is enough to poison an agent
after review, so every one of these fields is hashed. The hash is over canonical JSON (keys
sorted, no spaces, UTF-8), so a server that lists the same tools in another order or with its
keys in another order keeps its hashes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

# One server's tools by name; a surface is every server's, by server name.
ServerTools = dict[str, "ToolDefinition"]
Surface = dict[str, ServerTools]


@dataclass(frozen=True)
class ToolDefinition:
    """One tool as its server lists it (``tools/list``), under its own name (never ``server__tool``)."""

    server: str
    name: str
    description: str
    input_schema: dict[str, Any]
    title: str | None = None
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = field(default=None)
    builtin: bool = False  # not an MCP server's (store.tool_origin): never pinned, never hashed

    def pinned(self) -> dict[str, Any]:
        """The fields a lock pins, absent ones left out (so a server that starts sending an
        empty ``annotations`` object changes its hash, and one that never sent it does not)."""
        out: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
        }
        if self.title is not None:
            out["title"] = self.title
        if self.output_schema is not None:
            out["outputSchema"] = self.output_schema
        if self.annotations is not None:
            out["annotations"] = self.annotations
        return out

    def sha256(self) -> str:
        return hashlib.sha256(canonical_json(self.pinned())).hexdigest()


def canonical_json(value: Any) -> bytes:
    """Keys sorted, no whitespace, UTF-8: the bytes a hash of a definition is taken over."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def server_sha256(tools: Mapping[str, ToolDefinition]) -> str:
    """One hash for a server's whole surface: over its tools' names and hashes, in name order."""
    listing = [[name, tools[name].sha256()] for name in sorted(tools)]
    return hashlib.sha256(canonical_json(listing)).hexdigest()


def own_name(exposed: str, server: str) -> str:
    """The server's name for a tool the trial exposed as ``server__tool`` (names that collide
    across an arm's servers are prefixed so; see engine/tools/mcp_toolbox.py)."""
    prefix = f"{server}__"
    return exposed[len(prefix) :] if exposed.startswith(prefix) and len(exposed) > len(prefix) else exposed


def surface_of(definitions: Iterable[ToolDefinition]) -> Surface:
    out: Surface = {}
    for d in definitions:
        out.setdefault(d.server, {})[d.name] = d
    return {server: dict(sorted(tools.items())) for server, tools in sorted(out.items())}


def from_mcp_tool(server: str, tool: Any) -> ToolDefinition:
    """A definition from an ``mcp.types.Tool`` (snake_case fields in the mcp SDK 2.x)."""
    annotations = getattr(tool, "annotations", None)
    return ToolDefinition(
        server=server,
        name=tool.name,
        description=tool.description or "",
        input_schema=dict(tool.input_schema),
        title=getattr(tool, "title", None),
        output_schema=_plain(getattr(tool, "output_schema", None)),
        annotations=None
        if annotations is None
        else annotations.model_dump(mode="json", by_alias=True, exclude_none=True),
    )


def _plain(value: Any) -> dict[str, Any] | None:
    return None if value is None else dict(value)


__all__ = [
    "ServerTools",
    "Surface",
    "ToolDefinition",
    "canonical_json",
    "from_mcp_tool",
    "own_name",
    "server_sha256",
    "surface_of",
]
