"""The engine's consumer of operator commands, against a real run database."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from proctor.engine.judges.offline import OfflineJudge
from proctor.engine.providers.prices import PriceTable
from proctor.engine.runs.operator_commands import (
    consume_operator_commands,
    execute_with_operator_commands,
    poll_operator_commands,
)
from proctor.engine.runs.options import RunOptions
from proctor.engine.runs.runner import Run
from proctor.engine.runs.trial_scoring import scoring_hook
from proctor.engine.runs.trial_seam import TrialContext
from proctor.engine.tools.mcp_toolbox import ServerPool
from proctor.scenarios.workspace import Workspace
from proctor.store.events import OperatorCommand, RunFinished
from proctor.store.operator_commands import enqueue_operator_command, list_operator_commands
from proctor.store.read.reader import StoreReader, TrialRecord
from proctor.store.schema import configure
from proctor.store.write.writer import StoreWriter
from tests.engine.judging_fixture import RUN_ID, Fixture, build_run


@pytest.fixture
async def fixture(tmp_path: Path) -> Fixture:
    return await build_run(tmp_path)


@pytest.fixture
async def run(fixture: Fixture, tmp_path: Path) -> AsyncIterator[Run]:
    writer = await StoreWriter.open(fixture.db)
    made = Run(
        loaded=fixture.loaded,
        options=RunOptions(db=fixture.db),
        writer=writer,
        run_id=RUN_ID,
        workspace=Workspace.prepare(fixture.loaded),
        prices=PriceTable(),
        pool=ServerPool(tmp_path / "logs"),
        hooks=[scoring_hook([OfflineJudge()], fixture.loaded.suite.judge.passes)],
    )
    yield made
    await made.aclose()


def _connect(db: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    configure(conn)
    return conn


def _outcomes(db: Path) -> list[tuple[str, str, str]]:
    with StoreReader(db) as r:
        return [
            (e.event.command, e.event.status, e.event.message)
            for e in r.events_of_kind("operator_command")
            if isinstance(e.event, OperatorCommand)
        ]


async def test_each_command_is_handled_recorded_and_finished(run: Run, fixture: Fixture) -> None:
    db = fixture.db
    enqueue_operator_command(db, "rejudge", {"trial_ids": [1], "passes": 2}, RUN_ID)
    enqueue_operator_command(db, "rerun_trial", {"trial_id": 3}, RUN_ID)
    enqueue_operator_command(db, "lock_anchors", {"run_id": RUN_ID}, RUN_ID)
    enqueue_operator_command(db, "verify_anchors", {}, RUN_ID)
    enqueue_operator_command(db, "cancel_run", {}, RUN_ID)
    enqueue_operator_command(db, "rejudge", {"trial_ids": "all", "passes": 1}, RUN_ID)
    conn = _connect(db)
    conn.execute("INSERT INTO commands (command, args, created_at) VALUES ('explode', '{}', 0)")
    try:
        handled = await poll_operator_commands(run)
        assert await poll_operator_commands(run) == []
        rows = list_operator_commands(conn)
    finally:
        conn.close()

    assert [c.command for c in handled] == [
        "rejudge",
        "rerun_trial",
        "lock_anchors",
        "verify_anchors",
        "cancel_run",
        "rejudge",
        "explode",
    ]
    assert [r.status for r in rows] == ["done", "done", "done", "done", "failed", "failed", "failed"]
    assert rows[0].message == "re-judged 1 trial(s) with offline:lexical, passes 3–4"
    assert rows[1].message.startswith("trial #3 re-run as attempt 2: finished")
    assert "locked 8 anchor transcript(s) of 2 held-out scenario(s)" in rows[2].message
    assert "anchors verification passed" in rows[3].message
    assert rows[4].message == "this engine was started without a way to cancel the run"
    assert rows[5].message == "'trial_ids' must be a list of trial ids"
    assert rows[6].message == "unknown command 'explode'"

    outcomes = _outcomes(db)
    assert [(c, s) for c, s, _ in outcomes[:2]] == [("rejudge", "received"), ("rejudge", "done")]
    assert len(outcomes) == 14 and sum(s == "received" for _, s, _ in outcomes) == 7
    with StoreReader(db) as r:
        assert sorted(j.pass_no for j in r.judgments(1)) == [1, 2, 3, 4]
        rerun = r.trial(3)
        assert rerun is not None and rerun.attempt == 2 and rerun.status == "finished"
        assert [j.pass_no for j in r.judgments(3)][-2:] == [1, 2]
        assert len(r.anchors()) == 2
    assert (fixture.suite_dir / "anchors" / "held-out.lock").is_file()


async def test_consume_commands_polls_until_stopped(run: Run, fixture: Fixture) -> None:
    stop = asyncio.Event()
    consumer = asyncio.create_task(consume_operator_commands(run, interval_s=0.02, stop=stop))
    command_id = await asyncio.to_thread(
        enqueue_operator_command, fixture.db, "rejudge", {"trial_ids": [2]}, RUN_ID
    )
    deadline = time.monotonic() + 10
    while True:
        conn = _connect(fixture.db)
        try:
            status = next(c.status for c in list_operator_commands(conn) if c.id == command_id)
        finally:
            conn.close()
        if status in ("done", "failed"):
            break
        assert time.monotonic() < deadline, "the command was never handled"
        await asyncio.sleep(0.02)
    stop.set()
    await asyncio.wait_for(consumer, 5)
    assert status == "done"


async def test_cancel_run_stops_a_live_execution(run: Run, fixture: Fixture) -> None:
    async def never_ending_hook(ctx: TrialContext, record: TrialRecord) -> None:
        await asyncio.Event().wait()

    run.hooks[:] = [never_ending_hook]
    with StoreReader(fixture.db) as r:
        trial = r.trial(1)
    assert trial is not None
    enqueue_operator_command(fixture.db, "cancel_run", {}, RUN_ID)
    status = await asyncio.wait_for(execute_with_operator_commands(run, [trial], interval_s=0.02), 20)
    await run.writer.flush()
    assert status == "cancelled"
    assert ("cancel_run", "done") in [(c, s) for c, s, _ in _outcomes(fixture.db)]
    with StoreReader(fixture.db) as r:
        finished = [e.event for e in r.events_of_kind("run_finished")]
    assert isinstance(finished[-1], RunFinished) and finished[-1].status == "cancelled"
