"""The runner: a run database, its trial matrix, and bounded-concurrency execution.

A trial whose ``trial_finished`` event is committed is never run again; one that started but
did not finish (the process died, or was interrupted) has its events marked abandoned and is
run again from scratch as a new attempt. Global and per-provider semaphores bound concurrency,
and every MCP server process is closed when the run ends, however it ends. Where a trial's agent
session is played (here, or on a Ray worker) is the executor's business (executors.py); its
events, its end, its scoring and the store stay here, so every executor gives the same record.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from proctor.engine.providers.base import Provider
from proctor.engine.providers.prices import PriceTable
from proctor.engine.runs.executors import LocalExecutor, check_executor, make_executor
from proctor.engine.runs.matrix import expand
from proctor.engine.runs.options import RunError, RunOptions, check_resumable, resumed_options
from proctor.engine.runs.preflight import models_source, refuse_problems
from proctor.engine.runs.server_warmup import start_shared_servers
from proctor.engine.runs.tool_preflight import check_tool_rules
from proctor.engine.runs.trial_play import TrialEnv
from proctor.engine.runs.trial_seam import TrialContext, TrialExecutor, TrialHook
from proctor.engine.suites import admit
from proctor.engine.tools.mcp_toolbox import ServerPool
from proctor.scenarios.loader import LoadedSuite
from proctor.scenarios.workspace import Workspace
from proctor.store.events import ErrorEvent, Event, RunFinished, RunStarted, TrialFinished, TrialStarted
from proctor.store.lock import EngineLock
from proctor.store.read.reader import StoreReader, TrialRecord
from proctor.store.redaction import redact
from proctor.store.run_files import logs_dir
from proctor.store.write.writer import StoreWriter

LOST_RETRIES = 2  # a trial lost to its worker is played again this often, then ends in error


def lost_to_infrastructure(events: list[Event]) -> bool:
    """Did the attempt end because where it ran failed (not the agent)? Retried, and rerun on resume."""
    return any(isinstance(e, ErrorEvent) and e.fatal and e.infrastructure for e in events)


@dataclass
class Run:
    """A run in progress; ``execute`` runs every trial that has not finished yet."""

    loaded: LoadedSuite
    options: RunOptions
    writer: StoreWriter
    run_id: str
    workspace: Workspace
    prices: PriceTable
    pool: ServerPool
    lock: EngineLock | None = None
    hooks: list[TrialHook] = field(default_factory=list)
    on_progress: Callable[[TrialRecord], None] | None = None
    cancel_status: str = "interrupted"  # "cancelled" when an operator cancelled the run on purpose
    left_behind: int = 0  # queued trials this session does not play (started under an earlier plan)
    executor: TrialExecutor = field(default_factory=LocalExecutor)
    env: TrialEnv = field(init=False)  # the run's own servers and providers (local trials, tool recalls)
    _limits: dict[str, asyncio.Semaphore] = field(default_factory=dict)

    @property
    def config(self) -> dict[str, Any]:
        suite = self.loaded.suite
        return {
            "suite": suite.name,
            "suite_dir": str(self.loaded.root),
            "suite_hash": self.loaded.content_hash,
            "models": list(self.options.models or suite.models),
            "arms": list(self.options.arms or suite.arms),
            "scenarios": list(self.options.scenarios or [s.id for s in self.loaded.scenarios]),
            "epochs": self.options.epochs or suite.epochs,
            "base_seed": self.options.base_seed,
            "held_out": [s.id for s in self.loaded.scenarios if s.held_out],
            "scoring": suite.scoring.model_dump(),
            "judge": suite.judge.model_dump(),
            "prices": self.prices.provenance(),
        } | ({"left_out": [dict(x) for x in self.options.left_out]} if self.options.left_out else {})

    def __post_init__(self) -> None:
        self.env = TrialEnv(self.loaded, self.workspace, self.prices, self.pool)

    def provider(self, model_id: str) -> Provider:
        return self.env.provider(model_id)

    def _semaphore(self, key: str, size: int) -> asyncio.Semaphore:
        if key not in self._limits:
            self._limits[key] = asyncio.Semaphore(size)
        return self._limits[key]

    async def execute(self, trials: list[TrialRecord]) -> str:
        """Run ``trials``; return the run's final status (finished, cancelled or error)."""
        suite = self.loaded.suite
        global_limit = self._semaphore("*", self.options.concurrency or suite.concurrency.global_)
        self.writer.emit(
            self.run_id,
            RunStarted(run_id=self.run_id, suite=suite.name, config=self.config, trials=len(trials)),
        )

        async def one(t: TrialRecord) -> None:
            provider_name = t.model.partition(":")[0]  # a provider's name is its model ids' prefix
            per = self._semaphore(provider_name, suite.concurrency.per_provider.get(provider_name, 10**6))
            async with global_limit, per:
                await self.run_trial(t)

        status, message = "finished", ""
        # What is alive now (modules, the suite, servers) outlives the trials: full collections
        # during the run skip it (they took ~15% of a run of short trials), and get it back after.
        freeze = gc.get_freeze_count() == 0
        try:
            await self.executor.start(self, sorted({t.model for t in trials}))
            if isinstance(self.executor, LocalExecutor):  # Ray's workers start their own servers
                await start_shared_servers(self, trials)
                await check_tool_rules(self, trials)  # every tool each model's API must accept
            if freeze:
                gc.freeze()
            await asyncio.gather(*(one(t) for t in trials))
            if self.left_behind:  # never "finished" while trials of the run wait to be played
                status = "interrupted"
                message = (
                    f"{self.left_behind} trial(s) that started under the run's earlier plan are not in this "
                    "one (--models/--arms/--scenarios/--epochs): resume with them to play those"
                )
        except asyncio.CancelledError:
            status = self.cancel_status
            raise
        except BaseException as exc:
            # Kept in the run's end so the report says why it stopped (a missing API key).
            status, message = "error", str(exc) or type(exc).__name__
            raise
        finally:
            if freeze:
                gc.unfreeze()
            self.writer.emit(self.run_id, RunFinished(run_id=self.run_id, status=status, message=message))
        return status

    async def run_trial(self, t: TrialRecord) -> None:
        """Play ``t`` through the executor, then store its end and score it here.

        An attempt lost to where it ran (its Ray worker or node died) is abandoned and played
        again as a new attempt, up to ``LOST_RETRIES`` times; its events stay stored, abandoned.
        """
        scenario = self.loaded.scenario(t.scenario)
        attempt = t.attempt
        for tries in range(LOST_RETRIES + 1):
            attempt += 1
            ctx = TrialContext(self, t.id, attempt, scenario, t.arm, t.model, t.epoch, t.seed)
            ctx.emit(
                TrialStarted(
                    scenario=t.scenario, arm=t.arm, model=t.model, epoch=t.epoch, seed=t.seed, attempt=attempt
                )
            )
            finished = await self.executor.play(self, ctx)
            if tries == LOST_RETRIES or not lost_to_infrastructure(ctx.events):
                break
            await self.writer.requeue([t.id])
        ctx.emit(finished)
        await self.writer.flush()  # a finished trial is on disk before anything counts it: kill -9 loses none
        record = _as_record(t, ctx.attempt, finished)
        for hook in self.hooks:
            try:
                await hook(ctx, record)
            except Exception as exc:
                ctx.emit(ErrorEvent(where="scoring", error_type=type(exc).__name__, message=redact(str(exc))))
        if self.on_progress is not None:
            self.on_progress(record)

    async def aclose(self) -> None:
        """Stop the executor and every server, close providers and the database, then let another engine in."""
        try:
            try:
                await self.executor.aclose()
            finally:
                await self.env.aclose()
        finally:
            try:
                with contextlib.suppress(Exception):
                    await self.writer.cancel_unserved_operator_commands(
                        "the engine stopped before serving it; run 'proctor judge' on the database to re-judge"
                    )
                await self.writer.close()
            finally:
                if self.lock is not None:
                    self.lock.release()


