"""``--executor ray``: trials played by ``TrialWorker`` actors on a Ray cluster, recorded here.

The driver (this process) keeps the run: the one store writer, resume, the concurrency limits
and scoring. It starts one worker actor per CPU the run can use (at most ``--concurrency``),
spread over the cluster's nodes, gives each trial to the least busy worker, and replays the
worker's batches of events through the trial's context in order, so the store holds what a
local run would have written. A worker that fails or dies costs the trials it was playing (each
ends with an error event), never the run. What is shipped to a worker is the trial's names and
seed and the suite's path and hash: keys stay in each worker's own environment.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from proctor.engine.runs.options import RunError
from proctor.engine.runs.ray_worker import Item, TrialWorker, WorkerSetup
from proctor.engine.runs.trial_play import failed
from proctor.engine.tools.toolbox import Blob
from proctor.store.events import ErrorEvent, TrialFinished, parse_event
from proctor.store.redaction import redact

if TYPE_CHECKING:
    from proctor.engine.runs.runner import Run, TrialContext

TAKE_WAIT_S = 0.25  # a worker answers a take at once when it has events; this only bounds an idle poll
PREPARE_TIMEOUT_S = 180.0  # placing the workers and loading the suite on each
WORKER_GRACE_S = 60.0  # beyond the trial's own wall-clock limit, which the worker enforces
CLOSE_TIMEOUT_S = 15.0


@dataclass
class _Worker:
    actor: Any  # a Ray actor handle for a TrialWorker
    where: str = "?"
    busy: int = 0
    alive: bool = True


class RayExecutor:
    """Plays a run's trials on Ray workers; starts (and later stops) a local Ray when none is running."""

    def __init__(self, address: str | None = None) -> None:
        self.address = address
        self.placements: dict[int, str] = {}  # trial id -> host:pid of the worker that played it last
        self._workers: list[_Worker] = []
        self._owns_ray = False
        self._starting: asyncio.Lock | None = None
        self._placement_log: Path | None = None
        self._turn = 0

    async def start(self, run: Run, models: Collection[str]) -> None:
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            if not self._workers:
                await self._start_workers(run, models)

    async def _start_workers(self, run: Run, models: Collection[str]) -> None:
        ray = _ray()
        self._connect(ray)
        logs = run.options.db.resolve().parent / f"{run.options.db.name}.logs"
        logs.mkdir(parents=True, exist_ok=True)
        self._placement_log = logs / "ray-placements.log"
        cpus = int(ray.cluster_resources().get("CPU", 1))
        wanted = max(1, min(run.options.concurrency or run.loaded.suite.concurrency.global_, cpus))
        setup = WorkerSetup(
            suite_dir=str(run.loaded.root.resolve()),
            suite_hash=run.loaded.content_hash,
            log_dir=str(logs),
            log_bytes=run.loaded.suite.limits.server_log_bytes,
        )
        actor_class = ray.remote(TrialWorker).options(
            num_cpus=1, scheduling_strategy="SPREAD", max_concurrency=10_000, max_restarts=0
        )
        self._workers = [_Worker(actor_class.remote(setup)) for _ in range(wanted)]
        try:
            answers = await asyncio.wait_for(
                asyncio.gather(*(w.actor.prepare.remote(list(models)) for w in self._workers)),
                PREPARE_TIMEOUT_S,
            )
        except TimeoutError:
            raise RunError(
                f"Ray did not start {wanted} proctor worker(s) within {PREPARE_TIMEOUT_S:g}s "
                f"(the cluster has {cpus} CPU(s)); check 'ray status'"
            ) from None
        problems = []
        for worker, (where, problem) in zip(self._workers, answers, strict=True):
            worker.where = where
            if problem:
                problems.append(f"{where}: {problem}")
        if problems:
            raise RunError("a Ray worker cannot play this run's trials: " + "; ".join(problems))

    def _connect(self, ray: Any) -> None:
        if ray.is_initialized():
            return  # the caller's own Ray session (a notebook, a test): use it, leave it running
        # No address: a private local instance, whatever RAY_ADDRESS or an old `ray start` say.
        address = self.address or "local"
        kwargs: dict[str, Any] = {}
        if not address.startswith("ray://"):  # Ray Client takes none of these
            kwargs = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.ERROR}
        try:
            ray.init(address=address, **kwargs)
        except Exception as exc:
            where = "a local Ray instance" if address == "local" else f"the Ray cluster at {address}"
            raise RunError(f"cannot start or reach {where}: {exc}") from exc
        self._owns_ray = True

    def _pick(self) -> _Worker | None:
        """The least busy live worker; among equals, the next after the last one picked."""
        n = len(self._workers)
        order = [self._workers[(self._turn + i) % n] for i in range(n)]
        live = [w for w in order if w.alive]
        if not live:
            return None
        chosen = min(live, key=lambda w: w.busy)
        self._turn = (self._workers.index(chosen) + 1) % n
        return chosen

    async def play(self, run: Run, ctx: TrialContext) -> TrialFinished:
        await self.start(run, [ctx.model])
        started = time.perf_counter()
        key = f"{ctx.trial_id}.{ctx.attempt}"
        limit = run.loaded.suite.limits.trial_timeout_s + WORKER_GRACE_S
        worker: _Worker | None = None
        try:
            async with asyncio.timeout(limit):
                worker = await self._begin(ctx, key)
                if worker is None:
                    return _lost(ctx, "worker_lost", "every Ray worker of this run has died", started)
                return await self._follow(worker, key, ctx, started)
        except asyncio.CancelledError:
            if worker is not None:
                worker.actor.cancel.remote(key)  # the run is stopping: the worker stops the trial too
            raise
        except TimeoutError:
            where = worker.where if worker is not None else "?"
            if worker is not None:
                worker.actor.cancel.remote(key)
            return _lost(
                ctx, "timeout", f"the Ray worker {where} did not finish the trial within {limit:g}s", started
            )
        except Exception as exc:  # Ray lost the worker, or the worker's answer was unreadable
            where = worker.where if worker is not None else "?"
            if worker is not None and isinstance(exc, _ray().exceptions.RayActorError):
                worker.alive = False
            return _lost(
                ctx, type(exc).__name__, f"the Ray worker {where} failed: {_last_line(exc)}", started
            )
        finally:
            if worker is not None:
                worker.busy -= 1

    async def _begin(self, ctx: TrialContext, key: str) -> _Worker | None:
        """Start the trial on the least busy live worker; one found dead is skipped, the trial not lost."""
        actor_died = _ray().exceptions.RayActorError
        while (worker := self._pick()) is not None:
            worker.busy += 1
            try:
                self._placed(ctx, await worker.actor.start.remote(key, ctx.spec))
            except actor_died:
                worker.busy -= 1
                worker.alive = False
                continue
            except BaseException:
                worker.busy -= 1
                raise
            return worker
        return None

    async def _follow(self, worker: _Worker, key: str, ctx: TrialContext, started: float) -> TrialFinished:
        """Replay the worker's batches through ``ctx`` until the trial's end arrives."""
        while True:
            items: list[Item] = await worker.actor.take.remote(key, TAKE_WAIT_S)
            for kind, text, extra, data in items:
                if kind == "event":
                    ctx.emit(parse_event(text))
                elif kind == "blob":
                    ctx.put_blob(Blob(text, extra, data))
                elif kind == "end":
                    return TrialFinished.model_validate_json(text)
                else:
                    return _lost(ctx, extra, text, started)

    def _placed(self, ctx: TrialContext, where: str) -> None:
        """Note where the trial plays, for an operator hunting a remote failure."""
        self.placements[ctx.trial_id] = where
        if self._placement_log is not None:
            with contextlib.suppress(OSError), open(self._placement_log, "a") as log:
                log.write(f"trial {ctx.trial_id} attempt {ctx.attempt}: {where}\n")

    async def aclose(self) -> None:
        """Stop every worker's trials and servers, then Ray itself if this run started it."""
        workers, self._workers = self._workers, []
        if not workers and not self._owns_ray:
            return
        ray = _ray()
        closing = [w.actor.aclose.remote() for w in workers if w.alive]
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.gather(*closing, return_exceptions=True), CLOSE_TIMEOUT_S)
        for w in workers:
            with contextlib.suppress(Exception):
                ray.kill(w.actor)
        if self._owns_ray:
            self._owns_ray = False
            ray.shutdown()


def _lost(ctx: TrialContext, error_type: str, message: str, started: float) -> TrialFinished:
    """A trial the worker could not finish: its error event now, its end for the runner to store."""
    message = redact(message)
    ctx.emit(ErrorEvent(where="worker", error_type=error_type, message=message, fatal=True))
    return failed("timeout" if error_type == "timeout" else "error", message, time.perf_counter() - started)


def _last_line(exc: BaseException) -> str:
    """A Ray error's text is the remote traceback; its last line says what went wrong."""
    lines = str(exc).strip().splitlines()
    return lines[-1] if lines else type(exc).__name__


def _ray() -> Any:
    """Ray, imported on first use: it takes a while, and only Ray runs need it."""
    import ray

    return ray


__all__ = ["RayExecutor"]
