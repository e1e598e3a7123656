"""Filling a tool's arguments from its JSON schema and what the offline agent knows.

The agent does not know any server in advance: it reads each property's name, type and
description and decides what to put there (an identifier, a search phrase, a path, a line
range). A tool whose required arguments it cannot fill is not called.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from proctor.engine.tools.toolbox import ToolSpec

SYMBOL_KEYS = ("symbol", "name", "identifier", "function", "class_name", "qualified_name", "symbol_name")
QUERY_KEYS = (
    "query",
    "pattern",
    "q",
    "search",
    "text",
    "keyword",
    "keywords",
    "term",
    "needle",
    "regex_pattern",
)
PATH_KEYS = ("path", "file", "filename", "file_path", "filepath", "relative_path", "prefix", "directory")
START_KEYS = ("start", "start_line", "line", "from_line", "line_start", "offset", "first")
END_KEYS = ("end", "end_line", "to_line", "line_end", "last")
LIMIT_KEYS = ("limit", "max_results", "top_k", "k", "count", "n", "max")


@dataclass(frozen=True)
class Focus:
    """What the agent wants from the next call: a name, a phrase, or a place in a file."""

    identifier: str = ""
    phrase: str = ""
    path: str = ""
    line: int = 0


def tool_role(tool: ToolSpec) -> str:
    """``symbol`` / ``search`` / ``read`` / ``list`` / ``other``, from the schema's property names."""
    props = _props(tool)
    keys = set(props)
    if keys & set(PATH_KEYS) and keys & set(START_KEYS):
        return "read"
    if keys & set(SYMBOL_KEYS):
        return "symbol"
    if keys & set(QUERY_KEYS):
        return "search"
    if keys & set(PATH_KEYS) and "read" in tool.name.lower():
        return "read"
    if keys <= set(PATH_KEYS) | set(LIMIT_KEYS):
        return "list"
    return "other"


def fill_arguments(tool: ToolSpec, focus: Focus) -> dict[str, Any] | None:
    """Arguments for ``tool`` aimed at ``focus``, or None if a required one cannot be filled."""
    props = _props(tool)
    required = set(tool.input_schema.get("required", []))
    args: dict[str, Any] = {}
    for key, schema in props.items():
        value = _value_for(key, schema if isinstance(schema, dict) else {}, focus)
        if value is not None:
            args[key] = value
        elif key in required:
            return None
    return args


def _value_for(key: str, schema: dict[str, Any], focus: Focus) -> Any:
    k = key.lower()
    typ = schema.get("type")
    if k in SYMBOL_KEYS:
        return focus.identifier or None
    if k in QUERY_KEYS:
        return focus.identifier or focus.phrase or None
    if k in PATH_KEYS:
        if k in ("prefix", "directory"):
            return focus.path.rsplit("/", 1)[0] if "/" in focus.path else None
        return focus.path or None
    if k in START_KEYS and typ in ("integer", "number", None):
        return max(1, focus.line - 2) if focus.line else None
    if k in END_KEYS and typ in ("integer", "number", None):
        return focus.line + 14 if focus.line else None
    if k in LIMIT_KEYS and typ in ("integer", "number"):
        return schema.get("default", 10)
    if schema.get("enum") and "default" not in schema:
        return schema["enum"][0]
    return None


def _props(tool: ToolSpec) -> dict[str, Any]:
    props = tool.input_schema.get("properties", {})
    return props if isinstance(props, dict) else {}
