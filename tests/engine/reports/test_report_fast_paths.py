"""The report's fast reads give what the ordinary ones give: event fields decoded as plain JSON,
scores and verdicts decoded by pydantic's parser, event sections read in a child process, orjson."""

from __future__ import annotations

import asyncio
import heapq
import json
import math
import sqlite3
import subprocess
import sys
import threading
import zlib
from pathlib import Path

import numpy as np
import orjson
import pytest

from proctor.engine.judges.base import JudgeOutcome, JudgeSubject
from proctor.engine.judges.offline import OfflineJudge
from proctor.engine.reports import event_sections, second_process
from proctor.engine.reports.event_sections import PendingSections, read_event_sections
from proctor.engine.reports.report import build_report, report_json
from proctor.engine.reports.tool_usage import KINDS, fast_tool_row, read_tool_usage, tool_row, tool_usage
from proctor.engine.stats import paired
from proctor.store.events import (
    ContentBlock,
    Judged,
    ModelResponse,
    ToolResult,
    Usage,
)
from proctor.store.read.reader import StoredEvent, StoreReader
from proctor.store.records import JudgmentMeta
from tests.engine.judging_fixture import RUN_ID, build_run


class PricedJudge:
    judge_id = "anthropic:claude-test"

    async def judge(self, subject: JudgeSubject, pass_no: int) -> JudgeOutcome:
        verdict = OfflineJudge().verdict(subject)
        usage = Usage(input_tokens=100 + pass_no, output_tokens=20)
        return JudgeOutcome(
            verdict, "", JudgmentMeta(source="proctor:test"), usage=usage, cost_usd=0.001 * pass_no
        )


def _insert(
    conn: sqlite3.Connection, trial_id: int, kind: str, payload: bytes, encoding: str = "json"
) -> None:
    conn.execute(
        "INSERT INTO events (run_id, trial_id, attempt, ts, kind, encoding, payload) VALUES (?, ?, 1, 0, ?, ?, ?)",
        (RUN_ID, trial_id, kind, encoding, payload),
    )


