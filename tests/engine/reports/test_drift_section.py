"""The report of a replay run: its drift section in JSON, Markdown, CSV and JUnit; none elsewhere."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from proctor.engine.reports.junit import report_junit
from proctor.engine.reports.report import build_report
from proctor.engine.reports.report_csv import render_csv
from proctor.engine.reports.report_markdown import render_markdown
from proctor.store.events import ToolCall, ToolResult, TrialFinished, TrialStarted, Usage
from proctor.store.write.writer import StoreWriter, TrialRow

MODEL = "offline:gold"
HOSTILE = "look|up`[x](javascript:alert(1))\x1b]0;t\x07"


async def _write(db: Path, run: str, config: dict[str, Any], results: list[tuple[str, bool]]) -> None:
    w = await StoreWriter.open(db)
    try:
        await w.create_run(run, "s", config)
        await w.add_trials(run, [TrialRow("sc", "mcp", MODEL, 0, 0)])
        w.emit(
            run,
            TrialStarted(scenario="sc", arm="mcp", model=MODEL, epoch=0, seed=0, attempt=1),
            trial_id=1,
            attempt=1,
        )
        for k, (content, error) in enumerate(results):
            w.emit(
                run,
                ToolCall(call_id=f"c{k}", server="srv", tool=HOSTILE, arguments={"k": k}),
                trial_id=1,
                attempt=1,
            )
            w.emit(
                run,
                ToolResult(
                    call_id=f"c{k}",
                    server="srv",
                    tool=HOSTILE,
                    content=content,
                    is_error=error,
                    latency_s=0.0,
                ),
                trial_id=1,
                attempt=1,
            )
        end = TrialFinished(
            status="finished",
            stop="replayed",
            final_answer="",
            tool_calls=len(results),
            usage=Usage(),
            cost_usd=0.0,
            wall_s=0.0,
        )
        w.emit(run, end, trial_id=1, attempt=1)
    finally:
        await w.close()


def _pair(tmp: Path) -> tuple[Path, Path]:
    old, new = tmp / "old.db", tmp / "new.db"
    asyncio.run(_write(old, "rec", {}, [("same", False), ('{"v": 1}', False), ("fine", False)]))
    replay = {"source_db": str(old), "source_db_relative": "old.db", "source_run": "rec", "ignore": []}
    asyncio.run(
        _write(new, "rep", {"replay": replay}, [("same", False), ('{"v": 2}', False), ("=boom", True)])
    )
    return old, new


def test_a_replay_report_carries_its_drift_in_every_format(tmp_path: Path) -> None:
    old, new = _pair(tmp_path)
    report = build_report(new)
    drift = report["drift"]
    assert drift["totals"] == {
        "identical": 1,
        "changed": 1,
        "new_error": 1,
        "fixed_error": 0,
        "missing": 0,
        "skipped": 0,
    }
    assert drift["source"] == {"db": str(old), "run": "rec"}
    assert [c["status"] for c in drift["calls"]] == ["identical", "changed", "new_error"]
    assert drift["calls"][1]["summary"] == "changed: $.v: 1 -> 2"

    md = render_markdown(report)
    assert "**2** of 3 call(s) changed or newly erred" in md and "| srv | 3 | 1 | 1 | 1 | 0 | 0 | 0 |" in md
    assert "\x1b" not in md and "[x](javascript" not in md  # a hostile tool name stays text
    assert "~ $.v: 1 -> 2" in md and "## Arms × models" not in md  # nothing was judged: no arm tables

    rows = list(csv.DictReader(io.StringIO(render_csv(report))))
    assert [(r["call"], r["status"]) for r in rows] == [
        ("1", "identical"),
        ("2", "changed"),
        ("3", "new_error"),
    ]
    assert rows[2]["summary"].startswith("new error: error: =boom")

    root = ET.fromstring(report_junit(report))
    cases = root.findall(".//testcase")
    assert len(cases) == 3 and root.get("failures") == "2"
    failure = cases[1].find("failure")
    assert failure is not None and "~ $.v: 1 -> 2" in (failure.text or "")
    assert json.loads(json.dumps(report))  # the JSON report holds only JSON


def test_a_run_that_is_no_replay_has_no_drift(tmp_path: Path) -> None:
    old, _ = _pair(tmp_path)
    report = build_report(old)
    assert "drift" not in report
    assert "## Drift" not in render_markdown(report)
    assert render_csv(report).startswith("arm,model,")
