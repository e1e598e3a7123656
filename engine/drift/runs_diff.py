"""The drift between a recorded run and its replay: every call paired, diffed and counted.

A replay run (``proctor replay``) records in its config where it came from (``replay``: the
source database and run, and the suite's ``replay.ignore`` rules it ran under). Its trials have
the recorded trials' keys (scenario, arm, model, epoch) and its calls the recorded calls' ids, so
each replayed call pairs with its recording by trial key, call id and occurrence; a recorded call
a finished replay did not make (the baseline's built-in tools, the router's ``route``) is
``skipped``, one an interrupted replay never reached is ``missing``. Only each trial's
current attempt counts, on both sides. Counts are kept per server and in total.

Reads take the event fields as plain JSON (``StoreReader.payloads``), never every event's model:
two runs of 10,000 calls each are read and diffed in well under two seconds.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from proctor.engine.drift import REPLAY_KEY
from proctor.engine.drift.masks import Masks
from proctor.engine.drift.refusals import NO_REFUSALS, Refusals
from proctor.engine.drift.result_diff import (
    DRIFTED,
    LOST_REFUSAL,
    STATUSES,
    CallDiff,
    RecordedResult,
    Status,
    diff_results,
)
from proctor.store.read.reader import StoreReader

TrialKey = tuple[str, str, str, int]
REPLAYED_STOP = "replayed"  # a replayed trial's ``stop``: no model played it, nothing judges it
SKIPPED_NOTE = "not replayed: answered by proctor itself (a built-in tool or route), not by a server"
STOPPED_NOTE = "not replayed: the replay stopped before this call (interrupted)"


class DriftError(ValueError):
    """A drift cannot be computed (the run is no replay, or its source database is gone): bad input."""


@dataclass(slots=True)
class RecordedCall:
    call_id: str
    server: str
    tool: str
    arguments: Any
    payload: dict[str, Any] | None = None  # the ``tool_result`` event's payload, as plain JSON
    result_server: str = ""
    result_tool: str = ""
    step: int = 0  # calls of one step were requested together (the model's one turn): parallel
    builtin: bool | None = None  # the call's marker as recorded (store.tool_origin.is_builtin reads it)

    @property
    def result(self) -> RecordedResult | None:
        return None if self.payload is None else RecordedResult.of_payload(self.payload)

    @property
    def answered_by(self) -> tuple[str, str]:
        """The server and the tool's own name that answered (the router's ``execute`` unwrapped)."""
        return (self.result_server or self.server, self.result_tool or self.tool)


@dataclass(frozen=True)
class TrialCalls:
    trial_id: int
    calls: list[RecordedCall]
    finished: bool = True


@dataclass(frozen=True, slots=True)
class CallDrift:
    key: TrialKey
    old_trial: int
    new_trial: int | None
    index: int
    call_id: str
    server: str
    tool: str
    arguments: Any
    diff: CallDiff

    @property
    def arguments_text(self) -> str:
        return json.dumps(self.arguments, ensure_ascii=False, sort_keys=True, default=str)

    @property
    def name(self) -> str:
        """``scenario/arm/model/epoch #index server.tool``: unique within a drift."""
        scenario, arm, model, epoch = self.key
        return f"{scenario}/{arm}/{model}/e{epoch} #{self.index + 1} {self.server}.{self.tool}"


@dataclass(frozen=True)
class ServerDrift:
    server: str
    counts: dict[Status, int]

    @property
    def calls(self) -> int:
        return sum(self.counts.values())


@dataclass(frozen=True)
class Drift:
    source_db: str
    source_run: str
    calls: list[CallDrift]
    servers: list[ServerDrift]
    totals: dict[Status, int]
    notes: list[str] = field(default_factory=list)

    @property
    def drifted(self) -> int:
        """Calls that changed or newly erred: what ``gate --max-changed`` compares."""
        return sum(self.totals[s] for s in DRIFTED)


def read_calls(reader: StoreReader, trial_ids: set[int] | None = None) -> dict[TrialKey, TrialCalls]:
    """Every trial's tool calls of its current attempt, in order, each with its result."""
    trials = {t.id: t for t in reader.trials() if trial_ids is None or t.id in trial_ids}
    calls: dict[int, list[RecordedCall]] = {tid: [] for tid in trials}
    open_calls: dict[int, dict[str, list[RecordedCall]]] = {tid: {} for tid in trials}
    # A call after a result starts a new step: calls requested together are recorded together,
    # before any of their results (the agent loop and every importer write them so).
    steps: dict[int, tuple[int, bool]] = {}  # trial -> (current step, a result seen since)
    for trial_id, attempt, abandoned, kind, obj in reader.payloads(
        ("tool_call", "tool_result"), reader.max_event_id()
    ):
        if trial_id is None or abandoned or trial_id not in trials or attempt != trials[trial_id].attempt:
            continue
        call_id = str(obj.get("call_id", ""))
        if kind == "tool_call":
            marker = obj.get("builtin")
            call = RecordedCall(
                call_id,
                str(obj.get("server", "")),
                str(obj.get("tool", "")),
                obj.get("arguments"),
                builtin=marker if isinstance(marker, bool) else None,
            )
            step, after_result = steps.get(trial_id, (-1, True))
            if after_result:
                step += 1
            steps[trial_id] = (step, False)
            call.step = step
            calls[trial_id].append(call)
            open_calls[trial_id].setdefault(call_id, []).append(call)
            continue
        if trial_id in steps:
            steps[trial_id] = (steps[trial_id][0], True)
        waiting = open_calls[trial_id].get(call_id)
        if waiting:
            call = waiting.pop(0)
            call.payload = obj
            call.result_server, call.result_tool = str(obj.get("server", "")), str(obj.get("tool", ""))
    return {t.key: TrialCalls(t.id, calls[t.id], t.status in ("finished", "error")) for t in trials.values()}


