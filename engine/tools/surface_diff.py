"""What changed between two tool surfaces: tools added, removed and renamed, input-schema changes
classified as breaking or not, and description changes word by word.

*Breaking* means a call that the old schema accepted may now be refused (or mean something else):
a new required property, a property removed, a property made required, a type narrowed or
changed, an enum that lost values or appeared, a bound tightened, ``additionalProperties``
turned off, a new ``pattern``, ``format`` or ``const``. A new optional property, a type or enum
widened, a bound relaxed or a constraint dropped is not. A changed description is never breaking
to a caller, but it is what a model reads: it is reported word by word, and a lock flags it.

A removed and an added tool of one server are taken for a rename when their input schemas are
equal and their descriptions mostly the same (word similarity at least ``RENAME_SIMILARITY``).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from proctor.engine.tools.surface import Surface, ToolDefinition, canonical_json

RENAME_SIMILARITY = 0.8
ChangeKind = Literal["added", "removed", "renamed", "changed"]
WordOp = Literal["=", "-", "+"]


@dataclass(frozen=True)
class SchemaChange:
    """One difference inside an input schema, at a JSON path such as ``properties.unit.enum``."""

    path: str
    change: str
    breaking: bool


@dataclass(frozen=True)
class WordDiff:
    """A description's words as runs kept (``=``), removed (``-``) and added (``+``)."""

    ops: tuple[tuple[WordOp, str], ...]

    def text(self, context: int = 6) -> str:
        """git's word-diff form, ``kept [-removed-]{+added+}``, on one line; long unchanged runs
        keep ``context`` words beside each change (``…`` for the rest)."""
        out = []
        last = len(self.ops) - 1
        for i, (op, words) in enumerate(self.ops):
            if op != "=":
                out.append(f"[-{words}-]" if op == "-" else f"{{+{words}+}}")
                continue
            kept = words.split()
            head = kept[:context] if i > 0 else []
            tail = kept[-context:] if i < last else []
            if len(kept) <= len(head) + len(tail) + 1:
                out.append(words)
            else:
                out.append(" ".join([*head, "…", *tail]))
        return " ".join(out)


@dataclass(frozen=True)
class ToolChange:
    server: str
    tool: str  # the new name (the old one for a removed tool)
    kind: ChangeKind
    old_name: str = ""  # a renamed tool's former name
    schema: tuple[SchemaChange, ...] = ()
    description: WordDiff | None = None
    other: tuple[str, ...] = ()  # title, outputSchema, annotations: which of them changed

    @property
    def breaking(self) -> bool:
        return self.kind in ("removed", "renamed") or any(c.breaking for c in self.schema)


@dataclass(frozen=True)
class SurfaceDiff:
    changes: tuple[ToolChange, ...] = field(default=())

    @property
    def same(self) -> bool:
        return not self.changes

    @property
    def breaking(self) -> bool:
        return any(c.breaking for c in self.changes)


def diff_surfaces(old: Surface, new: Surface) -> SurfaceDiff:
    changes: list[ToolChange] = []
    for server in sorted(set(old) | set(new)):
        changes += _diff_server(server, old.get(server, {}), new.get(server, {}))
    return SurfaceDiff(tuple(changes))


def _diff_server(
    server: str, old: dict[str, ToolDefinition], new: dict[str, ToolDefinition]
) -> list[ToolChange]:
    removed = sorted(set(old) - set(new))
    added = sorted(set(new) - set(old))
    renames = _renames(old, new, removed, added)
    out: list[ToolChange] = []
    for name in sorted(set(old) & set(new)):
        change = diff_tool(old[name], new[name])
        if change is not None:
            out.append(change)
    for old_name, new_name in renames:
        moved = diff_tool(old[old_name], new[new_name])
        out.append(
            ToolChange(
                server,
                new_name,
                "renamed",
                old_name=old_name,
                description=moved.description if moved else None,
                other=moved.other if moved else (),
            )
        )
    renamed_old = {o for o, _ in renames}
    renamed_new = {n for _, n in renames}
    out += [ToolChange(server, n, "removed") for n in removed if n not in renamed_old]
    out += [ToolChange(server, n, "added") for n in added if n not in renamed_new]
    return out


