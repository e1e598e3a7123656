"""The report's sections read from the run's events: tokens by phase per trial, and tool usage
(and the p-values of the baseline comparisons' McNemar tests, for scipy's sake: see ``mcnemar``).

They need nothing else the report computes, and on a large run reading the events is a third of
the report's work, so a large report reads them in a second process (``PendingSections``, see
engine/reports/second_process.py) while it reads scores and verdicts in its own: a Python thread
would wait for the same interpreter lock. The child runs the same code on the same database and
hands back plain data, so the sections are the same whichever process read them; a child that
cannot start or fails leaves the reading to the report's own process, as for a small run (where
a second process would cost more than it saves).

    python -m proctor.engine.reports.event_sections DB UP_TO_ID PARENT_FILE   (the child)
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from proctor.engine.reports import second_process
from proctor.engine.reports.arm_comparisons import mcnemar_inputs
from proctor.engine.reports.report_model import ToolUsageSection
from proctor.engine.reports.tool_usage import latency_recorded, read_tool_usage, tool_usage_section
from proctor.engine.stats import binomial_two_sided_half
from proctor.store.read.reader import JudgeUsage, ModelCallUsage, StoreReader, TrialRecord
from proctor.store.scores import ScoreName

# Below this many events a second process costs more than it saves.
CHILD_OVER_EVENTS = 60_000

Phases = tuple[int, int, int, int, float | None]
"""Tokens of one trial by phase: (reasoning, tool_io, output, judge, judge_cost_usd or None
when a judge call was unpriced); ``aggregate.TrialUsage`` in plain values."""


@dataclass(frozen=True)
class EventSections:
    usage: dict[int, Phases]
    tools: ToolUsageSection
    mcnemar: dict[tuple[int, int], float]
    """``binomial_two_sided_half(k, n)`` of each baseline comparison's McNemar test: scipy's
    binomial takes as long to load as this process reads events, so it loads here too."""


def _phases() -> dict[str, float]:
    return {"reasoning": 0, "tool_io": 0, "output": 0, "judge": 0, "judge_usd": 0.0}


def usage_by_trial(
    trials: list[TrialRecord],
    responses: Iterable[tuple[int | None, int, bool, ModelCallUsage]],
    judged: Iterable[tuple[int | None, int, bool, JudgeUsage]],
) -> dict[int, Phases]:
    """Tokens by phase per trial: the current attempt's model calls, and every judge call."""
    attempt = {t.id: t.attempt for t in trials}
    phases: dict[int, dict[str, float]] = {}
    unpriced: set[int] = set()
    for trial_id, call_attempt, abandoned, (input_tokens, tool_io_tokens, output_tokens) in responses:
        if trial_id is None or abandoned:
            continue
        if attempt.get(trial_id) != call_attempt:
            continue
        p = phases.get(trial_id)
        if p is None:
            p = phases[trial_id] = _phases()
        p["reasoning"] += max(0, input_tokens - tool_io_tokens)
        p["tool_io"] += tool_io_tokens
        p["output"] += output_tokens
    for t in trials:
        if t.id not in phases and t.input_tokens is not None:
            phases[t.id] = _phases() | {"reasoning": t.input_tokens, "output": t.output_tokens or 0}
    for trial_id, _attempt, _abandoned, (input_tokens, output_tokens, cost_usd) in judged:
        if trial_id is None:
            continue
        p = phases.setdefault(trial_id, _phases())
        p["judge"] += input_tokens + output_tokens
        if cost_usd is None:
            unpriced.add(trial_id)
        else:
            p["judge_usd"] += cost_usd
    return {
        tid: (
            int(p["reasoning"]),
            int(p["tool_io"]),
            int(p["output"]),
            int(p["judge"]),
            None if tid in unpriced else p["judge_usd"],
        )
        for tid, p in phases.items()
    }


def read_event_sections(db: Path, up_to_id: int) -> EventSections:
    """The sections, from the events up to ``up_to_id`` (the report's view of the run), and the
    McNemar p-values of the comparisons the report will make."""
    with StoreReader(db) as reader:
        run = reader.run()
        trials = reader.trials()
        usage = usage_by_trial(trials, reader.model_call_usage(up_to_id), reader.judge_usage(up_to_id))
        recorded = latency_recorded(run.config if run is not None else {})
        tools = tool_usage_section(
            read_tool_usage(reader, trials, recorded, up_to_id), latency_recorded=recorded
        )
        adoption = {s.trial_id: {s.name: s} for s in reader.scores(name=ScoreName.ADOPTION)}
    tests = mcnemar_inputs(trials, adoption)  # the baseline is told by the adoption scores alone
    return EventSections(usage, tools, {(k, n): binomial_two_sided_half(k, n) for k, n in tests})


class PendingSections:
    """``EventSections`` of a run, read in a second process when the run is large."""

    def __init__(self, db: Path, up_to_id: int, *, child: bool | None = None) -> None:
        self._db, self._upper = db, up_to_id
        self._child: second_process.Child | None = None
        if child if child is not None else up_to_id > CHILD_OVER_EVENTS:
            self._child = second_process.start(_read_plain, __name__, __file__, db, up_to_id)

    @property
    def started(self) -> bool:
        """Whether a second process is reading the sections."""
        return self._child is not None

    def result(self) -> EventSections:
        """The sections: the child's, or read here if there was no child or it failed."""
        child, self._child = self._child, None
        try:
            got = None if child is None else second_process.result(child)
        except BaseException:  # interrupted while waiting: the child must not outlive the wait
            if child is not None:
                child.stop()
            raise
        if isinstance(got, tuple) and len(got) == 3:
            return EventSections(*got)
        return read_event_sections(self._db, self._upper)

    def close(self) -> None:
        """Stops a child whose sections are no longer wanted (the report failed)."""
        child, self._child = self._child, None
        if child is not None:
            child.stop()


def _read_plain(
    db: Path, up_to_id: int
) -> tuple[dict[int, Phases], ToolUsageSection, dict[tuple[int, int], float]]:
    # Plain values: run as ``python -m``, this module is ``__main__``, whose classes would not unpickle.
    sections = read_event_sections(db, up_to_id)
    return sections.usage, sections.tools, sections.mcnemar


if __name__ == "__main__":
    sys.exit(second_process.run_as_child(_read_plain, __file__, sys.argv[1:]))


__all__ = [
    "CHILD_OVER_EVENTS",
    "EventSections",
    "PendingSections",
    "Phases",
    "read_event_sections",
    "usage_by_trial",
]
