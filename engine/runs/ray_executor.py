"""``--executor ray``: trials played by ``TrialWorker`` actors on a Ray cluster, recorded here.

The driver (this process) keeps the run: the one store writer, resume, the concurrency limits
and scoring. It starts one worker actor per CPU the run can use (at most ``--concurrency``),
spread over the cluster's nodes, gives each trial to the least busy worker, and replays the
worker's batches of events through the trial's context in order, so the store holds what a
local run would have written. Before any worker starts, each node is probed (ray_probe.py) for
proctor's version and the suite's commands and variables, and a node that differs stops the run
with exit 2 naming it. A trial lost to its worker (the worker or its node died or hung, or its
server would not start there while it starts elsewhere) ends its attempt with an
``infrastructure`` error, the worker is no longer given trials, and the runner plays the trial
again elsewhere. What is shipped to a worker is the trial's names and seed and the suite's path
and hash: keys stay in each worker's own environment.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import signal
import socket
import threading
import time
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proctor.engine.runs.options import RunError
from proctor.engine.runs.ray_nodes import check_nodes
from proctor.engine.runs.ray_worker import Item, TrialWorker, WorkerSetup
from proctor.engine.runs.trial_play import failed
from proctor.engine.runs.trial_seam import RunServices, TrialContext
from proctor.engine.tools.toolbox import Blob
from proctor.store.events import ErrorEvent, ServerConnected, TrialFinished, parse_event
from proctor.store.redaction import redact
from proctor.store.run_files import logs_dir

TAKE_WAIT_S = 0.25  # a worker answers a take at once when it has events; this only bounds an idle poll
PREPARE_TIMEOUT_S = 180.0  # placing the workers and loading the suite on each
WORKER_GRACE_S = 60.0  # beyond the trial's own wall-clock limit, which the worker enforces
CLOSE_TIMEOUT_S = 15.0
CLIENT_CONNECT_ATTEMPTS = 3  # the head's per-driver Ray Client server sometimes dies as it starts
CLIENT_RETRY_PAUSE_S = 2.0
# What a Ray Client head answers when the server it starts for this driver died or never answered
# (the psutil errors: the head's proxier watched that server's process as it died).
_CLIENT_SERVER_LOST = (
    "Starting Ray client server failed",
    "Proxy failed to Connect to backend",
    "psutil.ZombieProcess",
    "psutil.NoSuchProcess",
)
_SERVER_FAILED = re.compile(r"^(?P<server>[^\n:]+): could not start:", re.M)


@dataclass
class _Worker:
    actor: Any  # a Ray actor handle for a TrialWorker
    where: str = "?"
    busy: int = 0
    alive: bool = True  # False once dead, hung or quarantined: given no more trials
    started: set[str] = field(default_factory=set)  # servers that have started on this worker
    failed: set[str] = field(default_factory=set)  # servers that would not start on this worker


class RayExecutor:
    """Plays a run's trials on Ray workers; starts (and later stops) a local Ray when none is running."""

    def __init__(self, address: str | None = None) -> None:
        self.address = address
        self.placements: dict[int, str] = {}  # trial id -> host:pid of the worker that played it last
        self._workers: list[_Worker] = []
        self._owns_ray = False
        self._starting: asyncio.Lock | None = None
        self._placement_log: Path | None = None
        self._logs: Path | None = None
        self._avoid: dict[int, set[int]] = {}  # trial id -> the workers (by id()) it failed on
        self._turn = 0

    async def start(self, run: RunServices, models: Collection[str]) -> None:
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            if not self._workers:
                await self._start_workers(run, models)

    async def _start_workers(self, run: RunServices, models: Collection[str]) -> None:
        ray = _ray()
        logs = logs_dir(run.options.db)
        logs.mkdir(parents=True, exist_ok=True)
        self._logs = logs
        self._placement_log = logs / "ray-placements.log"
        await self._connect(ray)
        await check_nodes(ray, run, models)
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
                asyncio.gather(
                    *(w.actor.prepare.remote(list(models)) for w in self._workers), return_exceptions=True
                ),
                PREPARE_TIMEOUT_S,
            )
        except TimeoutError:
            raise RunError(
                f"Ray did not start {wanted} proctor worker(s) within {PREPARE_TIMEOUT_S:g}s "
                f"(the cluster has {cpus} CPU(s)); check 'ray status'"
            ) from None
        problems, died = [], []
        for worker, answer in zip(self._workers, answers, strict=True):
            if isinstance(answer, BaseException):  # its node was lost meanwhile: play on without it
                worker.alive = False
                died.append(_last_line(answer))
                self._note(f"a worker died while starting: {died[-1]}")
                continue
            worker.where, problem = answer
            if problem:
                problems.append(f"{worker.where}: {problem}")
        if not problems and len(died) == len(self._workers):
            problems = [f"every worker died while starting: {died[0]}"]
        if problems:
            raise RunError("a Ray worker cannot play this run's trials: " + "; ".join(problems))

    async def _connect(self, ray: Any) -> None:
        if ray.is_initialized():
            return  # the caller's own Ray session (a notebook, a test): use it, leave it running
        # No address: a private local instance, whatever RAY_ADDRESS or an old `ray start` say.
        address = self.address or "local"
        client = address.startswith("ray://")
        kwargs: dict[str, Any] = {}
        if not client:  # Ray Client takes none of these
            kwargs = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.ERROR}
        for attempt in range(1, CLIENT_CONNECT_ATTEMPTS + 1):
            try:
                with _our_signal_handlers():
                    ray.init(address=address, **kwargs)
                break
            except Exception as exc:
                if client and attempt < CLIENT_CONNECT_ATTEMPTS and _client_server_lost(exc):
                    self._note(
                        f"Ray Client: the head's server for this driver did not start "
                        f"(attempt {attempt} of {CLIENT_CONNECT_ATTEMPTS}); connecting again"
                    )
                    await asyncio.sleep(CLIENT_RETRY_PAUSE_S)
                    continue
                where = "a local Ray instance" if address == "local" else f"the Ray cluster at {address}"
                raise RunError(f"cannot start or reach {where}: {exc}") from exc
        self._owns_ray = True

    def _pick(self, trial_id: int) -> _Worker | None:
        """The least busy live worker, one that has not failed this trial if there is one; among
        equals, the next after the last one picked."""
        n = len(self._workers)
        order = [self._workers[(self._turn + i) % n] for i in range(n)]
        live = [w for w in order if w.alive]
        if not live:
            return None
        avoid = self._avoid.get(trial_id, set())
        live = [w for w in live if id(w) not in avoid] or live
        chosen = min(live, key=lambda w: w.busy)
        self._turn = (self._workers.index(chosen) + 1) % n
        return chosen

    async def play(self, run: RunServices, ctx: TrialContext) -> TrialFinished:
        await self.start(run, [ctx.model])
        started = time.perf_counter()
        key = f"{ctx.trial_id}.{ctx.attempt}"
        limit = run.loaded.suite.limits.trial_timeout_s + WORKER_GRACE_S
        worker: _Worker | None = None
        try:
            async with asyncio.timeout(limit):
                worker = await self._begin(ctx, key)
                if worker is None:
                    return _lost(
                        ctx, "worker_lost", "every Ray worker of this run is dead or quarantined", started
                    )
                return self._judge_worker(worker, ctx, await self._follow(worker, key, ctx, started), started)
        except asyncio.CancelledError:
            if worker is not None:
                worker.actor.cancel.remote(key)  # the run is stopping: the worker stops the trial too
            raise
        except TimeoutError:
            where = worker.where if worker is not None else "?"
            if worker is not None:
                worker.actor.cancel.remote(key)
                self._quarantine(worker, "it did not finish a trial in time")
            return _lost(
                ctx,
                "timeout",
                f"the Ray worker {where} did not finish the trial within {limit:g}s",
                started,
                where,
            )
        except Exception as exc:  # Ray lost the worker, or the worker's answer was unreadable
            where = worker.where if worker is not None else "?"
            if worker is not None:
                worker.alive = False
            return _lost(
                ctx, type(exc).__name__, f"the Ray worker {where} failed: {_last_line(exc)}", started, where
            )
        finally:
            if worker is not None:
                worker.busy -= 1

    def _judge_worker(
        self, worker: _Worker, ctx: TrialContext, finished: TrialFinished, started: float
    ) -> TrialFinished:
        """Note the servers that started here; a server that would not start here but did on another
        worker makes this worker broken, not the trial: quarantine it and let the trial play elsewhere."""
        worker.started |= {e.server for e in ctx.events if isinstance(e, ServerConnected)}
        failed_here = _SERVER_FAILED.search(finished.error) if finished.status == "error" else None
        if failed_here is not None and worker.alive:
            server = failed_here["server"].strip()
            worker.failed.add(server)
            others = [w for w in self._workers if w is not worker and w.alive]
            if any(server in w.started for w in others):
                self._quarantine(worker, f"server {server!r} did not start there but does elsewhere")
                then = "the worker is quarantined; the trial plays on another"
            elif any(server not in w.failed for w in others):
                then = "the trial plays on another worker, to tell a broken node from a broken server"
            else:
                then = ""  # it starts nowhere: the suite's problem, an error of the trial
            if then:
                self._avoid.setdefault(ctx.trial_id, set()).add(id(worker))
                message = f"on {worker.where}: {finished.error}\n({then})"
                return _lost(ctx, "server_start", message, started, worker.where)
        if finished.host:
            return finished
        return finished.model_copy(update={"host": worker.where})

    def _quarantine(self, worker: _Worker, why: str) -> None:
        worker.alive = False
        self._note(f"worker {worker.where} quarantined: {why}")

    async def _begin(self, ctx: TrialContext, key: str) -> _Worker | None:
        """Start the trial on the least busy live worker; one found dead is skipped, the trial not lost."""
        actor_died = _ray().exceptions.RayActorError
        while (worker := self._pick(ctx.trial_id)) is not None:
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
                    self._quarantine(worker, text)
                    return _lost(ctx, extra, text, started, worker.where)

    def _placed(self, ctx: TrialContext, where: str) -> None:
        """Note where the trial plays, for an operator hunting a remote failure."""
        self.placements[ctx.trial_id] = where
        self._note(f"trial {ctx.trial_id} attempt {ctx.attempt}: {where}")

    def _note(self, line: str) -> None:
        if self._placement_log is not None:
            with contextlib.suppress(OSError), open(self._placement_log, "a") as log:
                log.write(line + "\n")

    async def aclose(self) -> None:
        """Stop every worker's trials and servers, bring their server logs here, then stop Ray if
        this run started it."""
        workers, self._workers = self._workers, []
        if not workers and not self._owns_ray:
            return
        ray = _ray()
        # Every worker, a quarantined one too (it has the logs that say why); a dead one fails at once.
        closing = [asyncio.ensure_future(w.actor.aclose.remote()) for w in workers]
        if closing:
            done, pending = await asyncio.wait(closing, timeout=CLOSE_TIMEOUT_S)
            for future in pending:
                future.cancel()
            for future in done:
                if not future.cancelled() and future.exception() is None:
                    self._keep_logs(*future.result())
        for w in workers:
            with contextlib.suppress(Exception):
                ray.kill(w.actor)
        if self._owns_ray:
            self._owns_ray = False
            ray.shutdown()

    def _keep_logs(self, host: str, folder: str, files: list[tuple[str, bytes]]) -> None:
        """A worker's server logs, written under this run's DB.logs unless they are there already."""
        if self._logs is None:
            return
        target = self._logs / Path(folder).name
        if host == socket.gethostname() and Path(folder) == target:
            return  # the same machine wrote them in place
        with contextlib.suppress(OSError):
            target.mkdir(parents=True, exist_ok=True)
            for name, data in files:
                (target / Path(name).name).write_bytes(data)


