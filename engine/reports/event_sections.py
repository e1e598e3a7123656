"""The report's sections read from the run's events: tokens by phase per trial, and tool usage.

They are the report's largest read (on 10,000 trials about 165,000 events), so what they take of
each event (a few numbers: ``store.event_facts``) was written beside it when it was stored, and
the report reads those small rows; only an event without them has its payload decoded.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from proctor.engine.reports.tool_usage import latency_recorded, read_tool_usage, tool_usage_section
from proctor.engine.reports.tools_model import ToolUsageSection
from proctor.store.read.reader import JudgeUsage, ModelCallUsage, RunRecord, StoreReader, TrialRecord

Phases = tuple[int, int, int, int, float | None]
"""Tokens of one trial by phase: (reasoning, tool_io, output, judge, judge_cost_usd or None
when a judge call was unpriced); ``aggregate.TrialUsage`` in plain values."""


@dataclass(frozen=True)
class EventSections:
    usage: dict[int, Phases]
    tools: ToolUsageSection


def usage_by_trial(
    trials: list[TrialRecord],
    responses: Iterable[tuple[int | None, int, bool, ModelCallUsage]],
    judged: Iterable[tuple[int | None, int, bool, JudgeUsage]],
) -> dict[int, Phases]:
    """Tokens by phase per trial: the current attempt's model calls, and every judge call."""
    attempt = {t.id: t.attempt for t in trials}
    # trial id -> [reasoning, tool_io, output, judge, judge_usd]
    phases: dict[int, list[float]] = {}
    unpriced: set[int] = set()
    for trial_id, call_attempt, abandoned, (input_tokens, tool_io_tokens, output_tokens) in responses:
        if abandoned or trial_id is None or attempt.get(trial_id) != call_attempt:
            continue
        p = phases.get(trial_id)
        if p is None:
            p = phases[trial_id] = [0, 0, 0, 0, 0.0]
        p[0] += max(0, input_tokens - tool_io_tokens)
        p[1] += tool_io_tokens
        p[2] += output_tokens
    for t in trials:
        if t.id not in phases and t.input_tokens is not None:
            phases[t.id] = [t.input_tokens, 0, t.output_tokens or 0, 0, 0.0]
    for trial_id, _attempt, _abandoned, (input_tokens, output_tokens, cost_usd) in judged:
        if trial_id is None:
            continue
        p = phases.get(trial_id)
        if p is None:
            p = phases[trial_id] = [0, 0, 0, 0, 0.0]
        p[3] += input_tokens + output_tokens
        if cost_usd is None:
            unpriced.add(trial_id)
        else:
            p[4] += cost_usd
    return {
        tid: (int(r), int(io), int(o), int(j), None if tid in unpriced else usd)
        for tid, (r, io, o, j, usd) in phases.items()
    }


def read_event_sections(
    reader: StoreReader, run: RunRecord | None, trials: list[TrialRecord], up_to_id: int
) -> EventSections:
    """The sections, from the events up to ``up_to_id`` (the report's view of the run)."""
    usage = usage_by_trial(trials, reader.model_call_usage(up_to_id), reader.judge_usage(up_to_id))
    recorded = latency_recorded(run.config if run is not None else {})
    tools = tool_usage_section(read_tool_usage(reader, trials, recorded, up_to_id), latency_recorded=recorded)
    return EventSections(usage, tools)


__all__ = ["EventSections", "Phases", "read_event_sections", "usage_by_trial"]
