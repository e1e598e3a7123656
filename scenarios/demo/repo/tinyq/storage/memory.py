"""An in-memory backend: fast, shared between threads of one process, lost on exit."""

from __future__ import annotations

import threading
from dataclasses import replace

from ..errors import JobNotFound
from ..job import Job, JobState


class MemoryStorage:
    """Jobs in a dict guarded by a lock.

    Insertion order is kept by a sequence number so ``claim_next`` breaks ties the same way
    the SQLite backend does.
    """

    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}
        self._order: dict[str, int] = {}
        self._next = 0
        self._lock = threading.Lock()

    def put(self, job: Job) -> None:
        with self._lock:
            if job.id not in self._order:
                self._order[job.id] = self._next
                self._next += 1
            self._jobs[job.id] = job

    def get(self, job_id: str) -> Job:
        with self._lock:
            try:
                return self._jobs[job_id]
            except KeyError:
                raise JobNotFound(job_id) from None

    def claim_next(self, queue: str, now: float) -> Job | None:
        with self._lock:
            due = [
                j
                for j in self._jobs.values()
                if j.queue == queue and j.state is JobState.QUEUED and j.run_at <= now
            ]
            if not due:
                return None
            best = min(due, key=lambda j: (-j.priority, j.run_at, self._order[j.id]))
            claimed = best.started()
            self._jobs[claimed.id] = claimed
            return claimed

    def counts(self, queue: str | None = None) -> dict[JobState, int]:
        with self._lock:
            out = dict.fromkeys(JobState, 0)
            for j in self._jobs.values():
                if queue is None or j.queue == queue:
                    out[j.state] += 1
            return out

    def dead_letters(self, queue: str | None = None) -> list[Job]:
        with self._lock:
            dead = [
                j
                for j in self._jobs.values()
                if j.state is JobState.DEAD and (queue is None or j.queue == queue)
            ]
            return sorted(dead, key=lambda j: self._order[j.id])

    def requeue_dead(self, job_id: str) -> Job:
        """Give a dead job a fresh set of attempts (after fixing whatever killed it)."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None or job.state is not JobState.DEAD:
                raise JobNotFound(job_id)
            revived = replace(job, state=JobState.QUEUED, attempts=0, last_error=None)
            self._jobs[job_id] = revived
            return revived

    def purge(self, states: set[JobState]) -> int:
        with self._lock:
            doomed = [i for i, j in self._jobs.items() if j.state in states]
            for i in doomed:
                del self._jobs[i]
                del self._order[i]
            return len(doomed)

    def close(self) -> None:
        with self._lock:
            self._jobs.clear()
            self._order.clear()
