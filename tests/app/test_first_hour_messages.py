"""The first hour's mistakes, each answered by a message that says what to do next."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from proctor.app.cli import build_parser, main

DEMO = Path(__file__).resolve().parents[2] / "scenarios" / "demo"


def test_top_level_help_lists_no_internal_command_and_no_suppress_marker() -> None:
    text = build_parser().format_help()
    assert "==SUPPRESS==" not in text and "engine-process" not in text
    assert "demo" in text and "report" in text


def test_every_positional_argument_of_gate_is_described() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    gate = sub.choices["gate"]  # type: ignore[attr-defined]
    db = next(a for a in gate._actions if a.dest == "db")
    assert db.help and "run database" in db.help


def test_run_without_db_records_in_runs_suite_name_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = tmp_path / "suite"
    shutil.copytree(DEMO, suite, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.chdir(tmp_path)
    code = main(["run", str(suite), "--headless", "--arms", "baseline", "--scenarios", "retry-delay-cap"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "no --db given; recording the run in runs/demo.db" in err
    assert (tmp_path / "runs" / "demo.db").is_file()
