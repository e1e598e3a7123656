"""``proctor watch`` on a run no engine holds serves the console's commands itself."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from proctor.engine.runs.session import serve_run
from proctor.store.events import OperatorCommand
from proctor.store.lock import EngineLock
from proctor.store.operator_commands import enqueue_command
from proctor.store.read.reader import StoreReader
from tests.engine.judging_fixture import RUN_ID, build_run


def _outcomes(db: Path) -> list[tuple[str, str]]:
    with StoreReader(db) as r:
        return [
            (e.event.command, e.event.status)
            for e in r.events_of_kind("operator_command")
            if isinstance(e.event, OperatorCommand)
        ]


async def _until(predicate: Callable[[], bool]) -> None:
    """Poll the store (another task writes it) for up to 30 s."""
    for _ in range(600):
        if predicate():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("timed out")


async def test_a_finished_run_is_served_and_a_held_run_is_left_to_its_engine(tmp_path: Path) -> None:
    fixture = await build_run(tmp_path)
    with StoreReader(fixture.db) as r:
        before = len(r.judgments(1))
    server = asyncio.create_task(serve_run(fixture.db))
    enqueue_command(fixture.db, "rejudge", {"trial_ids": [1], "passes": 1}, RUN_ID)
    await _until(lambda: ("rejudge", "done") in _outcomes(fixture.db))
    with StoreReader(fixture.db) as r:
        assert len(r.judgments(1)) == before + 1
    assert EngineLock.try_acquire(fixture.db) is None, "the serving process holds the run"
    server.cancel()
    await asyncio.gather(server, return_exceptions=True)

    held = EngineLock.try_acquire(fixture.db)
    assert held is not None
    try:
        await asyncio.wait_for(serve_run(fixture.db), 10)  # returns at once: someone else serves
    finally:
        held.release()
