"""The run database's only writer: events are queued in memory and flushed in batches.

``emit`` never awaits, so the agent loop is never slowed by disk; a background task flushes
when ``batch_size`` events are waiting or ``flush_interval_s`` has passed since the first of
them, one transaction per flush. Derived rows (trial status, scores, judgments) are updated
in the same transaction as the events they come from, so the store never says a trial is
finished without also holding its ``trial_finished`` event.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from proctor.store.commands import Command, cancel_unserved, claim_pending, finish
from proctor.store.derived_rows import Derived, JudgmentMeta, has_rule, update_derived
from proctor.store.events import (
    Event,
)
from proctor.store.redaction import redact
from proctor.store.schema import configure, migrate

COMPRESS_OVER_BYTES = 64 * 1024
# How long the first queued event waits for company before a commit; bounds what a live
# console can show (it sees an event only once committed) at the cost of more transactions.
DEFAULT_FLUSH_INTERVAL_S = 0.02


@dataclass(frozen=True)
class TrialRow:
    scenario: str
    arm: str
    model: str
    epoch: int
    seed: int


def encode_payload(event: Event) -> tuple[str, bytes]:
    return encode_raw(event.model_dump_json().encode())


def encode_raw(raw: bytes) -> tuple[str, bytes]:
    if len(raw) > COMPRESS_OVER_BYTES:
        return "zlib", zlib.compress(raw, 6)
    return "json", raw


def decode_payload(encoding: str, payload: bytes) -> bytes:
    return zlib.decompress(payload) if encoding == "zlib" else payload


_Row = tuple[str, int | None, int, float, str, str, bytes]
# An event row ready to insert, and the event again when it also updates a derived table.
_Pending = tuple[_Row, Derived | None]
_Blob = tuple[str, str, int, bytes]
T = TypeVar("T")


class StoreWriter:
    """Owns the write connection; use ``async with await StoreWriter.open(path) as w``.

    All SQLite work runs on one dedicated thread (a connection must stay on one thread, and
    the event loop must never wait on disk); each call hands that thread a whole function.
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        pool: ThreadPoolExecutor,
        path: Path,
        batch_size: int,
        flush_interval_s: float,
    ) -> None:
        self._conn = conn
        self._pool = pool
        self.path = path
        self._batch_size = batch_size
        self._interval = flush_interval_s
        self._pending: list[_Pending] = []
        self._blobs: list[_Blob] = []
        self._last_write: asyncio.Future[None] | None = None
        self._wake = asyncio.Event()
        self._flusher: asyncio.Task[None] | None = None
        self._closed = False
        self._failure: BaseException | None = None

    @classmethod
    async def open(
        cls, path: str | Path, *, batch_size: int = 512, flush_interval_s: float = DEFAULT_FLUSH_INTERVAL_S
    ) -> StoreWriter:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="proctor-store")

        def connect() -> sqlite3.Connection:
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            try:
                configure(conn)
                migrate(conn, str(path))
            except BaseException:
                conn.close()
                raise
            return conn

        try:
            conn = await asyncio.get_running_loop().run_in_executor(pool, connect)
        except BaseException:
            pool.shutdown(wait=False)
            raise
        writer = cls(conn, pool, path, batch_size, flush_interval_s)
        writer._flusher = asyncio.create_task(writer._flush_loop(), name="proctor-store-flush")
        return writer

    async def __aenter__(self) -> StoreWriter:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        # Shielded: a cancelled caller must not cancel a write the thread has not started yet.
        future = asyncio.get_running_loop().run_in_executor(self._pool, fn, self._conn, *args)
        return await asyncio.shield(future)

    # -- direct writes (setup, rare) ------------------------------------------------------

    async def create_run(self, run_id: str, suite: str, config: dict[str, Any]) -> None:
        await self._run(_insert_run, run_id, suite, redact(json.dumps(config, sort_keys=True)))

    async def add_trials(self, run_id: str, rows: Iterable[TrialRow]) -> None:
        """Insert trials that are not there yet (matrix expansion is idempotent on resume)."""
        await self._run(_insert_trials, [(run_id, r.scenario, r.arm, r.model, r.epoch, r.seed) for r in rows])

    async def abandon_unfinished(self, run_id: str) -> list[int]:
        """Mark events of trials that started but never finished as abandoned; requeue them."""
        await self.flush()
        return await self._run(_abandon_unfinished, run_id)

    async def claim_commands(self) -> list[Command]:
        """Claim pending operator commands on this writer's own connection.

        Through the writer, not a second connection: a second writer would wait for the write
        lock, which a busy run hardly ever releases for long (seen: 'database is locked').
        """
        return await self._run(claim_pending)

    async def finish_command(self, command_id: int, ok: bool, message: str) -> None:
        """Record a command's outcome, after the events it emitted."""
        await self.flush()
        await self._run(finish, command_id, ok, message)

    async def cancel_unserved_commands(self, message: str) -> int:
        """The engine is leaving: commands still pending will not be served by it."""
        await self.flush()
        return await self._run(cancel_unserved, message)

    async def execute(self, sql: str, params: tuple[Any, ...] = ()) -> None:
        """One statement outside the event stream (commands table bookkeeping), after pending events."""
        await self.flush()
        await self._run(_execute, sql, params)

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
            raise RuntimeError(f"store writer for {self.path} failed: {self._failure}") from self._failure
        if self._closed:
            raise RuntimeError(f"store writer for {self.path} is closed")
        # Serialized here, on the caller's thread, so it overlaps the writer thread's disk work.
        ts = time.time()
        raw = redact(event.model_dump_json())  # the one choke point: nothing reaches the file unredacted
        if has_rule(event.kind):
            event = type(event).model_validate_json(raw)
        encoding, payload = encode_raw(raw.encode())
        derived = (run_id, trial_id, attempt, ts, event, judgment) if has_rule(event.kind) else None
        self._pending.append(((run_id, trial_id, attempt, ts, event.kind, encoding, payload), derived))
        n = len(self._pending)
        if n == 1 or n == self._batch_size:
            self._wake.set()

    def put_blob(self, sha256: str, mime_type: str, data: bytes) -> None:
        """Queue binary tool output, stored once per content hash in the next batch's transaction;
        emit the event that names it afterwards, so no event points at a missing blob."""
        self._blobs.append((sha256, mime_type, len(data), data))

    async def flush(self) -> None:
        """Write everything queued so far; return once it is committed, whoever submitted it.

        The one writer thread runs batches in order, so waiting for the last batch submitted
        (possibly by a concurrent flush) means every earlier event is in the file too.
        """
        if self._failure is not None:
            raise RuntimeError(f"store writer for {self.path} failed: {self._failure}") from self._failure
        while self._pending or self._blobs:
            batch, self._pending = self._pending, []
            blobs, self._blobs = self._blobs, []
            self._last_write = asyncio.get_running_loop().run_in_executor(
                self._pool, _write_batch, self._conn, batch, blobs
            )
            await asyncio.shield(self._last_write)
        if self._last_write is not None and not self._last_write.done():
            await asyncio.shield(self._last_write)

    async def _flush_loop(self) -> None:
        try:
            while not self._closed:
                await self._wake.wait()
                self._wake.clear()
                if not self._closed and len(self._pending) < self._batch_size:
                    await asyncio.sleep(self._interval)
                await self.flush()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            self._failure = exc

    async def close(self) -> None:
        """Flush what is queued, then close; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self._wake.set()
        try:
            if self._flusher is not None:
                with suppress(asyncio.CancelledError):
                    await self._flusher
            if self._failure is None:
                await self.flush()
        finally:
            await self._run(sqlite3.Connection.close)
            self._pool.shutdown(wait=True)
        if self._failure is not None:
            raise RuntimeError(f"store writer for {self.path} failed: {self._failure}") from self._failure


def _insert_run(conn: sqlite3.Connection, run_id: str, suite: str, config: str) -> None:
    conn.execute(
        "INSERT INTO runs (id, suite, config, created_at) VALUES (?, ?, ?, ?)",
        (run_id, suite, config, time.time()),
    )


def _insert_trials(conn: sqlite3.Connection, rows: list[tuple[str, str, str, str, int, int]]) -> None:
    with _transaction(conn) as cur:
        cur.executemany(
            "INSERT OR IGNORE INTO trials (run_id, scenario, arm, model, epoch, seed) VALUES (?, ?, ?, ?, ?, ?)",
            rows,
        )


def _abandon_unfinished(conn: sqlite3.Connection, run_id: str) -> list[int]:
    with _transaction(conn) as cur:
        ids = [
            int(r[0])
            for r in cur.execute("SELECT id FROM trials WHERE run_id = ? AND status = 'running'", (run_id,))
        ]
        cur.executemany(
            "UPDATE events SET abandoned = 1 WHERE trial_id = ? AND attempt <= (SELECT attempt FROM trials WHERE id = ?)",
            [(i, i) for i in ids],
        )
        cur.executemany("UPDATE trials SET status = 'queued' WHERE id = ?", [(i,) for i in ids])
    return ids


def _execute(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> None:
    conn.execute(sql, params)


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Cursor]:
    cur = conn.cursor()
    cur.execute("BEGIN IMMEDIATE")
    try:
        yield cur
    except BaseException:
        cur.execute("ROLLBACK")
        raise
    cur.execute("COMMIT")


def _write_batch(conn: sqlite3.Connection, batch: list[_Pending], blobs: list[_Blob]) -> None:
    with _transaction(conn) as cur:
        if blobs:
            cur.executemany(
                "INSERT OR IGNORE INTO blobs (sha256, mime_type, size, data) VALUES (?, ?, ?, ?)", blobs
            )
        cur.executemany(
            "INSERT INTO events (run_id, trial_id, attempt, ts, kind, encoding, payload) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [row for row, _ in batch],
        )
        for _, derived in batch:
            if derived is not None:
                update_derived(cur, derived)


__all__ = ["JudgmentMeta", "StoreWriter", "TrialRow", "decode_payload", "encode_payload"]
