"""The run report in JSON, Markdown and CSV, on a scored fixture store with anchors locked."""

from __future__ import annotations

import asyncio
import csv
import io
import json
from pathlib import Path

import pytest

from proctor.engine.grading.anchors import lock_anchors
from proctor.engine.judges.base import JudgeOutcome, JudgeSubject
from proctor.engine.judges.offline import OfflineJudge
from proctor.engine.reports.report import OFFLINE_JUDGE_NOTE, OFFLINE_NOTE, build_report, report_json
from proctor.engine.reports.report_csv import COLUMNS, render_csv
from proctor.engine.reports.report_markdown import cell, render_markdown
from proctor.engine.reports.report_model import ArmEntry
from proctor.store.events import OperatorCommand, Scored, Usage
from proctor.store.read.reader import StoreReader
from proctor.store.records import JudgmentMeta
from proctor.store.write.writer import StoreWriter
from tests.engine.judging_fixture import RUN_ID, build_run

TRIAL_FIELDS = {
    "id",
    "scenario",
    "arm",
    "model",
    "epoch",
    "seed",
    "attempt",
    "status",
    "stop",
    "passed",
    "final_answer",
    "tool_calls",
    "tokens",
    "cost_usd",
    "wall_s",
    "error",
    "scores",
    "judgments",
}


class PricedJudge:
    """The offline judge's verdicts, reported as if an LLM had spent tokens on them."""

    judge_id = "anthropic:claude-test"

    async def judge(self, subject: JudgeSubject, pass_no: int) -> JudgeOutcome:
        verdict = OfflineJudge().verdict(subject)
        usage = Usage(input_tokens=100, output_tokens=20)
        return JudgeOutcome(verdict, "", JudgmentMeta(source="proctor:test"), usage=usage, cost_usd=0.001)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    async def make() -> dict[str, object]:
        fx = await build_run(tmp_path_factory.mktemp("report"), judges=[OfflineJudge(), PricedJudge()])
        lock_anchors(fx.suite_dir, fx.db)
        async with await StoreWriter.open(fx.db) as w:
            w.emit(
                RUN_ID, OperatorCommand(command="verify_anchors", args={}, status="done", message="ρ = 1.0")
            )
        return build_report(fx.db)

    return asyncio.run(make())


def _arm(report: dict[str, object], arm: str) -> dict[str, object]:
    arms = report["arms"]
    assert isinstance(arms, list)
    return next(a for a in arms if a["arm"] == arm)


def test_json_keeps_the_trial_fields_and_adds_arms_and_anchors(report: dict[str, object]) -> None:
    assert {"run", "notes", "trials", "arms", "anchors", "ranking", "judges", "tool_usage"} <= set(report)
    trials = report["trials"]
    assert isinstance(trials, list) and len(trials) == 16
    assert set(trials[0]) == TRIAL_FIELDS
    assert report["notes"] == [OFFLINE_NOTE, OFFLINE_JUDGE_NOTE]
    assert json.loads(report_json(report))["notes"] == report["notes"]  # strict JSON, as the CLI writes it


