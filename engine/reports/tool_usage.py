"""How each arm used each tool: calls, errors, latency, result size, and tools never called.

Pure: it reads ``StoredEvent`` records handed to it (``report.py`` streams them from the store
in id order, a chunk at a time) and keeps only counters and one latency per answered call, so
time and memory are linear in the number of events. Only each trial's current attempt counts;
events of abandoned attempts are skipped, as everywhere else in the report.

Definitions (the report's JSON key ``tool_usage`` carries them as ``definitions``):

* **offered**: the tool was in a ``tools_listed`` event of the arm's trials (what the model was
  shown); ``offered_in_trials`` counts those trials.
* **calls**: ``tool_call`` events. A call is filed under the tool its ``tool_result`` names, so a
  call made through a router's ``execute`` counts for the tool it ran (the router's own
  ``execute`` then counts as called, not as never called). A call with no result (the trial
  timed out or was cut) is filed under the called name and counted in ``no_result``.
* **errors**: results with ``is_error``; ``error_rate`` = errors / results.
* **latency**: ``latency_s`` of each result; p50 and p95 by linear interpolation between the
  closest ranks (``numpy.percentile(method="linear")``, Hyndman & Fan type 7, Excel's
  ``PERCENTILE.INC``). With one result both are that result's latency. An imported run whose
  source recorded no times has none (``latency_recorded`` false), never a 0.
* **result bytes**: UTF-8 bytes of the result text as stored (what the model was sent before
  the per-turn cap; a result cut at ``tool_result_store_chars`` counts what was kept and is
  counted in ``truncated_results``) plus the size of binary blocks (images, audio, blobs).
* **trials**: trials in which the tool was called at least once.
* **never called**: offered in the arm's trials but never called in any of them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from proctor.engine.reports.tools_model import ToolUsageSection
from proctor.store.event_facts import TOOL_KINDS, ToolRow, result_bytes, tool_row
from proctor.store.event_structs import as_report_event
from proctor.store.read.reader import (
    StoredEvent,
    StoreReader,
    TrialRecord,
)

PERCENTILE_METHOD = (
    "linear interpolation between closest ranks (numpy.percentile method='linear', Hyndman & Fan "
    "type 7) over the latencies of calls that returned a result"
)
RESULT_BYTES = (
    "UTF-8 bytes of the stored result text (after the tool_result_store_chars cap) plus the size "
    "of binary blocks"
)
ROUTED = "a call through a router's execute counts for the tool it ran"
KINDS = TOOL_KINDS
"""The event kinds ``ToolUsageCounter.add`` reads; feed them merged in id order."""

Who = tuple[str, str]  # (arm, model)
ToolKey = tuple[str, str]  # (server, tool)


@dataclass(frozen=True)
class ToolStats:
    """One tool of one arm × model."""

    server: str
    tool: str
    offered: bool
    offered_in_trials: int
    calls: int
    results: int
    errors: int
    no_result: int
    latency_p50_s: float | None
    latency_p95_s: float | None
    result_bytes: int
    truncated_results: int
    trials: int

    @property
    def error_rate(self) -> float | None:
        return self.errors / self.results if self.results else None

    @property
    def mean_result_bytes(self) -> float | None:
        return self.result_bytes / self.results if self.results else None


@dataclass(frozen=True)
class NeverCalled:
    server: str
    tool: str
    offered_in_trials: int


@dataclass(frozen=True)
class ArmToolUsage:
    arm: str
    model: str
    trials: int
    offered: int
    tools: tuple[ToolStats, ...]
    never_called: tuple[NeverCalled, ...]


@dataclass(slots=True)
class _Tally:
    calls: int = 0
    results: int = 0
    errors: int = 0
    no_result: int = 0
    result_bytes: int = 0
    truncated: int = 0
    latencies: list[float] = field(default_factory=list)
    trials: set[int] = field(default_factory=set)


@dataclass(slots=True)
class _Counts:
    """What is counted of one arm × model."""

    # Each tool list (one object per distinct list: readers hand out one) -> the trials it was
    # listed in; ``offered`` folds them once counting is done.
    listed: dict[int, tuple[Sequence[ToolKey], set[int]]] = field(default_factory=dict)
    tally: dict[ToolKey, _Tally] = field(default_factory=dict)
    called: set[ToolKey] = field(default_factory=set)


def percentiles(values: list[float]) -> tuple[float | None, float | None]:
    """(p50, p95) of ``values`` by numpy's linear method; (None, None) for no values."""
    if not values:
        return None, None
    import numpy as np  # here: the console's first paint does not need it

    p50, p95 = np.percentile(np.asarray(values, dtype=np.float64), [50, 95], method="linear")
    return float(p50), float(p95)