@contextlib.contextmanager
def _our_signal_handlers() -> Iterator[None]:
    """``ray.init`` installs its own SIGTERM handler (exit 15 and a stack dump): keep ours, so a
    Ray run stops like a local one (143, resumable)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            if handler is not None:
                signal.signal(sig, handler)


def _lost(ctx: TrialContext, error_type: str, message: str, started: float, where: str = "") -> TrialFinished:
    """A trial its worker could not finish: an ``infrastructure`` error now (the runner plays it
    again), and its end for the runner to store if it is not played again."""
    message = redact(message)
    ctx.emit(
        ErrorEvent(where="worker", error_type=error_type, message=message, fatal=True, infrastructure=True)
    )
    finished = failed(
        "timeout" if error_type == "timeout" else "error", message, time.perf_counter() - started
    )
    return finished.model_copy(update={"host": where})


def _client_server_lost(exc: BaseException) -> bool:
    """Ray Client's head starts one server per driver; when that one dies as it starts (seen in CI
    under load: a gRPC poller error; a zombie the proxier's psutil wait tripped on), the head
    refuses the connection, and a new one gets a new server."""
    return isinstance(exc, ConnectionAbortedError) and any(s in str(exc) for s in _CLIENT_SERVER_LOST)


def _last_line(exc: BaseException) -> str:
    """A Ray error's text is the remote traceback; its last line says what went wrong."""
    lines = str(exc).strip().splitlines()
    return lines[-1] if lines else type(exc).__name__


def _ray() -> Any:
    """Ray, imported on first use: it takes a while, and only Ray runs need it."""
    import ray

    return ray


__all__ = ["RayExecutor"]
