"""MCP-Atlas's public sample as published: reference trajectories that end on a tool result.

``fixtures/mcp_atlas_sample/sample_tasks_excerpt.csv`` holds two rows of the upstream
``sample_tasks.csv`` unchanged (MIT, see its README and ``make_excerpt.py``). The file has no
final answer column, and every trajectory's last message is a tool result: Scale's reference
solutions have no answer to judge. Judged as empty answers they all failed; they must be "no
answer", said at import and in the report, with their calls still scoring TFS/TEFS.
"""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path

from proctor.engine.grading.rejudge import rejudge_db
from proctor.engine.reports.report import build_report
from proctor.engine.reports.report_markdown import render_markdown
from proctor.engine.runs.imported_runs import save_import
from proctor.scenarios.importers.mcp_atlas import read_mcp_atlas
from proctor.store.read.reader import StoreReader

SAMPLE = Path(__file__).parent / "fixtures" / "mcp_atlas_sample" / "sample_tasks_excerpt.csv"


def _servers(path: Path) -> Path:
    """An mcpServers config naming the servers the rows use, so the trials land in an arm."""
    with SAMPLE.open(encoding="utf-8", newline="") as f:
        tools = [t for row in csv.DictReader(f) for t in json.loads(row["ENABLED_TOOLS"])]
    servers = {t.split("_", 1)[0] for t in tools}
    path.write_text(json.dumps({"mcpServers": {s: {"command": "true"} for s in sorted(servers)}}))
    return path


def test_the_published_rows_end_on_a_tool_result_without_a_final_answer() -> None:
    with SAMPLE.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 and "GTFA" not in rows[0]
    assert all(json.loads(r["TRAJECTORY"])[-1]["role"] == "tool" for r in rows)


async def test_reference_trajectories_without_an_answer_are_no_answer_not_failures(tmp_path: Path) -> None:
    imported = read_mcp_atlas(SAMPLE, servers_file=_servers(tmp_path / "servers.json"))
    assert any("2 of 2 reference trajectories end without a final answer" in n for n in imported.notes)
    saved = await asyncio.to_thread(save_import, imported, tmp_path / "atlas")
    assert saved.db is not None
    results = await rejudge_db(saved.db, passes=1)
    assert len(results) == 2 and all(r.no_answer and r.passed is None for r in results)
    with StoreReader(saved.db) as reader:
        trials = reader.trials()
        assert reader.judgments() == []  # no judge read an empty answer
        scores = {(s.trial_id, s.name): s for s in reader.scores()}
    for t in trials:
        assert (t.status, t.stop, t.passed) == ("finished", "no_answer", None)
        assert scores[(t.id, "passed")].details["no_answer"] is True
        assert scores[(t.id, "tfs")].value == 1.0  # the reference calls are the gold calls
        assert (t.id, "failure_mode") not in scores
    report = build_report(saved.db)
    (arm,) = [a for a in report["arms"] if a["arm"] == "mcp"]
    assert arm["judged"] == 0 and arm["passed"] == 0
    note = "2 mcp trial(s) have no final answer: imported reference trajectories that end on a tool result"
    assert any(n.startswith(note) for n in report["notes"])
    assert note in render_markdown(report)
