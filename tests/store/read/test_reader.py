"""Readers in other processes: the tail sees every committed event, in order, once."""

from __future__ import annotations

import asyncio
import math
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from proctor.store.events import ErrorEvent, FinalAnswer, Scored
from proctor.store.read.reader import EventTail, StoreReader
from proctor.store.schema import configure, migrate
from proctor.store.scores import ScoreName, UnreadableScore
from proctor.store.write.writer import StoreWriter, TrialRow

WRITER_SCRIPT = textwrap.dedent(
    """
    import asyncio, sys
    from proctor.store.events import FinalAnswer
    from proctor.store.write.writer import StoreWriter, TrialRow

    async def main(path, n):
        w = await StoreWriter.open(path, batch_size=97, flush_interval_s=0.002)
        await w.create_run("r1", "s", {})
        await w.add_trials("r1", [TrialRow("s", "a", "m", 0, 0)])
        for i in range(n):
            w.emit("r1", FinalAnswer(text=str(i)), trial_id=1)
            if i % 50 == 0:
                await asyncio.sleep(0)
        await w.close()

    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
    """
)


def test_tail_reader_sees_every_event_in_order_from_another_process(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    n = 5000
    proc = subprocess.Popen([sys.executable, "-c", WRITER_SCRIPT, str(db), str(n)])
    seen: list[int] = []
    try:
        while not db.exists() or not _has_schema(db):
            if proc.poll() is not None:
                break
            time.sleep(0.005)
        reader = StoreReader(db)
        tail = EventTail(reader, batch=333)
        while True:
            done = proc.poll() is not None
            for ev in tail.poll():
                assert isinstance(ev.event, FinalAnswer)
                seen.append(int(ev.event.text))
            if done:
                seen.extend(int(e.event.text) for e in tail.poll() if isinstance(e.event, FinalAnswer))
                break
            time.sleep(0.002)
        reader.close()
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == 0
    assert seen == list(range(n))


def _has_schema(db: Path) -> bool:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            return bool(conn.execute("PRAGMA user_version").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return False


def _run_db(db: Path, *, with_trial: bool = False) -> sqlite3.Connection:
    """A database at the current schema holding run 'r' (and its trial 1), open for raw inserts:
    rows another writer could have put there."""
    conn = sqlite3.connect(db, isolation_level=None)
    configure(conn)
    migrate(conn, str(db))
    conn.execute("INSERT INTO runs (id, suite, config, created_at) VALUES ('r', 's', '{}', 0)")
    if with_trial:
        conn.execute(
            "INSERT INTO trials (id, run_id, scenario, arm, model, epoch, seed) "
            "VALUES (1, 'r', 'a', 'b', 'm', 0, 0)"
        )
    return conn


def test_an_unknown_score_name_is_an_error_naming_the_database(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    conn = _run_db(db, with_trial=True)
    conn.execute(
        "INSERT INTO scores (trial_id, name, value, details, created_at) VALUES (1, 'vibes', 1, '{}', 0)"
    )
    conn.close()
    with (
        StoreReader(db) as r,
        pytest.raises(UnreadableScore, match=r"run\.db: trial 1: unknown score name 'vibes'"),
    ):
        r.scores(1)


def test_score_rows_read_past_unreadable_details_and_keep_non_object_ones(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    conn = _run_db(db, with_trial=True)
    rows = [
        ("claims", '{"coverage": NaN}'),  # NaN as json.dumps writes it
        ("fairness", "[1, 2]"),  # JSON, but not an object: kept as json.loads reads it
        ("grounding", "{not json"),
        ("keywords", '{"matched": ["a"]}'),
        ("vibes", '{"x": 1}'),
    ]
    conn.executemany(
        "INSERT INTO scores (trial_id, name, value, details, created_at) VALUES (1, ?, 1, ?, 0)", rows
    )
    conn.close()
    with StoreReader(db) as r:
        records, unreadable = r.score_rows(1)
    by_name = {s.name.value: s.details for s in records}
    assert list(by_name) == ["claims", "fairness", "keywords"]
    assert math.isnan(by_name["claims"]["coverage"]) and by_name["fairness"] == [1, 2]
    assert [u.name for u in unreadable] == ["grounding", "vibes"]
    assert "trial 1: score grounding: details are not JSON" in unreadable[0].problem
    assert "unknown score name 'vibes'" in unreadable[1].problem


def test_an_event_this_proctor_cannot_parse_becomes_an_error_line_not_a_crash(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    conn = _run_db(db)
    rows = [
        ("r", "future_kind", "json", b'{"kind": "future_kind", "x": 1}'),
        ("r", "final_answer", "zlib", b"not zlib at all"),
        ("r", "final_answer", "json", b'{"kind": "final_answer", "text": "ok"}'),
    ]
    conn.executemany(
        "INSERT INTO events (run_id, trial_id, attempt, ts, kind, encoding, payload) VALUES (?, NULL, 1, 0, ?, ?, ?)",
        rows,
    )
    conn.close()
    with StoreReader(db) as r:
        first, second, third = r.events_after(0)
    assert isinstance(first.event, ErrorEvent) and first.kind == "error"
    assert "event 1 ('future_kind') cannot be read by this proctor" in first.event.message
    assert isinstance(second.event, ErrorEvent) and "event 2 ('final_answer')" in second.event.message
    assert isinstance(third.event, FinalAnswer) and third.event.text == "ok"


def test_trials_with_a_score_are_read_by_id_without_their_details(tmp_path: Path) -> None:
    async def build(db: Path) -> None:
        w = await StoreWriter.open(db)
        await w.create_run("r1", "s", {})
        await w.add_trials("r1", [TrialRow("s", "a", "m", e, e) for e in range(3)])
        w.emit("r1", Scored(name="passed", value=1.0, details={}), trial_id=1)
        w.emit("r1", Scored(name="fairness", value=0.5, details={}), trial_id=2)
        w.emit("r1", Scored(name="passed", value=0.0, details={}), trial_id=3)
        await w.close()

    db = tmp_path / "run.db"
    asyncio.run(build(db))
    with StoreReader(db) as reader:
        assert reader.trials_with_score(ScoreName.PASSED) == {1, 3}
        assert reader.trials_with_score(ScoreName.FAIRNESS) == {2}


def test_a_verdict_that_is_not_json_reads_as_its_text(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    conn = _run_db(db, with_trial=True)
    conn.executemany(
        "INSERT INTO judgments (trial_id, pass_no, judge, verdict, created_at) VALUES (1, ?, 'j', ?, 0)",
        [(1, "{not json"), (2, '{"score": 0.5}')],
    )
    conn.close()
    with StoreReader(db) as r:
        broken, fine = r.judgments()
    assert broken.verdict == "{not json" and fine.verdict == {"score": 0.5}
