"""The worker side of ``--executor ray``: a ``TrialWorker`` actor plays whole trials in its process.

A worker loads the suite from its own disk (at the driver's path, checked against the driver's
content hash, so one run is one experiment), prepares the workspace, and keeps one server pool
and one provider per model for every trial it plays, as the engine's own process does. API keys
come from the worker's own environment: nothing the driver sends is secret. Events leave the
worker as JSON already redacted with the worker's secrets, in batches the driver asks for
(``take``, a long poll), so a console watching the run sees a remote trial while it plays.

This module never imports Ray: the executor wraps ``TrialWorker`` with ``ray.remote``.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import socket
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from proctor.engine.providers.prices import PriceTable
from proctor.engine.runs.trial_play import TrialEnv, TrialSpec, play_trial
from proctor.engine.suites import load_suite
from proctor.engine.tools.mcp_toolbox import ServerPool
from proctor.engine.tools.toolbox import Blob
from proctor.scenarios.workspace import Workspace, cache_dir
from proctor.store.events import Event
from proctor.store.redaction import redact

# What a worker sends back, in order: ("event", json, "", b""), ("blob", sha256, mime, data),
# then ("end", trial_finished_json, "", b"") or ("failed", message, error_type, b"").
Item = tuple[str, str, str, bytes]
LOGS_BACK_BYTES = 16_000_000  # what a worker's server logs may send back to the driver at the end


@dataclass(frozen=True)
class WorkerSetup:
    """Where a worker finds the run's suite and puts its servers' logs: paths, never secrets."""

    suite_dir: str
    suite_hash: str
    log_dir: str
    log_bytes: int


def where() -> str:
    """This process, as the operator would look for it: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass
class _Live:
    """One trial playing in this worker: what it has produced that the driver has not taken yet."""

    items: list[Item] = field(default_factory=list)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    done: bool = False
    task: asyncio.Task[None] | None = None

    def emit(self, event: Event) -> None:
        self.items.append(("event", redact(event.model_dump_json()), "", b""))
        self.wake.set()

    def put_blob(self, blob: Blob) -> None:
        self.items.append(("blob", blob.sha256, blob.mime_type, blob.data))
        self.wake.set()

    def end(self, item: Item) -> None:
        self.items.append(item)
        self.done = True
        self.wake.set()


class TrialWorker:
    """A Ray actor (async: its trials share one event loop, like the engine's own)."""

    def __init__(self, setup: WorkerSetup) -> None:
        self._setup = setup
        self._env: TrialEnv | None = None
        self._loading: asyncio.Lock | None = None
        self._trials: dict[str, _Live] = {}
        self._log_dir: Path | None = None

    async def prepare(self, models: list[str]) -> tuple[str, str]:
        """Load the suite and build the models' providers now: (where, problem or "")."""
        try:
            env = await self._environment()
            for model in models:
                env.provider(model)
        except Exception as exc:
            return where(), f"{type(exc).__name__}: {redact(str(exc))}"
        return where(), ""

    async def start(self, key: str, spec: TrialSpec) -> str:
        """Begin playing ``spec`` under ``key``; return where it plays."""
        live = _Live()
        self._trials[key] = live
        live.task = asyncio.create_task(self._play(live, spec))
        return where()

    async def take(self, key: str, wait_s: float) -> list[Item]:
        """What ``key`` produced since the last take; waits up to ``wait_s`` for something."""
        live = self._trials.get(key)
        if live is None:
            return [("failed", f"worker {where()} is not playing trial {key}", "LookupError", b"")]
        if not live.items and not live.done:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(live.wake.wait(), wait_s)
        items, live.items = live.items, []
        live.wake.clear()
        if live.done:
            self._trials.pop(key, None)
        return items

    async def cancel(self, key: str) -> None:
        """The driver gave the trial up (the run was interrupted): stop it and forget it."""
        live = self._trials.pop(key, None)
        if live is not None and live.task is not None:
            live.task.cancel()
            with contextlib.suppress(BaseException):
                await live.task

    async def aclose(self) -> tuple[str, str, list[tuple[str, bytes]]]:
        """Stop every trial, then every server this worker started; return this host's name, the
        servers' log folder and its files (capped), for the driver to keep beside its database."""
        for key in list(self._trials):
            await self.cancel(key)
        if self._env is not None:
            await self._env.aclose()
        return socket.gethostname(), str(self._log_dir or ""), self._log_files()

    def _log_files(self) -> list[tuple[str, bytes]]:
        files: list[tuple[str, bytes]] = []
        if self._log_dir is None:
            return files
        budget = LOGS_BACK_BYTES
        for path in sorted(p for p in self._log_dir.iterdir() if p.is_file()):
            with contextlib.suppress(OSError):
                data = path.read_bytes()[-budget:]
                files.append((path.name, data))
                budget -= len(data)
            if budget <= 0:
                break
        return files

    async def _play(self, live: _Live, spec: TrialSpec) -> None:
        try:
            env = await self._environment()
            finished = await play_trial(env, spec, live)
        except Exception as exc:  # the trial's error event, in the driver; never the whole run
            live.end(("failed", f"on {where()}: {redact(str(exc))}", type(exc).__name__, b""))
        else:
            live.end(("end", finished.model_dump_json(), "", b""))

    async def _environment(self) -> TrialEnv:
        if self._loading is None:
            self._loading = asyncio.Lock()
        async with self._loading:
            if self._env is None:
                self._env = await asyncio.to_thread(self._load)
            return self._env

    def _load(self) -> TrialEnv:
        setup = self._setup
        loaded = load_suite(Path(setup.suite_dir))
        if loaded.content_hash != setup.suite_hash:
            raise RuntimeError(
                f"the suite at {setup.suite_dir} on {socket.gethostname()} is not the driver's "
                f"(content hash {loaded.content_hash[:12]}, the run has {setup.suite_hash[:12]}); "
                "copy the same suite to every worker"
            )
        with _machine_lock():  # workers on one machine share the repository cache
            workspace = Workspace.prepare(loaded)
        self._log_dir = _log_dir(Path(setup.log_dir))
        pool = ServerPool(self._log_dir, setup.log_bytes)
        return TrialEnv(loaded, workspace, PriceTable(loaded.suite.prices), pool)


@contextlib.contextmanager
def _machine_lock() -> Iterator[None]:
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "ray-worker.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _log_dir(run_logs: Path) -> Path:
    """Beside the run's own logs when that path can be made here, else in this machine's temp folder."""
    name = f"ray-{socket.gethostname()}-{os.getpid()}"
    for parent in (run_logs, Path(tempfile.gettempdir()) / "proctor-ray-logs"):
        try:
            (parent / name).mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        return parent / name
    return Path(tempfile.mkdtemp(prefix="proctor-ray-"))


__all__ = ["Item", "TrialWorker", "WorkerSetup", "where"]
