"""Whose tool a recorded call was: an MCP server's, or the agent's own (built-in).

A transcript or trace names a tool; only some sources say who served it. A call is an MCP call
when something says so: its name is ``mcp__SERVER__TOOL`` (as Claude Code and Claude's Agent SDK
name MCP tools), the source names its server (``mcp.server.name``), or the reader has other
evidence (an MCP span around it, a tool the arm's server lists). Otherwise it is the agent's own
tool (Claude Code's Read, Grep, Bash; an openai-agents function tool; a pydantic-ai plain
function): a built-in call, which adoption never counts and replay never repeats. Readers of
every format (``import otel`` today, agent transcripts next) decide through this one function.
"""

from __future__ import annotations

from dataclasses import dataclass

MCP_PREFIX = "mcp__"


@dataclass(frozen=True)
class ToolAttribution:
    """``server``: the MCP server ("" when nothing names it; of a built-in call, the label its
    source gave it, if any); ``tool``: the tool's own name; ``builtin``: True for the agent's own
    tool, False for an MCP call, None when nothing says (a reader with evidence elsewhere in its
    source decides later)."""

    server: str
    tool: str
    builtin: bool | None


def split_mcp_name(name: str) -> tuple[str, str] | None:
    """``mcp__SERVER__TOOL`` as (SERVER, TOOL); None for any other name."""
    if not name.startswith(MCP_PREFIX) or name.count("__") < 2:
        return None
    server, _, tool = name[len(MCP_PREFIX) :].partition("__")
    return (server, tool) if server and tool else None


def attribute_tool_call(
    name: str, *, server: str = "", mcp: bool | None = None, otherwise: bool | None = None
) -> ToolAttribution:
    """Who served a call of ``name``.

    ``server``: the server the source names for it (an MCP call, then, unless ``mcp`` is False:
    a built-in call's label). ``mcp``: the reader's own evidence: True (an MCP span), False (the
    source marks it built-in, as proctor's ``proctor.tool.builtin`` does), None (none).
    ``otherwise``: the answer when nothing says, ``True`` for a source whose every MCP call is
    named so (a Claude Code transcript: then Read is built-in), None to leave it to the reader
    (OpenTelemetry: another span may tell).
    """
    named = split_mcp_name(name)
    if mcp is False:
        return ToolAttribution(server, name, True)
    if named is not None:
        return ToolAttribution(server or named[0], named[1], False)
    if server or mcp:
        return ToolAttribution(server, name, False)
    return ToolAttribution("", name, otherwise)


__all__ = ["MCP_PREFIX", "ToolAttribution", "attribute_tool_call", "split_mcp_name"]
