"""Export: one schema for JSONL and CSV, events and scores, secrets redacted, formulas defused."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from proctor.engine.reports.export import COLUMNS, SCHEMA, export_run, export_to_file
from proctor.store.events import Judged, Scored, ToolCall, ToolResult, TrialFinished, TrialStarted, Usage
from proctor.store.read.reader import StoreReader
from proctor.store.records import JudgmentMeta
from proctor.store.write.writer import StoreWriter, TrialRow

SECRET = "proctor-test-secret-value-42"
SHAPED = "sk-ant-" + "x" * 24


async def _db(path: Path) -> Path:
    w = await StoreWriter.open(path)
    try:
        await w.create_run("r1", "suite", {"suite": "suite"})
        await w.add_trials("r1", [TrialRow("s1", "mcp", "offline:default", 0, 7)])
        with StoreReader(path) as reader:
            (trial,) = reader.trials()
        w.emit(
            "r1",
            TrialStarted(scenario="s1", arm="mcp", model="offline:default", epoch=0, seed=7, attempt=1),
            trial_id=trial.id,
            attempt=1,
        )
        await w.flush()
        await w.abandon_unfinished("r1")
        emit = lambda ev: w.emit("r1", ev, trial_id=trial.id, attempt=2)  # noqa: E731
        emit(TrialStarted(scenario="s1", arm="mcp", model="offline:default", epoch=0, seed=7, attempt=2))
        emit(ToolCall(call_id="c", server="srv", tool="=HYPERLINK(evil)", arguments={"q": f"key {SECRET}"}))
        emit(
            ToolResult(
                call_id="c",
                server="srv",
                tool="=HYPERLINK(evil)",
                content=f"echo {SHAPED}",
                is_error=False,
                latency_s=0.1,
            )
        )
        emit(
            TrialFinished(
                status="finished",
                stop="answer",
                final_answer="done",
                tool_calls=1,
                usage=Usage(),
                cost_usd=0.0,
                wall_s=1.0,
            )
        )
        emit(Scored(name="fairness", value=0.75, details={"weights": {"llm_quality": 0.55}}))
        emit(Scored(name="adoption", value=None, details={"missing": ["discoverability"]}))
        w.emit(
            "r1",
            Judged(pass_no=1, judge="human", verdict={"score": 1.0, "passed": True}),
            trial_id=trial.id,
            attempt=2,
            judgment=JudgmentMeta(source="x:human"),
        )
    finally:
        await w.close()
    return path


@pytest.fixture
async def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PROCTOR_TEST_API_KEY", SECRET)
    return await _db(tmp_path / "run.db")


def _jsonl(db: Path) -> list[dict[str, object]]:
    out = io.StringIO()
    export_run(db, "jsonl", out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_jsonl_rows_follow_the_schema_and_cover_events_and_scores(db: Path) -> None:
    rows = _jsonl(db)
    assert all(tuple(r) == COLUMNS and r["schema"] == SCHEMA for r in rows)
    events = [r for r in rows if r["record"] == "event"]
    scores = [r for r in rows if r["record"] == "score"]
    with StoreReader(db) as reader:
        assert len(events) == reader.max_event_id()
        assert len(scores) == len(reader.scores()) == 2
    assert [e["event_id"] for e in events] == sorted(e["event_id"] for e in events)  # type: ignore[type-var]
    assert [(e["kind"], e["abandoned"], e["attempt"]) for e in events[:2]] == [
        ("trial_started", True, 1),
        ("trial_started", False, 2),
    ]
    fairness = next(s for s in scores if s["name"] == "fairness")
    assert fairness["value"] == 0.75 and fairness["data"] == {"weights": {"llm_quality": 0.55}}
    assert (fairness["scenario"], fairness["arm"], fairness["model"], fairness["epoch"]) == (
        "s1",
        "mcp",
        "offline:default",
        0,
    )
    judged = next(e for e in events if e["kind"] == "judgment")
    assert (judged["name"], judged["value"]) == ("human", 1.0)
    call = next(e for e in events if e["kind"] == "tool_call")
    assert call["name"] == "=HYPERLINK(evil)" and call["data"]["server"] == "srv"  # type: ignore[index]


def test_no_secret_reaches_an_export(db: Path, tmp_path: Path) -> None:
    for fmt in ("jsonl", "csv"):
        out = tmp_path / f"x.{fmt}"
        export_to_file(db, fmt, out)  # type: ignore[arg-type]
        text = out.read_text()
        assert SECRET not in text and SHAPED not in text
        assert text.count("[redacted: ") == 2


def test_csv_has_the_same_rows_and_defuses_formulas(db: Path) -> None:
    out = io.StringIO()
    assert export_run(db, "csv", out) == len(_jsonl(db))
    reader = csv.reader(io.StringIO(out.getvalue()))
    header = next(reader)
    assert tuple(header) == COLUMNS
    rows = [dict(zip(header, r, strict=True)) for r in reader]
    assert len(rows) == len(_jsonl(db))
    call = next(r for r in rows if r["kind"] == "tool_call")
    assert call["name"] == "'=HYPERLINK(evil)"
    assert json.loads(call["data"])["tool"] == "=HYPERLINK(evil)"  # inside JSON it is data, not a cell
    adoption = next(r for r in rows if r["record"] == "score" and r["name"] == "adoption")
    assert adoption["value"] == "" and adoption["abandoned"] == "false" and adoption["event_id"] == ""


def test_a_failed_export_leaves_no_file(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    with pytest.raises(FileNotFoundError):
        export_to_file(tmp_path / "missing.db", "jsonl", out)
    assert list(tmp_path.iterdir()) == []
