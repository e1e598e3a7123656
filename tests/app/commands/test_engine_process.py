"""The engine in its own process: it runs the suite, serves operator commands after the last
trial, stops (flushed, resumable) when the console's task is cancelled, and reports failures."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from proctor.app.commands.engine_process import EngineExited, run_engine_process
from proctor.engine.runs.options import RunOptions
from proctor.store.lock import EngineLock
from proctor.store.operator_commands import enqueue_operator_command, list_operator_commands
from proctor.store.schema import configure, init_db
from tests.engine.runs.test_resume_scoring import _suite

pytestmark = pytest.mark.slow


def _query(db: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


async def _until(predicate: object, limit_s: float = 60) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit_s
    while not predicate():  # type: ignore[operator]
        assert loop.time() < deadline, "the engine process did not get there in time"
        await asyncio.sleep(0.1)


async def test_the_child_runs_serves_commands_and_stops_when_cancelled(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite")
    db = tmp_path / "run.db"
    init_db(db)
    engine = asyncio.create_task(run_engine_process(suite, RunOptions(db=db)))
    await _until(lambda: _query(db, "SELECT status FROM runs") == [("finished",)] or engine.done())
    assert not engine.done(), "after the last trial the child keeps serving commands"
    assert EngineLock.is_held(db), "the child holds the run"
    (first,) = _query(db, "SELECT id FROM trials ORDER BY id LIMIT 1")[0]
    enqueue_operator_command(db, "rejudge", {"trial_ids": [first], "passes": 1})
    await _until(lambda: _query(db, "SELECT status FROM commands") == [("done",)])
    engine.cancel()
    with pytest.raises(asyncio.CancelledError):
        await engine
    assert not EngineLock.is_held(db), "the child is gone and released the run"
    assert _query(db, "SELECT count(*) FROM trials WHERE status = 'finished'") == [(4,)]
    conn = sqlite3.connect(db)
    configure(conn)
    assert [c.status for c in list_operator_commands(conn)] == ["done"]
    conn.close()


async def test_a_child_that_fails_reports_why(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite")
    db = tmp_path / "run.db"
    init_db(db)
    with pytest.raises(EngineExited, match=r"exited with status 2: .*unknown arm .no-such-arm."):
        await run_engine_process(suite, RunOptions(db=db, arms=["no-such-arm"]))
