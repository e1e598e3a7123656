"""Workers: threads that claim jobs from storage, run their tasks and record the outcome.

A :class:`Worker` is one loop; a :class:`WorkerPool` runs several of them and stops them
cleanly. Failures go through the :class:`~tinyq.retry.RetryPolicy`: either the job is put
back with a delay, or it is marked dead and kept for inspection (the dead-letter list).
"""

from __future__ import annotations

import logging
import random
import threading
import traceback
from collections.abc import Callable
from dataclasses import replace

from .clock import Clock, SystemClock
from .config import DEFAULT_CONCURRENCY
from .errors import RateLimited, UnknownTask
from .job import DEFAULT_QUEUE, Job
from .ratelimit import TokenBucket
from .registry import TaskRegistry, default_registry
from .retry import RetryPolicy
from .storage.base import Storage

log = logging.getLogger("tinyq.worker")

#: Upper bound on threads in one pool, whatever the configuration asks for.
MAX_WORKERS = 64

#: Seconds an idle worker sleeps before polling storage again.
POLL_INTERVAL = 0.2

#: Seconds ``WorkerPool.shutdown`` waits for running jobs before giving up on them.
SHUTDOWN_GRACE_SECONDS = 10.0

OutcomeHook = Callable[[Job], None]


def resolve_concurrency(requested: int | None) -> int:
    """How many worker threads a pool starts.

    ``None`` means the configured default (:data:`~tinyq.config.DEFAULT_CONCURRENCY`); any
    request is clamped to ``1..MAX_WORKERS`` so a typo cannot start thousands of threads.
    """
    if requested is None:
        requested = DEFAULT_CONCURRENCY
    return max(1, min(requested, MAX_WORKERS))


def format_error(exc: BaseException) -> str:
    """The last line of the traceback, which is what a dead-letter listing shows."""
    return "".join(traceback.format_exception_only(type(exc), exc)).strip()


class Worker:
    """Claims and runs jobs from one queue until told to stop."""

    def __init__(
        self,
        storage: Storage,
        registry: TaskRegistry | None = None,
        policy: RetryPolicy | None = None,
        queue: str = DEFAULT_QUEUE,
        clock: Clock | None = None,
        limiter: TokenBucket | None = None,
        rng: random.Random | None = None,
        on_outcome: OutcomeHook | None = None,
    ) -> None:
        self.storage = storage
        self.registry = registry or default_registry
        self.policy = policy or RetryPolicy()
        self.queue = queue
        self.clock = clock or SystemClock()
        self.limiter = limiter
        self.rng = rng or random.Random()
        self.on_outcome = on_outcome
        self.processed = 0
        self._stop = threading.Event()

    def stop(self) -> None:
        """Ask the loop to exit after the job it is running, if any."""
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def run_once(self) -> Job | None:
        """Claim one due job and run it; returns the job's final record, or None if idle."""
        job = self.storage.claim_next(self.queue, self.clock.now())
        if job is None:
            return None
        if self.limiter is not None:
            try:
                self.limiter.acquire(timeout=POLL_INTERVAL)
            except RateLimited as exc:
                # Not the task's fault: put it back without spending an attempt.
                retry = replace(job, attempts=job.attempts - 1)
                outcome = retry.failed("rate limited", self.clock.now() + exc.retry_after)
                self.storage.put(outcome)
                return outcome
        try:
            fn = self.registry.resolve(job.task)
            fn(*job.args, **job.kwargs)
        except UnknownTask as exc:
            outcome = job.dead(format_error(exc))
        except Exception as exc:
            outcome = self._handle_failure(job, exc)
        else:
            outcome = job.succeeded()
        self.storage.put(outcome)
        self.processed += 1
        if self.on_outcome is not None:
            self.on_outcome(outcome)
        return outcome

    def _handle_failure(self, job: Job, exc: Exception) -> Job:
        """Decide between retrying later and dead-lettering a job whose task raised."""
        error = format_error(exc)
        if self.policy.should_retry(job.attempts, exc):
            delay = self.policy.next_delay(job.attempts, self.rng)
            log.warning(
                "job %s failed (attempt %d), retrying in %.2fs: %s", job.id, job.attempts, delay, error
            )
            return job.failed(error, self.clock.now() + delay)
        log.error("job %s is dead after %d attempts: %s", job.id, job.attempts, error)
        return job.dead(error)

    def run(self) -> None:
        """Loop until :meth:`stop` is called, sleeping ``POLL_INTERVAL`` when idle."""
        while not self._stop.is_set():
            if self.run_once() is None:
                self._stop.wait(POLL_INTERVAL)


class WorkerPool:
    """Runs ``concurrency`` workers on threads and shuts them down gracefully."""

    def __init__(
        self,
        storage: Storage,
        concurrency: int | None = None,
        registry: TaskRegistry | None = None,
        policy: RetryPolicy | None = None,
        queue: str = DEFAULT_QUEUE,
        limiter: TokenBucket | None = None,
    ) -> None:
        self.size = resolve_concurrency(concurrency)
        self.workers = [
            Worker(storage, registry, policy, queue, limiter=limiter, rng=random.Random(i))
            for i in range(self.size)
        ]
        self._threads: list[threading.Thread] = []

    @property
    def running(self) -> bool:
        return any(t.is_alive() for t in self._threads)

    def start(self) -> None:
        """Start one daemon thread per worker; starting twice is an error."""
        if self._threads:
            raise RuntimeError("pool already started")
        for n, worker in enumerate(self.workers):
            t = threading.Thread(target=worker.run, name=f"tinyq-worker-{n}", daemon=True)
            t.start()
            self._threads.append(t)

    def shutdown(self, grace: float = SHUTDOWN_GRACE_SECONDS) -> int:
        """Stop all workers, waiting up to ``grace`` seconds in total for running jobs.

        Workers finish the job in hand and then exit. Returns how many threads were still
        alive when the grace period ran out (their jobs stay "running" in storage and must be
        recovered by an operator).
        """
        for worker in self.workers:
            worker.stop()
        clock = SystemClock()
        deadline = clock.now() + grace
        for t in self._threads:
            t.join(max(0.0, deadline - clock.now()))
        stuck = sum(1 for t in self._threads if t.is_alive())
        if stuck:
            log.error("%d worker(s) did not stop within %.1fs", stuck, grace)
        return stuck

    def processed(self) -> int:
        return sum(w.processed for w in self.workers)
