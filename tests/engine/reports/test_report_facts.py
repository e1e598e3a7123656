"""A report reads the facts the writer stored beside each event (``event_facts``) and says
exactly what it says reading the payloads: the same bytes with the facts table dropped, with
some of its rows gone, and for a database written at schema 3 and migrated since.

The runs are written by the real StoreWriter: a judged run (judge passes that record their
usage and cost) and one with the tool traffic a report must count right (an abandoned attempt,
a requeued trial never restarted, errors, a truncated result, an image block, non-ASCII text, a
routed call, a call without a result).
"""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from proctor.engine.judges.offline import OfflineJudge
from proctor.engine.reports.report import build_report, report_json
from proctor.engine.reports.report_markdown import render_markdown
from proctor.store.event_facts import FACT_KINDS, TOOL_KINDS, decode_fact, payload_fact
from proctor.store.events import (
    ContentBlock,
    Event,
    Judged,
    ListedTool,
    ModelResponse,
    RunFinished,
    ToolCall,
    ToolResult,
    ToolsListed,
    TrialFinished,
    TrialStarted,
    Usage,
)
from proctor.store.read.fact_rows import every_event_has_its_fact, fact_rows
from proctor.store.read.reader import StoreReader
from proctor.store.schema import SCHEMA_VERSION
from proctor.store.write.writer import StoreWriter, TrialRow
from tests.engine.judging_fixture import PricedJudge, build_run

RUN = "facts-run"
MODEL = "test:m"
CUT = "abc\n…[truncated: stored 9,000 characters, 3 kept]"


def _listed() -> ToolsListed:
    tools = [("srv", "search"), ("srv", "fetch"), ("srv", "never"), ("proctor-router", "execute")]
    return ToolsListed(
        tools=[
            ListedTool(name=n, server=s, description="d", input_schema={"type": "object"}) for s, n in tools
        ]
    )


def _result(
    cid: str,
    tool: str,
    content: str,
    latency: float,
    *,
    error: bool = False,
    blocks: list[ContentBlock] | None = None,
) -> ToolResult:
    return ToolResult(call_id=cid, server="srv", tool=tool, content=content, is_error=error,
                      error_type="ToolError" if error else "", latency_s=latency, blocks=blocks or [])  # fmt: skip


