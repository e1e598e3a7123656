"""A suite skeleton from a server's own tool list: one scenario per tool, to review and extend.

Writing the first scenarios is where most users stop. ``proctor init --server CMD`` lists the
server's tools and drafts, per tool, a scenario whose gold call uses example arguments that
satisfy the tool's input schema (its examples, defaults, enums and bounds first, then a
plain value of the declared type), validated with ``jsonschema``. The prompts are drafts,
titled ``DRAFT:``: a person must read them before the scores mean anything.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jsonschema import exceptions as schema_errors
from jsonschema import validators

from proctor.scenarios.input_schema import resolve_ref

REVIEW = "DRAFT written by proctor init from the tool's schema: review the prompt and the gold call"
_FORMATS = {
    "date": "2025-01-31",
    "date-time": "2025-01-31T12:00:00Z",
    "time": "12:00:00",
    "email": "user@example.com",
    "uri": "https://example.com",
    "url": "https://example.com",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "ipv4": "192.0.2.1",
}
MAX_DEPTH = 6


@dataclass(frozen=True)
class Drafted:
    """A model's draft for one tool: its prompt and claims, and its arguments if they fit."""

    model: str
    prompt: str
    arguments: dict[str, Any] | None
    claims: list[str]


@dataclass(frozen=True)
class ToolInfo:
    name: str
    description: str
    input_schema: Mapping[str, Any]
    annotations: Mapping[str, Any] | None = None


def _first_of(schema: Mapping[str, Any]) -> tuple[bool, Any]:
    for key in ("const", "default"):
        if key in schema:
            return True, schema[key]
    for key in ("examples", "enum"):
        values = schema.get(key)
        if isinstance(values, list) and values:
            return True, values[0]
    return False, None


def _number(schema: Mapping[str, Any], integer: bool) -> int | float:
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    value: int | float = 1
    if isinstance(low, int | float):
        value = low + (1 if "exclusiveMinimum" in schema and "minimum" not in schema else 0)
    high = schema.get("maximum")
    if isinstance(high, int | float) and value > high:
        value = high
    return int(value) if integer else float(value)


def _string(name: str, schema: Mapping[str, Any]) -> str:
    fmt = schema.get("format")
    if isinstance(fmt, str) and fmt in _FORMATS:
        return _FORMATS[fmt]
    text = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "example"
    low = schema.get("minLength")
    if isinstance(low, int) and len(text) < low:
        text = text + "x" * (low - len(text))
    high = schema.get("maxLength")
    return text[:high] if isinstance(high, int) and high > 0 else text


