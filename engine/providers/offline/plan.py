"""Which tool serves each requested action, chosen by words alone.

A clause "show the git log" is matched against every tool: its verb against the tool's name
(``git_log``'s description starts with "Shows", ``get_*`` is a way to "show"), its object words
against the tool's name and description weighted by how rare they are among the tools (``log``
tells git tools apart, ``git`` does not). The score is deterministic and needs no model, so the
offline agent can drive servers it has never seen; the code-reading policy keeps the prompts
that are questions about code.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from proctor.engine.providers.offline.intent import (
    Clause,
    action_clauses,
    is_verb_stem,
    tokens,
    verb_synonyms,
)
from proctor.engine.tools.toolbox import ToolSpec

VERB_IN_NAME = 6.0
FALLBACK_RATIO = 0.6  # a runner-up is tried (when the best cannot be filled) only this close
SYNONYM_IN_NAME = 3.0
VERB_LEADS_DESCRIPTION = 2.0
SYNONYM_LEADS_DESCRIPTION = 1.5
DEPRECATED_PENALTY = 3.0
DISCOVERY_PENALTY = 1.0
MODIFIER_WEIGHT = 0.5  # "an entity *with* an observation" is about the entity
_QUESTION = re.compile(r"\?\s*$")
_POLITE = re.compile(r"^\s*(?:please\s+)?(?:can|could|would|will)\s+you\b", re.IGNORECASE)
_DISCOVERY_WORDS = frozenset({"allow", "root", "workspace", "permitted", "accessible"})
_PLACE_WORDS = frozenset({"directory", "dir", "folder", "path", "root"})


@dataclass(frozen=True)
class Request:
    """One action of the prompt and the tools that could perform it, best first."""

    clause: Clause
    candidates: tuple[ToolSpec, ...]
    bound: tuple[tuple[str, Any], ...] = ()  # values the prompt gave by name (explicit instructions)


@dataclass(frozen=True)
class _Doc:
    name: frozenset[str]
    lead: frozenset[str]
    body: frozenset[str]


def tool_verbs(tools: Sequence[ToolSpec]) -> frozenset[str]:
    """Leading words of tool names that may start a request ("echo"), minus namespace prefixes.

    ``git`` leads every git tool's name, so it names the server, not an action.
    """
    firsts: dict[str, set[str]] = {}
    for t in tools:
        parts = re.split(r"[_\-\s.]+|(?<=[a-z])(?=[A-Z])", t.name)
        words = [p.lower() for p in parts if p.isalpha()]
        if not words:
            continue
        lead = words[1] if len(words) > 1 and _shared_prefix(words[0], t.server, tools) else words[0]
        firsts.setdefault(lead, set()).add(t.name)
    return frozenset(firsts)


def _namespace(tool: ToolSpec, tools: Sequence[ToolSpec]) -> set[str]:
    """The server's namespace word in ``tool``'s name (``git`` in ``git_log``), if it has one."""
    first = re.split(r"[_\-\s.]+|(?<=[a-z])(?=[A-Z])", tool.name)[0].lower()
    return set(tokens(first)) if _shared_prefix(first, tool.server, tools) else set()


def _shared_prefix(word: str, server: str, tools: Sequence[ToolSpec]) -> bool:
    same = [t for t in tools if t.server == server]
    return len(same) > 1 and all(t.name.lower().startswith(word) for t in same)


def plan_requests(task: str, tools: Sequence[ToolSpec]) -> list[Request]:
    """Each imperative clause of ``task``, in order, with the tools that match it (maybe none)."""
    clauses = action_clauses(task, tool_verbs(tools))
    return [Request(c, tuple(t for _, t in rank_tools(c, tools))) for c in clauses]


def has_question(task: str) -> bool:
    """Whether a sentence of ``task`` asks something ("Where is X computed?"), not a polite order."""
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", task):
        if _QUESTION.search(sentence) and not _POLITE.match(sentence):
            return True
    return False


def rank_tools(clause: Clause, tools: Sequence[ToolSpec]) -> list[tuple[float, ToolSpec]]:
    """Tools that match ``clause``, best first; ties go to the shorter name, then the earlier tool.

    A match needs the verb (or a synonym) in the tool's name or leading its description, and
    evidence about the object: the verb itself in the name (``echo``), an object word in the
    name (``git_log`` for "the git log"), or two object words in the description; one shared
    description word ("last") is too weak to act on.
    """
    docs = [_doc(t) for t in tools]
    n = len(docs)
    df: dict[str, int] = {}
    for d in docs:
        for w in d.name | d.body:
            df[w] = df.get(w, 0) + 1
    synonyms = verb_synonyms(clause.verb)
    scored: list[tuple[float, int, int, ToolSpec]] = []
    for i, (tool, doc) in enumerate(zip(tools, docs, strict=True)):
        verb = _verb_score(clause.verb, synonyms, doc)
        if verb <= 0:
            continue
        obj = 0.0
        in_name = in_body = 0
        for word in set(clause.objects):
            weight = 2.0 if word in doc.name else 1.0 if word in doc.body else 0.0
            in_name += word in doc.name
            in_body += word in doc.body
            if weight:
                modifier = MODIFIER_WEIGHT if word in clause.modifiers else 1.0
                obj += modifier * weight * math.log(1 + n / df[word])
        if obj <= 0 and doc.name - {clause.verb} - _namespace(tool, tools):
            continue  # only the verb matched: enough for a tool called just that ("echo")
        if verb < VERB_IN_NAME and not in_name and in_body < 2:
            continue
        score = verb + obj
        if "deprecat" in tool.description.lower():
            score -= DEPRECATED_PENALTY
        if is_discovery_tool(tool) and not (set(clause.objects) & _DISCOVERY_WORDS):
            score -= DISCOVERY_PENALTY
        scored.append((score, -len(doc.name), -i, tool))
    scored.sort(key=lambda s: (s[0], s[1], s[2]), reverse=True)
    best = scored[0][0] if scored else 0.0
    return [(s, t) for s, _, _, t in scored if s >= best * FALLBACK_RATIO]


def _verb_score(verb: str, synonyms: frozenset[str], doc: _Doc) -> float:
    if verb in doc.name:
        return VERB_IN_NAME
    if synonyms & doc.name:
        return SYNONYM_IN_NAME
    if verb in doc.lead:
        return VERB_LEADS_DESCRIPTION
    if synonyms & doc.lead:
        return SYNONYM_LEADS_DESCRIPTION
    return 0.0


def _doc(tool: ToolSpec) -> _Doc:
    desc = tokens(tool.description)
    params = tokens(" ".join(_props(tool)))
    lead = frozenset(w for w in desc[:3] if is_verb_stem(w))
    return _Doc(frozenset(tokens(tool.name)), lead, frozenset(desc + params))


def is_discovery_tool(tool: ToolSpec) -> bool:
    """A tool that tells which folders a server may touch (``list_allowed_directories``): no
    required arguments, and its name or description speaks of allowed/root places."""
    if tool.input_schema.get("required"):
        return False
    words = set(tokens(f"{tool.name} {tool.description[:200]}"))
    return bool(words & _DISCOVERY_WORDS) and bool(words & _PLACE_WORDS)


def discovery_tool(tools: Sequence[ToolSpec], server: str) -> ToolSpec | None:
    """The discovery tool of ``server``, else of any server (a suite's servers share one root)."""
    found = [t for t in tools if is_discovery_tool(t)]
    same = [t for t in found if t.server == server]
    pool = same or found
    return pool[0] if pool else None


def _props(tool: ToolSpec) -> dict[str, object]:
    props = tool.input_schema.get("properties", {})
    return props if isinstance(props, dict) else {}
