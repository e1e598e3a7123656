"""The run database's only writer: events are queued in memory and flushed in batches.

``emit`` never awaits, so the agent loop is never slowed by disk; the writer's own thread takes
every queued event when ``batch_size`` are waiting, ``flush_interval_s`` has passed since the
first of them, or someone awaits ``flush()``, and commits them in one transaction. That thread
schedules its own batches: a busy event loop (CPU work between events) cannot hold commits back,
and when the thread falls behind the next batch is simply larger (nothing is dropped).
``emit`` serializes the event (and computes its derived rows); the writer thread redacts a
whole batch in a few passes (``redact`` over payloads joined by a NUL, which JSON never holds and
no secret shape crosses) before the transaction, so nothing reaches the file unredacted and the
caller's thread pays least. An event whose payload redaction changed has its derived rows
computed again from the redacted payload, so they too hold only what is stored.
Derived rows (trial status, scores, judgments) are updated in the same transaction as the
events they come from, so the store never says a trial is finished without also holding its
``trial_finished`` event.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

from pydantic import BaseModel

from proctor.store.commands import Command, cancel_unserved, claim_pending, finish
from proctor.store.derived_rows import RULE_KINDS, JudgmentMeta, Op, apply_derived, derive, insert_flat
from proctor.store.events import Event
from proctor.store.redaction import redact
from proctor.store.schema import configure, migrate

COMPRESS_OVER_BYTES = 64 * 1024
_now = time.time
_monotonic = time.monotonic
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


# Payloads are redacted in groups of about this many bytes: one ``redact`` call per group costs
# far less than one per event, and a group never holds much more than one huge payload.
REDACT_GROUP_BYTES = 256 * 1024
_SEP: Final = b"\x00"


def redact_payloads(payloads: list[bytes]) -> list[bytes]:
    """``[redact(p) for p in payloads]`` (UTF-8 JSON documents), one ``redact`` call per group.

    A group is redacted as its payloads joined by NUL: JSON escapes every control character,
    so a NUL only ever separates payloads; it is not in any secret shape's character classes
    and a shape's start accepts it as it accepts the payload's start, so no replacement crosses
    it or differs from the payload's own. Should a replacement ever swallow a separator, the
    group is redacted one payload at a time instead. Returns ``payloads`` itself if nothing changed.
    """
    out: list[bytes] | None = None
    start = size = 0
    n = len(payloads)
    for i in range(n):
        size += len(payloads[i])
        if size < REDACT_GROUP_BYTES and i + 1 < n:
            continue
        group = payloads[start : i + 1]
        done = _redact_group(group)
        if done is not group:
            if out is None:
                out = payloads[:start]
            out += done
        elif out is not None:
            out += group
        start, size = i + 1, 0
    return payloads if out is None else out


def _redact_group(group: list[bytes]) -> list[bytes]:
    text = _SEP.join(group).decode()
    clean = redact(text)
    if clean == text:
        return group
    parts = clean.encode().split(_SEP)
    if len(parts) == len(group):
        return parts
    return [redact(p.decode()).encode() for p in group]


_Blob = tuple[str, str, int, bytes]
# An event with derived rows: its row in the batch, its class, its judgment metadata, and the
# rows derived from it as it was emitted (kept if redaction leaves its payload alone).
_Derived = tuple[int, type[BaseModel], JudgmentMeta | None, tuple[Op, ...]]
T = TypeVar("T")


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
    ) -> None:
        self._conn = conn
        self._pool = pool
        self.path = path
        self._batch_size = batch_size
        self._interval = flush_interval_s
        self._on_commit = on_commit
        self._loop = asyncio.get_running_loop()
        # Shared with the writer thread, guarded by _cond: what waits, and how far it got.
        # ``emit`` takes ``_lock`` itself (the condition's lock): the same guard, without the
        # condition's Python-level ``__enter__``/``__exit__`` on every event.
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        # Queued events, seven values a row (the events table's columns, in ``_INSERT_EVENT``'s
        # order): flat, so a batch goes to SQLite in slices without a tuple per row. Payloads
        # are serialized, not yet redacted; so are the derived rows, one entry per event that
        # has some (see ``_Derived``).
        self._flat: list[Any] = []
        self._nrows = 0
        self._derived: list[_Derived] = []
        self._blobs: list[_Blob] = []
        self._first_at = 0.0  # monotonic time the oldest queued item arrived
        self._queued = 0  # items (events and blobs) ever queued
        self._committed = 0  # of those, how many are committed (or lost to a failure)
        self._events_committed = 0
        self._draining = False  # a _drain job is queued or waiting for company
        self._urgent = False  # someone awaits flush(): commit without waiting for company
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
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

        def connect() -> sqlite3.Connection:
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, cached_statements=256)
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
        return cls(conn, pool, path, batch_size, flush_interval_s, on_commit)

    async def __aenter__(self) -> StoreWriter:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        # Shielded: a cancelled caller must not cancel a write the thread has not started yet.
        future = self._loop.run_in_executor(self._pool, fn, self._conn, *args)
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
        # Serialized here, on the caller's thread (no events kept alive); redacted with the whole
        # batch on the writer thread.
        ts = _now()
        kind = event.kind
        payload = event.__pydantic_serializer__.to_json(event)  # = model_dump_json().encode()
        ops = derive(run_id, trial_id, attempt, ts, event, judgment) if kind in RULE_KINDS else None
        with self._lock:
            row = self._nrows
            self._flat += (run_id, trial_id, attempt, ts, kind, "json", payload)
            if ops is not None:
                self._derived.append((row, type(event), judgment, ops))
            self._nrows = row = row + 1
            self._queued += 1
            start = not self._draining
            if start:
                self._draining = True
                self._first_at = _monotonic()
            elif row == self._batch_size:  # the drain job waits for company no longer than this
                self._cond.notify()
        if start:
            self._pool.submit(self._drain)

    def put_blob(self, sha256: str, mime_type: str, data: bytes) -> None:
        """Queue binary tool output, stored once per content hash in the next batch's transaction;
        emit the event that names it afterwards, so no event points at a missing blob."""
        with self._cond:
            self._blobs.append((sha256, mime_type, len(data), data))
            self._queued += 1
            start = self._schedule()
        if start:
            self._pool.submit(self._drain)

    def _schedule(self) -> bool:
        """Under ``_cond``: note the first item of a batch; True when a drain job must be started."""
        if self._draining:
            return False
        self._draining = True
        self._first_at = time.monotonic()
        return True

    async def flush(self) -> None:
        """Write everything queued so far; return once it is committed.

        The one writer thread commits in queue order, so once the count of committed items
        reaches the count queued now, every earlier event is in the file.
        """
        if self._failure is not None:
            raise RuntimeError(f"store writer for {self.path} failed: {self._failure}") from self._failure
        with self._cond:
            target = self._queued
            if self._committed >= target:
                return
            done: asyncio.Future[None] = self._loop.create_future()
            self._waiters.append((target, done))
            self._urgent = True
            self._cond.notify()
        await asyncio.shield(done)

    def _drain(self) -> None:
        """On the writer thread: wait for company (bounded by the interval), then commit every
        queued item in one transaction."""
        with self._cond:
            deadline = self._first_at + self._interval
            while not (self._urgent or self._closed or self._nrows >= self._batch_size):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._cond.wait(remaining)
            flat, self._flat = self._flat, []
            nrows, self._nrows = self._nrows, 0
            derived, self._derived = self._derived, []
            blobs, self._blobs = self._blobs, []
            upto = self._queued
            self._draining = False
            self._urgent = False
            failed = self._failure is not None
        if not failed:
            try:
                _write_batch(self._conn, flat, derived, blobs)
            except BaseException as exc:
                self._failure = exc
        with self._cond:
            self._committed = upto
            if not failed and self._failure is None:
                self._events_committed += nrows
                if self._on_commit is not None:
                    self._on_commit(self._events_committed, time.perf_counter())
            wake = bool(self._waiters)
        if wake:
            with suppress(RuntimeError):  # the loop is gone: nobody is waiting any more
                self._loop.call_soon_threadsafe(self._wake_waiters)

    def _wake_waiters(self) -> None:
        with self._cond:
            committed = self._committed
            ready = [f for target, f in self._waiters if target <= committed]
            self._waiters = [(target, f) for target, f in self._waiters if target > committed]
        for f in ready:
            if f.done():
                continue
            if self._failure is not None:
                f.set_exception(RuntimeError(f"store writer for {self.path} failed: {self._failure}"))
            else:
                f.set_result(None)

    async def close(self) -> None:
        """Flush what is queued, then close; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        try:
            with self._cond:
                self._cond.notify()
            if self._failure is None:
                with suppress(RuntimeError):
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


