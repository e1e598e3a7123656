"""JUnit XML for CI: a case per scenario x arm, failures with their reason, the gate's verdict."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped

from proctor.app.cli import main
from proctor.engine.reports.junit import report_junit
from proctor.engine.reports.report import build_report
from tests.engine.judging_fixture import build_run


@pytest.fixture
async def report(tmp_path: Path) -> dict[str, Any]:
    fx = await build_run(tmp_path)
    return build_report(fx.db)


def _parse(xml: str, tmp_path: Path) -> JUnitXml:
    path = tmp_path / "junit.xml"
    path.write_text(xml, encoding="utf-8")
    return JUnitXml.fromfile(str(path))


def _outcomes(doc: JUnitXml) -> dict[tuple[str, str], str]:
    out = {}
    for suite in doc:
        for case in suite:
            kinds = {type(r).__name__ for r in case.result}
            out[(case.classname, case.name)] = next(iter(kinds)) if kinds else "passed"
    return out


def test_one_case_per_scenario_and_arm_failing_with_the_reason(
    report: dict[str, Any], tmp_path: Path
) -> None:
    doc = _parse(report_junit(report), tmp_path)
    trials = report["trials"]
    cells = {(t["arm"], t["scenario"]) for t in trials}
    outcomes = _outcomes(doc)
    assert len(outcomes) == len(cells)
    for arm, scenario in cells:
        epochs = [t for t in trials if (t["arm"], t["scenario"]) == (arm, scenario)]
        expected = "Failure" if any(t["passed"] is False for t in epochs) else "passed"
        assert outcomes[(f"{report['run']['suite']}.{arm}", scenario)] == expected
    failures = [r for suite in doc for case in suite for r in case.result if isinstance(r, Failure)]
    assert failures and all("epoch(s) passed" in f.message for f in failures)
    assert all("failed on " in (f.text or "") for f in failures)
    assert doc.failures == len(failures) and doc.tests == len(cells)


def test_errored_unscored_and_hostile_trials(report: dict[str, Any], tmp_path: Path) -> None:
    changed = copy.deepcopy(report)
    first = changed["trials"][0]
    second = next(
        t for t in changed["trials"] if (t["arm"], t["scenario"]) != (first["arm"], first["scenario"])
    )
    for t in changed["trials"]:
        if (t["arm"], t["scenario"]) == (first["arm"], first["scenario"]):
            t.update(status="error", error="server crashed\x1b[2J", passed=None)
        if (t["arm"], t["scenario"]) == (second["arm"], second["scenario"]):
            t.update(passed=None, scores={}, final_answer="bell\x07 and NUL\x00 and ]]> end")
    doc = _parse(report_junit(changed), tmp_path)
    suite_name = report["run"]["suite"]
    results = {(case.classname, case.name): case.result for suite in doc for case in suite}
    (error,) = [
        r for r in results[(f"{suite_name}.{first['arm']}", first["scenario"])] if isinstance(r, Error)
    ]
    assert (
        "ended in error" in error.message
        and "server crashed\n" in (error.text or "")
        and "[2J" not in (error.text or "")
    )
    skipped = results[(f"{suite_name}.{second['arm']}", second["scenario"])]
    assert any(isinstance(r, Skipped) for r in skipped)
    assert doc.errors >= 1 and doc.skipped >= 1


def test_gate_writes_junit_and_a_github_step_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import asyncio

    fx = asyncio.run(build_run(tmp_path))
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    out = tmp_path / "gate.xml"
    code = main(["gate", str(fx.db), "--baseline", "baseline", "--min-delta", "0.5", "--junit", str(out)])
    assert code == 3
    doc = JUnitXml.fromfile(str(out))
    gate = [s for s in doc if s.name.startswith("gate")]
    assert len(gate) == 1
    (case,) = list(gate[0])
    assert case.name == "mcp beats baseline" and isinstance(case.result[0], Failure)
    assert "< +0.500" in case.result[0].message
    text = summary.read_text()
    assert text.startswith("### proctor gate: failed (baseline baseline, min delta +0.500)")
    assert "| mcp |" in text and "**FAIL**" in text
    assert main(["report", str(fx.db), "--format", "junit"]) == 0
    assert capsys.readouterr().out.count("<testcase ") == doc.tests - 1
