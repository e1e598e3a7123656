"""Which imported calls were MCP calls and to which server, and which tools the model was offered.

A call counts as an MCP call only on evidence (``tool_attribution``). Its own span may give it
(``span_attribution``: an ``mcp__SERVER__TOOL`` name, ``mcp.server.name``, an MCP span, proctor's
``proctor.tool.builtin``). Else its arm's other traces in the file may: another call of that tool
with such evidence, or a tool definition that says whose it is (pydantic-ai records each offered
tool's toolset: its own functions under ``<agent>``, an MCP toolset's with the server's
annotations). Else the suite may (``--suite``): a tool its arm's servers list (the suite's tools
lock, a gold call naming it). A call nothing attributes to an MCP server is the agent's own tool,
a built-in call: adoption does not count it and a note says how many there were.

No instrumentation tried (the mcp SDK, openai-v2, OpenLLMetry, OpenInference, pydantic-ai,
openai-agents) records ``mcp.server.name``. An MCP call without a server goes to the server
another span of the file named for that tool, else to the one server of its arm that lists it,
else to the arm's only server (a suite arm with one server), else to ``(server unknown)``: an MCP
call all the same (with no suite arm, ``proctor judge`` takes the servers seen in the calls as
the arm's). An arm of several servers cannot say which one served it: adoption does not count
such a call, and a note says so.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from proctor.scenarios.importers.common import ImportedTool, ImportedTrajectory
from proctor.scenarios.importers.otlp import TraceSpan
from proctor.scenarios.importers.tool_attribution import ToolAttribution, attribute_tool_call
from proctor.scenarios.loader import LoadedSuite

UNKNOWN_SERVER = "(server unknown)"
# The instrumentation scopes of MCP clients: the mcp SDK's own, fastmcp's, OpenLLMetry's and
# OpenInference's MCP instrumentations (a scope the app names itself is no evidence).
MCP_SCOPES = (
    "mcp-python-sdk",
    "fastmcp",
    "opentelemetry.instrumentation.mcp",
    "openinference.instrumentation.mcp",
)
AGENT_TOOLSET = "<agent>"  # pydantic-ai's toolset_id of an agent's own function tools (2.62)
ArmTools = Mapping[str, Mapping[str, frozenset[str]]]
"""Per suite arm, the tools its servers list and which of its servers list each (empty: one of
them, which is not known, as for a gold call that names no server)."""


def _json(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            return None
    return raw


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


def mcp_scope(scope: str) -> bool:
    """A span written by an MCP client's instrumentation (``MCP_SCOPES``): its tool spans are MCP calls."""
    return any(scope == known or scope.startswith(f"{known}.") for known in MCP_SCOPES)


def span_attribution(s: TraceSpan, name: str, mcp_inside: bool) -> ToolAttribution:
    """Who served the call of tool span ``s`` (``tool_attribution``): proctor's own marker
    (``proctor.tool.builtin``; an export made before it marked a built-in call by leaving out
    ``mcp.method.name``), the server the span names, an MCP span (``mcp.method.name`` tools/call,
    an MCP client's instrumentation, or one inside it: pydantic-ai's and openai-agents'
    ``execute_tool`` around the mcp SDK's client span, ``mcp_inside``)."""
    a = s.attrs
    marker = a.get("proctor.tool.builtin")
    if not isinstance(marker, bool) and "proctor.mcp.server" in a:
        marker = a.get("mcp.method.name") != "tools/call"
    named = str(a.get("proctor.mcp.server") or a.get("mcp.server.name") or "")
    evidence = a.get("mcp.method.name") == "tools/call" or mcp_inside or mcp_scope(s.scope)
    mcp = (not marker) if isinstance(marker, bool) else (True if evidence else None)
    return attribute_tool_call(name, server=named, mcp=mcp)


def _toolsets(raw: Any) -> dict[str, tuple[bool | None, dict[str, Any] | None]]:
    """pydantic-ai's ``model_request_parameters``: per function tool, whether it is the agent's
    own (``toolset_id`` ``<agent>``) or an MCP server's (``metadata`` with the tool's MCP
    ``annotations``), and those annotations."""
    params = _json(raw)
    tools = params.get("function_tools") if isinstance(params, dict) else None
    out: dict[str, tuple[bool | None, dict[str, Any] | None]] = {}
    for t in tools if isinstance(tools, list) else []:
        if not isinstance(t, dict) or not isinstance(t.get("name"), str):
            continue
        meta = t.get("metadata")
        notes = meta.get("annotations") if isinstance(meta, dict) else None
        annotations = {k: v for k, v in notes.items() if v is not None} if isinstance(notes, dict) else None
        if t.get("toolset_id") == AGENT_TOOLSET:
            out[t["name"]] = (True, None)
        elif isinstance(meta, dict) and ("annotations" in meta or "meta" in meta):
            out[t["name"]] = (False, annotations)
    return out


