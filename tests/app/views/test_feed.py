from __future__ import annotations

import random
import sqlite3
import threading
from pathlib import Path

import pytest

from proctor.app.views.feed import StoreFeed
from proctor.store.events import (
    Event,
    FinalAnswer,
    ModelResponse,
    OperatorCommand,
    ToolResult,
    TrialStarted,
    Usage,
)
from proctor.store.read import queries
from proctor.store.write.writer import StoreWriter, TrialRow

ROWS = [TrialRow("s1", "baseline", "m", 0, 1), TrialRow("s1", "mcp", "m", 0, 2)]


def response(tool_io: int) -> ModelResponse:
    return ModelResponse(turn=1, model="m", text="", tool_calls=[], stop_reason="end_turn",
                         usage=Usage(input_tokens=10), tool_io_tokens=tool_io, cost_usd=0.0, latency_s=0.1)  # fmt: skip


async def test_snapshot_waits_for_the_database_then_tails_only_new_events(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    feed = StoreFeed(db)
    assert await feed.snapshot() is None
    w = await StoreWriter.open(db, flush_interval_s=0.001)
    await w.create_run("r", "suite", {})
    await w.add_trials("r", ROWS)
    for i in range(5):
        w.emit("r", response(i), trial_id=1, attempt=1)
    w.emit("r", FinalAnswer(text="before"), trial_id=1, attempt=1)
    await w.flush()
    snap = await feed.snapshot()
    assert snap is not None and snap.start_id == 6 and [t.id for t in snap.trials] == [1, 2]
    w.emit(
        "r",
        TrialStarted(scenario="s1", arm="mcp", model="m", epoch=0, seed=2, attempt=1),
        trial_id=2,
        attempt=1,
    )
    w.emit("r", response(100), trial_id=2, attempt=1)
    await w.flush()
    batch = await feed.poll()
    assert [e.id for e in batch.events] == [7, 8]
    assert [t.status for t in batch.trials] == ["running"], (
        "rows of trials whose lifecycle changed are re-read"
    )
    assert [e.id for e in batch.backfill] == [1, 2, 3, 4, 5], (
        "backfill reads only older model_response events"
    )
    assert batch.backfill_done
    assert not await feed.poll()
    await w.close()
    await feed.close()


async def test_load_trial_returns_events_scores_and_judgments_of_the_current_attempt(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    w = await StoreWriter.open(db, flush_interval_s=0.001)
    await w.create_run("r", "suite", {})
    await w.add_trials("r", ROWS)
    w.emit(
        "r",
        TrialStarted(scenario="s1", arm="baseline", model="m", epoch=0, seed=1, attempt=1),
        trial_id=1,
        attempt=1,
    )
    w.emit("r", FinalAnswer(text="a"), trial_id=1, attempt=1)
    w.emit("r", FinalAnswer(text="other"), trial_id=2, attempt=1)
    await w.close()
    feed = StoreFeed(db)
    assert await feed.snapshot() is not None
    loaded = await feed.load_trial(1)
    assert loaded.trial is not None and [e.kind for e in loaded.events] == ["trial_started", "final_answer"]
    await feed.close()


async def test_operator_command_events_refresh_anchors_and_details_read_old_ones(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    w = await StoreWriter.open(db, flush_interval_s=0.001)
    await w.create_run("r", "suite", {})
    w.emit("r", OperatorCommand(command="verify_anchors", args={}, status="done", message="ok"))
    await w.flush()
    feed = StoreFeed(db)
    assert await feed.snapshot() is not None
    details = await feed.details()
    assert [e.event.kind for e in details.commands] == ["operator_command"] and details.anchors == []
    await w.execute(
        "INSERT INTO anchors (scenario, lock_file, sha256, locked_at) VALUES ('s3', 'a.lock', 'abc', 1.0)"
    )
    w.emit("r", OperatorCommand(command="lock_anchors", args={}, status="done"))
    await w.close()
    batch = await feed.poll()
    assert batch.anchors is not None and [a.scenario for a in batch.anchors] == ["s3"]
    await feed.close()


async def test_unknown_trials_and_run_started_refresh_rows(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    w = await StoreWriter.open(db, flush_interval_s=0.001)
    await w.create_run("r", "suite", {})
    await w.flush()
    feed = StoreFeed(db)
    snap = await feed.snapshot()
    assert snap is not None and snap.trials == []
    await w.add_trials("r", ROWS)
    w.emit("r", FinalAnswer(text="x"), trial_id=2, attempt=0)
    await w.close()
    batch = await feed.poll()
    assert [t.id for t in batch.trials] == [2]
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM trials").fetchone()[0] == 2
    conn.close()
    await feed.close()


async def test_reads_run_on_aiosqlites_thread_and_decoding_on_the_decoder_never_on_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "run.db"
    w = await StoreWriter.open(db, flush_interval_s=0.001)
    await w.create_run("r", "suite", {})
    await w.add_trials("r", ROWS)
    rng = random.Random(7)
    big = "".join(f"{i:>6} | {rng.getrandbits(128):032x}\n" for i in range(20_000))  # compresses ~2x
    w.emit("r", TrialStarted(scenario="s1", arm="baseline", model="m", epoch=0, seed=1, attempt=1),
           trial_id=1, attempt=1)  # fmt: skip
    w.emit("r", ToolResult(call_id="c", server="s", tool="t", content=big, is_error=False, latency_s=0.1),
           trial_id=1, attempt=1)  # fmt: skip
    await w.flush()
    decoded_on: set[str] = set()
    real_parse = queries.parse_event

    def recording_parse(data: str | bytes) -> Event:
        decoded_on.add(threading.current_thread().name)
        return real_parse(data)

    monkeypatch.setattr(queries, "parse_event", recording_parse)
    feed = StoreFeed(db)
    try:
        assert await feed.snapshot() is not None
        sql_on: set[str] = set()
        conn = feed._require()
        await conn.set_trace_callback(lambda _sql: sql_on.add(threading.current_thread().name))
        loaded = await feed.load_trial(1)
    finally:
        await feed.close()  # an open aiosqlite connection would keep pytest from exiting
        await w.close()
    assert isinstance(loaded.events[-1].event, ToolResult) and loaded.events[-1].event.content == big
    loop_thread = threading.current_thread().name
    assert sql_on and loop_thread not in sql_on, "SQL runs on aiosqlite's connection thread"
    assert "proctor-console-decode_0" in decoded_on, "the large result was decoded off the loop"