_INSERT_EVENT = (
    "INSERT INTO events (run_id, trial_id, attempt, ts, kind, encoding, payload) VALUES (?, ?, ?, ?, ?, ?, ?)"
)


def _write_batch(
    conn: sqlite3.Connection, flat: list[Any], derived: list[_Derived], blobs: list[_Blob]
) -> None:
    ops = _finish_payloads(flat, derived) if flat else []
    with _transaction(conn) as cur:
        if blobs:
            cur.executemany(
                "INSERT OR IGNORE INTO blobs (sha256, mime_type, size, data) VALUES (?, ?, ?, ?)", blobs
            )
        insert_flat(cur, _INSERT_EVENT, 7, flat)
        apply_derived(cur, ops)


def _finish_payloads(flat: list[Any], derived: list[_Derived]) -> list[Op]:
    """Redact the queued payloads and compress the large ones, in place in the flat rows; return
    the derived rows, made again from the stored payload for an event redaction changed."""
    payloads: list[bytes] = flat[6::7]
    redacted = redact_payloads(payloads)
    ops: list[Op] = []
    if redacted is payloads:
        for entry in derived:
            ops += entry[3]
    else:
        flat[6::7] = redacted
        for row, cls, judgment, made in derived:
            if redacted[row] == payloads[row]:
                ops += made
                continue
            event: Any = cls.model_validate_json(redacted[row])
            at = 7 * row
            ops += derive(flat[at], flat[at + 1], flat[at + 2], flat[at + 3], event, judgment)
        payloads = redacted
    if max(map(len, payloads)) > COMPRESS_OVER_BYTES:
        for i, p in enumerate(payloads):
            if len(p) > COMPRESS_OVER_BYTES:
                flat[7 * i + 5], flat[7 * i + 6] = encode_raw(p)
    return ops


__all__ = ["JudgmentMeta", "StoreWriter", "TrialRow", "decode_payload", "encode_payload", "redact_payloads"]
