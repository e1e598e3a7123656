"""``proctor judge``, ``proctor anchors lock|verify`` and ``proctor report`` through their parsers."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from proctor.app.cli import main
from proctor.scenarios.demo import SUITE_DIR
from proctor.store.events import Judged
from proctor.store.read.reader import StoreReader
from tests.engine.judging_fixture import Fixture, build_run, facts
from tests.fakes import fake_anthropic as fa

KEY = "sk-ant-api03-CLIJUDGE-0123456789abcdef"


def run_cli(*argv: str) -> int:
    return main(list(argv))


@pytest.fixture
def fx(tmp_path: Path) -> Fixture:
    return asyncio.run(build_run(tmp_path))


@pytest.fixture
def anthropic(monkeypatch: pytest.MonkeyPatch) -> Iterator[fa.FakeAnthropic]:
    with fa.FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        yield fake


def verdict_for(scenario: str, score: float) -> dict[str, Any]:
    return {
        "score": score,
        "claims": [{"claim": f, "verdict": "fulfilled", "justification": "stated"} for f in facts(scenario)],
        "key_points_success": None,
        "criteria": [{"name": f"names-{f}", "score": score, "rationale": "ok"} for f in facts(scenario)],
        "failure_mode": None,
        "rationale": "fine",
    }


def test_judge_adds_llm_passes_through_the_fake_api(
    fx: Fixture, anthropic: fa.FakeAnthropic, capsys: pytest.CaptureFixture[str]
) -> None:
    anthropic.enqueue(
        fa.message_reply(text=[json.dumps(verdict_for("s1", 0.9))], usage=fa.WireUsage(300, 50)),
        fa.message_reply(text=["```json\n" + json.dumps(verdict_for("s1", 0.7)) + "\n```"]),
    )
    code = run_cli("judge", str(fx.db), "--judge", "anthropic:claude-cli", "--trials", "1,2")
    out = capsys.readouterr().out
    assert code == 0, out
    assert "#1: anthropic:claude-cli passes [1]; llm_quality 0.900; passed" in out
    assert "re-judged 2 trial(s); 0 judge error(s)" in out
    with StoreReader(fx.db) as r:
        rows = [j for j in r.judgments(1) if j.judge == "anthropic:claude-cli"]
        judged = [e.event for e in r.events_of_kind("judgment") if e.trial_id == 1]
    assert len(rows) == 1 and rows[0].prompt_version == "llm-judge-1" and rows[0].temperature == 0.0
    last = judged[-1]
    assert isinstance(last, Judged) and last.usage is not None and last.usage.input_tokens == 300
    assert KEY.encode() not in fx.db.read_bytes()


def test_judge_reports_judge_errors_with_exit_3(
    fx: Fixture, anthropic: fa.FakeAnthropic, capsys: pytest.CaptureFixture[str]
) -> None:
    anthropic.enqueue(*(fa.message_reply(text=["not json"]) for _ in range(3)))
    code = run_cli("judge", str(fx.db), "--judge", "anthropic:claude-cli", "--trials", "5")
    out = capsys.readouterr().out
    assert code == 3
    assert "llm_quality –; no verdict, 1 judge error(s)" in out


def test_judge_with_the_suite_judge_needs_no_network(fx: Fixture, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli("judge", str(fx.db), "--passes", "2") == 0
    assert "re-judged 16 trial(s)" in capsys.readouterr().out
    with StoreReader(fx.db) as r:
        assert sorted(j.pass_no for j in r.judgments(9)) == [1, 2, 3, 4]


def test_anchors_lock_then_verify_then_tamper(fx: Fixture, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli("anchors", "lock", "--suite", str(fx.suite_dir), "--db", str(fx.db)) == 0
    assert "locked 8 anchor transcript(s) of s3, s4 (12 files)" in capsys.readouterr().out
    assert run_cli("anchors", "verify", "--suite", str(fx.suite_dir)) == 0
    assert "anchors verification passed" in capsys.readouterr().out
    rubric = fx.suite_dir / "anchors" / "s4" / "rubric.json"
    rubric.write_text(rubric.read_text().replace("gamma", "GAMMA"))
    assert run_cli("anchors", "verify", "--suite", str(fx.suite_dir)) == 3
    out = capsys.readouterr().out
    assert "FAILED" in out and "s4/rubric.json: changed" in out


@pytest.mark.parametrize("fmt", ["md", "json", "csv"])
def test_report_formats(fx: Fixture, fmt: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert run_cli("report", str(fx.db), "--format", fmt) == 0
    text = capsys.readouterr().out
    if fmt == "md":
        assert text.startswith("# proctor report: judging-fixture") and "offline agent" in text
    elif fmt == "json":
        data = json.loads(text)
        assert {a["arm"] for a in data["arms"]} == {"baseline", "mcp"} and "anchors" in data
    else:
        rows = list(csv.DictReader(io.StringIO(text)))
        assert len(rows) == 2 and rows[0]["agent"].startswith("offline agent")
    out = tmp_path / f"report.{fmt}"
    assert run_cli("report", str(fx.db), "--format", fmt, "-o", str(out)) == 0
    assert out.read_text() == text


def test_bad_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli("report", str(tmp_path / "missing.db")) == 2
    assert "no such run database" in capsys.readouterr().err
    assert run_cli("anchors", "verify", "--suite", str(tmp_path)) == 2
    assert "suite file not found" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        run_cli("judge", "x.db", "--trials", "one,two")


def test_judge_from_another_directory_uses_the_runs_suite_and_warns_when_it_changed(
    fx: Fixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert run_cli("judge", str(fx.db), "--trials", "1") == 0
    assert "has changed" not in capsys.readouterr().err
    suite_file = fx.suite_dir / "suite.yaml"
    suite_file.write_text(suite_file.read_text() + "\n# edited\n")
    assert run_cli("judge", str(fx.db), "--trials", "1") == 0
    captured = capsys.readouterr()
    assert "has changed since the run" in captured.err and "#1: offline:lexical passes [4]" in captured.out


@pytest.mark.slow
def test_a_suite_whose_anchors_were_locked_still_resumes_its_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What ``make demo`` does after L in the console: lock, then run the same command again."""
    suite = tmp_path / "demo"
    shutil.copytree(SUITE_DIR, suite, ignore=shutil.ignore_patterns("__pycache__", "anchors"))
    db = tmp_path / "demo.db"
    scope = ["--arms", "baseline,codeintel", "--scenarios", "cli-enqueue-delay,scheduler-tie-order"]
    assert run_cli("run", str(suite), "--headless", "--db", str(db), *scope) == 0
    before = (suite / "suite.yaml").read_bytes()
    assert run_cli("anchors", "lock", "--suite", str(suite), "--db", str(db)) == 0
    assert "suite.yaml is unchanged" in capsys.readouterr().out
    assert (suite / "suite.yaml").read_bytes() == before
    # Resumed: the suite's hash is the run's, and the new lock is verified before anything runs.
    assert run_cli("run", str(suite), "--headless", "--db", str(db), "--resume") == 0
    err = capsys.readouterr().err
    assert "has changed since the run started" not in err and "refusing to run" not in err
    # The lock is in force: a rubric change that breaks it is refused before any trial.
    locked = suite / "anchors" / "cli-enqueue-delay" / "rubric.json"
    locked.write_text(locked.read_text().replace("enqueue", "ENQUEUE"))
    assert run_cli("run", str(suite), "--headless", "--db", str(db), "--resume") == 2
    assert "refusing to run" in capsys.readouterr().err
