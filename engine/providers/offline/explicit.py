"""Explicit instructions: "Use read_text_file to read inventory/stock.py" calls that tool.

When a prompt names an offered tool after a cue ("use", "call", "run", "invoke", "with",
"via", "using", or "the NAME tool"), the agent does not rank tools at all: it calls the named
one, with arguments read from the words around the name. A value is bound to a property the
prompt names ("with message hello", "a=2 and b=3", "revision: HEAD"), to the first required
text property after "for" ("get_current_time for Europe/Paris"), to source/target properties
from "from X to Y", and a value with digits ("14:30") to the next required text property left;
everything else (a path under the server's root, a name, a type) is filled from the schema by
the general filler (``fill``). Several named tools make several requests, in prompt order.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from typing import Any

from proctor.engine.providers.offline.fill import path_fields
from proctor.engine.providers.offline.intent import Clause, extract_literals, is_verb_stem, stem, tokens
from proctor.engine.providers.offline.plan import Request
from proctor.engine.providers.offline.schema import deref, prop_kind, schema_props
from proctor.engine.tools.toolbox import ToolSpec

_CUE_BEFORE = re.compile(
    r"\b(?:use|call|run|invoke|execute|try|using|with|via|through|calling)\s+(?:the\s+|a\s+)?(?:tool\s+)?[`'\"]?$",
    re.IGNORECASE,
)
_NOT_TOOL_AFTER = re.compile(r"^[`'\"]?\s+(?:server|mcp)\b", re.IGNORECASE)
_CUE_AFTER = re.compile(r"^[`'\"]?\s+tool\b", re.IGNORECASE)
_VALUE = r"""("[^"\n]*"|'[^'\n]*'|`[^`\n]*`|[^\s,;]+)"""
_TO_VERB = re.compile(r"^\W*(?:tool\s+)?(?:to|and)\s+([A-Za-z]+)", re.IGNORECASE)
_FOR = re.compile(rf"\bfor\s+(?:the\s+)?{_VALUE}", re.IGNORECASE)
_FROM_TO = re.compile(rf"\bfrom\s+{_VALUE}\s+to\s+{_VALUE}", re.IGNORECASE)
_DIGITS = re.compile(r"""(?<![\w/.-])(\d[\w:.-]*)(?![\w/])""")
MAX_LITERAL_CHARS = 20_000
_STOP = frozenset("a an the this that it me us them all each every some any".split())
_SOURCE = frozenset(tokens("source from src origin old"))
_TARGET = frozenset(tokens("target to dest destination new"))


def explicit_requests(task: str, tools: Sequence[ToolSpec]) -> list[Request]:
    """One request per offered tool the prompt tells the agent to use, in prompt order."""
    mentions = _mentions(task, tools)
    out = []
    for i, (start, end, tool) in enumerate(mentions):
        begin = 0 if i == 0 else start
        stop = mentions[i + 1][0] if i + 1 < len(mentions) else len(task)
        before, after = task[begin:start], re.sub(r"^[`'\"]", "", task[end:stop])
        text = f"{_CUE_BEFORE.sub(' ', before)} {after}".strip()
        clause = _clause(text, after, tool)
        # Values written after the name are the instruction's own ("Use T with sheet = 'S1'");
        # they win over words before it ("Describe a sheet: used range. Use T ...").
        bound = bound_arguments(text, tool) | bound_arguments(after, tool)
        out.append(Request(clause, (tool,), tuple(bound.items())))
    return out


def _mentions(task: str, tools: Sequence[ToolSpec]) -> list[tuple[int, int, ToolSpec]]:
    """Where the prompt names an offered tool after a cue; longer names first ("get-sum", not "get")."""
    taken: list[tuple[int, int, ToolSpec]] = []
    for tool in sorted(tools, key=lambda t: -len(t.name)):
        for m in re.finditer(rf"(?<![\w-]){re.escape(tool.name)}(?![\w-])", task):
            if any(s < m.end() and m.start() < e for s, e, _ in taken):
                continue
            if _NOT_TOOL_AFTER.match(task[m.end() :]):
                continue  # "the echo server", "the memory MCP": a server named, not a tool
            if _CUE_BEFORE.search(task[max(0, m.start() - 40) : m.start()]) or _CUE_AFTER.match(
                task[m.end() :]
            ):
                taken.append((m.start(), m.end(), tool))
    return sorted(taken, key=lambda x: x[0])


def _clause(text: str, after: str, tool: ToolSpec) -> Clause:
    """The request as the filler reads it; its verb from "to read ..." or the tool's own name."""
    m = _TO_VERB.match(after)
    named = [w for w in tokens(tool.name) if is_verb_stem(w)]
    verb = stem(m.group(1)) if m else named[0] if named else "use"
    body = re.sub(r"^\W*tool\b", " ", text, flags=re.IGNORECASE)
    return Clause(body, verb, tuple(tokens(tool.name)), extract_literals(body), frozenset(tokens(body)))


