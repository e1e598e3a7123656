"""A tool's arguments, built from its input schema and one requested action.

The agent knows no server in advance, so it reads each property (name, title, description,
type, enum, nesting) and takes the value from the request: a name from "named Alice", a path
from "committed.txt" placed under the server's allowed root, a number from the prompt, a type
from "of type person", the value of an enum the prompt names. It fills the required
properties and only the optional ones the prompt mentions, builds arrays of objects item by
item (one entity per name), and returns nothing rather than guess: every argument object is
checked against the schema with jsonschema, and an invalid one is never sent.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import Any

from proctor.engine.providers.offline.intent import Clause, tokens
from proctor.engine.providers.offline.schema import (
    MAX_DEPTH,
    deref,
    field_words,
    implicit_options,
    is_type_field,
    prop_kind,
    schema_props,
    schema_types,
    schema_valid,
)
from proctor.engine.tools.toolbox import ToolSpec

MAX_ITEMS = 8
_REPO = frozenset(tokens("repo repository root workspace cwd project"))
_PATH = frozenset(
    tokens("path paths file files filename filepath dir directory folder source destination src dst dest")
)
_FILE = frozenset(tokens("file files filename filepath"))
_DIR = frozenset(tokens("dir directory folder"))
_REF = frozenset(tokens("revision rev ref commit sha hash target"))
_NAME = frozenset(
    tokens("name names from to title label branch tag key id identifier user username author owner entity")
)
_GLOB = frozenset(tokens("pattern glob"))
_QUERY = frozenset(tokens("query q search keyword keywords term topic filter"))
_DIR_TOOLS = frozenset(tokens("directory dir folder tree list search allowed"))
_FILE_TOOLS = frozenset(tokens("file read write edit info media move"))
_READ_VERBS = frozenset(tokens("read get open show view display print fetch cat"))
_GENERIC = frozenset(
    tokens("the of a an to in for if only is are be provided returns number value optional whether it this")
)
_NEGATION = frozenset({"no", "not", "without", "don't", "never"})


@dataclass(frozen=True)
class Context:
    """What the agent knows besides the request: the server's root and paths results listed."""

    root: str = ""
    files: tuple[str, ...] = ()
    dirs: tuple[str, ...] = ()


def fill_tool(tool: ToolSpec, clause: Clause, ctx: Context) -> dict[str, Any] | None:
    """Arguments for ``tool`` that perform ``clause``, valid for its schema, or None."""
    schema = tool.input_schema
    filler = _Filler(clause, ctx, schema, _tool_place(tool))
    args = filler.object(schema, 0)
    if args is None:
        return None
    if schema_valid(schema, args):
        return args
    required = set(schema.get("required", []))
    trimmed = {k: v for k, v in args.items() if k in required}
    return trimmed if trimmed != args and schema_valid(schema, trimmed) else None


def path_fields(tool: ToolSpec) -> list[str]:
    """The top-level properties that take a path or a repository: they need the server's root."""
    out = []
    for key, prop in schema_props(tool.input_schema).items():
        words = field_words(key, prop if isinstance(prop, dict) else {})
        if words & (_REPO | _PATH):
            out.append(key)
    return out


def resolve_path(literal: str, ctx: Context) -> str:
    """``committed.txt`` as the server must see it: a listed path that ends so, else under the root."""
    if literal.startswith(("/", "~")) or re.match(r"[A-Za-z]:[\\/]", literal):
        return literal
    clean = literal.removeprefix("./")
    for known in (*ctx.files, *ctx.dirs):
        if known == clean or known.endswith("/" + clean.rstrip("/")):
            return known
    if ctx.root:
        return posixpath.normpath(posixpath.join(ctx.root, clean))
    return literal


