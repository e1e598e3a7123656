"""``proctor report`` on a run an LLM judge judged twice: σ is the spread of the score arms are
ranked by (llm_quality, the judge's overall score), in the convention the report names."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from proctor.app.cli import main
from proctor.scenarios.loader import SuiteError, load_suite
from tests.engine.judging_fixture import Fixture, build_run, facts, write_suite
from tests.fakes import fake_anthropic as fa

KEY = "sk-ant-api03-SPREAD-0123456789abcdef"
JUDGE = "anthropic:claude-spread"


@pytest.fixture
def anthropic(monkeypatch: pytest.MonkeyPatch) -> Iterator[fa.FakeAnthropic]:
    with fa.FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        yield fake


def _verdict(score: float) -> str:
    """Every criterion 0.7 on every pass; only the overall score moves."""
    return json.dumps(
        {
            "score": score,
            "claims": [{"claim": f, "verdict": "fulfilled", "justification": "stated"} for f in facts("s1")],
            "key_points_success": None,
            "criteria": [{"name": f"names-{f}", "score": 0.7, "rationale": "ok"} for f in facts("s1")],
            "failure_mode": None,
            "rationale": "fine",
        }
    )


def _judged_twice(fx: Fixture, anthropic: fa.FakeAnthropic) -> dict[str, Any]:
    """Trial 1 (s1, baseline, epoch 0) judged twice, 0.70 then 0.74; the report's JSON."""
    anthropic.enqueue(fa.message_reply(text=[_verdict(0.70)]), fa.message_reply(text=[_verdict(0.74)]))
    assert main(["judge", str(fx.db), "--judge", JUDGE, "--passes", "2", "--trials", "1"]) == 0
    return json.loads(_report(fx, "json"))


def _report(fx: Fixture, fmt: str) -> str:
    out = fx.db.with_suffix(f".{fmt}")
    assert main(["report", str(fx.db), "--format", fmt, "-o", str(out)]) == 0
    return out.read_text()


def _row(report: dict[str, Any]) -> dict[str, Any]:
    (arm,) = [a for a in report["arms"] if a["arm"] == "baseline"]
    (row,) = [v for v in arm["judge_variance"] if v["judge"] == JUDGE]
    return row


def test_sigma_is_the_spread_of_the_overall_score_while_the_criteria_agree(
    tmp_path: Path, anthropic: fa.FakeAnthropic
) -> None:
    fx = asyncio.run(build_run(tmp_path))
    report = _judged_twice(fx, anthropic)
    (trial,) = [t for t in report["trials"] if t["id"] == 1]
    quality = json.loads(json.dumps(trial["scores"]["llm_quality"]))
    assert quality["details"]["scores"][-2:] == [0.70, 0.74]
    row = _row(report)
    assert row["criterion"]["max_sd"] == 0.0  # the criteria agree on both passes
    # sample SD (the default): |0.74 - 0.70| / sqrt(2)
    assert row["step"]["mean_sd"] == pytest.approx(0.04 / 2**0.5)
    assert row["scenario"]["mean_sd"] == pytest.approx(0.04 / 2**0.5)
    assert row["sd"] == "sample"
    md = _report(fx, "md")
    assert "the sample SD (n − 1) across judge passes" in md
    line = next(x for x in md.splitlines() if x.startswith(f"| {JUDGE} | baseline"))
    assert "0.028 / 0.028" in line


def test_a_suite_may_choose_the_population_sd_and_the_floor_is_compared_in_it(
    tmp_path: Path, anthropic: fa.FakeAnthropic
) -> None:
    settings = {"judge": {"sd": "population"}, "scoring": {"variance_floor": 0.025}}
    fx = asyncio.run(build_run(tmp_path, settings=settings))
    row = _row(_judged_twice(fx, anthropic))
    # population SD: |0.74 - 0.70| / 2 = 0.020, below the floor 0.025 (sample, 0.028, is above it)
    assert (row["sd"], row["step"]["mean_sd"]) == ("population", pytest.approx(0.02))
    assert row["above_floor"] is False
    md = _report(fx, "md")
    assert "the population SD (n) across judge passes" in md
    assert "0.020 / 0.020" in next(x for x in md.splitlines() if x.startswith(f"| {JUDGE} | baseline"))


def test_a_judge_sd_that_is_no_convention_is_an_error_naming_the_field(tmp_path: Path) -> None:
    with pytest.raises(SuiteError) as info:
        write_suite(tmp_path / "suite", settings={"judge": {"sd": "unbiased"}})
        load_suite(tmp_path / "suite")
    assert "field 'judge.sd'" in str(info.value) and "'sample' or 'population'" in str(info.value)
