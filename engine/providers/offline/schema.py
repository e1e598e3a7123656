"""Reading JSON schemas the way the offline agent fills them.

Servers write input schemas in many dialects: pydantic's ``$ref`` into ``$defs``, ``anyOf``
[X, null] for optional values, type lists, enums spelled out only in a description ("'local',
'remote' or 'all'"). These helpers reduce them to what argument filling needs (a property's
kind, its words, its choices) and check a finished argument object with jsonschema.
"""

from __future__ import annotations

import re
from typing import Any

from jsonschema import exceptions as schema_errors
from jsonschema import validators

from proctor.engine.providers.offline.intent import tokens
from proctor.scenarios.input_schema import resolve_ref

MAX_DEPTH = 6
_TYPE_WORDS = frozenset(tokens("type kind category"))
_OPTION = re.compile(r"'([\w.-]+)'")


def schema_valid(schema: dict[str, Any], args: dict[str, Any]) -> bool:
    """Whether ``args`` satisfy ``schema``; an unusable schema accepts nothing."""
    try:
        cls = validators.validator_for(schema)
        cls.check_schema(schema)
        return bool(cls(schema).is_valid(args))
    except (schema_errors.SchemaError, LookupError, TypeError, ValueError):
        return False
    except Exception:  # an unresolvable $ref and the like: the schema cannot vouch for anything
        return False


def deref(schema: Any, root: dict[str, Any]) -> dict[str, Any]:
    """``$ref`` resolved in the tool's schema; ``anyOf`` [X, null] read as X."""
    for _ in range(MAX_DEPTH):
        schema = resolve_ref(schema, root)
        if not isinstance(schema, dict):
            return {}
        for key in ("anyOf", "oneOf"):
            options = schema.get(key)
            if isinstance(options, list):
                real = [o for o in options if isinstance(o, dict) and o.get("type") != "null"]
                if real:
                    schema = {**{k: v for k, v in schema.items() if k != key}, **real[0]}
                    break
        else:
            return schema
    return schema if isinstance(schema, dict) else {}


def prop_kind(key: str, schema: dict[str, Any]) -> str:
    """``const``, ``enum``, ``bool``, ``number``, ``array``, ``object`` or ``string``."""
    if "const" in schema:
        return "const"
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return "enum"
    types = schema_types(schema)
    for kind, names in (("bool", {"boolean"}), ("number", {"number", "integer"}), ("array", {"array"})):
        if types & names:
            return kind
    if "object" in types or (not types and isinstance(schema.get("properties"), dict)):
        return "object"
    return "string"


def schema_types(schema: dict[str, Any]) -> set[str]:
    t = schema.get("type")
    if isinstance(t, str):
        return {t} - {"null"}
    if isinstance(t, list):
        return {x for x in t if isinstance(x, str)} - {"null"}
    return set()


def field_words(key: str, schema: dict[str, Any], *, description: bool = False) -> frozenset[str]:
    text = f"{key} {schema.get('title', '')}"
    if description:
        text += f" {schema.get('description', '')}"
    return frozenset(tokens(text))


def is_type_field(key: str, schema: dict[str, Any]) -> bool:
    """``entityType``, ``relation_kind``: a field whose last word says it is a type."""
    words = tokens(key)
    return bool(words) and words[-1] in _TYPE_WORDS


def implicit_options(schema: dict[str, Any]) -> list[str]:
    """Choices a description lists in quotes ("'local', 'remote' or 'all'") when there is no enum."""
    options = _OPTION.findall(str(schema.get("description", "")))
    return (
        list(dict.fromkeys(options))
        if len(set(options)) >= 2 and " or " in str(schema.get("description"))
        else []
    )


def schema_props(schema: dict[str, Any]) -> dict[str, Any]:
    props = schema.get("properties", {})
    return props if isinstance(props, dict) else {}
