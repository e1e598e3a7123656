"""tinyq: a small job queue with retries, rate limiting and pluggable storage.

Typical use::

    from tinyq import MemoryStorage, WorkerPool, enqueue, task

    @task("greet")
    def greet(name: str) -> None:
        print(f"hello {name}")

    storage = MemoryStorage()
    enqueue(storage, "greet", "world")
    WorkerPool(storage, concurrency=2).start()
"""

from __future__ import annotations

from typing import Any

from .clock import ManualClock, SystemClock
from .config import Config, load_config
from .errors import PermanentJobError, TinyQError
from .job import DEFAULT_QUEUE, Job, JobState
from .ratelimit import SlidingWindowLimiter, TokenBucket
from .registry import task
from .retry import MAX_RETRY_DELAY, RetryPolicy, compute_backoff
from .scheduler import Scheduler
from .storage import MemoryStorage, SqliteStorage, Storage
from .worker import Worker, WorkerPool

__version__ = "0.4.1"

__all__ = [
    "MAX_RETRY_DELAY",
    "Config",
    "Job",
    "JobState",
    "ManualClock",
    "MemoryStorage",
    "PermanentJobError",
    "RetryPolicy",
    "Scheduler",
    "SlidingWindowLimiter",
    "SqliteStorage",
    "Storage",
    "SystemClock",
    "TinyQError",
    "TokenBucket",
    "Worker",
    "WorkerPool",
    "compute_backoff",
    "enqueue",
    "load_config",
    "task",
]


def enqueue(
    storage: Storage,
    task_name: str,
    *args: Any,
    delay: float = 0.0,
    priority: int = 0,
    queue: str = DEFAULT_QUEUE,
    policy: RetryPolicy | None = None,
    **kwargs: Any,
) -> Job:
    """Store a job that runs ``task_name(*args, **kwargs)`` ``delay`` seconds from now."""
    job = Job(
        task=task_name,
        args=args,
        kwargs=kwargs,
        queue=queue,
        priority=priority,
        run_at=SystemClock().now() + delay,
        max_attempts=(policy or RetryPolicy()).max_attempts,
    )
    storage.put(job)
    return job