def _as_record(t: TrialRecord, attempt: int, f: TrialFinished) -> TrialRecord:
    u = f.usage
    return TrialRecord(
        id=t.id,
        scenario=t.scenario,
        arm=t.arm,
        model=t.model,
        epoch=t.epoch,
        seed=t.seed,
        status=f.status,
        attempt=attempt,
        started_at=None,
        finished_at=None,
        stop=f.stop,
        final_answer=f.final_answer,
        error=f.error,
        tool_calls=f.tool_calls,
        input_tokens=u.input_tokens,
        output_tokens=u.output_tokens,
        cache_read_tokens=u.cache_read_tokens,
        cache_write_tokens=u.cache_write_tokens,
        tokens_estimated=u.estimated,
        cost_usd=f.cost_usd,
        wall_s=f.wall_s,
        passed=None,
    )


def _lost_trials(db: Path) -> list[int]:
    """Trials whose last attempt ended in an error of the infrastructure (a lost worker): --resume
    plays them again, as it does a trial the engine never finished."""
    with StoreReader(db) as reader:
        errored = [t.id for t in reader.trials() if t.status == "error"]
        lost = [i for i in errored if lost_to_infrastructure([e.event for e in reader.trial_events(i)])]
    return sorted(lost)


PLAN_KEYS = ("models", "arms", "scenarios", "epochs", "base_seed", "left_out")