def _result(**kw: object) -> dict[str, object]:
    base = ToolResult(call_id="odd", server="fx", tool="lookup", content="x", is_error=False, latency_s=0.5)
    return json.loads(base.model_dump_json()) | kw


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The judging fixture, plus rows the fast reads must not read differently from the events."""
    fx = asyncio.run(build_run(tmp_path_factory.mktemp("fast"), judges=[OfflineJudge(), PricedJudge()]))
    conn = sqlite3.connect(fx.db)
    response = json.loads(
        ModelResponse(
            turn=9,
            model="m",
            text="",
            tool_calls=[],
            stop_reason="end",
            usage=Usage(input_tokens=7),
            cost_usd=None,
            latency_s=0.1,
        ).model_dump_json()
    )
    _insert(conn, 1, "model_response", json.dumps(response | {"usage": {"input_tokens": "12"}}).encode())
    _insert(conn, 1, "model_response", json.dumps(response | {"usage": {"input_tokens": 5.0}}).encode())
    _insert(conn, 1, "model_response", json.dumps(response | {"newer_field": 1}).encode())
    _insert(conn, 1, "model_response", json.dumps(response | {"tool_calls": [{"call_id": "c"}]}).encode())
    _insert(conn, 1, "model_response", b'{"kind": "model_response", "turn": ')
    _insert(conn, 1, "model_response", zlib.compress(json.dumps(response).encode()), "zlib")
    _insert(conn, 2, "tool_result", json.dumps(_result(latency_s=2)).encode())
    _insert(conn, 2, "tool_result", json.dumps(_result(call_id="bin", blocks=[
        json.loads(ContentBlock(type="image", mime_type="image/png", size_bytes=100, sha256="a" * 64).model_dump_json())
    ])).encode())  # fmt: skip
    _insert(
        conn,
        2,
        "tool_result",
        json.dumps(
            _result(call_id="cut", content="abc\n…[truncated: stored 9,000 characters, 3 kept]")
        ).encode(),
    )
    _insert(conn, 2, "tool_result", json.dumps(_result(call_id="nul", content="a\x00b é ✓")).encode())
    _insert(
        conn,
        2,
        "tool_result",
        zlib.compress(json.dumps(_result(call_id="z", content="y" * 70_000)).encode()),
        "zlib",
    )
    _insert(conn, 2, "tool_result", json.dumps(_result(is_error="yes")).encode())
    _insert(
        conn,
        2,
        "tool_call",
        b'{"kind": "tool_call", "call_id": 3, "server": "fx", "tool": "t", "arguments": {}}',
    )
    _insert(conn, 2, "tools_listed", b'{"kind": "tools_listed", "tools": [{"name": "a", "server": "fx"}]}')
    judged = json.loads(
        Judged(pass_no=3, judge="j", verdict=None, usage=Usage(output_tokens=4), cost_usd=2).model_dump_json()
    )
    _insert(conn, 3, "judgment", json.dumps(judged).encode())
    _insert(conn, 3, "judgment", json.dumps(judged | {"usage": None}).encode())
    _insert(conn, 3, "judgment", json.dumps(judged | {"cost_usd": "1"}).encode())
    conn.commit()
    conn.close()
    return fx.db


def _parsed(reader: StoreReader, kind: str) -> list[StoredEvent]:
    return reader.events_of_kind(kind, limit=1_000_000)


def test_model_and_judge_usage_read_as_the_events_do(db: Path) -> None:
    with StoreReader(db) as r:
        upper = r.max_event_id()
        expected = [
            (
                e.trial_id,
                e.attempt,
                e.abandoned,
                (ev.usage.input_tokens, ev.tool_io_tokens, ev.usage.output_tokens),
            )
            for e in _parsed(r, "model_response")
            if isinstance(ev := e.event, ModelResponse)
        ]
        assert list(r.model_call_usage(upper)) == expected
        judged = [
            (e.trial_id, e.attempt, e.abandoned, (ev.usage.input_tokens, ev.usage.output_tokens, ev.cost_usd))
            for e in _parsed(r, "judgment")
            if isinstance(ev := e.event, Judged) and ev.usage is not None
        ]
        got = list(r.judge_usage(upper))
        assert got == judged and len(got) > 2
        assert all(type(g[3][2]) is float or g[3][2] is None for g in got)


def test_tool_usage_reads_as_the_events_do(db: Path) -> None:
    with StoreReader(db) as r:
        trials = r.trials()
        events = heapq.merge(*(_parsed(r, kind) for kind in KINDS), key=lambda e: e.id)
        assert read_tool_usage(r, trials) == tool_usage(trials, events)


def test_scores_and_judgments_decode_as_json_loads_does(db: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.db"
    copy.write_bytes(db.read_bytes())
    conn = sqlite3.connect(copy)
    conn.execute(
        "UPDATE scores SET details = ? WHERE rowid = 1",
        ('{"big": 123456789012345678901234567890, "n": NaN}',),
    )
    conn.execute("UPDATE scores SET details = ? WHERE rowid = 2", ('{"s": "\\ud800 lone"}',))
    conn.execute("UPDATE scores SET details = ? WHERE rowid = 3", ("[1, 2]",))
    conn.commit()
    raw_scores = conn.execute("SELECT trial_id, name, details FROM scores ORDER BY trial_id, name").fetchall()
    raw_verdicts = [v for (v,) in conn.execute("SELECT verdict FROM judgments ORDER BY id")]
    conn.close()
    with StoreReader(copy) as r:
        scores = r.scores()
        judgments = r.judgments()
    assert [(s.trial_id, s.name) for s in scores] == [(t, n) for t, n, _ in raw_scores]
    assert json.dumps([s.details for s in scores]) == json.dumps([json.loads(d) for _, _, d in raw_scores])
    expected = [None if v is None else json.loads(v) for v in raw_verdicts]
    assert json.dumps([j.verdict for j in judgments]) == json.dumps(expected)


def test_an_unreadable_score_still_names_the_database(db: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.db"
    copy.write_bytes(db.read_bytes())
    conn = sqlite3.connect(copy)
    conn.execute("UPDATE scores SET details = 'not json' WHERE rowid = 4")
    conn.commit()
    conn.close()
    with StoreReader(copy) as r, pytest.raises(Exception, match="details are not JSON"):
        r.scores()


def test_report_json_reads_back_as_json_dumps_wrote_it() -> None:
    data = {
        "text": "σ = 0 ± 5 — “quoted” \x00 \u2028",
        "floats": [0.1, 1e-05, 1e16, -0.0, 123456.789, 5e-324],
        "nested": {"empty": {}, "list": [], "none": None, "bool": True},
        "keys": {0.75: "a", 2: "b", None: "c", False: "d"},
        "numpy": [np.float64(0.5), np.int64(3), np.bool_(True)],
    }
    encoded = report_json(data)
    assert encoded.endswith(b"\n") and b'\n  "text": ' in encoded  # two-space indent, key order kept
    assert json.loads(encoded) == json.loads(json.dumps(data, indent=2, default=lambda o: o.item()))
    nan = json.loads(report_json({"x": math.nan, "y": math.inf}))
    assert nan == {"x": None, "y": None}
    with pytest.raises(TypeError):
        report_json({"x": object()})
    assert orjson.loads(encoded) == json.loads(encoded)


def test_event_sections_read_in_a_spawned_process_are_the_ones_read_here(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(second_process, "_may_fork", lambda: False)
    with StoreReader(db) as r:
        upper = r.max_event_id()
    here = read_event_sections(db, upper)
    pending = PendingSections(db, upper, child=True)
    assert pending.started
    assert pending.result() == here
    assert here.usage and here.tools["arms"]


FORKED = """
import json, sys
from pathlib import Path
from proctor.engine.reports import second_process
from proctor.engine.reports.event_sections import PendingSections, read_event_sections
db, upper = Path(sys.argv[1]), int(sys.argv[2])
may_fork = second_process._may_fork()  # a fresh process: one thread, numpy not loaded yet
forks = []
fork = second_process._fork
second_process._fork = lambda *args: forks.append(1) or fork(*args)
pending = PendingSections(db, upper, child=True)
seen = [may_fork, len(forks), pending.started, pending.result() == read_event_sections(db, upper)]
failed = fork(lambda *_: 1 / 0, db, upper)  # an error in the child: no result
stopped = fork(lambda *_: __import__("time").sleep(60), db, upper)
stopped.stop()
print(json.dumps([*seen, second_process.result(failed)]))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="the second process is forked on Linux only")
def test_event_sections_read_in_a_forked_process_are_the_ones_read_here(db: Path) -> None:
    with StoreReader(db) as r:
        upper = r.max_event_id()
    out = subprocess.run(
        [sys.executable, "-c", FORKED, str(db), str(upper)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert json.loads(out.stdout) == [True, 1, True, True, None]


def test_a_process_with_other_threads_is_not_forked() -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not second_process._may_fork()
    finally:
        stop.set()
        thread.join()


def test_a_report_is_the_same_whichever_process_read_its_events(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(event_sections, "CHILD_OVER_EVENTS", 10**12)
    inline = build_report(db)
    monkeypatch.setattr(event_sections, "CHILD_OVER_EVENTS", 0)
    assert report_json(build_report(db)) == report_json(inline)


def test_a_child_that_cannot_run_leaves_the_reading_to_the_report(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(second_process, "_may_fork", lambda: False)
    with StoreReader(db) as r:
        upper = r.max_event_id()
    here = read_event_sections(db, upper)
    monkeypatch.setattr(second_process.sys, "executable", str(db.parent / "no-such-python"))
    missing = PendingSections(db, upper, child=True)
    assert not missing.started
    assert missing.result() == here
    monkeypatch.undo()
    monkeypatch.setattr(second_process, "_may_fork", lambda: False)
    # A child that finds another copy of proctor than this one refuses, and is not believed.
    assert second_process.run_as_child(lambda *_: None, event_sections.__file__, [str(db), "1", str(db)]) == 2
    monkeypatch.setattr(event_sections, "__file__", str(db))
    refused = PendingSections(db, upper, child=True)
    assert refused.started
    assert refused.result() == here


def test_a_stopped_child_leaves_no_process(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(second_process, "_may_fork", lambda: False)
    pending = PendingSections(db, 10**9, child=True)
    child = pending._child
    pending.close()
    assert isinstance(child, second_process._Spawned) and child._proc.returncode is not None


def test_repeated_payloads_are_read_once_and_give_the_same_rows(db: Path) -> None:
    with StoreReader(db) as r:
        upper = r.max_event_id()
        once = list(r.extract(KINDS, upper, fast_tool_row, tool_row))
        remembered = list(r.extract(KINDS, upper, fast_tool_row, tool_row, repeated=KINDS))
    assert remembered == once


def test_every_bootstrap_of_a_report_is_drawn_ahead_and_every_mcnemar_p_value_comes_from_its_second_process(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn_here: list[int] = []
    draw = paired._percentile_interval

    def counted(*args: object) -> tuple[float, float]:
        if threading.current_thread() is threading.main_thread():
            drawn_here.append(1)
        return draw(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(paired, "_percentile_interval", counted)
    monkeypatch.setattr(paired, "_BINOMIAL", {})
    report = build_report(db)
    assert drawn_here == []  # all drawn by the thread, ahead of the sections that ask
    with StoreReader(db) as r:
        sections = read_event_sections(db, r.max_event_id())
    tests = [a["vs_baseline"]["mcnemar"] for a in report["arms"] if a["vs_baseline"]]
    assert any(test["p_value"] is not None for test in tests)
    for test in tests:
        b, c = test["baseline_only_passes"], test["arm_only_passes"]
        if test["p_value"] is not None:
            assert sections.mcnemar[(b, b + c)] == test["p_value"]
