"""The console's only way to read the run: a read-only store connection on one worker thread.

SQLite reads and payload decoding happen off the event loop; the loop awaits results and folds
them. Startup reads rows, not events (trial rows first, for a fast first paint; then scores and
judgments), and remembers the highest event id at that moment: everything before it is already
reflected in those rows, everything after it comes from the tail. Sums that only events hold
(tool-I/O tokens) are backfilled in small chunks through the kind index, so memory never grows
with the number of stored events. A trial's events are read only when the trial is opened.

While a run is live, a tail thread polls on its own cadence and hands each batch to a callback
(the app posts it as a message), so a busy event loop never delays reading the store.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from proctor.store.events import AgentBrief
from proctor.store.reader import (
    AnchorRecord,
    EventTail,
    JudgmentRecord,
    RunRecord,
    ScoreRecord,
    StoredEvent,
    StoreReader,
    TrialRecord,
    UnreadableScoreRow,
)
from proctor.store.schema import SchemaError

if TYPE_CHECKING:
    from proctor.engine.reports.tool_usage import ArmToolUsage

T = TypeVar("T")
_ROW_KINDS = frozenset({"trial_started", "trial_finished", "score"})
_RUN_KINDS = frozenset({"run_started", "run_finished"})
BACKFILL_CHUNK = 2000


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
    """Serializes every read of one run database on a dedicated thread."""

    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="proctor-console-read")
        self._reader: StoreReader | None = None
        self._tail: EventTail | None = None
        self._known: set[int] = set()
        self._backfill_after = 0
        self._backfill_upto = 0
        self.backfill_done = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._tail_thread: threading.Thread | None = None
        self._prefetched: Future[Snapshot | None] | None = None

    async def _call(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._pool, self._locked, fn, *args)

    def _locked(self, fn: Any, *args: Any) -> Any:
        with self._lock:
            return fn(*args)

    def start_tail(
        self, on_batch: Callable[[TailBatch], None], *, interval: float = 0.01, idle_interval: float = 0.05
    ) -> None:
        """Poll on a dedicated thread from now on; ``on_batch`` is called there, so it must be thread-safe."""
        if self._tail_thread is not None:
            return

        def loop() -> None:
            quiet = 0
            while not self._stop.is_set():
                batch = self._locked(self._poll)
                if batch:
                    on_batch(batch)
                quiet = 0 if batch else quiet + 1
                self._stop.wait(interval if quiet < 20 else idle_interval)

        self._tail_thread = threading.Thread(target=loop, name="proctor-console-tail", daemon=True)
        self._tail_thread.start()

    async def close(self) -> None:
        self._stop.set()
        if self._tail_thread is not None:
            await asyncio.to_thread(self._tail_thread.join, 5.0)
        # Leaving must not wait behind queued reads: the running one finishes, the rest are dropped.
        await asyncio.to_thread(self._pool.shutdown, wait=True, cancel_futures=True)
        self._locked(self._close)

    def _close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    # -- startup ----------------------------------------------------------------------------

    def prefetch(self) -> None:
        """Start reading the snapshot now (before the UI is composed); ``snapshot`` picks it up."""
        if self._prefetched is None:
            self._prefetched = self._pool.submit(self._locked, self._snapshot)

    async def snapshot(self) -> Snapshot | None:
        """Trial rows and the starting event id; None while the database does not exist yet."""
        if self._prefetched is not None:
            future, self._prefetched = self._prefetched, None
            early: Snapshot | None = await asyncio.wrap_future(future)
            return early
        result: Snapshot | None = await self._call(self._snapshot)
        return result

    def _snapshot(self) -> Snapshot | None:
        try:
            self._reader = StoreReader(self.db_path)
        except (FileNotFoundError, SchemaError):
            return None
        start_id = self._reader.max_event_id()
        self._tail = EventTail(self._reader, after_id=start_id, batch=2000)
        self._backfill_upto = start_id
        trials = self._reader.trials()
        self._known = {t.id for t in trials}
        return Snapshot(self._reader.run(), trials, start_id)

    async def tool_usage(self) -> list[ArmToolUsage]:
        """Per arm and tool: calls, errors, latency, result size, never-called tools (streamed)."""
        result: list[ArmToolUsage] = await self._call(self._tool_usage)
        return result

    def _tool_usage(self) -> list[ArmToolUsage]:
        # Imported here: numpy is not needed for the console's first paint.
        from proctor.engine.reports.tool_usage import latency_recorded, read_tool_usage

        reader = self._require()
        run = reader.run()
        return read_tool_usage(reader, reader.trials(), latency_recorded(run.config if run else {}))

    async def details(self) -> Details:
        result: Details = await self._call(self._details)
        return result

    def _details(self) -> Details:
        reader = self._require()
        commands: list[StoredEvent] = []
        after = 0
        while True:
            chunk = reader.events_of_kind(
                "operator_command", after_id=after, up_to_id=self._backfill_upto, limit=500
            )
            commands.extend(chunk)
            if len(chunk) < 500:
                break
            after = chunk[-1].id
        return Details(*reader.score_rows(), reader.judgments(), reader.anchors(), commands)

    # -- live -------------------------------------------------------------------------------

    async def poll(self) -> TailBatch:
        result: TailBatch = await self._call(self._poll)
        return result

    def _poll(self) -> TailBatch:
        reader = self._require()
        assert self._tail is not None
        batch = TailBatch(events=self._tail.poll())
        touched: set[int] = set()
        refresh_all = False
        for ev in batch.events:
            if ev.kind in _RUN_KINDS:
                refresh_all = True
            if ev.trial_id is not None and (ev.kind in _ROW_KINDS or ev.trial_id not in self._known):
                touched.add(ev.trial_id)
            if ev.kind == "operator_command":
                batch.anchors = reader.anchors()
        if refresh_all:
            batch.run = reader.run()
            batch.trials = reader.trials()
            self._known = {t.id for t in batch.trials}
        else:
            for trial_id in sorted(touched):
                row = reader.trial(trial_id)
                if row is not None:
                    batch.trials.append(row)
                    self._known.add(trial_id)
        if not self.backfill_done:
            chunk = reader.events_of_kind(
                "model_response",
                after_id=self._backfill_after,
                up_to_id=self._backfill_upto,
                limit=BACKFILL_CHUNK,
            )
            batch.backfill = chunk
            if chunk:
                self._backfill_after = chunk[-1].id
            if len(chunk) < BACKFILL_CHUNK:
                self.backfill_done = batch.backfill_finished = True
        batch.backfill_done = self.backfill_done
        return batch

    async def load_trial(self, trial_id: int) -> TrialLoad:
        result: TrialLoad = await self._call(self._load_trial, trial_id)
        return result

    def _load_trial(self, trial_id: int) -> TrialLoad:
        reader = self._require()
        events = reader.trial_events(trial_id)
        texts: dict[str, str] = {}
        for ev in events:
            if isinstance(ev.event, AgentBrief) and (blob := reader.blob(ev.event.system_prompt_sha256)):
                texts[ev.event.system_prompt_sha256] = blob[1].decode("utf-8", errors="replace")
        return TrialLoad(
            reader.trial(trial_id), events, *reader.score_rows(trial_id), reader.judgments(trial_id), texts
        )

    def _require(self) -> StoreReader:
        if self._reader is None:
            raise RuntimeError("the run database is not open yet")
        return self._reader


__all__ = ["Details", "Snapshot", "StoreFeed", "TailBatch", "TrialLoad"]
