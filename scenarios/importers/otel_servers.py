"""Which MCP server each imported call went to, and which tools the model was offered.

No instrumentation tried (the mcp SDK, openai-v2, OpenLLMetry, OpenInference, pydantic-ai,
openai-agents) records ``mcp.server.name``. Left empty, such calls read as "tools unused" and the
arm as a baseline. A call without a server goes to the server another span of the file named for
that tool, else to the arm's only server (a suite arm with one server: the name is unique among
its servers), else to ``(server unknown)``: an MCP call all the same, never an unused tool (with no
suite arm, ``proctor judge`` takes the servers seen in the calls as the arm's). An arm of several
servers cannot say which one served it: adoption does not count such a call, and a note says so.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from proctor.scenarios.importers.common import ImportedTool, ImportedTrajectory
from proctor.scenarios.importers.otlp import TraceSpan

UNKNOWN_SERVER = "(server unknown)"


def _definition(raw: Any) -> ImportedTool | None:
    """One of ``gen_ai.tool.definitions``: ``{name, description, parameters}``, or OpenAI's
    ``{type: function, function: {...}}``."""
    if not isinstance(raw, dict):
        return None
    inner = raw.get("function")
    fn: dict[str, Any] = inner if isinstance(inner, dict) else raw
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        return None
    schema = fn.get("parameters") or fn.get("input_schema") or fn.get("inputSchema") or {}
    description = fn.get("description")
    return ImportedTool(
        name,
        "",
        description if isinstance(description, str) else "",
        schema if isinstance(schema, dict) else {},
    )


def offered_tools(spans: Sequence[TraceSpan]) -> tuple[ImportedTool, ...]:
    """The tools of the trial's ``gen_ai.tool.definitions`` (JSON text or structured), first seen wins."""
    tools: dict[str, ImportedTool] = {}
    for s in spans:
        raw = s.attrs.get("gen_ai.tool.definitions")
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except json.JSONDecodeError:
                continue
        for item in raw if isinstance(raw, list) else []:
            tool = _definition(item)
            if tool is not None:
                tools.setdefault(tool.name, tool)
    return tuple(tools.values())


def attribute_servers(
    trajectories: Sequence[ImportedTrajectory], arm_servers: Mapping[str, Sequence[str]]
) -> tuple[list[ImportedTrajectory], list[str]]:
    """The trajectories with a server on every call and offered tool, and notes on how."""
    named: dict[str, set[str]] = {}
    for t in trajectories:
        for turn in t.turns:
            for c in turn.calls:
                if c.server:
                    named.setdefault(c.tool, set()).add(c.server)
    counts = {"file": 0, "arm": 0, "shared": 0, "unknown": 0}

    def server(tool: str, arm: str, count: bool) -> str:
        seen, own = named.get(tool, set()), list(arm_servers.get(arm, ()))
        how, found = (
            ("file", next(iter(seen)))
            if len(seen) == 1
            else ("arm", own[0])
            if len(own) == 1
            else ("shared", UNKNOWN_SERVER)
            if own
            else ("unknown", UNKNOWN_SERVER)
        )
        counts[how] += count
        return found

    out = []
    for t in trajectories:
        turns = tuple(
            replace(
                turn,
                calls=tuple(
                    c if c.server else replace(c, server=server(c.tool, t.arm, True)) for c in turn.calls
                ),
                results=tuple(
                    r if r.server else replace(r, server=server(r.tool, t.arm, False)) for r in turn.results
                ),
            )
            for turn in t.turns
        )
        tools = tuple(x if x.server else replace(x, server=server(x.name, t.arm, False)) for x in t.tools)
        out.append(replace(t, turns=turns, tools=tools))
    notes = []
    if counts["arm"]:
        notes.append(
            f"{counts['arm']} tool call(s) record no MCP server: attributed to their arm's only server"
        )
    if counts["shared"]:
        notes.append(
            f"{counts['shared']} tool call(s) record no MCP server and their arm has several: imported as server "
            f"'{UNKNOWN_SERVER}', which adoption (calls to the arm's own servers) does not count; record "
            "mcp.server.name on the tool spans to attribute them"
        )
    if counts["unknown"]:
        notes.append(
            f"{counts['unknown']} tool call(s) record no MCP server (mcp.server.name) and no suite arm with one "
            f"server names it: imported as server '{UNKNOWN_SERVER}'; pass --suite with the arm's servers"
        )
    return out, notes


__all__ = ["UNKNOWN_SERVER", "attribute_servers", "offered_tools"]
