"""The in-process scheduler: which queued job runs next.

Jobs wait in a heap ordered by the time they become due. Among jobs due at the same moment,
the higher ``priority`` runs first, and among equal priorities the one enqueued first runs
first (FIFO), which keeps the order deterministic and starvation-free.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from .clock import Clock, SystemClock
from .errors import JobNotFound
from .job import Job


@dataclass(order=True)
class _Entry:
    """A heap entry; ``sort_key`` is the only field that takes part in comparisons."""

    sort_key: tuple[float, int, int]
    job: Job = field(compare=False)
    removed: bool = field(default=False, compare=False)


def sort_key(job: Job, sequence: int) -> tuple[float, int, int]:
    """Heap order: due time, then higher priority first, then enqueue order."""
    return (job.run_at, -job.priority, sequence)


class Scheduler:
    """A priority queue of jobs keyed by due time.

    Cancelling or rescheduling a job marks its heap entry as removed instead of rebuilding
    the heap; removed entries are skipped when popped (lazy deletion).
    """

    def __init__(self, clock: Clock | None = None) -> None:
        self._clock = clock or SystemClock()
        self._heap: list[_Entry] = []
        self._entries: dict[str, _Entry] = {}
        self._sequence = itertools.count()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, job_id: object) -> bool:
        return job_id in self._entries

    def schedule(self, job: Job, delay: float = 0.0) -> Job:
        """Add ``job``, due ``delay`` seconds from now (or at its own ``run_at`` if later)."""
        if job.id in self._entries:
            raise ValueError(f"job {job.id!r} is already scheduled")
        due = max(job.run_at, self._clock.now() + max(0.0, delay))
        if due != job.run_at:
            job = replace(job, run_at=due)
        entry = _Entry(sort_key(job, next(self._sequence)), job)
        self._entries[job.id] = entry
        heapq.heappush(self._heap, entry)
        return job

    def cancel(self, job_id: str) -> Job:
        """Remove a job that has not started; returns it."""
        entry = self._entries.pop(job_id, None)
        if entry is None:
            raise JobNotFound(job_id)
        entry.removed = True
        return entry.job

    def reschedule(self, job_id: str, run_at: float) -> Job:
        """Move a scheduled job to a new due time, keeping its priority.

        The job goes to the back of the line among jobs due at the same moment, as if it had
        just been enqueued.
        """
        job = self.cancel(job_id)
        moved = replace(job, run_at=run_at)
        return self.schedule(moved)

    def next_due_in(self) -> float | None:
        """Seconds until the earliest job is due (0 if one is due now), or None if empty."""
        self._drop_removed()
        if not self._heap:
            return None
        return max(0.0, self._heap[0].job.run_at - self._clock.now())

    def pop_due(self) -> Job | None:
        """Remove and return the next job that is due now, or None if none is due yet."""
        self._drop_removed()
        if not self._heap or self._heap[0].job.run_at > self._clock.now():
            return None
        entry = heapq.heappop(self._heap)
        del self._entries[entry.job.id]
        return entry.job

    def drain_due(self, limit: int | None = None) -> list[Job]:
        """Pop every job that is due now, in run order, at most ``limit`` of them."""
        out: list[Job] = []
        while limit is None or len(out) < limit:
            job = self.pop_due()
            if job is None:
                break
            out.append(job)
        return out

    def pending(self) -> Iterator[Job]:
        """Scheduled jobs in run order, without removing them."""
        live = sorted(e for e in self._heap if not e.removed)
        return (e.job for e in live)

    def _drop_removed(self) -> None:
        while self._heap and self._heap[0].removed:
            heapq.heappop(self._heap)
