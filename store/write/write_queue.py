"""What the event stream has queued for the store's writer thread, and when that thread takes it.

The emitting thread (the event loop) adds events without waiting; the writer thread takes
everything queued in one go once ``batch_size`` events wait, the flush interval has passed since
the first of them, someone awaits a flush, or the writer closes. When it falls behind, the next
batch is simply larger (nothing is dropped).

The emitting thread also checks, every ~64 KB of queued payloads, that they need no redaction
(one RE2 pass over them joined); the writer thread, the slower side in a burst, then redacts
only the rest. The pass costs the loop about a microsecond per event, and it lets go of the GIL
long enough for the writer thread to take it back after a SQLite statement: while the loop
emits without a pause, it otherwise lets go of the GIL only for instants (to poll its
selector), and the writer thread can wait for it until the burst ends.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from proctor.store.event_facts import FACT_KINDS
from proctor.store.records import JudgmentMeta
from proctor.store.write.batch_payloads import Derived, Facts, need_no_redaction
from proctor.store.write.derived_rows import Op

Blob = tuple[str, str, int, bytes]
# Payloads checked together on the emitting thread (about a millisecond of emitting). A larger
# payload is left to the writer thread, with the rest of its batch: the loop scans no megabytes.
CHECK_GROUP_BYTES = 64 * 1024
CHECK_PAYLOAD_MAX_BYTES = 1024 * 1024
_monotonic = time.monotonic


@dataclass(frozen=True, slots=True)
class Batch:
    """Everything queued when the writer thread took it, committed in one transaction."""

    flat: list[Any]
    """The events table's columns, seven values a row (no tuple per row)."""
    rows: int
    derived: list[Derived]
    facts: Facts
    """(row, stored fact or None) of each event of a kind that has facts."""
    blobs: list[Blob]
    checked: int
    """How many leading rows were found to need no redaction when they were queued."""
    upto: int
    """Items (events and blobs) queued so far, this batch's included."""


class WriteQueue:
    """Shared by the emitting thread and the writer thread; every field is guarded by one lock."""

    def __init__(self, batch_size: int, flush_interval_s: float) -> None:
        self._batch_size = batch_size
        self._interval = flush_interval_s
        # ``add_event`` takes ``_lock`` itself (the condition's lock): the same guard, without
        # the condition's Python-level ``__enter__``/``__exit__`` on every event.
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._flat: list[Any] = []
        self._rows = 0
        self._derived: list[Derived] = []
        self._facts: Facts = []
        self._blobs: list[Blob] = []
        self._checked = 0  # leading rows found to need no redaction
        self._unchecked_bytes = 0
        self._checking = True  # False once a check found something: the writer redacts the rest
        self._first_at = 0.0  # monotonic time the oldest queued item arrived
        self._queued = 0  # items (events and blobs) ever queued
        self._committed = 0  # of those, how many are committed (or lost to a failure)
        self._taking = False  # a take is due: a drain job is queued or waiting for company
        self._urgent = False  # someone awaits a flush: take without waiting for company
        self._closed = False
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []

    # -- the emitting thread ----------------------------------------------------------------

    def add_event(
        self,
        run_id: str,
        trial_id: int | None,
        attempt: int,
        ts: float,
        kind: str,
        payload: bytes,
        cls: type[BaseModel],
        judgment: JudgmentMeta | None,
        ops: tuple[Op, ...] | None,
        fact: bytes | None = None,
    ) -> bool:
        """Queue one event (its payload serialized, not yet redacted; ``ops`` its derived rows,
        ``fact`` its stored fact if its kind has one); True when the caller must start a drain job."""
        with self._lock:
            row = self._rows
            self._flat += (run_id, trial_id, attempt, ts, kind, "json", payload)
            if ops is not None:
                self._derived.append((row, cls, judgment, ops))
            if kind in FACT_KINDS:
                self._facts.append((row, fact))
            self._rows = row = row + 1
            self._queued += 1
            start = not self._taking
            if start:
                self._taking = True
                self._first_at = _monotonic()
            elif row == self._batch_size:  # the drain job waits for company no longer than this
                self._cond.notify()
            check = False
            if self._checking:
                if len(payload) > CHECK_PAYLOAD_MAX_BYTES:
                    self._checking = False
                else:
                    self._unchecked_bytes += len(payload)
                    check = self._unchecked_bytes >= CHECK_GROUP_BYTES
        if check:
            self._check_queued()
        return start

    def add_blob(self, blob: Blob) -> bool:
        """Queue a blob for the next batch; True when the caller must start a drain job."""
        with self._lock:
            self._blobs.append(blob)
            self._queued += 1
            start = not self._taking
            if start:
                self._taking = True
                self._first_at = _monotonic()
        return start

    def _check_queued(self) -> None:
        """Check the payloads queued since the last check need no redaction, outside the lock."""
        with self._lock:
            flat, start, end = self._flat, self._checked, self._rows
            self._unchecked_bytes = 0
        clean = need_no_redaction(flat[7 * start + 6 : 7 * end : 7])
        with self._lock:
            if self._flat is not flat:
                return  # the writer thread took them meanwhile, and redacts them itself
            if clean:
                self._checked = max(self._checked, end)
            else:
                self._checking = False

    def wait_for_commit(self, done: asyncio.Future[None]) -> bool:
        """Have ``done`` resolved once everything queued so far is committed, hurrying the writer
        thread; False (and ``done`` left alone) if it already is."""
        with self._cond:
            target = self._queued
            if self._committed >= target:
                return False
            self._waiters.append((target, done))
            self._urgent = True
            self._cond.notify()
        return True

    def close(self) -> None:
        """Take what is queued without waiting for company from now on."""
        with self._cond:
            self._closed = True
            self._cond.notify()

    # -- the writer thread --------------------------------------------------------------------

    def take(self) -> Batch:
        """Wait for company (bounded by the flush interval), then take everything queued."""
        with self._cond:
            deadline = self._first_at + self._interval
            while not (self._urgent or self._closed or self._rows >= self._batch_size):
                remaining = deadline - _monotonic()
                if remaining <= 0:
                    break
                self._cond.wait(remaining)
            batch = Batch(
                self._flat, self._rows, self._derived, self._facts, self._blobs, self._checked, self._queued
            )
            self._flat, self._rows, self._derived, self._facts, self._blobs = [], 0, [], [], []
            self._checked = self._unchecked_bytes = 0
            self._checking = True
            self._taking = self._urgent = False
        return batch

    def committed(self, batch: Batch) -> bool:
        """``batch`` is committed (or lost to a failure); True if a flush waits to hear of it."""
        with self._cond:
            self._committed = batch.upto
            return bool(self._waiters)

    def ready_waiters(self) -> list[asyncio.Future[None]]:
        """The flushes whose events are all committed now, no longer waiting."""
        with self._cond:
            committed = self._committed
            ready = [f for target, f in self._waiters if target <= committed]
            self._waiters = [(target, f) for target, f in self._waiters if target > committed]
        return ready


__all__ = ["CHECK_GROUP_BYTES", "Batch", "Blob", "WriteQueue"]
