"""The report's reads give what the ordinary ones give: events decoded by msgspec read as the
parsed events do, scores and verdicts decoded by pydantic's parser as by ``json.loads``, orjson
writes what ``json.dumps`` would, on a judged run with hostile rows added."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import heapq
import json
import math
import sqlite3
import threading
import zlib
from pathlib import Path

import numpy as np
import orjson
import pytest

from proctor.engine.judges.offline import OfflineJudge
from proctor.engine.reports import report as report_module
from proctor.engine.reports.collector import collector_paused
from proctor.engine.reports.report import build_report, report_json
from proctor.engine.reports.tool_usage import KINDS, read_tool_usage, tool_row, tool_usage
from proctor.engine.stats import paired
from proctor.store.events import (
    ContentBlock,
    Judged,
    ModelResponse,
    ToolResult,
    Usage,
)
from proctor.store.read.reader import StoredEvent, StoreReader
from tests.engine.judging_fixture import RUN_ID, PricedJudge, build_run


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


def test_repeated_payloads_are_read_once_and_give_the_same_rows(db: Path) -> None:
    with StoreReader(db) as r:
        upper = r.max_event_id()
        once = list(r.extract(KINDS, upper, tool_row))
        remembered = list(r.extract(KINDS, upper, tool_row, repeated=KINDS))
    assert remembered == once


def test_every_bootstrap_of_a_report_is_drawn_ahead(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    drawn_here: list[int] = []
    draw = paired._percentile_interval

    def counted(*args: object) -> tuple[float, float]:
        if threading.current_thread() is threading.main_thread():
            drawn_here.append(1)
        return draw(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(paired, "_percentile_interval", counted)
    report = build_report(db)
    assert drawn_here == []  # all drawn by the thread, ahead of the sections that ask
    tests = [a["vs_baseline"]["mcnemar"] for a in report["arms"] if a["vs_baseline"]]
    assert any(test["p_value"] is not None for test in tests)


def test_a_report_built_with_the_collector_paused_is_the_one_built_with_it_on(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert gc.isenabled()
    paused = report_json(build_report(db))
    assert gc.isenabled()  # given back
    monkeypatch.setattr(report_module, "collector_paused", contextlib.nullcontext)
    assert report_json(build_report(db)) == paused


def test_the_collector_is_given_back_as_it_was_when_the_block_fails() -> None:
    with pytest.raises(RuntimeError), collector_paused():
        assert not gc.isenabled()
        raise RuntimeError
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # it was off: it stays off
    finally:
        gc.enable()