def test_json_arm_aggregates(report: dict[str, object]) -> None:
    base, mcp = _arm(report, "baseline"), _arm(report, "mcp")
    assert base["baseline"] is True and base["adoption"] is None and base["adoption_na"]
    assert mcp["adoption"] == {"mean": 1.0, "low": 1.0, "high": 1.0, "n": 8}
    fair = mcp["fairness"]
    assert isinstance(fair, dict) and fair["n"] == 8 and fair["low"] <= fair["mean"] <= fair["high"]
    assert base["tokens"] == {
        "reasoning": 6400,
        "tool_io": 0,
        "output": 400,
        "judge": 1920,
        "estimated": True,
    }
    assert mcp["tokens"]["reasoning"] == 8 * (800 + 1000 - 300) and mcp["tokens"]["tool_io"] == 2400  # type: ignore[index]
    assert mcp["judge_cost_usd"] == pytest.approx(0.016) and mcp["cost_usd"] == 0.0
    assert mcp["claims_pass_rate"] == {"0.75": 0.25, "0.5": 0.5, "trials": 8}
    assert mcp["agent"].startswith("offline agent")  # type: ignore[union-attr]
    assert "offline:lexical (offline lexical judge, no model)" in mcp["judges"]  # type: ignore[operator]
    assert [p["k"] for p in mcp["pass_k"]] == [1, 2]  # type: ignore[union-attr]
    versus = mcp["vs_baseline"]
    assert isinstance(versus, dict) and versus["baseline"] == "baseline" and versus["pairs"] == 8
    assert versus["mcnemar"]["arm_only_passes"] + versus["mcnemar"]["baseline_only_passes"] == 4
    assert base["vs_baseline"] is None
    assert {v["judge"] for v in mcp["judge_variance"]} == {"offline:lexical", "anthropic:claude-test"}  # type: ignore[union-attr]
    assert mcp["pareto"] in ("frontier", "dominated")
    ranking = report["ranking"]
    assert isinstance(ranking, dict) and ranking["groups"][0]["rank"] == 1
    assert base["rank"] == mcp["rank"] == 1 and base["tied_with"] == 1  # 0.538 vs 0.536: within the floor


def test_json_judges_and_anchors(report: dict[str, object]) -> None:
    judges = report["judges"]
    assert isinstance(judges, dict)
    assert judges["models"] == ["anthropic:claude-test", "offline:lexical"]
    (pair,) = judges["panel"]["pairs"]
    assert pair["tau_b"] == pytest.approx(1.0)
    assert judges["human"]["labelled_trials"] == 3
    anchors = report["anchors"]
    assert isinstance(anchors, dict)
    assert anchors["status"] == "locked; last verification passed"
    assert [a["scenario"] for a in anchors["locked"]] == ["s3", "s4"] and anchors["unlocked"] == []
    assert anchors["lock_files"][0]["status"].startswith("all 12 locked files match")
    assert anchors["last_verification"]["message"] == "ρ = 1.0"


def test_markdown_reads_on_its_own(report: dict[str, object]) -> None:
    md = render_markdown(report)
    assert md.startswith("# proctor report: judging-fixture (run fixture-run)\n")
    for heading in (
        "## Arms × models",
        "## Ranking",
        "## Against the baseline",
        "## pass@k and pass^k over epochs",
        "## Tokens and cost",
        "## Judge variance by layer",
        "## Judges",
        "## Anchors",
    ):
        assert f"\n{heading}\n" in md
    assert md.index("\n## Verdict\n") < md.index("\n## Caveats\n") < md.index("\n## Arms × models\n")
    assert f"\n- {OFFLINE_NOTE}\n" in md and f"\n- {OFFLINE_JUDGE_NOTE}\n" in md
    assert "offline lexical judge, no model" in md
    assert "| mcp · offline:default | 2/8 |" in md and "n/a (baseline)" in md
    assert "0 by construction (offline judge)" in md
    assert "Status: **locked; last verification passed**" in md
    assert "\x1b" not in md


def test_json_tool_usage_per_arm(report: dict[str, object]) -> None:
    usage = report["tool_usage"]
    assert isinstance(usage, dict) and set(usage["definitions"]) == {
        "latency_percentiles",
        "result_bytes",
        "routed",
    }
    base, mcp = usage["arms"]
    assert (base["arm"], base["tools"], base["never_called"]) == ("baseline", [], [])
    (lookup,) = mcp["tools"]
    assert (lookup["server"], lookup["tool"], lookup["calls"], lookup["errors"], lookup["trials"]) == (
        "dummy",
        "lookup",
        8,
        0,
        8,
    )
    assert lookup["latency_s"] == {"p50": pytest.approx(0.01), "p95": pytest.approx(0.01)}


def test_markdown_cells_cannot_break_tables() -> None:
    assert cell("a|b\nc\x1b[2J") == "a\\|b c"  # the whole sequence goes, as in the console
    assert cell("[x](javascript:1) *y*") == "\\[x\\](javascript:1) \\*y\\*"


