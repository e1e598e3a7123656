"""The job record that moves between the queue, the storage backends and the workers.

A job is plain data: the name of a registered task, its arguments, and bookkeeping about
attempts and scheduling. It is serialized to JSON-compatible dicts so any backend can store it.
"""

from __future__ import annotations

import enum
import itertools
import os
from dataclasses import dataclass, field, replace
from typing import Any

DEFAULT_QUEUE = "default"
DEFAULT_PRIORITY = 0

_counter = itertools.count(1)


class JobState(enum.StrEnum):
    """Where a job is in its life cycle."""

    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    DEAD = "dead"

    @property
    def is_final(self) -> bool:
        """True once the job will never run again."""
        return self in (JobState.SUCCEEDED, JobState.DEAD)


def new_job_id() -> str:
    """A short id unique within this process and very likely across processes."""
    return f"{os.getpid():x}-{next(_counter):06d}-{os.urandom(3).hex()}"


@dataclass(frozen=True)
class Job:
    """One unit of work: call ``task(*args, **kwargs)`` at or after ``run_at``.

    ``attempts`` counts the runs that have started; ``max_attempts`` comes from the retry
    policy when the job is enqueued, so changing the policy later does not affect it.
    """

    task: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=new_job_id)
    queue: str = DEFAULT_QUEUE
    priority: int = DEFAULT_PRIORITY
    run_at: float = 0.0
    attempts: int = 0
    max_attempts: int = 5
    state: JobState = JobState.QUEUED
    last_error: str | None = None

    def started(self) -> Job:
        """The job as it looks once a worker has picked it up."""
        return replace(self, state=JobState.RUNNING, attempts=self.attempts + 1)

    def succeeded(self) -> Job:
        return replace(self, state=JobState.SUCCEEDED, last_error=None)

    def failed(self, error: str, retry_at: float) -> Job:
        """Back to the queue, to run again at ``retry_at``."""
        return replace(self, state=JobState.QUEUED, last_error=error, run_at=retry_at)

    def dead(self, error: str) -> Job:
        """Out of attempts (or failed permanently): kept for inspection, never run again."""
        return replace(self, state=JobState.DEAD, last_error=error)

    @property
    def attempts_left(self) -> int:
        return max(0, self.max_attempts - self.attempts)


def job_to_dict(job: Job) -> dict[str, Any]:
    """A JSON-compatible dict; the inverse of :func:`job_from_dict`."""
    return {
        "id": job.id,
        "task": job.task,
        "args": list(job.args),
        "kwargs": dict(job.kwargs),
        "queue": job.queue,
        "priority": job.priority,
        "run_at": job.run_at,
        "attempts": job.attempts,
        "max_attempts": job.max_attempts,
        "state": job.state.value,
        "last_error": job.last_error,
    }


def job_from_dict(data: dict[str, Any]) -> Job:
    """Rebuild a job from :func:`job_to_dict` output; unknown keys are an error."""
    known = {
        "id",
        "task",
        "args",
        "kwargs",
        "queue",
        "priority",
        "run_at",
        "attempts",
        "max_attempts",
        "state",
        "last_error",
    }
    extra = set(data) - known
    if extra:
        raise ValueError(f"unknown job fields: {sorted(extra)}")
    return Job(
        id=str(data["id"]),
        task=str(data["task"]),
        args=tuple(data.get("args", ())),
        kwargs=dict(data.get("kwargs", {})),
        queue=str(data.get("queue", DEFAULT_QUEUE)),
        priority=int(data.get("priority", DEFAULT_PRIORITY)),
        run_at=float(data.get("run_at", 0.0)),
        attempts=int(data.get("attempts", 0)),
        max_attempts=int(data.get("max_attempts", 5)),
        state=JobState(data.get("state", JobState.QUEUED.value)),
        last_error=data.get("last_error"),
    )
