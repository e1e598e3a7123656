"""Traces without an agent span, grouped into the conversations they were part of.

A bare model client traced by OpenLLMetry or openai-v2 makes each chat call its own trace, and
the mcp SDK each ``tools/call``; one agent run is then several traces. They are joined by what
ties them for sure: a conversation or session id, a span link, a tool-call id one chat requested
and a later chat answered. A trace holding only tool calls has none of these; it joins the
conversation whose latest chat before it asked for that tool, which is a guess and is counted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from proctor.scenarios.importers.otlp import TraceSpan

CONVERSATION_KEYS = (
    "gen_ai.conversation.id",
    "session.id",
    "traceloop.association.properties.session_id",
    "traceloop.association.properties.conversation_id",
)
Kind = Callable[[TraceSpan], str | None]


@dataclass(frozen=True)
class Grouped:
    traces: list[list[TraceSpan]]
    guessed: int  # tool-only traces put in a conversation by time and tool name


def _ids(messages: Any, kind: str) -> set[str]:
    out = set()
    for m in messages if isinstance(messages, list) else []:
        for p in m.get("parts", []) if isinstance(m, dict) else []:
            if isinstance(p, dict) and p.get("type") == kind and p.get("id"):
                out.add(str(p["id"]))
    return out


def _flat_ids(attrs: dict[str, Any], prefix: str) -> set[str]:
    """OpenLLMetry's ``gen_ai.prompt.N.tool_call_id`` / ``.tool_calls.M.id``."""
    return {
        str(v)
        for k, v in attrs.items()
        if k.startswith(prefix)
        and (k.endswith(".tool_call_id") or (".tool_calls." in k and k.endswith(".id")))
    }


class _Union:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def join(self, i: int, j: int) -> None:
        self.parent[self.find(j)] = self.find(i)


def group_conversations(
    traces: Sequence[list[TraceSpan]], kind: Kind, messages: Callable[[TraceSpan, str], Any]
) -> Grouped:
    """Traces with an agent span stay alone; the others are joined as the module doc says.

    ``messages(span, "in"|"out")`` gives a chat span's messages in the conventions' form.
    """
    n = len(traces)
    u = _Union(n)
    loose = [i for i, t in enumerate(traces) if not any(kind(s) == "agent" for s in t)]
    by_key: dict[str, int] = {}
    # (call id, the conversation's first user text) -> (end, trace) of the chats that asked for it:
    # ids repeat across runs with some providers, so an answer joins the latest asker before it.
    asked_by: dict[tuple[str, str], list[tuple[int, int]]] = {}
    answered: list[tuple[int, int, set[tuple[str, str]]]] = []
    trace_of = {t[0].span.trace_id: i for i, t in enumerate(traces) if t}
    for i in loose:
        for s in traces[i]:
            for key in CONVERSATION_KEYS:
                if s.attrs.get(key):
                    u.join(by_key.setdefault(f"{key}={s.attrs[key]}", i), i)
            for link in s.span.links:
                if link.trace_id in trace_of and trace_of[link.trace_id] in loose:
                    u.join(trace_of[link.trace_id], i)
            if kind(s) == "chat":
                inputs, opener = messages(s, "in"), _opener(messages(s, "in"))
                asked = _ids(messages(s, "out"), "tool_call") | _flat_ids(s.attrs, "gen_ai.completion.")
                for call_id in asked:
                    asked_by.setdefault((call_id, opener), []).append((s.span.end_time_unix_nano, i))
                seen = _ids(inputs, "tool_call") | _ids(inputs, "tool_call_response")
                seen |= _flat_ids(s.attrs, "gen_ai.prompt.")
                answered.append((i, s.span.start_time_unix_nano, {(c, opener) for c in seen}))
    for i, start, wanted in answered:
        for call in wanted:
            before = [a for a in asked_by.get(call, []) if a[0] <= start]
            if before:
                u.join(max(before)[1], i)
    guessed = _attach_tool_only(traces, loose, u, kind, messages)
    groups: dict[int, list[TraceSpan]] = {}
    for i, t in enumerate(traces):
        groups.setdefault(u.find(i), []).extend(t)
    return Grouped(list(groups.values()), guessed)


def _attach_tool_only(
    traces: Sequence[list[TraceSpan]],
    loose: list[int],
    u: _Union,
    kind: Kind,
    messages: Callable[[TraceSpan, str], Any],
) -> int:
    chats = [
        (s.span.end_time_unix_nano, i, _asked_tools(messages(s, "out")))
        for i in loose
        for s in traces[i]
        if kind(s) == "chat"
    ]
    guessed = 0
    for i in loose:
        kinds = {kind(s) for s in traces[i]} - {None}
        if kinds != {"tool"}:
            continue
        tool = next(s for s in traces[i] if kind(s) == "tool")
        start = tool.span.start_time_unix_nano
        name = str(tool.attrs.get("gen_ai.tool.name") or tool.span.name.rsplit(" ", 1)[-1])  # tools/call NAME
        before = [c for c in chats if c[0] <= start and name in c[2]]
        if before:
            u.join(max(before)[1], i)
            guessed += 1
    return guessed


def _opener(messages: Any) -> str:
    """The first user message's text: what a conversation's every chat sends again."""
    for m in messages if isinstance(messages, list) else []:
        if isinstance(m, dict) and m.get("role") == "user":
            parts = m.get("parts")
            return " ".join(str(p.get("content", "")) for p in parts or [] if isinstance(p, dict))
    return ""


def _asked_tools(messages: Any) -> set[str]:
    out = set()
    for m in messages if isinstance(messages, list) else []:
        for p in m.get("parts", []) if isinstance(m, dict) else []:
            if isinstance(p, dict) and p.get("type") == "tool_call" and p.get("name"):
                out.add(str(p["name"]))
    return out


__all__ = ["CONVERSATION_KEYS", "Grouped", "group_conversations"]
