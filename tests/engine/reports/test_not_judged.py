"""A scenario without checks is "not judged": no pass, no fairness, no judge, said so everywhere."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from proctor.app.views.state import display_status
from proctor.engine.reports.report import build_report
from proctor.engine.reports.report_markdown import render_markdown
from proctor.engine.runs.options import RunOptions
from proctor.engine.runs.session import run_suite
from proctor.scenarios.loader import load_suite
from proctor.store.read.reader import StoreReader


def _suite(root: Path) -> Path:
    (root / "scenarios").mkdir(parents=True)
    suite = {
        "name": "bare",
        "mcpServers": {
            "weather": {"command": sys.executable, "args": ["-m", "proctor.scenarios.demo.servers.weather"]}
        },
        "arms": {"baseline": {"baseline": True}, "weather": {"servers": ["weather"]}},
        "models": ["offline:default"],
    }
    (root / "suite.yaml").write_text(yaml.safe_dump(suite))
    (root / "scenarios" / "bare.yaml").write_text(
        yaml.safe_dump({"id": "bare", "prompt": "Tell me about the weather."})
    )
    return root


async def test_a_scenario_without_checks_is_not_judged_in_scores_report_and_console(tmp_path: Path) -> None:
    loaded = load_suite(_suite(tmp_path / "suite"))
    assert loaded.warnings
    db = tmp_path / "run.db"
    assert await run_suite(loaded, RunOptions(db=db)) == "finished"
    with StoreReader(db) as r:
        trials = r.trials()
        scores = {(s.trial_id, s.name): s for s in r.scores()}
        assert r.judgments() == []  # no judge was asked to judge nothing
    assert len(trials) == 2
    for t in trials:
        assert t.status == "finished" and t.passed is None
        assert scores[(t.id, "fairness")].value is None
        assert scores[(t.id, "llm_quality")].value is None
        assert scores[(t.id, "passed")].details["not_judged"] is True
        assert display_status(t, {"passed": scores[(t.id, "passed")]}) == "not judged"
    report = build_report(db)
    assert all(a["not_judged"] == 1 and a["judged"] == 0 and a["fairness"] is None for a in report["arms"])
    assert "(1 not judged: no checks)" in render_markdown(report)