def offered_tools(spans: Sequence[TraceSpan]) -> tuple[ImportedTool, ...]:
    """The tools of the trial's ``gen_ai.tool.definitions`` (JSON text or structured), first seen
    wins, each marked built-in or MCP where the trace says which."""
    tools: dict[str, ImportedTool] = {}
    whose: dict[str, tuple[bool | None, dict[str, Any] | None]] = {}
    for s in spans:
        raw = _json(s.attrs.get("gen_ai.tool.definitions"))
        for item in raw if isinstance(raw, list) else []:
            tool = _definition(item)
            if tool is not None:
                tools.setdefault(tool.name, tool)
        for name, said in _toolsets(s.attrs.get("model_request_parameters")).items():
            whose.setdefault(name, said)
    return tuple(
        replace(t, builtin=whose[t.name][0], annotations=whose[t.name][1]) if t.name in whose else t
        for t in tools.values()
    )


@dataclass
class _Evidence:
    """What the file says of each tool name, and how each call was attributed. The servers its
    MCP calls and tools name count file-wide (a server's name is its own wherever it is called);
    whether a tool was MCP or the agent's own counts per arm (one arm's function may share its
    name with another arm's MCP tool)."""

    servers: dict[str, set[str]] = field(default_factory=dict)  # tool -> servers named ("" none)
    mcp: set[tuple[str, str]] = field(default_factory=set)  # (arm, tool) marked MCP somewhere
    own: set[tuple[str, str]] = field(default_factory=set)  # (arm, tool) marked built-in somewhere
    counts: dict[str, int] = field(
        default_factory=lambda: {"file": 0, "listed": 0, "arm": 0, "shared": 0, "unknown": 0, "builtin": 0}
    )
    unmarked: dict[str, None] = field(default_factory=dict)  # tools of calls nothing marked

    def add(self, arm: str, tool: str, server: str, builtin: bool | None) -> None:
        if builtin is False:
            self.servers.setdefault(tool, set()).add(server)
            self.mcp.add((arm, tool))
        elif builtin is True:
            self.own.add((arm, tool))


def _file_evidence(trajectories: Sequence[ImportedTrajectory]) -> _Evidence:
    seen = _Evidence()
    for t in trajectories:
        for x in t.tools:
            seen.add(t.arm, x.name, x.server, x.builtin)
        for turn in t.turns:
            for c in turn.calls:
                seen.add(t.arm, c.tool, c.server, c.builtin)
    return seen


class _Attributor:
    def __init__(
        self, seen: _Evidence, arm_servers: Mapping[str, Sequence[str]], arm_tools: ArmTools
    ) -> None:
        self.seen, self.arm_servers, self.arm_tools = seen, arm_servers, arm_tools

    def builtin(self, tool: str, arm: str, marked: bool | None) -> bool:
        """A call or tool without a mark of its own: as its arm's others of that name are marked,
        else MCP if the suite's arm lists it, else built-in."""
        if marked is not None:
            return marked
        if (arm, tool) in self.seen.mcp or (arm, tool) in self.seen.own:
            return (arm, tool) not in self.seen.mcp
        return tool not in self.arm_tools.get(arm, {})

    def server(self, tool: str, arm: str, count: bool) -> str:
        """The server of an MCP call that names none."""
        named = {s for s in self.seen.servers.get(tool, set()) if s}
        listing = self.arm_tools.get(arm, {}).get(tool, frozenset())
        own = list(self.arm_servers.get(arm, ()))
        how, found = (
            ("file", next(iter(named)))
            if len(named) == 1
            else ("listed", next(iter(listing)))
            if len(listing) == 1
            else ("arm", own[0])
            if len(own) == 1
            else ("shared", UNKNOWN_SERVER)
            if own
            else ("unknown", UNKNOWN_SERVER)
        )
        self.seen.counts[how] += count
        return found

    def tool(self, x: ImportedTool, arm: str) -> ImportedTool:
        if self.builtin(x.name, arm, x.builtin):
            return replace(x, builtin=True)
        return replace(x, server=x.server or self.server(x.name, arm, False), builtin=False)


def arm_tools_of(loaded: LoadedSuite, server_tools: Mapping[str, Sequence[ImportedTool]]) -> ArmTools:
    """Per arm of the suite, the tools its servers list: the locked ones (``server_tools``), and
    those its scenarios' gold calls name (gold calls are MCP calls; one naming no server leaves
    open which of the arm's)."""
    gold = [g for sc in loaded.scenarios for step in sc.gold_tool_calls for g in step]
    out: dict[str, dict[str, frozenset[str]]] = {}
    for name, arm in loaded.suite.arms.items():
        if arm.baseline:
            continue
        tools: dict[str, set[str]] = {}
        for server in arm.servers:
            for tool in server_tools.get(server, ()):
                tools.setdefault(tool.name, set()).add(server)
        for g in gold:
            if g.server is None or g.server in arm.servers:
                tools.setdefault(g.tool, set()).update([g.server] if g.server else [])
        out[name] = {tool: frozenset(servers) for tool, servers in tools.items()}
    return out


