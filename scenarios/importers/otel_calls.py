"""Traces that record MCP calls and nothing of a model: the mcp SDK's own client spans.

Without model instrumentation a trace holds ``MCP send tools/call NAME`` spans and no prompt,
no chat and no answer. It is still a recording of tool calls, which is what ``proctor replay``
and drift need, so it becomes a trial without a prompt: its scenario is named after its first
call (traces whose calls start alike are epochs of one scenario) and has nothing to judge.
The mcp SDK (2.3) records no arguments and no results on those spans; a result the trace does
not hold is left out rather than stored as an empty answer, so a drift against the first replay
says "no result in the recording" instead of "changed".
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from proctor.scenarios.importers.common import ImportedTrajectory, scenario_id
from proctor.scenarios.loader import LoadedSuite


def calls_only(t: ImportedTrajectory) -> bool:
    """A trial of tool calls and nothing a model said (no text in any turn, no answer)."""
    calls = [c for turn in t.turns for c in turn.calls]
    return bool(calls) and not t.final_answer and not any(turn.text for turn in t.turns)


def _tools(t: ImportedTrajectory) -> list[str]:
    return list(dict.fromkeys(c.tool for turn in t.turns for c in turn.calls))


def calls_scenario_id(t: ImportedTrajectory) -> str:
    """``calls-FIRST_TOOL``: traces that start with the same call are epochs of one scenario."""
    return f"calls-{scenario_id(_tools(t)[0])}"


def calls_scenario(sid: str, t: ImportedTrajectory) -> dict[str, Any]:
    """The scenario of a trial without a prompt: a prompt that says so, nothing to judge."""
    tools = ", ".join(_tools(t))
    return {
        "id": sid,
        "title": f"MCP calls: {tools}",
        "prompt": f"(the traces record no prompt: MCP client calls only, {tools})",
    }


def without_unrecorded_results(t: ImportedTrajectory) -> ImportedTrajectory:
    """``t`` without the results its spans did not record (empty and not an error)."""
    turns = tuple(
        replace(turn, results=tuple(r for r in turn.results if r.content or r.is_error)) for turn in t.turns
    )
    return replace(t, turns=turns)


def only_server_arm(loaded: LoadedSuite, arm: str) -> str:
    """The suite's one arm with MCP servers (the trace names none it has), else ``arm`` unchanged:
    a replay then calls that arm's servers."""
    armed = [name for name, spec in loaded.suite.arms.items() if spec.servers]
    return armed[0] if len(armed) == 1 else arm


def calls_only_note(count: int) -> str:
    return (
        f"{count} trace(s) hold MCP calls and no prompt (the mcp SDK's client spans, no model "
        "instrumentation): imported as trials without a prompt, each scenario named after its first call, "
        "with no verdict; they replay (proctor replay) and feed drift. The spans record no arguments or "
        "results: the calls replay without arguments, and results are compared from the first replay on"
    )


__all__ = [
    "calls_only",
    "calls_only_note",
    "calls_scenario",
    "calls_scenario_id",
    "without_unrecorded_results",
]
