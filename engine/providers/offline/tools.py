"""What the offline agent derives from a task and the tools it is offered, remembered across trials.

Every trial of a suite asks the same questions of the same tool lists (which tools rank first
for this task, can it look things up, what do the system prompt and the tools cost in tokens);
the answers are pure functions, so they are computed once (``MEMO``, ``functools.lru_cache``).
"""

from __future__ import annotations

import functools
import json
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

from proctor.engine.providers.base import AssistantTurn, Message, UserMessage, estimate_tokens
from proctor.engine.providers.offline.args import Focus, fill_arguments, tool_role
from proctor.engine.providers.offline.evidence import task_identifiers
from proctor.engine.providers.offline.plan import has_question
from proctor.engine.tools.ranking import bm25_rank, words
from proctor.engine.tools.toolbox import ToolSpec

T = TypeVar("T")


class ToolsMemo:
    """Results of pure functions of (a key, a list of tools), remembered across trials.

    Every trial on a shared server gets the same ``ToolSpec`` objects (the connection builds them
    once per listing), so they are keyed by identity; an entry keeps its tools alive, so an id
    cannot be reused by another object while it is remembered. Bounded (least recently used)."""

    def __init__(self, size: int = 256) -> None:
        self._size = size
        self._entries: OrderedDict[tuple[Hashable, tuple[int, ...]], tuple[tuple[ToolSpec, ...], Any]] = (
            OrderedDict()
        )

    def get(self, key: Hashable, tools: Sequence[ToolSpec], compute: Callable[[], T]) -> T:
        full = (key, tuple(map(id, tools)))
        hit = self._entries.get(full)
        if hit is not None:
            self._entries.move_to_end(full)
            value: T = hit[1]
            return value
        value = compute()
        self._entries[full] = (tuple(tools), value)
        if len(self._entries) > self._size:
            self._entries.popitem(last=False)
        return value


MEMO = ToolsMemo()


def rank_tools(task: str, tools: list[ToolSpec]) -> list[ToolSpec]:
    """``tools`` by BM25 relevance to ``task`` (a fresh list: callers may reorder it)."""
    return list(MEMO.get(("bm25", task), tools, lambda: tuple(t for _, t in bm25_rank(task, tools))))


# A task that asks where a named symbol is used wants its references; any other task about a
# named symbol starts from its definition. The query ranks the symbol tools for that purpose, so
# the choice does not hinge on which description happens to share the task's incidental words.
USAGE_WORDS = frozenset(words("use used uses usage usages caller callers call calls reference references"))
USAGE_QUERY = "references where a symbol is used callers usages"
DEFINITION_QUERY = "definition of a symbol with its source"


def symbol_purpose(task: str, identifiers: Sequence[str]) -> str:
    """The query that ranks symbol tools for ``task``: its usages or its definition."""
    for ident in sorted(identifiers, key=len, reverse=True):
        task = task.replace(ident, " ")
    return USAGE_QUERY if USAGE_WORDS & set(words(task)) else DEFINITION_QUERY


def rank_for_purpose(query: str, tools: list[ToolSpec]) -> list[ToolSpec]:
    """``tools`` by how many of the query's words their own name (twice) and description use.

    Not BM25: tools of one server share its description ("definitions, references, ..."), which
    flattens BM25's weights exactly where the purpose is to tell those tools apart."""
    wanted = set(words(query))

    def overlap(t: ToolSpec) -> int:
        named = words(t.name)
        return 2 * len(wanted & set(named)) + len(wanted & set(words(t.description)))

    return MEMO.get(("purpose", query), tools, lambda: sorted(tools, key=overlap, reverse=True))


@functools.lru_cache(maxsize=1024)
def task_identifiers_of(task: str) -> tuple[str, ...]:
    return tuple(task_identifiers(task))


@functools.lru_cache(maxsize=1024)
def is_question(task: str) -> bool:
    return has_question(task)


def can_look_up(tools: list[ToolSpec]) -> bool:
    """Whether the code-reading policy could start: a search or symbol tool it can fill."""
    probe = Focus(identifier="x", phrase="x")
    return any(tool_role(t) in ("symbol", "search") and fill_arguments(t, probe) is not None for t in tools)


def routed_tools(content: str) -> list[ToolSpec]:
    try:
        listing = json.loads(content)
    except json.JSONDecodeError:
        return []
    out = []
    for item in listing if isinstance(listing, list) else []:
        if isinstance(item, dict) and isinstance(item.get("tool"), str):
            schema = item.get("input_schema")
            out.append(
                ToolSpec(
                    item["tool"],
                    str(item.get("description", "")),
                    schema if isinstance(schema, dict) else {},
                    str(item.get("server", "")),
                )
            )
    return out


def context_tokens(system: str, messages: list[Message], tools: list[ToolSpec]) -> int:
    total = MEMO.get(("context", system), tools, lambda: fixed_tokens(system, tools))
    parts: list[str] = []
    for m in messages:
        if isinstance(m, UserMessage):
            parts.append(m.text)
        elif isinstance(m, AssistantTurn):
            parts.append(m.text)
            parts.extend(json.dumps(c.arguments) for c in m.tool_calls)
        else:
            parts.extend(r.content for r in m.results)
    return total + sum(estimate_tokens(p) for p in parts)


def fixed_tokens(system: str, tools: list[ToolSpec]) -> int:
    """What every turn of a trial sends besides the conversation: the system prompt and the tools."""
    parts = [system, json.dumps([t.input_schema for t in tools]), *(t.description for t in tools)]
    return sum(estimate_tokens(p) for p in parts)


__all__ = [
    "MEMO",
    "ToolsMemo",
    "can_look_up",
    "context_tokens",
    "fixed_tokens",
    "is_question",
    "rank_tools",
    "routed_tools",
    "task_identifiers_of",
]