def _response(turn: int, tokens: int) -> ModelResponse:
    usage = Usage(input_tokens=tokens, output_tokens=tokens // 10)
    return ModelResponse(turn=turn, model=MODEL, text="t", tool_calls=[], stop_reason="end", usage=usage,
                         tool_io_tokens=tokens // 3, cost_usd=None, latency_s=0.25)  # fmt: skip


def _trial(n: int) -> list[Event]:
    image = ContentBlock(type="image", mime_type="image/png", size_bytes=100 + n, sha256="0" * 64)
    return [
        _listed(),
        _response(1, 1000 + n),
        ToolCall(call_id="c1", server="srv", tool="search", arguments={"q": "é"}),
        _result("c1", "search", "abc é ✓", 0.1 * n),
        ToolCall(call_id="c2", server="srv", tool="search", arguments={}),
        _result("c2", "search", "boom", 0.2, error=True),
        ToolCall(call_id="c3", server="proctor-router", tool="execute", arguments={}),
        _result("c3", "fetch", CUT, 0.3 + n, blocks=[image]),
        ToolCall(call_id="c4", server="srv", tool="fetch", arguments={}),  # no result: cut short
        _response(2, 2000 + n),
        Judged(
            pass_no=1,
            judge="j",
            verdict={"score": 0.5},
            usage=Usage(input_tokens=7, output_tokens=n),
            cost_usd=0.1 * n + 0.2,
        ),
        Judged(pass_no=2, judge="j", verdict=None, error="refused"),
        TrialFinished(
            status="finished",
            stop="answer",
            final_answer="x",
            tool_calls=4,
            usage=Usage(input_tokens=3000, output_tokens=300),
            cost_usd=0.01,
            wall_s=1.0,
        ),
    ]


async def _write_tools_run(db: Path) -> None:
    """Four trials; trial 1 first ran an attempt that was abandoned; trial 4 was requeued after
    its first attempt and never ran again (its events are abandoned, of its current attempt)."""
    rows = [TrialRow(f"s{i}", "mcp" if i % 2 else "other", MODEL, 0, i) for i in range(1, 5)]
    async with await StoreWriter.open(db) as w:
        await w.create_run(RUN, "facts-suite", {})
        await w.add_trials(RUN, rows)
        await w.flush()
        with StoreReader(db) as r:
            ids = [t.id for t in r.trials()]

        def attempt(tid: int, number: int, events: list[Event]) -> None:
            start = TrialStarted(scenario="s", arm="a", model=MODEL, epoch=0, seed=0, attempt=number)
            for e in [start, *events]:
                w.emit(RUN, e, trial_id=tid, attempt=number)

        attempt(ids[0], 1, _trial(9)[:6])
        attempt(ids[3], 1, _trial(8))
        await w.flush()
        await w.abandon_unfinished(RUN)
        await w.requeue([ids[3]])
        for n, tid in enumerate(ids[:3], start=1):
            attempt(tid, 2 if n == 1 else 1, _trial(n))
        w.emit(RUN, RunFinished(run_id=RUN, status="finished"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    judged = asyncio.run(build_run(tmp_path_factory.mktemp("judged"), judges=[OfflineJudge(), PricedJudge()]))
    tools = tmp_path_factory.mktemp("tools") / "run.db"
    asyncio.run(_write_tools_run(tools))
    return {"judged": judged.db, "tools": tools}


def _rendered(db: Path) -> tuple[bytes, str]:
    report = build_report(db)
    return report_json(report), render_markdown(report)


def _rendered_after(
    source: Path, work: Path, change: Callable[[sqlite3.Connection], None]
) -> tuple[bytes, str]:
    """The report of a copy of ``source`` at ``work`` (the same path each time: a report names its
    database) after ``change``."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{work}{suffix}").unlink(missing_ok=True)
    shutil.copy(source, work)
    conn = sqlite3.connect(work, isolation_level=None)
    change(conn)
    conn.close()
    return _rendered(work)


def _unchanged(conn: sqlite3.Connection) -> None:
    pass


def _facts_dropped(conn: sqlite3.Connection) -> None:
    conn.execute("DROP TABLE event_facts")


def _every_other_fact_gone(conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM event_facts WHERE event_id % 2 = 0")


def _back_to_schema_3(conn: sqlite3.Connection) -> None:
    conn.executescript("DROP TABLE event_facts; DROP INDEX events_abandoned; PRAGMA user_version = 3;")


@pytest.mark.parametrize("name", ["judged", "tools"])
def test_a_report_from_the_facts_is_the_report_from_the_payloads(
    runs: dict[str, Path], name: str, tmp_path: Path
) -> None:
    source, work = runs[name], tmp_path / "work.db"
    with sqlite3.connect(source) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        (facts,) = conn.execute("SELECT count(*) FROM event_facts").fetchone()
        assert facts > 20  # the report below does read them
    from_facts = _rendered_after(source, work, _unchanged)
    assert _rendered_after(source, work, _facts_dropped) == from_facts
    assert _rendered_after(source, work, _every_other_fact_gone) == from_facts
    assert _rendered_after(source, work, _back_to_schema_3) == from_facts


def test_the_tools_run_counts_what_the_facts_must_carry(runs: dict[str, Path]) -> None:
    """The tools run does exercise each fact: a report reading any of them wrong would differ."""
    report = build_report(runs["tools"])
    mcp = next(a for a in report["tool_usage"]["arms"] if a["arm"] == "mcp")
    fetch = next(t for t in mcp["tools"] if t["tool"] == "fetch")
    search = next(t for t in mcp["tools"] if t["tool"] == "search")
    assert (fetch["truncated_results"], fetch["no_result"], fetch["calls"]) == (2, 2, 4)
    assert search["errors"] == 2 and search["result_bytes"]["total"] == 2 * (len("abc é ✓".encode()) + 4)
    assert fetch["result_bytes"]["total"] == 2 * len(CUT.encode()) + 101 + 103
    assert mcp["never_called"] == [{"server": "srv", "tool": "never", "offered_in_trials": 2}]


def test_each_stored_fact_is_what_its_payload_gives(runs: dict[str, Path]) -> None:
    for db in runs.values():
        with sqlite3.connect(db) as conn:
            rows = conn.execute(
                "SELECT e.id, e.trial_id, e.attempt, e.kind, e.encoding, e.payload, f.trial_id, f.attempt, "
                "f.kind, f.facts FROM events e LEFT JOIN event_facts f ON f.event_id = e.id "
                f"WHERE e.kind IN ({', '.join('?' * len(FACT_KINDS))})",
                sorted(FACT_KINDS),
            ).fetchall()
        assert {r[3] for r in rows} == FACT_KINDS
        for _id, trial_id, attempt, kind, encoding, payload, f_trial, f_attempt, f_kind, stored in rows:
            assert (f_trial, f_attempt, f_kind) == (trial_id, attempt, kind)
            # repr: a tuple is not a list, 2.0 is not 2, True is not 1
            assert repr(decode_fact(kind, stored)) == repr(payload_fact(kind, encoding, payload))


def test_a_schema_3_database_reports_the_same_once_migrated_and_resumed(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    old = tmp_path / "old.db"
    shutil.copy(runs["tools"], old)
    with sqlite3.connect(old, isolation_level=None) as conn:
        _back_to_schema_3(conn)
    before = _rendered(old)

    async def resume() -> None:  # what 'proctor run --resume' or 'proctor judge' does first
        async with await StoreWriter.open(old) as w:
            await w.flush()

    asyncio.run(resume())
    with sqlite3.connect(old) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        assert conn.execute("SELECT count(*) FROM event_facts").fetchone() == (0,)
    assert _rendered(old) == before

    async def rerun_the_requeued_trial() -> None:  # its new attempt gets facts, the old events none
        async with await StoreWriter.open(old) as w:
            start = TrialStarted(scenario="s", arm="a", model=MODEL, epoch=0, seed=0, attempt=2)
            for e in [start, *_trial(5)]:
                w.emit(RUN, e, trial_id=4, attempt=2)

    asyncio.run(rerun_the_requeued_trial())
    mixed = _rendered(old)
    assert mixed != before
    assert _rendered_after(old, tmp_path / "work.db", _facts_dropped) == _rendered_after(
        old, tmp_path / "work.db", _unchanged
    )


def _rows_both_ways(db: Path, kinds: tuple[str, ...]) -> tuple[list[object], list[object]]:
    """``fact_rows`` as the report reads them where every event has its fact, and as the read
    that merges in the payloads of events without one gives them."""
    with StoreReader(db) as r:
        upper = r.max_event_id()
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        assert every_event_has_its_fact(conn, upper)
        return list(fact_rows(conn, kinds, upper, complete=True)), list(fact_rows(conn, kinds, upper))
    finally:
        conn.close()


@pytest.mark.parametrize(
    "kinds", [("model_response",), ("judgment",), TOOL_KINDS, ("tool_call",), tuple(sorted(FACT_KINDS))]
)
def test_the_facts_alone_read_as_the_merged_read_does(runs: dict[str, Path], kinds: tuple[str, ...]) -> None:
    for db in runs.values():
        alone, merged = _rows_both_ways(db, kinds)
        assert repr(alone) == repr(merged)  # repr: 2.0 is not 2, True is not 1
    alone, _ = _rows_both_ways(runs["tools"], TOOL_KINDS)
    assert any(abandoned for _t, _a, abandoned, _f in alone)  # the abandoned attempts are there


def test_a_report_reads_the_facts_alone_only_where_no_event_lacks_one(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    work = tmp_path / "work.db"
    shutil.copy(runs["tools"], work)
    conn = sqlite3.connect(work, isolation_level=None)
    try:
        (upper,) = conn.execute("SELECT max(id) FROM events").fetchone()
        ids = [i for (i,) in conn.execute("SELECT event_id FROM event_facts ORDER BY event_id")]
        middle = ids[len(ids) // 2]
        assert every_event_has_its_fact(conn, upper) and every_event_has_its_fact(conn, middle)
        conn.execute("DELETE FROM event_facts WHERE event_id = ?", (middle,))
        assert not every_event_has_its_fact(conn, upper)
        assert not every_event_has_its_fact(conn, middle)
        assert every_event_has_its_fact(conn, middle - 1)  # a view of the run before that event
        conn.execute("DROP TABLE event_facts")
        assert not every_event_has_its_fact(conn, ids[0])
    finally:
        conn.close()


def _damage_two_alike(conn: sqlite3.Connection) -> None:
    """Two tool calls of one trial's attempt get the same unreadable fact (a row this proctor did
    not write), and a judge pass without usage one that says so with other bytes than "null"."""
    calls = conn.execute(
        "SELECT event_id FROM event_facts WHERE kind = 'tool_call' AND trial_id = "
        "(SELECT trial_id FROM event_facts WHERE kind = 'tool_call' ORDER BY event_id DESC LIMIT 1) "
        "ORDER BY event_id DESC LIMIT 2"
    ).fetchall()
    assert len(calls) == 2
    conn.executemany(
        "UPDATE event_facts SET facts = CAST('[\"tool_call\", 3]' AS BLOB) WHERE event_id = ?", calls
    )
    conn.execute(
        "UPDATE event_facts SET facts = CAST(' null' AS BLOB) WHERE event_id = "
        "(SELECT min(event_id) FROM event_facts WHERE kind = 'judgment' AND facts = CAST('null' AS BLOB))"
    )


def test_a_damaged_fact_is_read_from_its_own_payload(runs: dict[str, Path], tmp_path: Path) -> None:
    source, work = runs["tools"], tmp_path / "work.db"
    expected = _rendered_after(source, work, _facts_dropped)
    damaged = _rendered_after(source, work, _damage_two_alike)
    assert damaged == expected
    conn = sqlite3.connect(f"file:{work}?mode=ro", uri=True)
    try:
        (upper,) = conn.execute("SELECT max(id) FROM events").fetchone()
        assert every_event_has_its_fact(conn, upper)
        payloads = conn.execute(
            "SELECT e.trial_id, e.attempt, e.abandoned, e.kind, e.encoding, e.payload FROM events e "
            "WHERE e.kind IN (?, ?, ?) ORDER BY e.id",
            TOOL_KINDS,
        ).fetchall()
        from_payloads = [
            (t, a, bool(gone), fact)
            for t, a, gone, kind, encoding, payload in payloads
            if (fact := payload_fact(kind, encoding, payload)) is not None
        ]
        assert repr(list(fact_rows(conn, TOOL_KINDS, upper, complete=True))) == repr(from_payloads)
        judged = list(fact_rows(conn, ("judgment",), upper, complete=True))
        assert judged == list(fact_rows(conn, ("judgment",), upper)) and judged
        (spaced,) = conn.execute(
            "SELECT count(*) FROM event_facts WHERE facts = CAST(' null' AS BLOB)"
        ).fetchone()
        assert spaced == 1
    finally:
        conn.close()
