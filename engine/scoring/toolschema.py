"""Check a tool call's arguments against the tool's JSON input schema (top level only).

Reported problems: an argument name the schema's ``properties`` does not list (unless
``additionalProperties`` is explicitly allowed), a ``required`` argument that is missing, and a
top-level JSON type mismatch (``integer`` accepts 3 and 3.0, not "3" nor True). A schema
without a ``properties`` object accepts any names. Nested schemas are not checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int, float),
    "boolean": (bool,),
    "array": (list, tuple),
    "object": (dict, Mapping),
    "null": (type(None),),
}


def required_arguments(schema: Mapping[str, Any]) -> frozenset[str]:
    req = schema.get("required")
    return frozenset(r for r in req if isinstance(r, str)) if isinstance(req, list) else frozenset()


def _type_ok(value: Any, declared: Any) -> bool:
    names = [declared] if isinstance(declared, str) else declared if isinstance(declared, list) else None
    if not names:
        return True
    for name in names:
        allowed = _TYPES.get(name) if isinstance(name, str) else None
        if allowed is None:
            return True
        if isinstance(value, bool) and name not in ("boolean",):
            continue
        if isinstance(value, allowed):
            if name == "integer" and isinstance(value, float) and not value.is_integer():
                continue
            return True
    return False


def argument_problems(arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    """Human-readable problems of ``arguments`` under ``schema``; empty when the call is well-formed."""
    problems: list[str] = []
    props = schema.get("properties")
    extra_allowed = schema.get("additionalProperties") not in (None, False)
    if isinstance(props, Mapping):
        for name in arguments:
            if name not in props and not extra_allowed:
                problems.append(f"unknown argument {name!r}")
            elif name in props and isinstance(props[name], Mapping):
                declared = props[name].get("type")
                if arguments[name] is not None and not _type_ok(arguments[name], declared):
                    problems.append(f"argument {name!r} is not of type {declared}")
    for name in sorted(required_arguments(schema)):
        if arguments.get(name) is None:
            problems.append(f"missing required argument {name!r}")
    return problems