def example_value(name: str, schema: Any, depth: int = 0, root: Mapping[str, Any] | None = None) -> Any:
    """A value that ``schema`` accepts, as plain as possible; ``name`` shapes example strings.

    ``root`` is the tool's whole input schema, where ``$ref`` pointers lead (its ``$defs``).
    """
    schema = resolve_ref(schema, root if root is not None else {})
    if not isinstance(schema, Mapping) or depth > MAX_DEPTH:
        return "example"
    found, value = _first_of(schema)
    if found:
        return value
    for key in ("anyOf", "oneOf", "allOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            usable = [o for o in options if not (isinstance(o, Mapping) and o.get("type") == "null")]
            return example_value(name, (usable or options)[0], depth + 1, root)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        return example_arguments(schema, depth + 1, root)
    if kind == "array":
        low = schema.get("minItems")
        count = low if isinstance(low, int) and low > 1 else 1
        return [example_value(name, schema.get("items", {}), depth + 1, root) for _ in range(count)]
    if kind == "integer":
        return _number(schema, integer=True)
    if kind == "number":
        return _number(schema, integer=False)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return _string(name, schema)


def example_arguments(
    schema: Mapping[str, Any], depth: int = 0, root: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Arguments for a tool: every required property (optional ones are left to the agent)."""
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return {}
    required = [r for r in schema.get("required", []) if isinstance(r, str) and r in props]
    top = root if root is not None else schema
    return {name: example_value(name, props[name], depth, top) for name in required}


def schema_problems(arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    """Why ``arguments`` do not satisfy ``schema`` (empty when they do, or the schema is unusable)."""
    schema = dict(schema)
    try:
        validator_class = validators.validator_for(schema)
        validator_class.check_schema(schema)
    except schema_errors.SchemaError as exc:
        return [f"the tool's input schema is invalid: {exc.message}"]
    validator = validator_class(schema)
    try:
        return [
            f"{'/'.join(map(str, e.absolute_path)) or '(arguments)'}: {e.message}"
            for e in validator.iter_errors(dict(arguments))
        ]
    except Exception as exc:  # a $ref cycle (RecursionError), a $ref to nothing (Unresolvable), ...
        return [f"the tool's input schema cannot be checked: {type(exc).__name__}: {str(exc)[:200]}"]


def _prompt(tool: ToolInfo, arguments: Mapping[str, Any]) -> str:
    """An explicit instruction naming the tool and each argument, nothing else: the offline agent
    (``offline:default``, the drafted suite's model) follows it to the letter, a real model sees
    the tool's description in its tool list, and a reviewer rewrites it into a task. A description
    in the prompt would read as instructions too ("for changes use edit_note", "is_directory=true").
    """
    given = ", ".join(f"{k} = {v!r}" for k, v in arguments.items())
    return f"Use {tool.name} with {given}." if given else f"Use {tool.name}."


def gold_arguments(tool: ToolInfo, drafted: Drafted | None = None) -> dict[str, Any]:
    """The arguments of a tool's drafted gold call: a model's where they fit the schema, else
    the schema's example arguments."""
    if drafted is not None and drafted.arguments is not None:
        return dict(drafted.arguments)
    return example_arguments(tool.input_schema)


def skeleton(
    server: str,
    config: Mapping[str, Any],
    tools: Sequence[ToolInfo],
    drafts: Mapping[str, Drafted] | None = None,
    expectations: Mapping[str, Mapping[str, Any]] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """The suite, its scenarios and notes (tools whose example arguments the schema rejects).

    ``drafts`` (by tool name) replace the schema-made prompt, arguments and claims where a model
    wrote them; the arguments only when they fit the schema. ``expectations`` (by tool name) are
    the gold calls' ``expect``: what each result must hold, or a review note.
    """
    scenarios, notes = [], []
    for tool in tools:
        drafted = (drafts or {}).get(tool.name)
        args = gold_arguments(tool, drafted)
        problems = schema_problems(args, tool.input_schema)
        if problems:
            notes.append(f"tool {tool.name}: the drafted arguments need a person: {'; '.join(problems)}")
        call: dict[str, Any] = {"tool": tool.name, "server": server}
        if args:
            call["arguments"] = args
        expect = (expectations or {}).get(tool.name)
        if expect:
            call["expect"] = dict(expect)
        scenario: dict[str, Any] = {
            "id": re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{server}-{tool.name}").strip("-."),
            "title": f"DRAFT: {tool.name}" + (f" (prompt and claims by {drafted.model})" if drafted else ""),
            "prompt": drafted.prompt if drafted else _prompt(tool, args),
            "gold_tool_calls": [[call]],
        }
        if drafted and drafted.claims:
            scenario["claims"] = list(drafted.claims)
        scenarios.append(scenario)
    suite = {
        "name": re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{server}-eval").strip("-."),
        "description": f"Drafted by proctor init from {server}'s {len(tools)} tools. {REVIEW}.",
        "mcpServers": {server: dict(config)},
        "arms": {
            "baseline": {"baseline": True, "description": "no MCP servers"},
            server: {"servers": [server], "description": f"the {server} server"},
        },
        "models": ["offline:default"],
    }
    return suite, scenarios, notes


__all__ = [
    "REVIEW",
    "Drafted",
    "ToolInfo",
    "example_arguments",
    "example_value",
    "gold_arguments",
    "schema_problems",
    "skeleton",
]
