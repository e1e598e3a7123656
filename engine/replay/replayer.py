"""``proctor replay``: a recorded run's tool calls made again against the suite's servers now.

No model and no agent: each trial of the recording becomes a trial of a new run, in a database
of its own, holding the same tool calls (same ids, servers, tools and arguments), in the same
order, with the results the servers give today. Calls a model requested together (one step)
are made together; steps follow one another as recorded. Trials play concurrently, on one
server pool, as in a run (``shared`` servers start once, ``per_trial`` ones per trial).

The new run points back to its recording (``config.replay``: the source database, absolute and
relative to the new one, the source run id, and the ``replay.ignore`` rules in force), so the
report, the gate and the console can diff the two (``engine.drift``). Calls proctor itself
answered in the recording (the baseline's built-in tools, the router's ``route``) have no
server to replay against and are left out; the drift counts them as ``missing``.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from proctor.engine.drift.refusals import refusals_config
from proctor.engine.drift.runs_diff import REPLAY_KEY, REPLAYED_STOP, RecordedCall, TrialCalls, read_calls
from proctor.engine.replay.server_calls import ReplayServers
from proctor.engine.suites import load_suite
from proctor.scenarios.loader import LoadedSuite
from proctor.scenarios.workspace import Workspace
from proctor.store.events import (
    RunFinished,
    RunStarted,
    ToolCall,
    TrialFinished,
    TrialStarted,
    Usage,
)
from proctor.store.lock import EngineLock, real_path
from proctor.store.read.reader import StoreReader, TrialRecord
from proctor.store.run_files import logs_dir
from proctor.store.tool_origin import is_builtin
from proctor.store.write.writer import StoreWriter, TrialRow

ATTEMPT = 1


class ReplayError(ValueError):
    """The replay cannot start as asked (bad flags, databases or suite): exit 2."""


@dataclass(frozen=True)
class ReplayOptions:
    source: Path
    db: Path
    suite: Path | None = None
    arms: list[str] | None = None
    concurrency: int | None = None


@dataclass(frozen=True)
class ReplayResult:
    run_id: str
    trials: int
    calls: int
    skipped: int
    wall_s: float
    status: str


@dataclass(frozen=True)
class _Plan:
    source_run: str
    source_config: dict[str, Any]
    trials: list[tuple[TrialRecord, TrialCalls]]


def _plan(options: ReplayOptions) -> _Plan:
    with StoreReader(options.source) as reader:
        run = reader.run()
        if run is None:
            raise ReplayError(
                f"{options.source}: holds no run to replay; give a database written by proctor run"
            )
        records = {t.key: t for t in reader.trials()}
        calls = read_calls(reader)
    arms = sorted({t.arm for t in records.values()})
    unknown = [a for a in options.arms or [] if a not in arms]
    if unknown:
        raise ReplayError(f"--arms: {', '.join(unknown)} not in the recording (its arms: {', '.join(arms)})")
    chosen = [
        (records[key], tc)
        for key, tc in calls.items()
        if options.arms is None or records[key].arm in options.arms
    ]
    chosen.sort(key=lambda pair: pair[0].id)
    return _Plan(run.id, run.config, chosen)


def _suite_dir(options: ReplayOptions, config: dict[str, Any]) -> Path:
    if options.suite is not None:
        return options.suite
    recorded = config.get("suite_dir")
    if not isinstance(recorded, str) or not recorded:
        raise ReplayError(f"{options.source}: the run does not record its suite folder; pass --suite DIR")
    return Path(recorded)


def _check_databases(options: ReplayOptions) -> None:
    if not options.source.is_file():
        raise ReplayError(f"{options.source}: no such run database")
    if options.db.exists():
        if real_path(options.db) == real_path(options.source):
            raise ReplayError(f"--db {options.db}: is the recording itself; give a new file for the replay")
        with StoreReader(options.db) as reader:
            if reader.run() is not None:
                raise ReplayError(f"--db {options.db}: already holds a run; give a new file (or remove it)")


def replay_config(options: ReplayOptions, plan: _Plan, loaded: LoadedSuite) -> dict[str, Any]:
    """The recording's config, with the suite replayed against and where the recording is."""
    source = options.source.resolve()
    config = {k: v for k, v in plan.source_config.items() if k not in ("imported", REPLAY_KEY)}
    replayed = {t.scenario for t, _ in plan.trials}
    refusals = refusals_config({s.id: s.gold_tool_calls for s in loaded.scenarios if s.id in replayed})
    return config | {
        "suite": loaded.suite.name,
        "suite_dir": str(loaded.root),
        "suite_hash": loaded.content_hash,
        "arms": sorted({t.arm for t, _ in plan.trials}),
        REPLAY_KEY: {
            "source_db": str(source),
            "source_db_relative": os.path.relpath(source, options.db.resolve().parent),
            "source_run": plan.source_run,
            "source_suite_dir": plan.source_config.get("suite_dir"),
            "ignore": [r.model_dump() for r in loaded.suite.replay.ignore],
        }
        | ({"refusals": refusals} if refusals else {}),
    }


