"""The writer under load: batches it schedules itself, multi-row inserts, flush and failure."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.store.events import (
    FinalAnswer,
    Judged,
    RunFinished,
    RunStarted,
    Scored,
    ToolResult,
    TrialFinished,
    TrialStarted,
    Usage,
)
from proctor.store.read.reader import StoreReader
from proctor.store.records import JudgmentMeta
from proctor.store.schema import migrate
from proctor.store.scores import ScoreName
from proctor.store.write.derived_rows import Op, apply_derived, derive, insert_many
from proctor.store.write.writer import StoreWriter, TrialRow


async def _writer(path: Path, **kw: object) -> StoreWriter:
    w = await StoreWriter.open(path, **kw)  # type: ignore[arg-type]
    await w.create_run("r1", "suite", {})
    await w.add_trials("r1", [TrialRow(f"s{i}", "a", "m", 0, i) for i in range(3)])
    return w


@pytest.mark.parametrize("n", [0, 1, 7, 127, 128, 129, 300, 511, 512, 513, 700, 1000, 1700])
def test_insert_many_keeps_every_row_in_order(n: int) -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (a INTEGER, b TEXT)")
    rows = [(i, f"r{i}") for i in range(n)]
    insert_many(conn.cursor(), "INSERT INTO t (a, b) VALUES (?, ?)", rows)
    assert conn.execute("SELECT a, b FROM t ORDER BY rowid").fetchall() == rows


async def test_commits_while_the_event_loop_is_busy(tmp_path: Path) -> None:
    """The writer thread schedules its own batches: a loop that never yields does not hold them."""
    db = tmp_path / "run.db"
    commits: list[int] = []
    w = await _writer(db, flush_interval_s=0.01, on_commit=lambda n, _t: commits.append(n))
    w.emit("r1", FinalAnswer(text="a"), trial_id=1)
    end = time.monotonic() + 2.0
    while not commits and time.monotonic() < end:
        time.sleep(0.01)  # noqa: ASYNC251 (the point: the loop is busy, nothing awaits)
    assert commits == [1]
    await w.close()


async def test_events_emitted_while_writing_land_in_later_batches_in_order(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    w = await _writer(db, batch_size=16, flush_interval_s=0.001)
    body = "x" * 3000
    for i in range(2000):
        w.emit(
            "r1",
            ToolResult(call_id=f"c{i}", server="s", tool="t", content=body, is_error=False, latency_s=0),
            trial_id=1 + i % 3,
        )
        if i % 100 == 0:
            await asyncio.sleep(0)
    await w.close()
    with StoreReader(db) as r:
        ids = [e.event.call_id for e in r.events_after(0, limit=10_000) if isinstance(e.event, ToolResult)]
    assert ids == [f"c{i}" for i in range(2000)]


async def test_trial_finished_row_and_event_commit_together_and_flush_waits(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    w = await _writer(db, flush_interval_s=60)  # only flush() commits here
    w.emit(
        "r1",
        TrialStarted(scenario="s0", arm="a", model="m", epoch=0, seed=0, attempt=1),
        trial_id=1,
        attempt=1,
    )
    w.emit(
        "r1",
        TrialFinished(
            status="finished",
            stop="answer",
            final_answer="x",
            tool_calls=0,
            usage=Usage(),
            cost_usd=0.0,
            wall_s=0.1,
        ),
        trial_id=1,
        attempt=1,
    )
    for name in ScoreName:
        w.emit("r1", Scored(name=name, value=1.0, details={}), trial_id=1, attempt=1)
    await w.flush()
    with StoreReader(db) as r:
        t = r.trial(1)
        assert t is not None and t.status == "finished" and t.passed is True
        assert [e.event.kind for e in r.trial_events(1)][:2] == ["trial_started", "trial_finished"]
        assert len(r.scores(1)) == len(ScoreName)
    await w.close()


async def test_a_failed_batch_fails_flush_emit_and_close(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    w = await _writer(db)
    w.emit("r1", Scored(name="passed", value=1.0, details={}), trial_id=99)  # no such trial: foreign key
    with pytest.raises(RuntimeError, match="failed"):
        await w.flush()
    with pytest.raises(RuntimeError, match="failed"):
        w.emit("r1", FinalAnswer(text="a"))
    with pytest.raises(RuntimeError, match="failed"):
        await w.close()


async def test_a_secret_in_a_score_is_redacted_in_the_event_and_the_score_row(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    w = await _writer(db)
    token = "ghp_" + "A" * 36
    w.emit("r1", Scored(name="passed", value=1.0, details={"note": token}), trial_id=1)
    await w.close()
    conn = sqlite3.connect(db)
    (details,) = conn.execute("SELECT details FROM scores").fetchone()
    (payload,) = conn.execute("SELECT payload FROM events").fetchone()
    assert token not in details and "redacted" in details
    assert token.encode() not in payload


def _derived_ops(steps: list[tuple[str, int, int]]) -> list[Op]:
    """The rows a batch of these events derives: (kind, trial, n) for trial_started (attempt n),
    trial_finished, a score (value n / 4), passed (n / 4) and a judgment (pass n)."""
    ops: list[Op] = []
    for i, (kind, trial, n) in enumerate(steps):
        ts = float(i)
        event: object
        if kind == "run":
            event = (
                RunStarted(run_id="r1", suite="s", config={}, trials=3)
                if n % 2
                else RunFinished(run_id="r1", status="finished")
            )
        elif kind == "started":
            event = TrialStarted(scenario="s", arm="a", model="m", epoch=0, seed=0, attempt=n)
        elif kind == "finished":
            event = TrialFinished(status="finished", stop="answer", final_answer=f"a{n}", tool_calls=n,
                                  usage=Usage(input_tokens=n), cost_usd=None, wall_s=float(n))  # fmt: skip
        elif kind == "score":
            event = Scored(
                name=ScoreName.KEYWORDS if n % 2 else ScoreName.GROUNDING, value=n / 4, details={"n": n}
            )
        elif kind == "passed":
            event = Scored(name=ScoreName.PASSED, value=None if n == 0 else n / 4, details={})
        else:
            event = Judged(pass_no=n, judge="j", verdict={"score": n / 4})
        ops += derive("r1", trial, n, ts, event, JudgmentMeta() if kind == "judgment" else None)  # type: ignore[arg-type]
    return ops


def _tables(conn: sqlite3.Connection) -> list[list[tuple[object, ...]]]:
    return [
        conn.execute("SELECT * FROM runs").fetchall(),
        conn.execute("SELECT * FROM trials ORDER BY id").fetchall(),
        conn.execute("SELECT * FROM scores ORDER BY trial_id, name").fetchall(),
        conn.execute("SELECT * FROM judgments ORDER BY id").fetchall(),
    ]


def _db() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    migrate(conn)
    conn.execute("INSERT INTO runs (id, suite, config, created_at) VALUES ('r1', 's', '{}', 0)")
    for t in (1, 2, 3):
        conn.execute(
            f"INSERT INTO trials (id, run_id, scenario, arm, model, epoch, seed) VALUES ({t}, 'r1', 's{t}', 'a', 'm', 0, 0)"
        )
    return conn


STEP = st.tuples(
    st.sampled_from(["run", "started", "finished", "score", "passed", "judgment"]),
    st.integers(min_value=1, max_value=3),
    st.integers(min_value=0, max_value=4),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(STEP, max_size=40))
def test_grouped_derived_rows_leave_the_tables_as_running_them_in_order_does(
    steps: list[tuple[str, int, int]],
) -> None:
    """Grouping a batch's statements (and running each group as one statement) is only a way of
    running them: a trial re-run, scored twice or judged again within the batch reads the same."""
    ops = _derived_ops(steps)
    grouped, in_order = _db(), _db()
    apply_derived(grouped.cursor(), ops)
    for sql, params in ops:
        in_order.execute(sql, params)
    assert _tables(grouped) == _tables(in_order)


def test_a_batch_of_trials_runs_in_a_few_statements() -> None:
    steps = [
        (kind, t, 1) for t in (1, 2, 3) for kind in ("started", "finished", "score", "passed", "judgment")
    ]
    steps += [("judgment", t, 2) for t in (1, 2, 3)]
    ops = _derived_ops(steps)
    grouped, in_order = _db(), _db()
    statements: list[str] = []
    grouped.set_trace_callback(statements.append)
    apply_derived(grouped.cursor(), ops)
    for sql, params in ops:
        in_order.execute(sql, params)
    assert _tables(grouped) == _tables(in_order)
    assert len(ops) == 24 and len(statements) < 15  # a statement or two per kind of row, not one per row
