"""Retry policies: whether a failed job runs again, and how long it waits first.

The wait grows exponentially with the attempt number and is capped, so a job that keeps
failing settles into retrying every few minutes instead of hammering a broken dependency.
Jitter spreads retries of many jobs that failed together (say, during an outage) so they
do not all come back at the same instant.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from .errors import PermanentJobError

#: Delay before the first retry, in seconds.
DEFAULT_BASE_DELAY = 0.5

#: Each further retry waits this many times longer than the previous one.
DEFAULT_MULTIPLIER = 2.0

#: No retry ever waits longer than this, in seconds (five minutes), jitter included.
MAX_RETRY_DELAY = 300.0

#: Runs (the first one included) before a job is declared dead.
DEFAULT_MAX_ATTEMPTS = 5

#: Fraction of the delay that jitter may add or remove.
DEFAULT_JITTER = 0.1


def compute_backoff_jitter(delay: float, rng: random.Random, spread: float = DEFAULT_JITTER) -> float:
    """Randomize ``delay`` by up to ``spread`` of its value in either direction.

    This only perturbs a delay that :func:`compute_backoff` already computed; it never
    decides how long the base wait is. The result is never negative.
    """
    if not 0.0 <= spread <= 1.0:
        raise ValueError(f"jitter spread must be within [0, 1], got {spread}")
    if delay <= 0.0 or spread == 0.0:
        return max(0.0, delay)
    offset = rng.uniform(-spread, spread) * delay
    return max(0.0, delay + offset)


def full_jitter(delay: float, rng: random.Random) -> float:
    """The "full jitter" scheme: a uniform wait between zero and ``delay``.

    Not used by :class:`RetryPolicy` by default; offered for callers that prefer to spread
    load as widely as possible at the cost of sometimes retrying almost immediately.
    """
    return rng.uniform(0.0, max(0.0, delay))


def decorrelated_jitter(previous: float, rng: random.Random, base: float = DEFAULT_BASE_DELAY) -> float:
    """The "decorrelated jitter" scheme: a uniform wait between ``base`` and three times the
    previous wait, capped at :data:`MAX_RETRY_DELAY`.

    Each wait depends on the last one rather than on the attempt number, which suits callers
    that retry in a loop without counting attempts.
    """
    upper = max(base, previous * 3.0)
    return min(MAX_RETRY_DELAY, rng.uniform(base, upper))


def compute_backoff(
    attempt: int,
    base: float = DEFAULT_BASE_DELAY,
    multiplier: float = DEFAULT_MULTIPLIER,
    cap: float = MAX_RETRY_DELAY,
) -> float:
    """How long to wait, in seconds, before retry number ``attempt`` (1 for the first retry).

    The delay is ``base * multiplier ** (attempt - 1)``, capped at ``cap``, which defaults to
    :data:`MAX_RETRY_DELAY`. With the defaults: 0.5 s, 1 s, 2 s, 4 s, ... up to 300 s.
    """
    if attempt < 1:
        raise ValueError(f"attempt numbers start at 1, got {attempt}")
    if base < 0 or multiplier < 1:
        raise ValueError("base must be >= 0 and multiplier >= 1")
    # Multiply step by step and stop at the cap, so a large attempt number cannot overflow.
    delay = base
    for _ in range(attempt - 1):
        delay *= multiplier
        if delay >= cap:
            return cap
    return min(delay, cap)


@dataclass(frozen=True)
class RetryPolicy:
    """How a worker treats a job whose task raised.

    ``retry_on`` lists the exception types worth retrying; anything else (and
    :class:`~tinyq.errors.PermanentJobError` always) sends the job straight to dead.
    """

    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    base_delay: float = DEFAULT_BASE_DELAY
    multiplier: float = DEFAULT_MULTIPLIER
    max_delay: float = MAX_RETRY_DELAY
    jitter: float = DEFAULT_JITTER
    retry_on: tuple[type[BaseException], ...] = (Exception,)

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if self.max_delay > MAX_RETRY_DELAY:
            raise ValueError(f"max_delay cannot exceed MAX_RETRY_DELAY ({MAX_RETRY_DELAY} s)")

    def should_retry(self, attempts_made: int, error: BaseException) -> bool:
        """True if a job that has run ``attempts_made`` times and raised ``error`` runs again."""
        if isinstance(error, PermanentJobError):
            return False
        if attempts_made >= self.max_attempts:
            return False
        return isinstance(error, self.retry_on)

    def next_delay(self, attempts_made: int, rng: random.Random | None = None) -> float:
        """Seconds to wait before the next run, jitter included, never above ``max_delay``."""
        delay = compute_backoff(attempts_made, self.base_delay, self.multiplier, self.max_delay)
        if rng is None or self.jitter == 0.0:
            return delay
        return min(compute_backoff_jitter(delay, rng, self.jitter), self.max_delay)

    def schedule(self, attempts_made: int) -> list[float]:
        """The whole sequence of delays a job would see if it failed every time (no jitter)."""
        return [
            compute_backoff(n, self.base_delay, self.multiplier, self.max_delay)
            for n in range(attempts_made, self.max_attempts)
        ]


NO_RETRY = RetryPolicy(max_attempts=1)
"""A policy that never retries: the first failure is final."""