async def replay_run(
    options: ReplayOptions, on_trial: Callable[[TrialRecord, int], None] | None = None
) -> ReplayResult:
    """Replay ``options.source`` into ``options.db``; ``on_trial(trial, calls)`` after each trial."""
    _check_databases(options)
    plan = _plan(options)
    loaded = load_suite(_suite_dir(options, plan.source_config))
    workspace = Workspace.prepare(loaded)
    lock = EngineLock.try_acquire(options.db)
    if lock is None:
        raise ReplayError(EngineLock.held_message(options.db))
    started = time.perf_counter()
    run_id = f"replay-{uuid.uuid4().hex[:8]}"
    status: Literal["finished", "interrupted", "error"] = "interrupted"
    counts = [0, 0]  # calls made, calls skipped
    try:
        writer = await StoreWriter.open(options.db)
        servers = ReplayServers(loaded, workspace, logs_dir(options.db))
        try:
            config = replay_config(options, plan, loaded)
            await writer.create_run(run_id, loaded.suite.name, config)
            await writer.add_trials(
                run_id, [TrialRow(t.scenario, t.arm, t.model, t.epoch, t.seed) for t, _ in plan.trials]
            )
            with StoreReader(options.db) as reader:
                ids = {r.key: r.id for r in reader.trials()}
            writer.emit(
                run_id,
                RunStarted(run_id=run_id, suite=loaded.suite.name, config=config, trials=len(plan.trials)),
            )
            limit = asyncio.Semaphore(options.concurrency or loaded.suite.concurrency.global_)

            async def one(record: TrialRecord, calls: TrialCalls) -> None:
                async with limit:
                    made, skipped = await _replay_trial(
                        writer, run_id, ids[record.key], record, calls, servers
                    )
                counts[0] += made
                counts[1] += skipped
                if on_trial is not None:
                    on_trial(record, made)

            try:
                await asyncio.gather(*(one(t, c) for t, c in plan.trials))
            except Exception:
                status = "error"  # a suite variable unset, a disk full: said by the caller
                raise
            status = "finished"
        finally:
            try:
                await servers.aclose()
            finally:
                writer.emit(run_id, RunFinished(run_id=run_id, status=status))
                await writer.close()
    finally:
        lock.release()
    return ReplayResult(run_id, len(plan.trials), counts[0], counts[1], time.perf_counter() - started, status)


async def _replay_trial(
    writer: StoreWriter,
    run_id: str,
    trial_id: int,
    record: TrialRecord,
    recorded: TrialCalls,
    servers: ReplayServers,
) -> tuple[int, int]:
    """One trial's calls, step by step; returns (calls made, calls skipped)."""
    started = time.perf_counter()

    def emit(event: Any) -> None:
        writer.emit(run_id, event, trial_id=trial_id, attempt=ATTEMPT)

    emit(
        TrialStarted(
            scenario=record.scenario,
            arm=record.arm,
            model=record.model,
            epoch=record.epoch,
            seed=record.seed,
            attempt=ATTEMPT,
        )
    )
    trial = await servers.open_trial(record, recorded.calls, emit)
    made = skipped = 0
    try:
        for step in _steps(recorded.calls):
            runnable = [c for c in step if trial.replayable(c)]
            skipped += len(step) - len(runnable)
            for c in runnable:
                emit(
                    ToolCall(
                        call_id=c.call_id,
                        server=c.server,
                        tool=c.tool,
                        arguments=_arguments(c),
                        builtin=is_builtin(c),  # as recorded: the router's execute stays the router's
                    )
                )
            if len(runnable) == 1:
                await trial.call(runnable[0], emit, writer)
            elif runnable:
                await asyncio.gather(*(trial.call(c, emit, writer) for c in runnable))
            made += len(runnable)
    finally:
        await trial.aclose()
    emit(
        TrialFinished(
            status="finished",
            stop=REPLAYED_STOP,
            final_answer="",
            tool_calls=made,
            usage=Usage(),
            cost_usd=0.0,
            wall_s=time.perf_counter() - started,
        )
    )
    return made, skipped


def _arguments(call: RecordedCall) -> dict[str, Any]:
    return call.arguments if isinstance(call.arguments, dict) else {"__raw__": call.arguments}


def _steps(calls: list[RecordedCall]) -> list[list[RecordedCall]]:
    steps: list[list[RecordedCall]] = []
    for c in calls:
        if steps and steps[-1][0].step == c.step:
            steps[-1].append(c)
        else:
            steps.append([c])
    return steps


__all__ = ["ReplayError", "ReplayOptions", "ReplayResult", "replay_config", "replay_run"]
