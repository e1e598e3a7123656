"""The suite's ``replay.ignore`` rules, compiled: what a drift diff masks in one tool's results.

A rule applies to a call when its ``server`` and ``tool`` globs match; every rule that applies
masks its JSON paths (in structuredContent, and in the text when that is a JSON document) and its
regexes (RE2, linear time: a result may be megabytes) in the text and in every string of the
JSON. A masked value becomes ``MASK`` on both sides, so it can no longer differ.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from proctor.scenarios.json_paths import JsonPath, mask_path, parse_path
from proctor.scenarios.schema import IgnoreRule, mask_pattern

MASK = "<ignored>"


@dataclass(frozen=True)
class CallMask:
    """The masks that apply to one server's tool; empty when no rule does."""

    paths: tuple[JsonPath, ...] = ()
    patterns: tuple[Any, ...] = ()  # compiled re2 patterns

    def __bool__(self) -> bool:
        return bool(self.paths or self.patterns)

    def text(self, text: str) -> str:
        for rx in self.patterns:
            text = rx.sub(MASK, text)
        return text

    def json(self, value: Any) -> Any:
        for path in self.paths:
            value = mask_path(value, path, MASK)
        return self._strings(value) if self.patterns else value

    def _strings(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self._strings(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._strings(v) for v in value]
        return value


NO_MASK = CallMask()


class Masks:
    """Every rule of a suite, and the mask each (server, tool) gets (computed once per pair)."""

    def __init__(self, rules: Iterable[IgnoreRule]) -> None:
        self.rules = tuple(rules)
        self._compiled = [
            (
                r,
                tuple(parse_path(p) for p in r.paths),
                tuple(mask_pattern(p) for p in r.patterns),
            )
            for r in self.rules
        ]
        self._cache: dict[tuple[str, str], CallMask] = {}

    @classmethod
    def from_config(cls, raw: Sequence[Mapping[str, Any]]) -> Masks:
        """The rules as a replay run recorded them (``IgnoreRule.model_dump()`` each)."""
        return cls(IgnoreRule.model_validate(r) for r in raw)

    def for_call(self, server: str, tool: str) -> CallMask:
        key = (server, tool)
        got = self._cache.get(key)
        if got is None:
            paths: list[JsonPath] = []
            patterns: list[Any] = []
            for rule, rule_paths, rule_patterns in self._compiled:
                if fnmatchcase(server, rule.server) and fnmatchcase(tool, rule.tool):
                    paths += rule_paths
                    patterns += rule_patterns
            got = self._cache[key] = CallMask(tuple(paths), tuple(patterns)) if paths or patterns else NO_MASK
        return got


__all__ = ["MASK", "NO_MASK", "CallMask", "Masks"]