def _renames(
    old: dict[str, ToolDefinition], new: dict[str, ToolDefinition], removed: list[str], added: list[str]
) -> list[tuple[str, str]]:
    """Pairs (old name, new name), best match first, each tool in one pair at most."""
    scored = []
    for o in removed:
        for n in added:
            if canonical_json(old[o].input_schema) != canonical_json(new[n].input_schema):
                continue
            ratio = _similarity(old[o].description, new[n].description)
            if ratio >= RENAME_SIMILARITY:
                scored.append((-ratio, o, n))
    pairs: list[tuple[str, str]] = []
    used_old: set[str] = set()
    used_new: set[str] = set()
    for _, o, n in sorted(scored):
        if o not in used_old and n not in used_new:
            pairs.append((o, n))
            used_old.add(o)
            used_new.add(n)
    return pairs


def _similarity(a: str, b: str) -> float:
    if a == b:
        return 1.0
    return difflib.SequenceMatcher(a=a.split(), b=b.split(), autojunk=False).ratio()


def diff_tool(old: ToolDefinition, new: ToolDefinition) -> ToolChange | None:
    """How one tool changed (None when its definition is the same)."""
    schema = tuple(schema_changes(old.input_schema, new.input_schema))
    description = word_diff(old.description, new.description) if old.description != new.description else None
    other = tuple(
        label
        for label, a, b in (
            ("title", old.title, new.title),
            ("outputSchema", old.output_schema, new.output_schema),
            ("annotations", old.annotations, new.annotations),
        )
        if canonical_json(a) != canonical_json(b)
    )
    if not schema and description is None and not other:
        return None
    return ToolChange(new.server, new.name, "changed", schema=schema, description=description, other=other)


