"""A small JSON path syntax for naming parts of a tool result: the volatile ones a replay ignores
(``replay.ignore``) and the ones a gold call's ``expect: {json: ...}`` checks.

Written as in most JSON path dialects, reduced to what masking needs: ``$`` (optional) then
steps ``.key``, ``["key with.dots"]``, ``[3]`` (a list index), ``[*]`` or ``.*`` (every item or
every key). ``$.commits[*].date``, ``items[0].id`` and ``meta.*`` are paths. Filters and
recursive descent are not: a rule that needs them is better written as a regex (``patterns``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

WILDCARD = "*"
_STEP = re.compile(r"""\.(?P<key>[^.\[\]]+)|\[(?P<index>\d+|\*|"(?:[^"\\]|\\.)*"|'[^']*')\]""")


class JsonPathError(ValueError):
    """A path that does not parse; the message says where and how to write it."""


@dataclass(frozen=True)
class JsonPath:
    """A parsed path: each step a key (str), an index (int) or the wildcard ``*``."""

    text: str
    steps: tuple[str | int, ...]

    def __str__(self) -> str:
        return self.text


def parse_path(text: str) -> JsonPath:
    """``text`` as a path, or ``JsonPathError`` naming the first character that is wrong."""
    source = text.strip()
    rest = source[1:] if source.startswith("$") else source
    if rest and not rest.startswith((".", "[")):
        rest = "." + rest  # "a.b" is read as "$.a.b"
    steps: list[str | int] = []
    pos = 0
    while pos < len(rest):
        m = _STEP.match(rest, pos)
        if m is None:
            raise JsonPathError(
                f"{text!r}: cannot read the path at {rest[pos:]!r}; write keys as .key or "
                '["key"], list items as [0] or [*] (e.g. $.commits[*].date)'
            )
        key, index = m.group("key"), m.group("index")
        if key is not None:
            steps.append(key)
        elif index == WILDCARD:
            steps.append(WILDCARD)
        elif index.isdigit():
            steps.append(int(index))
        elif index.startswith('"'):
            steps.append(str(json.loads(index)))
        else:
            steps.append(index[1:-1])
        pos = m.end()
    if not steps:
        raise JsonPathError(f"{text!r}: an empty path would ignore the whole result; name a field, e.g. $.id")
    return JsonPath(source, tuple(steps))


def mask_path(value: Any, path: JsonPath, mask: Any) -> Any:
    """``value`` with every leaf or subtree ``path`` reaches replaced by ``mask`` (a new value;
    the input is not modified). A path that reaches nothing leaves the value as it was."""
    return _mask(value, path.steps, mask)


def _mask(value: Any, steps: tuple[str | int, ...], mask: Any) -> Any:
    if not steps:
        return mask
    step, rest = steps[0], steps[1:]
    if isinstance(value, dict):
        if step == WILDCARD:
            return {k: _mask(v, rest, mask) for k, v in value.items()}
        key = str(step)
        if key in value:
            return {**value, key: _mask(value[key], rest, mask)}
        return value
    if isinstance(value, list):
        if step == WILDCARD:
            return [_mask(v, rest, mask) for v in value]
        if isinstance(step, int) and step < len(value):
            return [*value[:step], _mask(value[step], rest, mask), *value[step + 1 :]]
    return value


def select_path(value: Any, path: JsonPath) -> list[Any]:
    """Every value ``path`` reaches in ``value`` (none when it reaches nothing), in order."""
    found = [value]
    for step in path.steps:
        reached: list[Any] = []
        for v in found:
            if isinstance(v, dict):
                if step == WILDCARD:
                    reached.extend(v.values())
                elif str(step) in v:
                    reached.append(v[str(step)])
            elif isinstance(v, list):
                if step == WILDCARD:
                    reached.extend(v)
                elif isinstance(step, int) and step < len(v):
                    reached.append(v[step])
        found = reached
    return found


__all__ = ["WILDCARD", "JsonPath", "JsonPathError", "mask_path", "parse_path", "select_path"]
