"""Calls the suite says a server must refuse: a replay that answers one did not fix an error.

A drift counts a call that erred in the recording and succeeds in the replay as ``fixed_error``,
which no gate fails on: usually the server got better. But when the scenario's gold call says
``expect_error: true`` (a path outside the root, a private address), the refusal was the point,
and a server that now answers has regressed. ``proctor replay`` records those gold calls in the
new run's config (``replay.refusals``); the drift reads such a call as ``changed``, with a note.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any


def _canonical(arguments: Any) -> str:
    """Arguments as sorted JSON; a null argument counts as absent, as in the tool-call match."""
    if isinstance(arguments, Mapping):
        arguments = {k: v for k, v in arguments.items() if v is not None}
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)


class Refusals:
    """The gold calls with ``expect_error`` per scenario, as (tool, canonical arguments)."""

    def __init__(self, calls: Sequence[tuple[str, str, Any]]) -> None:
        self._keys = {(scenario, tool, _canonical(args)) for scenario, tool, args in calls}

    def __bool__(self) -> bool:
        return bool(self._keys)

    @classmethod
    def from_config(cls, raw: Any) -> Refusals:
        """From ``replay.refusals`` as :func:`refusals_config` wrote it; anything else is none."""
        if not isinstance(raw, list):
            return cls(())
        return cls(
            [
                (str(r.get("scenario", "")), str(r.get("tool", "")), r.get("arguments", {}))
                for r in raw
                if isinstance(r, Mapping)
            ]
        )

    def expected(self, scenario: str, tools: Sequence[str], arguments: Any) -> bool:
        """Whether a call of ``scenario`` to one of ``tools`` (its names as called and as answered)
        with ``arguments`` is one the suite expects to be refused."""
        args = _canonical(arguments)
        return any((scenario, tool, args) in self._keys for tool in tools)


def refusals_config(gold: Mapping[str, Sequence[Sequence[Any]]]) -> list[dict[str, Any]]:
    """``replay.refusals`` for a replay run: each scenario's gold calls that expect an error."""
    return [
        {"scenario": scenario, "tool": g.tool, "arguments": dict(g.arguments)}
        for scenario, steps in sorted(gold.items())
        for step in steps
        for g in step
        if g.expect_error
    ]


NO_REFUSALS = Refusals(())

__all__ = ["NO_REFUSALS", "Refusals", "refusals_config"]
