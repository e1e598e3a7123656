"""A gold call to a tool no arm offers is refused before the run, naming the file and the field."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from proctor.app.cli import main
from proctor.engine.runs.gold_check import unknown_gold_tools
from proctor.scenarios.loader import load_suite

DEMO = Path(__file__).resolve().parents[3] / "scenarios" / "demo"


def _demo_copy(tmp_path: Path) -> Path:
    suite = tmp_path / "demo"
    shutil.copytree(DEMO, suite, ignore=shutil.ignore_patterns("__pycache__"))
    return suite


def test_unknown_tools_are_named_with_their_field(tmp_path: Path) -> None:
    loaded = load_suite(_demo_copy(tmp_path))
    offered = {"codeintel": {"search_symbols", "find_definition"}, "baseline": {"grep"}}
    problems = unknown_gold_tools(loaded, offered)
    assert problems, "the demo's gold calls use more codeintel tools than this list"
    assert all("field 'gold_tool_calls." in p and "is offered by no arm" in p for p in problems)
    everything = {"codeintel": {c.tool for s in loaded.scenarios for step in s.gold_tool_calls for c in step}}
    assert unknown_gold_tools(loaded, everything) == []


def test_a_misspelt_gold_tool_stops_the_run_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _demo_copy(tmp_path)
    scenario = suite / "scenarios" / "01_retry_delay.yaml"
    scenario.write_text(scenario.read_text().replace("{tool: find_definition,", "{tool: find_definitoin,"))
    db = tmp_path / "r.db"
    assert main(["run", str(suite), "--headless", "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert "01_retry_delay.yaml: field 'gold_tool_calls.1.0.tool': 'find_definitoin'" in err
    assert "offered: find_definition" in err and not db.exists()