class ToolUsageCounter:
    """Feed it ``tools_listed``, ``tool_call`` and ``tool_result`` events in id order."""

    def __init__(self, trials: Iterable[TrialRecord], *, latency_recorded: bool = True) -> None:
        self.latency_recorded = latency_recorded
        self._who: dict[int, Who] = {}
        self._trials: dict[Who, int] = {}
        self._counts: dict[Who, _Counts] = {}
        # trial id -> (its current attempt, its arm's counts): one look-up per event.
        self._current: dict[int, tuple[int, _Counts]] = {}
        for t in trials:
            who = (t.arm, t.model)
            self._who[t.id] = who
            self._trials[who] = self._trials.get(who, 0) + 1
            counts = self._counts.get(who)
            if counts is None:
                counts = self._counts[who] = _Counts()
            self._current[t.id] = (t.attempt, counts)
        self._pending: dict[tuple[int, str], ToolKey] = {}

    def add(self, e: StoredEvent) -> None:
        row = tool_row(as_report_event(e.event))
        if row is not None:
            self.add_row(e.trial_id, e.attempt, e.abandoned, row)

    def add_row(self, trial_id: int | None, attempt: int, abandoned: bool, row: ToolRow) -> None:
        """One event as ``tool_row`` reads it."""
        self.add_rows(((trial_id, attempt, abandoned, row),))

    def add_rows(self, rows: Iterable[tuple[int | None, int, bool, ToolRow]]) -> None:
        """Events as ``tool_row`` reads them, with their (trial_id, attempt, abandoned), in id order.

        One loop, the hot path of a report (on 10,000 trials about 94,000 rows): each step inline."""
        current = self._current
        pending = self._pending
        recorded = self.latency_recorded
        isfinite = math.isfinite
        for trial_id, attempt, abandoned, (kind, what) in rows:
            if abandoned or trial_id is None:
                continue
            now = current.get(trial_id)
            if now is None or now[0] != attempt:
                continue
            counts = now[1]
            if kind == "tool_result":
                call_id, server, tool, is_error, latency_s, size, truncated = what
                # Filed under the tool that ran (a router's execute names the real one in its
                # result); a result whose call was not recorded (an imported transcript) is its
                # own call.
                key = (server, tool)
                pending.pop((trial_id, call_id), None)
                counts.called.add(key)
                tally = counts.tally.get(key)
                if tally is None:
                    tally = counts.tally[key] = _Tally()
                tally.calls += 1
                tally.results += 1
                tally.errors += is_error
                tally.result_bytes += size
                tally.truncated += truncated
                if recorded and isfinite(latency_s):
                    tally.latencies.append(latency_s)
                tally.trials.add(trial_id)
            elif kind == "tool_call":
                call_id, server, tool = what
                key = (server, tool)
                counts.called.add(key)
                pending[(trial_id, call_id)] = key
            else:
                listed = counts.listed.get(id(what))
                if listed is None:
                    listed = counts.listed[id(what)] = (what, set())
                listed[1].add(trial_id)

    def result(self) -> list[ArmToolUsage]:
        """One entry per arm × model that had trials, in first-seen order of the trial matrix."""
        for (trial_id, _), key in self._pending.items():
            tallies = self._counts[self._who[trial_id]].tally
            tally = tallies.get(key)
            if tally is None:
                tally = tallies[key] = _Tally()
            tally.calls += 1
            tally.no_result += 1
            tally.trials.add(trial_id)
        self._pending.clear()
        return [self._arm(who, n) for who, n in self._trials.items()]

    def _arm(self, who: Who, trials: int) -> ArmToolUsage:
        counts = self._counts[who]
        offered = _offered(counts)
        tallies, called = counts.tally, counts.called
        tools = []
        for key, tally in tallies.items():
            p50, p95 = percentiles(tally.latencies)
            tools.append(
                ToolStats(
                    server=key[0],
                    tool=key[1],
                    offered=key in offered,
                    offered_in_trials=len(offered.get(key, ())),
                    calls=tally.calls,
                    results=tally.results,
                    errors=tally.errors,
                    no_result=tally.no_result,
                    latency_p50_s=p50,
                    latency_p95_s=p95,
                    result_bytes=tally.result_bytes,
                    truncated_results=tally.truncated,
                    trials=len(tally.trials),
                )
            )
        tools.sort(key=lambda s: (-s.calls, s.server, s.tool))
        never = sorted(
            (NeverCalled(k[0], k[1], len(ids)) for k, ids in offered.items() if k not in called),
            key=lambda n: (n.server, n.tool),
        )
        return ArmToolUsage(who[0], who[1], trials, len(offered), tuple(tools), tuple(never))


