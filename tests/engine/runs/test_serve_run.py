"""``proctor watch`` on a run no engine holds serves the console's commands itself."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from proctor.engine.replay.replayer import ReplayOptions, replay_run
from proctor.engine.runs.session import serve_run
from proctor.store.events import OperatorCommand
from proctor.store.lock import EngineLock
from proctor.store.operator_commands import enqueue_operator_command
from proctor.store.read.reader import StoreReader
from tests.engine.judging_fixture import RUN_ID, build_run
from tests.engine.replay.test_replayer import _suite, _write_recording


def _outcomes(db: Path) -> list[tuple[str, str]]:
    return [(command, status) for command, status, _ in _messages(db)]


def _messages(db: Path) -> list[tuple[str, str, str]]:
    with StoreReader(db) as r:
        return [
            (e.event.command, e.event.status, e.event.message)
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
    enqueue_operator_command(fixture.db, "rejudge", {"trial_ids": [1], "passes": 1}, RUN_ID)
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


async def test_the_console_re_judge_of_a_replay_run_fails_and_points_to_the_recording(tmp_path: Path) -> None:
    data = tmp_path / "data.json"
    data.write_text('{"a": "1"}')
    recording, new = tmp_path / "rec.db", tmp_path / "new.db"
    await _write_recording(recording, _suite(tmp_path / "suite", data))
    assert (await replay_run(ReplayOptions(recording, new))).status == "finished"
    server = asyncio.create_task(serve_run(new))
    try:
        enqueue_operator_command(new, "rejudge", {"trial_ids": [1], "passes": 1})
        await _until(lambda: ("rejudge", "failed") in _outcomes(new))
    finally:
        server.cancel()
        await asyncio.gather(server, return_exceptions=True)
    failed = [m for c, s, m in _messages(new) if (c, s) == ("rejudge", "failed")]
    assert f"is a replay of run rec in {recording}" in failed[0]
    with StoreReader(new) as r:
        assert r.events_of_kind("judgment") == []