def word_diff(old: str, new: str) -> WordDiff:
    a, b = old.split(), new.split()
    ops: list[tuple[WordOp, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            ops.append(("=", " ".join(a[i1:i2])))
            continue
        if i2 > i1:
            ops.append(("-", " ".join(a[i1:i2])))
        if j2 > j1:
            ops.append(("+", " ".join(b[j1:j2])))
    return WordDiff(tuple(ops))


# --- input schemas ---------------------------------------------------------------------------

_JSON_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")
_TIGHTER_WHEN_HIGHER = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
_TIGHTER_WHEN_LOWER = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")
_RESTRICTIONS = ("pattern", "format", "const", "multipleOf")


def schema_changes(old: Any, new: Any, path: str = "") -> Iterator[SchemaChange]:
    """The differences between two JSON Schemas, recursing into properties and items."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        if canonical_json(old) != canonical_json(new):
            yield SchemaChange(path or "(schema)", "schema replaced", True)
        return
    yield from _type_change(old, new, path)
    yield from _enum_change(old, new, path)
    yield from _bounds(old, new, path)
    yield from _properties(old, new, path)
    yield from _additional(old, new, path)
    if "items" in old or "items" in new:
        yield from schema_changes(old.get("items", {}), new.get("items", {}), _at(path, "items"))
    if old.get("description") != new.get("description") and path:
        yield SchemaChange(_at(path, "description"), "description changed", False)
    if old.get("default") != new.get("default"):
        yield SchemaChange(_at(path, "default"), "default changed", False)


def _at(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _types(schema: dict[str, Any]) -> set[str] | None:
    """The JSON types a schema admits by its ``type`` (None: any); integer is within number."""
    raw = schema.get("type")
    if raw is None:
        return None
    names = (
        {raw}
        if isinstance(raw, str)
        else {t for t in raw if isinstance(t, str)}
        if isinstance(raw, list)
        else set()
    )
    if "number" in names:
        names.add("integer")
    return names


def _type_change(old: dict[str, Any], new: dict[str, Any], path: str) -> Iterator[SchemaChange]:
    a, b = _types(old), _types(new)
    if a == b:
        return
    before, after = _type_label(old), _type_label(new)
    if b is None or (a is not None and a < b):
        yield SchemaChange(_at(path, "type"), f"type widened: {before} -> {after}", False)
    elif a is None or b < a:
        yield SchemaChange(_at(path, "type"), f"type narrowed: {before} -> {after}", True)
    else:
        yield SchemaChange(_at(path, "type"), f"type changed: {before} -> {after}", True)


def _type_label(schema: dict[str, Any]) -> str:
    raw = schema.get("type")
    if raw is None:
        return "any"
    return (
        raw if isinstance(raw, str) else "|".join(str(t) for t in raw) if isinstance(raw, list) else str(raw)
    )


def _enum_change(old: dict[str, Any], new: dict[str, Any], path: str) -> Iterator[SchemaChange]:
    if "enum" not in old and "enum" not in new:
        return
    where = _at(path, "enum")
    if "enum" not in new:
        yield SchemaChange(where, "enum removed (any value of the type)", False)
        return
    if "enum" not in old:
        yield SchemaChange(where, f"enum added: {_values(new['enum'])}", True)
        return
    a = {canonical_json(v) for v in old["enum"]}
    b = {canonical_json(v) for v in new["enum"]}
    lost = [v for v in old["enum"] if canonical_json(v) not in b]
    gained = [v for v in new["enum"] if canonical_json(v) not in a]
    if lost:
        yield SchemaChange(where, f"enum narrowed: lost {_values(lost)}", True)
    if gained:
        yield SchemaChange(where, f"enum widened: gained {_values(gained)}", False)


def _values(values: Any) -> str:
    items = values if isinstance(values, list) else [values]
    return ", ".join(canonical_json(v).decode() for v in items[:10]) + (" …" if len(items) > 10 else "")


def _bounds(old: dict[str, Any], new: dict[str, Any], path: str) -> Iterator[SchemaChange]:
    for key in _TIGHTER_WHEN_HIGHER + _TIGHTER_WHEN_LOWER:
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        where = _at(path, key)
        if b is None:
            yield SchemaChange(where, f"{key} {a} removed", False)
        elif a is None:
            yield SchemaChange(where, f"{key} {b} added", True)
        elif isinstance(a, (int, float)) and isinstance(b, (int, float)):
            tighter = b > a if key in _TIGHTER_WHEN_HIGHER else b < a
            yield SchemaChange(where, f"{key} {a} -> {b}", tighter)
    for key in _RESTRICTIONS:
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        where = _at(path, key)
        if b is None:
            yield SchemaChange(where, f"{key} removed", False)
        else:
            yield SchemaChange(where, f"{key} {'added' if a is None else 'changed'}: {_values(b)}", True)


def _properties(old: dict[str, Any], new: dict[str, Any], path: str) -> Iterator[SchemaChange]:
    props_a = old.get("properties") if isinstance(old.get("properties"), dict) else {}
    props_b = new.get("properties") if isinstance(new.get("properties"), dict) else {}
    req_a = (
        {r for r in old.get("required", []) if isinstance(r, str)}
        if isinstance(old.get("required"), list)
        else set()
    )
    req_b = (
        {r for r in new.get("required", []) if isinstance(r, str)}
        if isinstance(new.get("required"), list)
        else set()
    )
    assert props_a is not None and props_b is not None
    for name in sorted(set(props_a) | set(props_b)):
        where = _at(path, f"properties.{name}")
        if name not in props_b:
            yield SchemaChange(where, "property removed", True)
        elif name not in props_a:
            required = name in req_b
            yield SchemaChange(where, f"new {'required' if required else 'optional'} property", required)
        else:
            yield from schema_changes(props_a[name], props_b[name], where)
    for name in sorted((req_b - req_a) & set(props_a)):
        if name in props_b:
            yield SchemaChange(_at(path, f"properties.{name}"), "now required", True)
    for name in sorted(req_a - req_b):
        if name in props_b:
            yield SchemaChange(_at(path, f"properties.{name}"), "no longer required", False)


def _additional(old: dict[str, Any], new: dict[str, Any], path: str) -> Iterator[SchemaChange]:
    a, b = old.get("additionalProperties", True), new.get("additionalProperties", True)
    if a == b:
        return
    where = _at(path, "additionalProperties")
    if b is False:
        yield SchemaChange(where, "additional properties now refused", True)
    elif a is False:
        yield SchemaChange(where, "additional properties now allowed", False)
    else:
        yield SchemaChange(where, "additionalProperties changed", True)


__all__ = [
    "RENAME_SIMILARITY",
    "SchemaChange",
    "SurfaceDiff",
    "ToolChange",
    "WordDiff",
    "diff_surfaces",
    "diff_tool",
    "schema_changes",
    "word_diff",
]