async def _replan(
    run: Run, recorded: dict[str, Any], trials: list[TrialRecord], wanted: set[tuple[str, str, str, int]]
) -> list[TrialRecord]:
    """A resume with other models, arms, scenarios or epochs makes them the run's plan: queued
    trials outside it that never started leave the run (nothing of them was recorded; resuming
    with them again brings them back), and the run's config says what it now plays."""
    config = dict(recorded)
    for key in PLAN_KEYS:
        if key in run.config:
            config[key] = run.config[key]
        else:
            config.pop(key, None)
    drop = [t.id for t in trials if t.status == "queued" and t.attempt == 0 and t.key not in wanted]
    if config == recorded and not drop:
        return trials
    await run.writer.replan(run.run_id, config, drop)
    gone = set(drop)
    return [t for t in trials if t.id not in gone]


async def open_run(
    loaded: LoadedSuite, options: RunOptions, *, expand_matrix: bool = True
) -> tuple[Run, list[TrialRecord]]:
    """Create or resume the run in ``options.db``; return it and the trials still to run.

    Without ``expand_matrix`` (serving an existing run's commands) no trial is added.
    """
    loaded = admit(loaded)
    suite = loaded.suite
    check_executor(options)
    workspace = Workspace.prepare(loaded)
    existing = check_resumable(options.db, loaded, resume=options.resume)
    models_from = models_source(loaded, options, existing[1] if existing is not None else None)
    if existing is not None:
        options = resumed_options(options, existing[1])
    if options.base_seed is None:
        options = replace(options, base_seed=0)
    models = list(options.models or suite.models)
    rows = expand(  # before the lock and the database: a matrix too large to build is refused first
        loaded,
        models=models,
        arms=options.arms,
        scenarios=options.scenarios,
        epochs=options.epochs or suite.epochs,
        base_seed=options.base_seed or 0,
    )
    if expand_matrix:  # serving an existing run's commands plays no trial: nothing to check
        refuse_problems(loaded, options, models_from)
    lock = EngineLock.try_acquire(options.db)
    if lock is None:
        raise RunError(
            f"{EngineLock.held_message(options.db)}; watch it with 'proctor watch', or stop that process first"
        )
    try:
        writer = await StoreWriter.open(options.db)
    except BaseException:
        lock.release()
        raise
    try:
        run_id = existing[0] if existing else uuid.uuid4().hex[:12]
        run = Run(
            loaded=loaded,
            options=options,
            writer=writer,
            run_id=run_id,
            workspace=workspace,
            prices=PriceTable(suite.prices),
            pool=ServerPool(logs_dir(options.db), suite.limits.server_log_bytes),
            lock=lock,
            executor=make_executor(options),
        )
        if existing is None:
            await writer.create_run(run_id, suite.name, run.config)
        if expand_matrix:
            await writer.add_trials(run_id, rows)
        await writer.abandon_unfinished(run_id)
        if existing is not None:
            await writer.requeue(_lost_trials(options.db))
        wanted = {(r.scenario, r.arm, r.model, r.epoch) for r in rows}
        with StoreReader(options.db) as reader:
            trials = reader.trials()
        if existing is not None and expand_matrix:
            trials = await _replan(run, existing[1], trials, wanted)
        todo = [t for t in trials if t.status == "queued" and t.key in wanted]
        run.left_behind = sum(t.status == "queued" and t.key not in wanted for t in trials)
        return run, todo
    except BaseException:
        try:
            await writer.close()
        finally:
            lock.release()
        raise