def offer_locked_tools(
    trajectories: Sequence[ImportedTrajectory],
    loaded: LoadedSuite,
    server_tools: Mapping[str, Sequence[ImportedTool]],
) -> tuple[list[ImportedTrajectory], list[str]]:
    """Each trial whose trace lists no tools (openai-agents records none), of a suite arm with
    servers, offered its servers' locked tools; and a note saying how many were."""
    out, offered = [], 0
    for t in trajectories:
        arm = loaded.suite.arms.get(t.arm)
        tools = (
            () if arm is None or arm.baseline else [x for s in arm.servers for x in server_tools.get(s, ())]
        )
        if t.tools or not tools:
            out.append(t)
            continue
        out.append(replace(t, tools=tuple(tools)))
        offered += 1
    note = (
        f"{offered} trial(s) record no tool list: taken as offered their arm's servers' tools from the suite's "
        "tools lock (what the servers list there, which may be more than the agent was given)"
    )
    return out, [note] if offered else []


def attribute_servers(
    trajectories: Sequence[ImportedTrajectory],
    arm_servers: Mapping[str, Sequence[str]],
    arm_tools: ArmTools | None = None,
) -> tuple[list[ImportedTrajectory], list[str]]:
    """The trajectories with every call, result and offered tool marked built-in or MCP, and a
    server on every MCP one; and notes on how."""
    seen = _file_evidence(trajectories)
    who = _Attributor(seen, arm_servers, arm_tools or {})
    out = []
    for t in trajectories:
        turns = []
        for turn in t.turns:
            calls = []
            for c in turn.calls:
                if who.builtin(c.tool, t.arm, c.builtin):
                    if c.builtin is None and (t.arm, c.tool) not in seen.own:  # nothing said either way
                        seen.counts["builtin"] += 1
                        seen.unmarked.setdefault(c.tool)
                    calls.append(replace(c, builtin=True))  # its server, if any, is a label
                else:
                    calls.append(
                        replace(c, server=c.server or who.server(c.tool, t.arm, True), builtin=False)
                    )
            by_id = {c.call_id: c for c in calls}
            results = [
                replace(r, server=call.server, builtin=call.builtin)
                if (call := by_id.get(r.call_id)) is not None
                else replace(r, builtin=who.builtin(r.tool, t.arm, r.builtin))
                for r in turn.results
            ]
            turns.append(replace(turn, calls=tuple(calls), results=tuple(results)))
        out.append(replace(t, turns=tuple(turns), tools=tuple(who.tool(x, t.arm) for x in t.tools)))
    return out, _notes(seen)


def _notes(seen: _Evidence) -> list[str]:
    counts, notes = seen.counts, []
    if counts["builtin"]:
        names = ", ".join(list(seen.unmarked)[:5]) + (", …" if len(seen.unmarked) > 5 else "")
        notes.append(
            f"{counts['builtin']} tool call(s) ({names}) show no sign of an MCP server (no mcp__SERVER__TOOL name, "
            "MCP span, mcp.server.name, nor a tool the suite's arm lists): imported as built-in calls, the "
            "agent's own tools, which adoption does not count; if they were MCP calls, record mcp.server.name "
            "on their spans, or pass --suite with the server's tools locked (proctor tools lock)"
        )
    if counts["listed"]:
        notes.append(
            f"{counts['listed']} MCP tool call(s) record no server: attributed to the one server of their arm "
            "that lists the tool"
        )
    if counts["arm"]:
        notes.append(
            f"{counts['arm']} MCP tool call(s) record no server: attributed to their arm's only server"
        )
    if counts["shared"]:
        notes.append(
            f"{counts['shared']} MCP tool call(s) record no server and their arm has several: imported as server "
            f"'{UNKNOWN_SERVER}', which adoption (calls to the arm's own servers) does not count; record "
            "mcp.server.name on the tool spans to attribute them"
        )
    if counts["unknown"]:
        notes.append(
            f"{counts['unknown']} MCP tool call(s) record no server (mcp.server.name) and no suite arm with one "
            f"server names it: imported as server '{UNKNOWN_SERVER}'; pass --suite with the arm's servers"
        )
    return notes


__all__ = [
    "MCP_SCOPES",
    "UNKNOWN_SERVER",
    "ArmTools",
    "arm_tools_of",
    "attribute_servers",
    "mcp_scope",
    "offer_locked_tools",
    "offered_tools",
    "span_attribution",
]
