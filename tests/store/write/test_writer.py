"""The one writer: events round-trip, derived rows follow them in the same transaction."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from proctor.store.events import (
    FinalAnswer,
    Judged,
    RunStarted,
    Scored,
    ToolResult,
    TrialFinished,
    TrialStarted,
    Usage,
)
from proctor.store.read.reader import StoreReader
from proctor.store.records import JudgmentMeta
from proctor.store.write.writer import StoreWriter, TrialRow

ROW = TrialRow("s1", "baseline", "offline:default", 0, 7)


async def _new_run(path: Path) -> tuple[StoreWriter, int]:
    w = await StoreWriter.open(path, flush_interval_s=0.01)
    await w.create_run("r1", "suite", {"epochs": 1})
    await w.add_trials("r1", [ROW, TrialRow("s2", "baseline", "offline:default", 0, 8)])
    return w, 1


async def test_events_round_trip_and_trial_row_follows_lifecycle(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    w, tid = await _new_run(db)
    w.emit("r1", RunStarted(run_id="r1", suite="suite", config={}, trials=2))
    w.emit(
        "r1",
        TrialStarted(scenario="s1", arm="baseline", model="m", epoch=0, seed=7, attempt=1),
        trial_id=tid,
        attempt=1,
    )
    with StoreReader(db) as r:
        await w.flush()
        assert r.trial(tid) is not None and r.trial(tid).status == "running"  # type: ignore[union-attr]
        w.emit("r1", FinalAnswer(text="done"), trial_id=tid, attempt=1)
        w.emit(
            "r1",
            TrialFinished(
                status="finished",
                stop="answer",
                final_answer="done",
                tool_calls=2,
                usage=Usage(input_tokens=10, output_tokens=5, estimated=True),
                cost_usd=0.0,
                wall_s=1.5,
            ),
            trial_id=tid,
            attempt=1,
        )
        await w.close()
        t = r.trial(tid)
        assert t is not None
        assert (t.status, t.final_answer, t.tool_calls, t.input_tokens, t.tokens_estimated) == (
            "finished",
            "done",
            2,
            10,
            True,
        )
        assert r.run() is not None and r.run().status == "running"  # type: ignore[union-attr]
        kinds = [e.kind for e in r.trial_events(tid)]
        assert kinds == ["trial_started", "final_answer", "trial_finished"]


async def test_large_payload_is_compressed_and_stored_in_full(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    w, tid = await _new_run(db)
    big = "x" * 5_000_000
    w.emit(
        "r1",
        ToolResult(call_id="c", server="s", tool="t", content=big, is_error=False, latency_s=0.1),
        trial_id=tid,
    )
    await w.close()
    raw = sqlite3.connect(db).execute("SELECT encoding, length(payload) FROM events").fetchone()
    assert raw[0] == "zlib" and raw[1] < 100_000
    with StoreReader(db) as r:
        (ev,) = r.events_after(0)
        assert isinstance(ev.event, ToolResult) and ev.event.content == big


async def test_scores_and_judgments_become_rows(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    w, tid = await _new_run(db)
    w.emit("r1", Scored(name="passed", value=1.0, details={}), trial_id=tid)
    w.emit("r1", Scored(name="fairness", value=0.4, details={"weights": {"a": 1}}), trial_id=tid)
    w.emit("r1", Scored(name="fairness", value=0.6, details={}), trial_id=tid)
    w.emit(
        "r1",
        Judged(pass_no=1, judge="offline:lexical", verdict={"score": 1}),
        trial_id=tid,
        judgment=JudgmentMeta(prompt_version="v1", rubric_hash="abc", temperature=0.0),
    )
    w.emit("r1", Judged(pass_no=2, judge="offline:lexical", verdict=None, error="unparseable"), trial_id=tid)
    await w.close()
    with StoreReader(db) as r:
        scores = {s.name: s.value for s in r.scores(tid)}
        assert scores == {"passed": 1.0, "fairness": 0.6}
        assert r.trial(tid).passed is True  # type: ignore[union-attr]
        js = r.judgments(tid)
        assert [(j.pass_no, j.verdict, j.error, j.rubric_hash) for j in js] == [
            (1, {"score": 1}, "", "abc"),
            (2, None, "unparseable", ""),
        ]


async def test_abandon_unfinished_marks_events_and_requeues(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    w, tid = await _new_run(db)
    w.emit(
        "r1",
        TrialStarted(scenario="s1", arm="a", model="m", epoch=0, seed=1, attempt=1),
        trial_id=tid,
        attempt=1,
    )
    w.emit("r1", FinalAnswer(text="partial"), trial_id=tid, attempt=1)
    assert await w.abandon_unfinished("r1") == [tid]
    await w.close()
    with StoreReader(db) as r:
        assert r.trial(tid).status == "queued"  # type: ignore[union-attr]
        assert all(e.abandoned for e in r.trial_events(tid, attempt=1))
        assert len(r.trial_events(tid, attempt=1)) == 2


async def test_add_trials_is_idempotent(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    w, _ = await _new_run(db)
    await w.add_trials("r1", [ROW])
    await w.close()
    with StoreReader(db) as r:
        assert len(r.trials()) == 2


async def test_writer_flushes_by_interval_without_explicit_flush(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    w, tid = await _new_run(db)
    w.emit("r1", FinalAnswer(text="a"), trial_id=tid)
    with StoreReader(db) as r:
        for _ in range(200):
            if r.max_event_id() == 1:
                break
            await asyncio.sleep(0.01)
        assert r.max_event_id() == 1
    await w.close()
