"""Following a tool input schema's local references, for code that builds values from it.

jsonschema resolves ``$ref`` when it validates, but code that walks a schema to make a value
(``proctor init``'s example arguments, the offline agent's) meets the reference itself. Servers
built on pydantic (the mcp SDK's ``MCPServer``, FastMCP) put every model parameter in ``$defs``
and point at it: ``{"$ref": "#/$defs/Settings"}``, recursively for nested models.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MAX_REF_HOPS = 8  # a reference to a reference ...; a cycle (A -> B -> A) stops here


def resolve_ref(schema: Any, root: Mapping[str, Any]) -> Any:
    """The schema a local ``$ref`` (``#``, ``#/$defs/X``) points to, with the referring schema's
    other keywords kept over it; anything else as given. An unresolvable pointer gives ``{}``."""
    for _ in range(MAX_REF_HOPS):
        if not isinstance(schema, Mapping):
            return schema
        ref = schema.get("$ref")
        if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/")):
            return schema
        target: Any = root
        for part in ref[2:].split("/") if ref != "#" else ():
            key = part.replace("~1", "/").replace("~0", "~")  # JSON Pointer's escapes (RFC 6901)
            target = target.get(key, {}) if isinstance(target, Mapping) else {}
        siblings = {k: v for k, v in schema.items() if k != "$ref"}
        schema = {**target, **siblings} if isinstance(target, Mapping) else siblings
    return schema


__all__ = ["MAX_REF_HOPS", "resolve_ref"]
