"""Rate limiters that keep workers from overwhelming the services their tasks call.

Two strategies: a token bucket (smooth rate with bursts up to a capacity) and a sliding
window (hard cap on calls in any window of ``period`` seconds). Both take a :class:`Clock`
so they can be tested without sleeping.
"""

from __future__ import annotations

import collections
import threading

from .clock import Clock, SystemClock
from .errors import RateLimited

#: Tokens a bucket holds when the configuration does not say.
DEFAULT_BUCKET_CAPACITY = 10

#: Tokens added per second when the configuration does not say.
DEFAULT_REFILL_RATE = 5.0


class TokenBucket:
    """A bucket of ``capacity`` tokens that refills continuously at ``rate`` tokens/second.

    Each call consumes tokens; a full bucket allows a burst of ``capacity`` calls, after
    which calls are admitted at ``rate`` per second. Thread-safe.
    """

    def __init__(
        self,
        capacity: int = DEFAULT_BUCKET_CAPACITY,
        rate: float = DEFAULT_REFILL_RATE,
        clock: Clock | None = None,
    ) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        if rate <= 0:
            raise ValueError("rate must be positive")
        self.capacity = capacity
        self.rate = rate
        self._clock = clock or SystemClock()
        self._tokens = float(capacity)
        self._updated = self._clock.now()
        self._lock = threading.Lock()

    @property
    def tokens(self) -> float:
        """Tokens available right now (after refilling)."""
        with self._lock:
            self._refill()
            return self._tokens

    def _refill(self) -> None:
        """Add the tokens earned since the last update, never beyond ``capacity``."""
        now = self._clock.now()
        elapsed = now - self._updated
        if elapsed > 0:
            self._tokens = min(float(self.capacity), self._tokens + elapsed * self.rate)
            self._updated = now

    def try_acquire(self, tokens: int = 1) -> float:
        """Take ``tokens`` if available and return 0, else return the seconds to wait.

        Asking for more tokens than the bucket can ever hold is a programming error and
        raises :class:`ValueError` at once instead of waiting forever.
        """
        if tokens > self.capacity:
            raise ValueError(f"cannot acquire {tokens} tokens from a bucket of capacity {self.capacity}")
        with self._lock:
            self._refill()
            if self._tokens >= tokens:
                self._tokens -= tokens
                return 0.0
            return (tokens - self._tokens) / self.rate

    def acquire(self, tokens: int = 1, timeout: float | None = None) -> None:
        """Block until ``tokens`` are taken; raise :class:`RateLimited` if that would exceed ``timeout``."""
        waited = 0.0
        while True:
            wait = self.try_acquire(tokens)
            if wait == 0.0:
                return
            if timeout is not None and waited + wait > timeout:
                raise RateLimited(wait)
            self._clock.sleep(wait)
            waited += wait


class SlidingWindowLimiter:
    """At most ``limit`` calls in any window of ``period`` seconds.

    Stricter than a token bucket (no bursts beyond ``limit``), at the cost of remembering
    the time of every call in the current window.
    """

    def __init__(self, limit: int, period: float, clock: Clock | None = None) -> None:
        if limit < 1 or period <= 0:
            raise ValueError("limit must be >= 1 and period > 0")
        self.limit = limit
        self.period = period
        self._clock = clock or SystemClock()
        self._calls: collections.deque[float] = collections.deque()
        self._lock = threading.Lock()

    def _evict(self, now: float) -> None:
        while self._calls and self._calls[0] <= now - self.period:
            self._calls.popleft()

    def check(self) -> None:
        """Record a call, or raise :class:`RateLimited` with the time until a slot frees up."""
        with self._lock:
            now = self._clock.now()
            self._evict(now)
            if len(self._calls) >= self.limit:
                raise RateLimited(self._calls[0] + self.period - now)
            self._calls.append(now)

    def remaining(self) -> int:
        """Calls still allowed in the current window."""
        with self._lock:
            self._evict(self._clock.now())
            return self.limit - len(self._calls)
