"""Time sources.

The scheduler, the rate limiters and the workers never read the time directly: they take a
:class:`Clock`, so tests can move time forward without sleeping. Due times are stored in the
backends, so every process sharing a backend must agree on the epoch: the system clock is
wall-clock time, not :func:`time.monotonic`.
"""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    """Something that tells the time and can wait."""

    def now(self) -> float:
        """Seconds since an epoch shared by every process using the same storage."""
        ...

    def sleep(self, seconds: float) -> None:
        """Block for ``seconds`` (or pretend to)."""
        ...


class SystemClock:
    """Wall-clock time (seconds since the Unix epoch)."""

    def now(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


class ManualClock:
    """A clock that only moves when told to; ``sleep`` advances it instantly."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self._now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.advance(seconds)

    def advance(self, seconds: float) -> None:
        """Move time forward; moving backwards would break the scheduler's ordering."""
        if seconds < 0:
            raise ValueError("a manual clock only moves forward")
        self._now += seconds
