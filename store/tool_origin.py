"""Whether a tool call, its result or an offered tool was built-in (answered by the agent's own
harness or by proctor) rather than an MCP server: one marker, one predicate.

Every ``tool_call``, ``tool_result`` and listed tool carries ``builtin`` (true or false), set by
whoever produced it: the baseline's toolbox and the router mark theirs, an MCP connection's are
false, an importer says which calls its source attributes to an MCP server. A server name never
decides: a user may call a server ``builtin``. Events written before the marker existed have no
such field; they read as they always did, built-in when their server is the one proctor's own
tools were listed under (``builtin``, or the router's ``proctor-router``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Protocol

BUILTIN_SERVER: Final = "builtin"
"""The server label of built-in tools (the baseline's, an imported harness's own): a label, not the marker."""
LEGACY_BUILTIN_SERVERS: Final = frozenset({BUILTIN_SERVER, "proctor-router"})
"""The servers that meant "built-in" before the marker: how an unmarked event is read."""


class ToolOrigin(Protocol):
    """What the predicate reads: a tool event, a listed tool, their msgspec Structs, a digest's call."""

    @property
    def server(self) -> str: ...

    @property
    def builtin(self) -> bool | None: ...


def is_builtin(tool: ToolOrigin | Mapping[str, Any]) -> bool:
    """The call, result or offered tool was built-in, not an MCP server's. Reads an event, a
    Struct, a record with ``server`` and ``builtin``, or an event's payload as plain JSON."""
    if isinstance(tool, Mapping):
        marker, server = tool.get("builtin"), tool.get("server", "")
    else:
        marker, server = tool.builtin, tool.server
    if isinstance(marker, bool):
        return marker
    return server in LEGACY_BUILTIN_SERVERS


__all__ = ["BUILTIN_SERVER", "LEGACY_BUILTIN_SERVERS", "ToolOrigin", "is_builtin"]
