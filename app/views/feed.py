"""The console's only way to read the run: a read-only aiosqlite connection.

SQL runs on aiosqlite's connection thread and the heavy decoding (event payloads, score
details) on a decoder thread, so no read blocks the event loop; the loop awaits results and
folds them. The queries are ``store.queries``, the same ones the reports run through sqlite3.
Startup reads rows, not events (trial rows first, for a fast first paint; then scores and
judgments), and remembers the highest event id at that moment: everything before it is already
reflected in those rows, everything after it comes from the tail. Sums that only events hold
(tool-I/O tokens) are backfilled in small chunks through the kind index, so memory never grows
with the number of stored events. A trial's events are read only when the trial is opened.

While a run is live, a tail task polls on its own cadence (``PRAGMA data_version`` first, so an
idle store costs one tiny query) and hands each batch to a callback.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import aiosqlite

from proctor.store.events import AgentBrief
from proctor.store.read import queries
from proctor.store.read.queries import Query
from proctor.store.read.reader import check_database_path, read_only_uri
from proctor.store.records import (
    AnchorRecord,
    JudgmentRecord,
    RunRecord,
    ScoreRecord,
    StoredEvent,
    TrialRecord,
    UnreadableScoreRow,
)
from proctor.store.schema import SchemaError

if TYPE_CHECKING:
    from proctor.app.views.surface_view import SurfaceFold, SurfaceView
    from proctor.engine.reports.tool_usage import ArmToolUsage

T = TypeVar("T")
_ROW_KINDS = frozenset({"trial_started", "trial_finished", "score"})
_RUN_KINDS = frozenset({"run_started", "run_finished"})
BACKFILL_CHUNK = 2000
TAIL_CHUNK = 2000
USAGE_CHUNK = 2000
# Results that parse more bytes than this are decoded on the decoder thread; smaller ones in
# place, since a round trip through a thread waits for a (possibly busy) loop iteration.
OFFLOAD_BYTES = 256 * 1024


@dataclass(frozen=True)
class Snapshot:
    run: RunRecord | None
    trials: list[TrialRecord]
    start_id: int


@dataclass(frozen=True)
class Details:
    scores: list[ScoreRecord]
    unreadable_scores: list[UnreadableScoreRow]
    judgments: list[JudgmentRecord]
    anchors: list[AnchorRecord]
    commands: list[StoredEvent]
    errors: list[StoredEvent] = field(default_factory=list)
    """Error events (a scoring error says why a trial has no verdict)."""


@dataclass
class TailBatch:
    events: list[StoredEvent] = field(default_factory=list)
    trials: list[TrialRecord] = field(default_factory=list)
    run: RunRecord | None = None
    anchors: list[AnchorRecord] | None = None
    backfill: list[StoredEvent] = field(default_factory=list)
    backfill_done: bool = False
    backfill_finished: bool = False

    def __bool__(self) -> bool:
        return bool(
            self.events
            or self.trials
            or self.run
            or self.anchors is not None
            or self.backfill
            or self.backfill_finished
        )


@dataclass(frozen=True)
class TrialLoad:
    trial: TrialRecord | None
    events: list[StoredEvent]
    scores: list[ScoreRecord]
    unreadable_scores: list[UnreadableScoreRow]
    judgments: list[JudgmentRecord]
    texts: dict[str, str] = field(default_factory=dict)


class StoreFeed:
    """Every read of one run database, through one aiosqlite connection."""

    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        self._conn: aiosqlite.Connection | None = None
        self._decoder = ThreadPoolExecutor(max_workers=1, thread_name_prefix="proctor-console-decode")
        self._last_id = 0
        self._seen_version: int | None = None
        self._idle = True
        self._known: set[int] = set()
        self._backfill_after = 0
        self._backfill_upto = 0
        self.backfill_done = False
        self._poll_lock = asyncio.Lock()
        self._tail_task: asyncio.Task[None] | None = None

    async def _fetch(self, query: Query[T]) -> T:
        conn = self._require()
        rows = list(await conn.execute_fetchall(query.sql, query.params))
        if query.size is not None and (len(rows) > 1000 or query.size(rows) > OFFLOAD_BYTES):
            return await asyncio.get_running_loop().run_in_executor(self._decoder, query.decode, rows)
        return query.decode(rows)

    def start_tail(
        self,
        on_batch: Callable[[TailBatch], None],
        *,
        interval: float = 0.01,
        idle_interval: float = 0.05,
        on_error: Callable[[BaseException], None],
    ) -> None:
        """Poll from now on, every ``interval`` while events flow and ``idle_interval`` when quiet.

        A poll that raises ends the tail; ``on_error`` hears of it (a console that silently stops
        updating looks like a stalled run).
        """
        if self._tail_task is not None:
            return

        async def loop() -> None:
            quiet = 0
            while True:
                batch = await self.poll()
                if batch:
                    on_batch(batch)
                quiet = 0 if batch else quiet + 1
                await asyncio.sleep(interval if quiet < 20 else idle_interval)

        def finished(task: asyncio.Task[None]) -> None:
            if not task.cancelled() and (exc := task.exception()) is not None:
                on_error(exc)

        self._tail_task = asyncio.create_task(loop(), name="proctor-console-tail")
        self._tail_task.add_done_callback(finished)

    async def close(self) -> None:
        task, self._tail_task = self._tail_task, None
        if task is not None and not task.done():  # a failed tail was reported when it ended
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()  # an open aiosqlite connection keeps the interpreter alive
        # Leaving must not wait behind queued decoding: the running one finishes, the rest are dropped.
        await asyncio.to_thread(self._decoder.shutdown, wait=True, cancel_futures=True)

    # -- startup ----------------------------------------------------------------------------

    async def _open(self) -> aiosqlite.Connection | None:
        """The connection, once the database exists and is a proctor run; None until then."""
        if self._conn is not None:
            return self._conn
        try:
            check_database_path(self.db_path)
        except FileNotFoundError:
            return None
        pending = aiosqlite.connect(read_only_uri(self.db_path), uri=True)
        # aiosqlite's thread is not a daemon: a console that crashed before closing the feed
        # would never exit. Reads only, so nothing is lost if the thread dies with the process.
        pending._thread.daemon = True
        conn = await pending
        try:
            await conn.execute("PRAGMA busy_timeout=5000")
            version = queries.schema_version()
            rows = await conn.execute_fetchall(version.sql, version.params)
            queries.check_schema_version(self.db_path, version.decode(list(rows)))
        except (sqlite3.DatabaseError, SchemaError):
            # The engine has created the file but not yet its schema (the CLI refuses other files).
            await conn.close()
            return None
        self._conn = conn
        return conn

    async def snapshot(self) -> Snapshot | None:
        """Trial rows and the starting event id; None while the database does not exist yet."""
        if await self._open() is None:
            return None
        start_id = await self._fetch(queries.max_event_id())
        self._last_id = self._backfill_upto = start_id
        trials = await self._fetch(queries.trials())
        self._known = {t.id for t in trials}
        return Snapshot(await self._fetch(queries.run()), trials, start_id)

    async def tool_usage(self) -> list[ArmToolUsage]:
        """Per arm and tool: calls, errors, latency, result size, never-called tools.

        The three tool event kinds are merged by id from chunked reads, and counted in chunks on
        the decoder thread, so memory stays flat and the loop is never held for long."""
        # Imported here: numpy is not needed for the console's first paint.
        from proctor.engine.reports.tool_usage import KINDS, ToolUsageCounter, latency_recorded

        run = await self._fetch(queries.run())
        upper = await self._fetch(queries.max_event_id())
        trials: list[TrialRecord] = await self._fetch(queries.trials())
        counter = ToolUsageCounter(trials, latency_recorded=latency_recorded(run.config if run else {}))
        after = dict.fromkeys(KINDS, 0)
        buffers: dict[str, deque[StoredEvent]] = {kind: deque() for kind in KINDS}
        exhausted: set[str] = set()

        async def refill(kind: str) -> None:
            chunk = await self._fetch(queries.events_of_kind(kind, after[kind], upper, USAGE_CHUNK))
            buffers[kind].extend(chunk)
            if chunk:
                after[kind] = chunk[-1].id
            if len(chunk) < USAGE_CHUNK:
                exhausted.add(kind)

        def count(events: list[StoredEvent]) -> None:
            for event in events:
                counter.add(event)

        loop = asyncio.get_running_loop()
        for kind in KINDS:
            await refill(kind)
        merged: list[StoredEvent] = []
        while any(buffers.values()):
            kind = min((k for k in KINDS if buffers[k]), key=lambda k: buffers[k][0].id)
            merged.append(buffers[kind].popleft())
            if not buffers[kind] and kind not in exhausted:
                await refill(kind)
            if len(merged) >= USAGE_CHUNK:
                await loop.run_in_executor(self._decoder, count, merged)
                merged = []
        await loop.run_in_executor(self._decoder, count, merged)
        return counter.result()

    async def tool_surface(self, fold: SurfaceFold) -> SurfaceView:
        """The run's tool surface and lock check; ``fold`` keeps what earlier calls read, so each
        call reads only the tool lists recorded since (on the decoder thread)."""
        loop = asyncio.get_running_loop()
        run = await self._fetch(queries.run())
        upper = await self._fetch(queries.max_event_id())
        while True:
            chunk = await self._fetch(
                queries.events_of_kind("tools_listed", fold.after_id, upper, USAGE_CHUNK)
            )
            await loop.run_in_executor(self._decoder, fold.add, chunk)
            if len(chunk) < USAGE_CHUNK:
                break
        trials: list[TrialRecord] = await self._fetch(queries.trials())
        return await loop.run_in_executor(self._decoder, fold.view, run.config if run else {}, trials)

    async def details(self) -> Details:
        scores, unreadable = await self._fetch(queries.score_rows())
        return Details(
            scores,
            unreadable,
            await self._fetch(queries.judgments()),
            await self._fetch(queries.anchors()),
            await self._events_of_kind("operator_command"),
            await self._events_of_kind("error"),
        )

    async def _events_of_kind(self, kind: str) -> list[StoredEvent]:
        """Every event of ``kind`` up to the snapshot, in chunks (the tail brings the later ones)."""
        out: list[StoredEvent] = []
        after = 0
        while True:
            chunk = await self._fetch(queries.events_of_kind(kind, after, self._backfill_upto, 500))
            out.extend(chunk)
            if len(chunk) < 500:
                return out
            after = chunk[-1].id

    # -- live -------------------------------------------------------------------------------

    async def _tail_events(self) -> list[StoredEvent]:
        """Events committed since the last call, in id order.

        While events flow, the events query is the only read; once it comes back empty the
        tail checks ``PRAGMA data_version`` first, which costs nothing on an idle store."""
        if self._idle:
            version = await self._fetch(queries.data_version())
            if version == self._seen_version:
                return []
            self._seen_version = version
        out: list[StoredEvent] = []
        while True:
            chunk = await self._fetch(queries.events_after(self._last_id, TAIL_CHUNK))
            out.extend(chunk)
            if chunk:
                self._last_id = chunk[-1].id
            if len(chunk) < TAIL_CHUNK:
                break
        self._idle = not out
        return out

    async def poll(self) -> TailBatch:
        async with self._poll_lock:
            return await self._poll()

    async def _poll(self) -> TailBatch:
        batch = TailBatch(events=await self._tail_events())
        touched: set[int] = set()
        refresh_all = False
        for ev in batch.events:
            if ev.kind in _RUN_KINDS:
                refresh_all = True
            if ev.trial_id is not None and (ev.kind in _ROW_KINDS or ev.trial_id not in self._known):
                touched.add(ev.trial_id)
            if ev.kind == "operator_command":
                batch.anchors = await self._fetch(queries.anchors())
        if refresh_all:
            batch.run = await self._fetch(queries.run())
            batch.trials = await self._fetch(queries.trials())
            self._known = {t.id for t in batch.trials}
        else:
            ids = sorted(touched)
            for i in range(0, len(ids), 500):  # well under SQLite's limit on bound parameters
                rows: list[TrialRecord] = await self._fetch(queries.trials_by_id(ids[i : i + 500]))
                batch.trials.extend(rows)
            self._known.update(t.id for t in batch.trials)
        if not self.backfill_done:
            chunk = await self._fetch(
                queries.events_of_kind(
                    "model_response", self._backfill_after, self._backfill_upto, BACKFILL_CHUNK
                )
            )
            batch.backfill = chunk
            if chunk:
                self._backfill_after = chunk[-1].id
            if len(chunk) < BACKFILL_CHUNK:
                self.backfill_done = batch.backfill_finished = True
        batch.backfill_done = self.backfill_done
        return batch

    async def load_trial(self, trial_id: int) -> TrialLoad:
        attempt = await self._fetch(queries.trial_attempt(trial_id))
        events = await self._fetch(queries.trial_events(trial_id, attempt))
        texts: dict[str, str] = {}
        for ev in events:
            if isinstance(ev.event, AgentBrief) and (
                blob := await self._fetch(queries.blob(ev.event.system_prompt_sha256))
            ):
                texts[ev.event.system_prompt_sha256] = blob[1].decode("utf-8", errors="replace")
        scores, unreadable = await self._fetch(queries.score_rows(trial_id))
        return TrialLoad(
            await self._fetch(queries.trial(trial_id)),
            events,
            scores,
            unreadable,
            await self._fetch(queries.judgments(trial_id)),
            texts,
        )

    def _require(self) -> aiosqlite.Connection:
        if self._conn is None:
            raise RuntimeError("the run database is not open yet")
        return self._conn


__all__ = ["Details", "Snapshot", "StoreFeed", "TailBatch", "TrialLoad"]