def bound_arguments(text: str, tool: ToolSpec) -> dict[str, Any]:
    """Values the prompt gives for this tool's top-level properties, typed by the schema: scalars,
    and objects or arrays written out after ``NAME =`` (as JSON or as a Python literal, the way
    ``proctor init`` writes its drafted arguments)."""
    props = {
        k: deref(p, tool.input_schema)
        for k, p in schema_props(tool.input_schema).items()
        if isinstance(p, dict)
    }
    scalar = {k: p for k, p in props.items() if prop_kind(k, p) in ("string", "number", "bool", "enum")}
    out: dict[str, Any] = {}
    for key, prop in props.items():
        kind = prop_kind(key, prop)
        if kind in ("object", "array") and (value := _structured_value(text, key, kind)) is not None:
            out[key] = value
    used: set[str] = set()
    for key, prop in scalar.items():
        for raw in _named_values(text, key):
            value = _typed(raw, prop, key)
            if value is not None:
                out[key] = value
                used.add(raw)
                break
    required = [k for k in tool.input_schema.get("required", []) if k in scalar and k not in out]
    text_props = [k for k in required if prop_kind(k, scalar[k]) == "string" and not takes_path(tool, k)]
    if (m := _FROM_TO.search(text)) is not None:
        for key in list(text_props):
            words = set(tokens(key))
            side: str | None = m.group(1) if words & _SOURCE else m.group(2) if words & _TARGET else None
            if side is not None:
                out[key] = _unquote(side)
                used.add(side)
                text_props.remove(key)
    if text_props and (m := _FOR.search(text)) is not None and m.group(1).lower() not in _STOP:
        out[text_props.pop(0)] = _unquote(m.group(1))
        used.add(m.group(1))
    for raw in _DIGITS.findall(text):
        if not text_props:
            break
        if raw not in used and not any(raw in u for u in used):
            out[text_props.pop(0)] = raw.rstrip(".")
    return {k: out[k] for k in props if k in out}


def takes_path(tool: ToolSpec, key: str) -> bool:
    """Whether the property holds a path: ``path``, ``repo_path``, a bare ``source``; not
    ``source_timezone``, where "source" only says which of two values it is."""
    if key not in path_fields(tool):
        return False
    words = set(tokens(key))
    return not (words & _SOURCE | words & _TARGET and words - _SOURCE - _TARGET)


def _named_values(text: str, key: str) -> list[str]:
    """Values written next to the property's name: ``key=v``, ``key: v``, "with key v"."""
    names = {key, re.sub(r"[_-]+", " ", key), re.sub(r"(?<=[a-z])(?=[A-Z])", " ", key).lower()}
    found: list[tuple[int, str]] = []
    for name in names:
        n = re.escape(name).replace(r"\ ", r"[\s_-]+")
        for m in re.finditer(rf"(?<![\w-]){n}\s*[=:]\s*{_VALUE}", text, re.IGNORECASE):
            found.append((m.start(), m.group(1)))
        if len(name) >= 3:
            # "with NAME VALUE", where VALUE is not the "=" or ":" of "with NAME = VALUE"
            pattern = (
                rf"\b(?:with|and|set|where)\s+(?:the\s+|a\s+|an\s+)?{n}\s+"
                rf"(?:of\s+|as\s+|to\s+)?(?![=:]){_VALUE}"
            )
            for m in re.finditer(pattern, text, re.IGNORECASE):
                found.append((m.start(), m.group(1)))
            for m in re.finditer(rf"(?<![\w-]){n}\s+(\"[^\"\n]*\"|'[^'\n]*'|`[^`\n]*`)", text, re.IGNORECASE):
                found.append((m.start(), m.group(1)))
    return [v for _, v in sorted(found)]


def _structured_value(text: str, key: str, kind: str) -> Any:
    """The object or array written after ``key =`` / ``key:``, or None."""
    opener = "{" if kind == "object" else "["
    for m in re.finditer(rf"(?<![\w-]){re.escape(key)}\s*[=:]\s*(?=[{{\[])", text):
        literal = _balanced(text, m.end())
        if literal is None or literal[0] != opener:
            continue
        value = _literal(literal)
        if isinstance(value, dict if kind == "object" else list) and _plain_json(value):
            return value
    return None


def _balanced(text: str, start: int) -> str | None:
    """The bracketed text opening at ``start`` up to its matching close, quotes respected."""
    depth, quote, i = 0, "", start
    while i < len(text) and i - start < MAX_LITERAL_CHARS:
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
        i += 1
    return None


def _literal(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    try:
        return ast.literal_eval(text)  # literals only: nothing is evaluated
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _plain_json(value: Any) -> bool:
    """Whether ``value`` is what JSON can carry (``literal_eval`` also makes tuples, sets, bytes)."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain_json(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain_json(v) for v in value)
    return value is None or isinstance(value, str | int | float | bool)


def _typed(raw: str, prop: dict[str, Any], key: str) -> Any:
    value = _unquote(raw).rstrip(".") if raw[:1] not in "\"'`" else _unquote(raw)
    kind = prop_kind(key, prop)
    if kind == "number":
        try:
            number = float(value)
        except ValueError:
            return None
        return int(number) if number.is_integer() else number
    if kind == "bool":
        return {"true": True, "yes": True, "false": False, "no": False}.get(value.lower())
    if kind == "enum":
        return next((o for o in prop["enum"] if str(o).lower() == value.lower()), None)
    return value if value and value.lower() not in _STOP else None


def _unquote(raw: str) -> str:
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'`":
        return raw[1:-1]
    return raw


__all__ = ["bound_arguments", "explicit_requests", "takes_path"]
