"""The run database's only writer: events are queued in memory and committed in batches.

``emit`` never awaits, so the agent loop is never slowed by disk. It serializes the event (and
computes its derived rows) on the caller's thread and queues it (``write_queue``); the writer's
own thread takes what is queued in batches it schedules itself, so a busy event loop cannot
hold commits back, and commits each batch in one transaction (``write_sql``), derived rows
included. Nothing reaches the file unredacted: each payload is either found to need no
redaction while queued (nothing in it matches a token shape or a secret known by then), or
redacted with its batch on the writer thread (``batch_payloads``), its derived rows made again
from the redacted payload if redaction changed it. The same goes for the facts a report reads
of a model call, judge call or tool event (``store.event_facts``), stored beside the event.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from proctor.store.event_facts import FACT_KINDS, event_fact
from proctor.store.events import Event
from proctor.store.file_watch import FileWatch, StoreFailed, disk_full, is_disk_full, moved_away
from proctor.store.operator_commands import OperatorCommandRow, cancel_unserved, claim_pending, finish
from proctor.store.payload_codec import COMPRESS_OVER_BYTES, decode_payload, encode_payload, encode_raw
from proctor.store.records import JudgmentMeta
from proctor.store.redaction import redact
from proctor.store.schema import configure, migrate
from proctor.store.write.batch_payloads import redact_payloads
from proctor.store.write.derived_rows import RULE_KINDS, derive
from proctor.store.write.write_queue import WriteQueue
from proctor.store.write.write_sql import (
    abandon_unfinished,
    execute,
    insert_run,
    insert_trials,
    replan_run,
    requeue,
    write_batch,
)

_now = time.time
# How long the first queued event waits for company before a commit; bounds what a live
# console can show (it sees an event only once committed) at the cost of more transactions.
DEFAULT_FLUSH_INTERVAL_S = 0.02
T = TypeVar("T")


@dataclass(frozen=True)
class TrialRow:
    scenario: str
    arm: str
    model: str
    epoch: int
    seed: int


class StoreWriter:
    """Owns the write connection; use ``async with await StoreWriter.open(path) as w``.

    All SQLite work runs on one dedicated thread (a connection must stay on one thread, and
    the event loop must never wait on disk); each call hands that thread a whole function, and
    the queued events are written by a job that thread runs on its own (``_drain``).
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        pool: ThreadPoolExecutor,
        path: Path,
        batch_size: int,
        flush_interval_s: float,
        on_commit: Callable[[int, float], None] | None = None,
        watch: FileWatch | None = None,
    ) -> None:
        self._conn = conn
        self._watch = watch
        self._pool = pool
        self.path = path
        self._on_commit = on_commit
        self._loop = asyncio.get_running_loop()
        self._queue = WriteQueue(batch_size, flush_interval_s)
        self._events_committed = 0  # only the writer thread counts them
        self._closed = False
        self._failure: BaseException | None = None

    @classmethod
    async def open(
        cls,
        path: str | Path,
        *,
        batch_size: int = 512,
        flush_interval_s: float = DEFAULT_FLUSH_INTERVAL_S,
        on_commit: Callable[[int, float], None] | None = None,
    ) -> StoreWriter:
        """``on_commit(events_committed_so_far, time.perf_counter())`` is called on the writer
        thread after each batch commits (for measurements; it must be quick and not raise)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="proctor-store")

        def connect() -> tuple[sqlite3.Connection, FileWatch]:
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, cached_statements=256)
            try:
                configure(conn)
                migrate(conn, str(path))
            except BaseException as exc:
                conn.close()
                if is_disk_full(exc):
                    raise StoreFailed(
                        f"{path}: the disk is full ({exc}); free some space and start again"
                    ) from exc
                raise
            return conn, FileWatch.of(path)

        try:
            conn, watch = await asyncio.get_running_loop().run_in_executor(pool, connect)
        except BaseException:
            pool.shutdown(wait=False)
            raise
        return cls(conn, pool, path, batch_size, flush_interval_s, on_commit, watch)

    async def __aenter__(self) -> StoreWriter:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        # Shielded: a cancelled caller must not cancel a write the thread has not started yet.
        future = self._loop.run_in_executor(self._pool, self._guarded, fn, *args)
        return await asyncio.shield(future)

    def _guarded(self, fn: Callable[..., T], *args: Any) -> T:
        """On the writer thread: ``fn`` on the connection, a full disk said as such."""
        try:
            return fn(self._conn, *args)
        except sqlite3.Error as exc:
            if is_disk_full(exc):
                raise disk_full(self._conn, self.path, exc) from exc
            raise

    def _error(self) -> Exception:
        """What a call after a failed write raises: the failure's own message when it says one."""
        if isinstance(self._failure, StoreFailed):
            return StoreFailed(str(self._failure))
        return RuntimeError(f"store writer for {self.path} failed: {self._failure}")

    # -- direct writes (setup, rare) ------------------------------------------------------

    async def create_run(self, run_id: str, suite: str, config: dict[str, Any]) -> None:
        await self._run(insert_run, run_id, suite, redact(json.dumps(config, sort_keys=True)))

    async def add_trials(self, run_id: str, rows: Iterable[TrialRow]) -> None:
        """Insert trials that are not there yet (matrix expansion is idempotent on resume)."""
        await self._run(insert_trials, [(run_id, r.scenario, r.arm, r.model, r.epoch, r.seed) for r in rows])

    async def abandon_unfinished(self, run_id: str) -> list[int]:
        """Mark events of trials that started but never finished as abandoned; requeue them."""
        await self.flush()
        return await self._run(abandon_unfinished, run_id)

    async def replan(self, run_id: str, config: dict[str, Any], drop: list[int]) -> None:
        """Record a resumed run's new plan; drop queued trials outside it that never started."""
        await self.flush()
        await self._run(replan_run, run_id, redact(json.dumps(config, sort_keys=True)), drop)

    async def requeue(self, ids: list[int]) -> None:
        """Abandon these trials' attempts so far and queue them again (a trial lost to its worker)."""
        await self.flush()
        await self._run(requeue, ids)

    async def claim_operator_commands(self) -> list[OperatorCommandRow]:
        """Claim pending operator commands on this writer's own connection.

        Through the writer, not a second connection: a second writer would wait for the write
        lock, which a busy run hardly ever releases for long (seen: 'database is locked').
        """
        return await self._run(claim_pending)

    async def finish_operator_command(self, command_id: int, ok: bool, message: str) -> None:
        """Record a command's outcome, after the events it emitted."""
        await self.flush()
        await self._run(finish, command_id, ok, message)

    async def cancel_unserved_operator_commands(self, message: str) -> int:
        """The engine is leaving: commands still pending will not be served by it."""
        await self.flush()
        return await self._run(cancel_unserved, message)

    async def execute(self, sql: str, params: tuple[Any, ...] = ()) -> None:
        """One statement outside the event stream (commands table bookkeeping), after pending events."""
        await self.flush()
        await self._run(execute, sql, params)

    # -- the event stream -------------------------------------------------------------

    def emit(
        self,
        run_id: str,
        event: Event,
        *,
        trial_id: int | None = None,
        attempt: int = 0,
        judgment: JudgmentMeta | None = None,
    ) -> None:
        """Queue one event; never blocks. Raises if the writer already failed or closed."""
        if self._failure is not None:
            raise self._error() from self._failure
        if self._closed:
            raise RuntimeError(f"store writer for {self.path} is closed")
        # Serialized here, on the caller's thread (no events kept alive).
        ts = _now()
        kind = event.kind
        payload = event.__pydantic_serializer__.to_json(event)  # = model_dump_json().encode()
        ops = derive(run_id, trial_id, attempt, ts, event, judgment) if kind in RULE_KINDS else None
        fact = event_fact(event) if kind in FACT_KINDS else None
        if self._queue.add_event(
            run_id, trial_id, attempt, ts, kind, payload, type(event), judgment, ops, fact
        ):
            self._pool.submit(self._drain)

    def put_blob(self, sha256: str, mime_type: str, data: bytes) -> None:
        """Queue binary tool output, stored once per content hash in the next batch's transaction;
        emit the event that names it afterwards, so no event points at a missing blob."""
        if self._queue.add_blob((sha256, mime_type, len(data), data)):
            self._pool.submit(self._drain)

    async def flush(self) -> None:
        """Write everything queued so far; return once it is committed.

        The one writer thread commits in queue order, so once the count of committed items
        reaches the count queued now, every earlier event is in the file.
        """
        if self._failure is not None:
            raise self._error() from self._failure
        done: asyncio.Future[None] = self._loop.create_future()
        if self._queue.wait_for_commit(done):
            await asyncio.shield(done)

    def _drain(self) -> None:
        """On the writer thread: take a batch (once it has company) and commit it."""
        batch = self._queue.take()
        failed = self._failure is not None
        if not failed:
            try:
                write_batch(self._conn, batch)
                self._check_files()
            except BaseException as exc:
                self._failure = disk_full(self._conn, self.path, exc) if is_disk_full(exc) else exc
        if not failed and self._failure is None:
            self._events_committed += batch.rows
            if self._on_commit is not None:
                self._on_commit(self._events_committed, time.perf_counter())
        if self._queue.committed(batch):
            with suppress(RuntimeError):  # the loop is gone: nobody is waiting any more
                self._loop.call_soon_threadsafe(self._wake_waiters)

    def _check_files(self) -> None:
        """After a commit: the path still names the files written, or what was committed is saved
        and the run stops (``file_watch``)."""
        if self._watch is None:
            return
        what = self._watch.problem()
        if what is not None:
            self._watch = None  # checked once: the connection may be closed normally after this
            raise moved_away(self._conn, self.path, what)

    def _wake_waiters(self) -> None:
        for f in self._queue.ready_waiters():
            if f.done():
                continue
            if self._failure is not None:
                f.set_exception(self._error())
            else:
                f.set_result(None)

    async def close(self) -> None:
        """Flush what is queued, then close; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        try:
            self._queue.close()
            if self._failure is None:
                with suppress(RuntimeError):
                    await self.flush()
        finally:
            await self._run(sqlite3.Connection.close)
            self._pool.shutdown(wait=True)
        if self._failure is not None:
            raise self._error() from self._failure


__all__ = [
    "COMPRESS_OVER_BYTES",
    "DEFAULT_FLUSH_INTERVAL_S",
    "StoreWriter",
    "TrialRow",
    "decode_payload",
    "encode_payload",
    "encode_raw",
    "redact_payloads",
]
