"""Full garbage collections while nobody is typing.

CPython 3.11's collector stops the world. Young collections are short when the young
generations are small, but a full collection scans every object created since startup, and
the console keeps many (transcripts, layouts, Textual's caches, which hold reference cycles):
measured in a real terminal, full collections took 80-190 ms, the largest stalls left under
load. So the console collects the young generations often (each a few milliseconds), never
the oldest on its own, and makes full collections here: when no key has been pressed for
``idle_s``, at most once every ``min_gap_s``, and after ``max_gap_s`` regardless, so a
console tailing a run for hours still frees its cyclic garbage.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

YOUNG_THRESHOLDS = (3000, 10)
NEVER = 1 << 30  # the oldest generation's threshold: full collections are ours alone


def tune_collector() -> tuple[int, int, int]:
    """Freeze what startup built (it lives as long as the console) and hand full collections
    to ``IdleCollector``; returns the thresholds to give back with ``restore_collector``."""
    previous = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*YOUNG_THRESHOLDS, NEVER)
    return previous


def restore_collector(thresholds: tuple[int, int, int]) -> None:
    """The collector as it was (a console run inside another program, tests, must not leave
    it without full collections)."""
    gc.set_threshold(*thresholds)
    gc.unfreeze()


class IdleCollector:
    def __init__(
        self,
        *,
        idle_s: float = 1.5,
        min_gap_s: float = 20.0,
        max_gap_s: float = 120.0,
        clock: Callable[[], float] = time.monotonic,
        collect: Callable[[int], object] = gc.collect,
        pending: Callable[[], int] = lambda: gc.get_count()[2],
    ) -> None:
        self.idle_s, self.min_gap_s, self.max_gap_s = idle_s, min_gap_s, max_gap_s
        self._clock, self._collect, self._pending = clock, collect, pending
        now = clock()
        self._last_input = now
        self._last_full = now

    def input_seen(self) -> None:
        self._last_input = self._clock()

    def tick(self) -> bool:
        """Collect everything if it is time; returns whether it did."""
        now = self._clock()
        since_full = now - self._last_full
        if self._pending() == 0 or since_full < self.min_gap_s:
            return False
        if now - self._last_input < self.idle_s and since_full < self.max_gap_s:
            return False
        self._collect(2)
        self._last_full = self._clock()
        return True


__all__ = ["NEVER", "YOUNG_THRESHOLDS", "IdleCollector", "restore_collector", "tune_collector"]
