"""Full collections wait for a pause in typing, and never wait forever."""

from __future__ import annotations

import gc

from proctor.app.idle_gc import NEVER, YOUNG_THRESHOLDS, IdleCollector, restore_collector, tune_collector
from tests.app.fixture_store import Fixture
from tests.app.helpers import console, wait_until


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _collector(clock: Clock, runs: list[int], pending: int = 5) -> IdleCollector:
    return IdleCollector(
        idle_s=1.5, min_gap_s=20, max_gap_s=120, clock=clock, collect=runs.append, pending=lambda: pending
    )


def test_a_full_collection_waits_until_nobody_types() -> None:
    clock, runs = Clock(), []
    gcs = _collector(clock, runs)
    clock.now += 30
    gcs.input_seen()
    clock.now += 1.0
    assert not gcs.tick() and runs == [], "a key 1 s ago: not now"
    clock.now += 1.0
    assert gcs.tick() and runs == [2], "2 s without a key: collect everything"
    clock.now += 5
    assert not gcs.tick(), "at most one full collection every min_gap_s"


def test_constant_typing_still_gets_a_collection_after_max_gap() -> None:
    clock, runs = Clock(), []
    gcs = _collector(clock, runs)
    for _ in range(119):
        clock.now += 1
        gcs.input_seen()
        assert not gcs.tick()
    clock.now += 1
    gcs.input_seen()
    assert gcs.tick() and runs == [2]


def test_nothing_to_collect_costs_nothing() -> None:
    clock, runs = Clock(), []
    gcs = _collector(clock, runs, pending=0)
    clock.now += 500
    assert not gcs.tick() and runs == []


async def test_the_console_hands_the_collector_back_as_it_found_it(fx: Fixture) -> None:
    before = gc.get_threshold()
    async with console(fx.db) as (_app, pilot):
        await wait_until(pilot, lambda: gc.get_threshold() == (*YOUNG_THRESHOLDS, NEVER), what="tuned")
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_restore_undoes_tune() -> None:
    before = gc.get_threshold()
    previous = tune_collector()
    assert previous == before and gc.get_threshold()[2] == NEVER
    restore_collector(previous)
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
