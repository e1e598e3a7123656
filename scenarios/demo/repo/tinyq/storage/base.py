"""The interface every storage backend implements."""

from __future__ import annotations

from typing import Protocol

from ..job import Job, JobState


class Storage(Protocol):
    """Persistent home of jobs.

    ``claim_next`` is the one operation that must be atomic: two workers calling it at the
    same time must never receive the same job.
    """

    def put(self, job: Job) -> None:
        """Insert a new job or overwrite an existing one with the same id."""
        ...

    def get(self, job_id: str) -> Job:
        """The job with ``job_id``; raises :class:`~tinyq.errors.JobNotFound`."""
        ...

    def claim_next(self, queue: str, now: float) -> Job | None:
        """Atomically take the best due job of ``queue`` and mark it running.

        "Best" is the highest priority, then the earliest ``run_at``, then insertion order.
        Returns None when nothing is due.
        """
        ...

    def counts(self, queue: str | None = None) -> dict[JobState, int]:
        """Number of jobs in each state, for one queue or all of them."""
        ...

    def dead_letters(self, queue: str | None = None) -> list[Job]:
        """Jobs that ran out of attempts or failed permanently, oldest first."""
        ...

    def purge(self, states: set[JobState]) -> int:
        """Delete every job in one of ``states``; returns how many were deleted."""
        ...

    def close(self) -> None:
        """Release connections and files; the backend is unusable afterwards."""
        ...