def test_csv_one_labelled_row_per_arm_model(report: dict[str, object]) -> None:
    rows = list(csv.DictReader(io.StringIO(render_csv(report))))
    assert [r["arm"] for r in rows] == ["baseline", "mcp"]
    assert list(rows[0]) == COLUMNS
    for r in rows:
        assert r["agent"] == "offline agent (estimated tokens, no cost)"
        assert "offline:lexical (offline lexical judge, no model)" in r["judges"]
    mcp = _arm(report, "mcp")
    assert float(rows[1]["fairness_mean"]) == pytest.approx(mcp["fairness"]["mean"])  # type: ignore[index]
    assert rows[0]["adoption_mean"] == "n/a (baseline)" and rows[1]["adoption_mean"] == "1.0"
    assert rows[1]["tokens_judge"] == "1920" and rows[1]["k"] == "2"
    assert rows[0]["vs_baseline_mcnemar_p"] == "" and rows[1]["vs_baseline_mcnemar_p"] == "1.0"


def test_csv_neutralizes_formulas() -> None:
    arm = {**_minimal_arm(), "arm": "=HYPERLINK(1)"}
    (row,) = list(csv.DictReader(io.StringIO(render_csv({"arms": [arm]}))))
    assert row["arm"] == "'=HYPERLINK(1)"


def _minimal_arm() -> ArmEntry:
    """An arm × model entry with every key the report model declares (a renderer reads them all)."""
    return {
        "arm": "a",
        "model": "m",
        "baseline": False,
        "agent": "x",
        "judges": [],
        "trials": 0,
        "finished": 0,
        "errors": 0,
        "judged": 0,
        "not_judged": 0,
        "passed": 0,
        "pass_rate": None,
        "fairness": None,
        "adoption": None,
        "adoption_na": None,
        "misses": None,
        "llm_quality": None,
        "grounding": {"grounded": 0, "unresolved": 0, "hallucinated": 0, "rate": None},
        "claims_pass_rate": {"trials": 0},
        "tfs": None,
        "tefs": None,
        "tool_match": None,
        "tool_match_by_epoch": [],
        "tokens": {"reasoning": 0, "tool_io": 0, "output": 0, "judge": 0, "estimated": False},
        "cost_usd": None,
        "judge_cost_usd": None,
        "pass_k": [],
        "rank": None,
        "tied_with": None,
        "pareto": None,
        "vs_baseline": None,
        "judge_variance": [],
    }


def test_an_empty_run_still_reports(tmp_path: Path) -> None:
    async def make() -> Path:
        db = tmp_path / "empty.db"
        async with await StoreWriter.open(db) as w:
            await w.create_run("r", "s", {})
        return db

    data = build_report(asyncio.run(make()))
    assert data["arms"] == [] and data["notes"] == []
    assert "No fairness scores yet." in render_markdown(data)
    assert render_csv(data).splitlines() == [",".join(COLUMNS)]


async def test_an_arm_whose_tools_were_never_called_is_compared_with_a_caveat(tmp_path: Path) -> None:
    fx = await build_run(tmp_path)
    assert build_report(fx.db)["arms"][1]["vs_baseline"]["attributable"] is True
    with StoreReader(fx.db) as r:
        mcp_trials = [t.id for t in r.trials() if t.arm == "mcp"]
    async with await StoreWriter.open(fx.db) as w:  # the agent called a distractor, never the arm's server
        for tid in mcp_trials:
            w.emit(
                RUN_ID, Scored(name="adoption", value=0.0, details={"arm_calls": 0}), trial_id=tid, attempt=1
            )
    report = build_report(fx.db)
    versus = next(a for a in report["arms"] if a["arm"] == "mcp")["vs_baseline"]
    assert versus["attributable"] is False and versus["arm_tool_calls"] == 0
    assert "never called in 8 trial(s)" in versus["caveat"]
    md = render_markdown(report)
    assert "⚠ mcp: its MCP tools were never called" in md and "1.000 ⚠" in md
    rows = {r["arm"]: r for r in csv.DictReader(io.StringIO(render_csv(report)))}
    assert rows["mcp"]["vs_baseline_attributable"] == "False"