def _offered(counts: _Counts) -> dict[ToolKey, set[int]]:
    """Each tool listed in the arm's trials -> those trials."""
    offered: dict[ToolKey, set[int]] = {}
    for tools, trials in counts.listed.values():
        for key in tools:
            in_trials = offered.get(key)
            if in_trials is None:
                offered[key] = set(trials)
            else:
                in_trials |= trials
    return offered


def tool_usage(
    trials: Iterable[TrialRecord], events: Iterable[StoredEvent], *, latency_recorded: bool = True
) -> list[ArmToolUsage]:
    """Tool usage per arm × model from ``events`` (any kinds, in id order; others are ignored)."""
    counter = ToolUsageCounter(trials, latency_recorded=latency_recorded)
    for e in events:
        counter.add(e)
    return counter.result()


def latency_recorded(config: dict[str, Any]) -> bool:
    """False for an imported run whose source recorded no times (its latencies are 0 placeholders)."""
    imported = config.get("imported")
    return not isinstance(imported, dict) or not str(imported.get("wall_s", "not recorded")).startswith(
        "not recorded"
    )


def read_tool_usage(
    reader: StoreReader, trials: list[TrialRecord], recorded: bool = True, up_to_id: int | None = None
) -> list[ArmToolUsage]:
    """Streams the run's tool events (the three kinds, in id order, up to ``up_to_id``: by default
    all) through the counter as ``tool_row`` reads them, written beside each event when it was
    stored (``StoreReader.tool_rows``); the report reads it this way, the console's tools screen
    feeds the counter parsed events."""
    counter = ToolUsageCounter(trials, latency_recorded=recorded)
    upper = reader.max_event_id() if up_to_id is None else up_to_id
    counter.add_rows(reader.tool_rows(upper))
    return counter.result()


def tool_usage_section(usage: Iterable[ArmToolUsage], *, latency_recorded: bool = True) -> ToolUsageSection:
    """The report's ``tool_usage`` key."""
    return {
        "latency_recorded": latency_recorded,
        "definitions": {
            "latency_percentiles": PERCENTILE_METHOD,
            "result_bytes": RESULT_BYTES,
            "routed": ROUTED,
        },
        "arms": [
            {
                "arm": a.arm,
                "model": a.model,
                "trials": a.trials,
                "offered_tools": a.offered,
                "tools": [
                    {
                        "server": s.server,
                        "tool": s.tool,
                        "offered": s.offered,
                        "offered_in_trials": s.offered_in_trials,
                        "calls": s.calls,
                        "results": s.results,
                        "errors": s.errors,
                        "error_rate": s.error_rate,
                        "no_result": s.no_result,
                        "latency_s": {"p50": s.latency_p50_s, "p95": s.latency_p95_s},
                        "result_bytes": {"total": s.result_bytes, "mean": s.mean_result_bytes},
                        "truncated_results": s.truncated_results,
                        "trials": s.trials,
                    }
                    for s in a.tools
                ],
                "never_called": [
                    {"server": n.server, "tool": n.tool, "offered_in_trials": n.offered_in_trials}
                    for n in a.never_called
                ],
            }
            for a in usage
        ],
    }


__all__ = [
    "KINDS",
    "PERCENTILE_METHOD",
    "ArmToolUsage",
    "NeverCalled",
    "ToolRow",
    "ToolStats",
    "ToolUsageCounter",
    "latency_recorded",
    "percentiles",
    "read_tool_usage",
    "result_bytes",
    "tool_row",
    "tool_usage",
    "tool_usage_section",
]
