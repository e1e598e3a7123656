"""A scenario's gold calls as one trial can meet them: which this arm can make at all, and
which of its calls came back reading like errors.

Kept apart from engine/grading/evaluation.py, which calls them while it scores a trial.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from proctor.engine.scoring import TrialDigest
from proctor.engine.scoring.result_checks import disguised_error
from proctor.engine.scoring.trial_digest import render_call
from proctor.scenarios.schema import ArmSpec, GoldCall, Scenario


class TrialInput(Protocol):
    """What these read of a trial (``evaluation.TrialInput`` has it)."""

    @property
    def scenario(self) -> Scenario: ...

    @property
    def arm(self) -> ArmSpec: ...

    @property
    def tool_schemas(self) -> Mapping[str, Any]: ...


def has_verdict_check(scenario: Scenario) -> bool:
    """Whether a judge may decide the pass: claims, key points or a rubric to judge against."""
    return bool(scenario.claims or scenario.key_points or scenario.rubric)


def gold_for_arm(trial: TrialInput) -> list[list[GoldCall]] | None:
    """Gold calls this arm can satisfy, or None when it does not offer their tools.

    A server under test often implements the same tools as the one the gold calls were written
    against (a new version, a competitor); the server name then yields to the tool names. An
    imported trial lists no tools (the source did not record them): its calls are judged as made.
    """
    gold = trial.scenario.gold_tool_calls
    names = {g.tool for step in gold for g in step}
    if trial.arm.baseline or (trial.tool_schemas and not names <= set(trial.tool_schemas)):
        return None
    servers = set(trial.arm.servers)
    return [
        [
            g if g.server is None or g.server in servers else g.model_copy(update={"server": None})
            for g in step
        ]
        for step in gold
    ]


def cannot_make_gold_calls(trial: TrialInput) -> bool:
    """Whether the scenario's verdict can only come from its gold calls and this arm does not offer
    their tools: a baseline on a drafted suite. Its fairness would then compare an arm that could
    not do the task with one that could (a quick empty answer scores well on efficiency), so it
    has none."""
    sc = trial.scenario
    return bool(sc.gold_tool_calls) and not has_verdict_check(sc) and gold_for_arm(trial) is None


def disguised_errors(digest: TrialDigest) -> list[str]:
    """The trial's calls the server answered without ``isError`` whose results read like errors."""
    out = []
    for c in digest.tool_calls:
        why = disguised_error(c.result, c.structured) if c.has_result and not c.is_error else None
        if why is not None:
            out.append(f"{c.server}/{render_call(c.tool, c.arguments)}: {why}")
    return out


__all__ = ["cannot_make_gold_calls", "disguised_errors", "gold_for_arm", "has_verdict_check"]