def diff_runs(
    old: StoreReader,
    new: StoreReader,
    masks: Masks,
    *,
    source_run: str = "",
    refusals: Refusals = NO_REFUSALS,
) -> Drift:
    """Pair every call of ``new``'s trials with ``old``'s same trial and call, and diff them."""
    new_calls = read_calls(new)
    old_calls = read_calls(old)
    out: list[CallDrift] = []
    for key, recorded in old_calls.items():
        replayed = new_calls.get(key)
        if replayed is None:
            continue  # a trial the replay left out (--arms): not part of this drift
        out += _pair_trial(key, recorded, replayed, masks, refusals)
    totals = dict.fromkeys(STATUSES, 0)
    per_server: dict[str, dict[Status, int]] = {}
    for c in out:
        totals[c.diff.status] += 1
        per_server.setdefault(c.server, dict.fromkeys(STATUSES, 0))[c.diff.status] += 1
    servers = [ServerDrift(s, counts) for s, counts in sorted(per_server.items())]
    notes = []
    if masks.rules:
        notes.append(f"{len(masks.rules)} replay.ignore rule(s) masked volatile fields before comparing")
    return Drift(str(old.path), source_run, out, servers, totals, notes)


def _pair_trial(
    key: TrialKey, recorded: TrialCalls, replayed: TrialCalls, masks: Masks, refusals: Refusals
) -> Iterator[CallDrift]:
    by_id: dict[str, list[RecordedCall]] = {}
    for c in replayed.calls:
        by_id.setdefault(c.call_id, []).append(c)
    for index, old in enumerate(recorded.calls):
        twins = by_id.get(old.call_id)
        new = twins.pop(0) if twins else None
        server, tool = (new or old).answered_by
        if new is None and replayed.finished:
            diff = CallDiff("skipped", notes=(SKIPPED_NOTE,))
        elif new is None:
            diff = CallDiff("missing", notes=(STOPPED_NOTE,))
        else:
            diff = (
                IDENTICAL
                if _same(old.payload, new.payload)
                else diff_results(old.result, new.result, masks.for_call(server, tool))
            )
            if diff.status == "fixed_error" and refusals.expected(key[0], (tool, old.tool), old.arguments):
                diff = replace(diff, status="changed", notes=(LOST_REFUSAL, *diff.notes))
        yield CallDrift(
            key,
            recorded.trial_id,
            replayed.trial_id,
            index,
            old.call_id,
            server,
            tool,
            old.arguments,
            diff,
        )


IDENTICAL = CallDiff("identical")
_COMPARED = ("content", "is_error", "structured", "blocks")


def _same(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    """Both results recorded and equal in every field a diff reads (most calls of a replay): no
    need to build, mask and walk them."""
    return a is not None and b is not None and all(a.get(k) == b.get(k) for k in _COMPARED)


def replay_source(new_db: Path, config: Mapping[str, Any]) -> tuple[Path, str, Masks]:
    """Where a replay run's recording is, its run id and the masks it was replayed under."""
    info = config.get(REPLAY_KEY)
    if not isinstance(info, dict):
        raise DriftError(
            f"{new_db}: not a replay run (it has no 'replay' in its config); make one with proctor replay"
        )
    candidates = [Path(str(info.get("source_db", "")))]
    relative = info.get("source_db_relative")
    if isinstance(relative, str):
        candidates.append(new_db.parent / relative)
    for path in candidates:
        if path.is_file():
            masks = Masks.from_config(info.get("ignore") or [])
            return path, str(info.get("source_run", "")), masks
    raise DriftError(
        f"{new_db}: the recording it replayed, {candidates[0]}, is gone; put it back (or beside "
        f"{new_db.name} as {relative}) to compare"
    )


def replay_drift(new_db: Path) -> Drift | None:
    """The drift of the replay run in ``new_db``; None when that run is not a replay."""
    with StoreReader(new_db) as new:
        run = new.run()
        if run is None or REPLAY_KEY not in run.config:
            return None
        source, source_run, masks = replay_source(new_db, run.config)
        refusals = Refusals.from_config(run.config[REPLAY_KEY].get("refusals"))
        with StoreReader(source) as old:
            return diff_runs(old, new, masks, source_run=source_run, refusals=refusals)


__all__ = [
    "REPLAYED_STOP",
    "REPLAY_KEY",
    "CallDrift",
    "Drift",
    "DriftError",
    "RecordedCall",
    "ServerDrift",
    "TrialCalls",
    "TrialKey",
    "diff_runs",
    "read_calls",
    "replay_drift",
    "replay_source",
]
