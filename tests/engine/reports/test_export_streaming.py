"""The streaming export writes exactly what the export that read everything at once wrote.

``_reference_rows`` is the export before it streamed (all scores read in one query, the whole
trials table held): the output must stay byte-identical, chunk boundaries and redaction of
secrets that appear only after the store was written included.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

import pytest

from proctor.engine.reports import export
from proctor.engine.reports.export import SCHEMA, Format, export_run, write_csv, write_jsonl
from proctor.engine.reports.redacted_tree import redacted_batch
from proctor.store import redaction
from proctor.store.events import (
    FinalAnswer,
    Judged,
    ModelResponse,
    RunFinished,
    RunStarted,
    Scored,
    ToolCall,
    ToolCallRequest,
    ToolResult,
    TrialFinished,
    TrialStarted,
    Usage,
)
from proctor.store.read.reader import StoreReader
from proctor.store.records import JudgmentMeta
from proctor.store.write.writer import StoreWriter, TrialRow

LATE_SECRET = "late-secret-value-0123456789"


def _reference_rows(reader: StoreReader) -> Iterator[dict[str, Any]]:
    """The export as it was before it streamed (engine/reports/export.py before this change)."""
    run = reader.run()
    run_id = run.id if run else ""
    trials = {t.id: t for t in reader.trials()}

    def columns(tid: int | None) -> dict[str, Any]:
        t = trials.get(tid) if tid is not None else None
        if t is None:
            return {"trial_id": None, "scenario": None, "arm": None, "model": None, "epoch": None}
        return {"trial_id": t.id, "scenario": t.scenario, "arm": t.arm, "model": t.model, "epoch": t.epoch}

    events = []
    after = 0
    while True:
        batch = reader.events_after(after, 1000)
        events.extend(batch)
        if len(batch) < 1000:
            break
        after = batch[-1].id
    rows = []
    for stored in events:
        name, value = export._name_and_value(stored)
        rows.append(
            {
                "schema": SCHEMA,
                "record": "event",
                "run_id": run_id,
                **columns(stored.trial_id),
                "attempt": stored.attempt,
                "event_id": stored.id,
                "ts": stored.ts,
                "kind": stored.kind,
                "name": name,
                "value": value,
                "abandoned": stored.abandoned,
                "data": stored.event.model_dump(mode="json", exclude={"kind"}),
            }
        )
    yield from redacted_batch(rows)
    yield from redacted_batch(
        [
            {
                "schema": SCHEMA,
                "record": "score",
                "run_id": run_id,
                **columns(score.trial_id),
                "attempt": None,
                "event_id": None,
                "ts": None,
                "kind": "score",
                "name": score.name,
                "value": score.value,
                "abandoned": False,
                "data": score.details,
            }
            for score in reader.scores()
        ]
    )


async def _store(path: Path) -> Path:
    w = await StoreWriter.open(path)
    try:
        await w.create_run("r1", "suite", {"suite": "suite"})
        rows = [
            TrialRow(f"s{i % 3}", ("baseline", "mcp")[i % 2], "offline:default", i // 3, i) for i in range(7)
        ]
        await w.add_trials("r1", rows)
        w.emit("r1", RunStarted(run_id="r1", suite="suite", config={}, trials=7))
        with StoreReader(path) as reader:
            trials = reader.trials()
        for n, t in enumerate(trials):
            if n == 2:  # an abandoned attempt
                w.emit("r1", TrialStarted(scenario=t.scenario, arm=t.arm, model=t.model, epoch=t.epoch, seed=t.seed, attempt=1), trial_id=t.id, attempt=1)  # fmt: skip
                await w.flush()
                await w.abandon_unfinished("r1")
            attempt = 2 if n == 2 else 1
            emit = lambda ev, tid=t.id, a=attempt: w.emit("r1", ev, trial_id=tid, attempt=a)  # noqa: E731
            emit(TrialStarted(scenario=t.scenario, arm=t.arm, model=t.model, epoch=t.epoch, seed=t.seed, attempt=attempt))  # fmt: skip
            emit(
                ModelResponse(
                    turn=1,
                    model=t.model,
                    text="",
                    tool_calls=[ToolCallRequest(call_id="c", name="grep", arguments={"q": "x"})],
                    stop_reason="tool_use",
                    usage=Usage(input_tokens=10, output_tokens=2),
                    cost_usd=0.0,
                    latency_s=0.01,
                )
            )
            emit(ToolCall(call_id="c", server="srv", tool="=grep", arguments={"q": f"find {LATE_SECRET}"}))
            emit(ToolResult(call_id="c", server="srv", tool="=grep", content=f"line {n}", is_error=False, latency_s=0.1))  # fmt: skip
            emit(FinalAnswer(text=f"answer {n}"))
            emit(TrialFinished(status="finished", stop="answer", final_answer=f"answer {n}", tool_calls=1, usage=Usage(), cost_usd=0.0, wall_s=1.0))  # fmt: skip
            emit(Scored(name="fairness", value=n / 10, details={"weights": {"llm_quality": 0.55}}))
            emit(
                Scored(name="adoption", value=None, details={"missing": ["discoverability"], "note": f"+{n}"})
            )
            if n % 2:
                emit(Scored(name="passed", value=1.0, details={"why": f"saw {LATE_SECRET}"}))
            w.emit(
                "r1",
                Judged(pass_no=1, judge="offline:lexical", verdict={"score": 0.5 + n / 20, "passed": True}),
                trial_id=t.id,
                attempt=attempt,
                judgment=JudgmentMeta(prompt_version="v1"),
            )
        w.emit("r1", RunFinished(run_id="r1", status="finished"))
    finally:
        await w.close()
    return path


@pytest.mark.parametrize("batch", [3, 5000])
async def test_streamed_export_is_byte_identical_to_the_old_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    db = await _store(tmp_path / "run.db")
    # The redactor follows the environment by its size; restore its cache after this test so a
    # later test setting the same variable to another value is not served this one's.
    monkeypatch.setattr(redaction, "_process", redaction._process)
    monkeypatch.setattr(redaction, "_env_size", -1)
    monkeypatch.setenv("PROCTOR_TEST_API_KEY", LATE_SECRET)  # known only at export time
    monkeypatch.setattr(export, "_BATCH", batch)
    formats: tuple[tuple[Format, Callable[[Iterator[dict[str, Any]], TextIO], int]], ...] = (
        ("jsonl", write_jsonl),
        ("csv", write_csv),
    )
    for fmt, write in formats:
        expected = io.StringIO()
        with StoreReader(db) as reader:
            write(_reference_rows(reader), expected)
        got = io.StringIO()
        export_run(db, fmt, got)
        assert got.getvalue() == expected.getvalue(), fmt
        assert LATE_SECRET not in got.getvalue()
        assert "record" in got.getvalue() and "score" in got.getvalue()