class _Filler:
    """One call's filling: literal values are used once each, in the order properties ask."""

    def __init__(self, clause: Clause, ctx: Context, root_schema: dict[str, Any], place: str) -> None:
        self.clause = clause
        self.lit = clause.literals
        self.ctx = ctx
        self.root_schema = root_schema
        self.place = place
        self.names = 0
        self.paths = 0
        self.numbers: set[int] = set()
        self.quoted = 0
        self.item = 0

    # -- structure --------------------------------------------------------------------------

    def object(self, schema: dict[str, Any], depth: int) -> dict[str, Any] | None:
        schema = deref(schema, self.root_schema)
        props = schema_props(schema)
        required = [k for k in schema.get("required", []) if k in props]
        out: dict[str, Any] = {}
        for key in required:
            value = self.value(key, deref(props[key], self.root_schema), depth, required=True)
            if value is None:
                return None
            out[key] = value
        optional = [k for k in props if k not in required]
        for key in optional:
            prop = deref(props[key], self.root_schema)
            if prop_kind(key, prop) != "number":
                value = self.value(key, prop, depth, required=False)
                if value is not None:
                    out[key] = value
        out.update(self.optional_numbers({k: deref(props[k], self.root_schema) for k in optional}))
        return {k: out[k] for k in props if k in out}

    def value(self, key: str, schema: dict[str, Any], depth: int, *, required: bool) -> Any:
        if depth > MAX_DEPTH:
            return None
        kind = prop_kind(key, schema)
        if kind == "const":
            return schema["const"]
        if kind == "enum":
            return self.enum(key, schema, schema["enum"], required)
        if kind == "bool":
            return self.boolean(key, schema, required)
        if kind == "number":
            return self.number(schema) if required else None
        if kind == "object":
            return self.object(schema, depth + 1) if required or self.mentioned(key) else None
        if kind == "array":
            return self.array(key, schema, depth, required)
        if not required and not self.mentioned(key):
            return None
        return self.string(key, schema)

    def array(self, key: str, schema: dict[str, Any], depth: int, required: bool) -> list[Any] | None:
        items = (
            deref(schema.get("items", {}), self.root_schema) if isinstance(schema.get("items"), dict) else {}
        )
        low = schema.get("minItems", 0)
        if not required and not self.mentioned(key):
            return None
        if prop_kind(key, items) == "object":
            built: list[Any] = []
            while len(built) < MAX_ITEMS:
                before = self.names
                self.item = len(built)
                obj = self.object(items, depth + 1)
                if obj is None:
                    break
                built.append(obj)
                if self.names == before or self.names >= len(self.lit.names):
                    break
            return built if len(built) >= max(1, low) else None
        words = field_words(key, schema)
        values: list[Any]
        if words & _PATH and not words & _REPO:
            values = [resolve_path(p, self.ctx) for p in self.lit.paths[self.paths :]]
            self.paths = len(self.lit.paths)
        elif words & _NAME:
            values = list(self.lit.names[self.names :]) or list(self.lit.quoted[self.quoted :])
            self.names = len(self.lit.names)
        else:
            values = list(self.lit.quoted[self.quoted :])
            self.quoted = len(self.lit.quoted)
            if not values and low:
                values = [self.lit.topic or self.lit.free_text]
        values = [v for v in values if v]
        if not values and not required:
            return None
        return values if len(values) >= low else None

    # -- scalars ----------------------------------------------------------------------------

    def string(self, key: str, schema: dict[str, Any]) -> str | None:
        words = field_words(key, schema)
        options = implicit_options(schema)
        if options:
            return str(self.enum(key, schema, options, True))
        if words & _REPO:
            absolute = [p for p in self.lit.paths if p.startswith("/")]
            return absolute[0] if absolute else self.ctx.root or "."
        if words & _PATH:
            return self.path(words)
        if words & _REF:
            return self.next_quoted() or (self.lit.refs[0] if self.lit.refs else "HEAD")
        if words & _GLOB or "glob" in str(schema.get("description", "")).lower():
            return self.glob()
        if is_type_field(key, schema):
            return self.type_value()
        if words & _NAME:
            return self.name()
        if schema.get("format") in ("uri", "url", "iri"):
            return self.lit.urls[0] if self.lit.urls else None
        quoted = self.next_quoted()
        if quoted:
            return quoted
        if words & _QUERY and self.lit.topic:
            return self.lit.topic
        return self.lit.free_text or None

    def path(self, words: frozenset[str]) -> str | None:
        if self.paths < len(self.lit.paths):
            self.paths += 1
            return resolve_path(self.lit.paths[self.paths - 1], self.ctx)
        if self.names < len(self.lit.names):  # "create a directory named build"
            self.names += 1
            return resolve_path(self.lit.names[self.names - 1], self.ctx)
        place = "file" if words & _FILE else "dir" if words & _DIR else self.place
        if place != "file":
            return self.ctx.root or "."
        if self.clause.verb not in _READ_VERBS or not self.ctx.files:
            return None  # never write, move or delete a file the prompt did not name
        wanted = set(self.clause.words)
        scored = [
            (len(wanted & set(tokens(posixpath.basename(f)))), -i, f) for i, f in enumerate(self.ctx.files)
        ]
        return max(scored)[2]

    def name(self) -> str | None:
        if self.names < len(self.lit.names):
            self.names += 1
            return self.lit.names[self.names - 1]
        return self.next_quoted()

    def type_value(self) -> str | None:
        pool = self.lit.types or self.lit.kind_nouns
        return pool[min(self.item, len(pool) - 1)] if pool else None

    def glob(self) -> str | None:
        if quoted := self.next_quoted():
            return quoted
        if m := re.search(r"(?<!\S)(\*[\w.*/-]*)", self.clause.text):
            return m.group(1)
        if m := re.search(r"(?<![\w])\.(\w{1,8})\s+files?\b", self.clause.text):
            return f"*.{m.group(1)}"
        if self.paths < len(self.lit.paths):
            self.paths += 1
            return posixpath.basename(self.lit.paths[self.paths - 1])
        return self.lit.topic or None

    def next_quoted(self) -> str | None:
        if self.quoted < len(self.lit.quoted):
            self.quoted += 1
            return self.lit.quoted[self.quoted - 1]
        return None

    def enum(self, key: str, schema: dict[str, Any], options: list[Any], required: bool) -> Any:
        named = self.named_option(options)
        if named is not None and (required or "default" not in schema or self.mentioned(key)):
            return named
        if not required:
            return None
        return schema["default"] if "default" in schema else options[0]

    def named_option(self, options: list[Any]) -> Any:
        text = self.clause.text.lower()
        hits = []
        for option in options:
            if isinstance(option, str) and option:
                m = re.search(rf"(?<![\w-]){re.escape(option.lower())}(?![\w-])", text)
                words = set(tokens(option))
                if m is not None or (words and words <= self.clause.words and len(option) > 3):
                    hits.append((m.start() if m else len(text), option))
        return min(hits)[1] if hits else None

    def boolean(self, key: str, schema: dict[str, Any], required: bool) -> bool | None:
        if self.mentioned(key, every=True):
            raw = self.clause.text.lower().split()
            return not any(w in _NEGATION for w in raw)
        if required:
            return bool(schema.get("default", False))
        return None

    def number(self, schema: dict[str, Any]) -> int | float | None:
        integer = schema_types(schema) == {"integer"}
        for i, n in enumerate(self.lit.numbers):
            if i not in self.numbers and (not integer or float(n).is_integer()):
                self.numbers.add(i)
                return int(n) if integer else n
        for key in ("default", "minimum"):
            if isinstance(schema.get(key), int | float):
                value = schema[key]
                return int(value) if integer else value
        return None

    def optional_numbers(self, props: dict[str, dict[str, Any]]) -> dict[str, int | float]:
        """Prompt numbers for optional numeric fields, each to the field whose words stand
        around it ("the first 2 lines" -> ``head``, described as "the first N lines")."""
        fields = {
            k: field_words(k, p, description=True) - _GENERIC
            for k, p in props.items()
            if prop_kind(k, p) == "number"
        }
        if not fields:
            return {}
        raw = re.findall(r"-?\d+(?:\.\d+)?|[A-Za-z]+", self.clause.text)
        pairs: list[tuple[int, int, str, int | float]] = []
        for i, tok in enumerate(raw):
            if not re.fullmatch(r"-?\d+(?:\.\d+)?", tok):
                continue
            index = next(
                (j for j, n in enumerate(self.lit.numbers) if n == float(tok) and j not in self.numbers), None
            )
            if index is None:
                continue
            value = self.lit.numbers[index]
            near = set(tokens(" ".join(raw[max(0, i - 2) : i] + raw[i + 1 : i + 3])))
            for key, words in fields.items():
                overlap = len(near & words)
                if overlap:
                    pairs.append((overlap, -index, key, value))
        out: dict[str, int | float] = {}
        used: set[int] = set()
        for _, neg_index, key, n in sorted(pairs, reverse=True):
            if key in out or -neg_index in used:
                continue
            integer = schema_types(props[key]) == {"integer"}
            if integer and not float(n).is_integer():
                continue
            out[key] = int(n) if integer else n
            used.add(-neg_index)
            self.numbers.add(-neg_index)
        return out

    def mentioned(self, key: str, *, every: bool = False) -> bool:
        words = set(tokens(key)) - _GENERIC
        if not words:
            return False
        hit = words & self.clause.words
        return hit == words if every else bool(hit)


def _tool_place(tool: ToolSpec) -> str:
    """Whether a bare ``path`` of this tool is a folder (list, tree, search) or a file (read, write)."""
    words = set(tokens(tool.name))
    if words & _DIR_TOOLS:
        return "dir"
    if words & _FILE_TOOLS:
        return "file"
    return "dir"
