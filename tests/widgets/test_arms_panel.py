"""The arms panel warns, instead of showing a bare figure, when an arm's MCP tools were never called."""

from __future__ import annotations

from proctor.app.views.score_views import arm_rows
from proctor.store.read.reader import ScoreRecord, TrialRecord
from proctor.widgets.arms_panel import arms_text


def _trial(tid: int, arm: str, passed: bool, tool_calls: int) -> TrialRecord:
    return TrialRecord(
        id=tid, scenario=f"s{tid}", arm=arm, model="m", epoch=0, seed=0, status="finished", attempt=1,
        started_at=0.0, finished_at=1.0, stop="answer", final_answer="a", error="", tool_calls=tool_calls,
        input_tokens=1, output_tokens=1, cache_read_tokens=0, cache_write_tokens=0, tokens_estimated=0,
        cost_usd=0.0, wall_s=1.0, passed=int(passed),
    )  # fmt: skip


def _scores(tid: int, fairness: float, adoption: dict[str, object]) -> dict[str, ScoreRecord]:
    return {
        "fairness": ScoreRecord(tid, "fairness", fairness, {}),
        "adoption": ScoreRecord(tid, "adoption", None, adoption),
    }


def test_an_arm_that_never_called_its_tools_is_flagged_not_attributable() -> None:
    trials = {
        1: _trial(1, "baseline", False, 2),
        2: _trial(2, "unused", True, 3),  # three calls, but to a distractor: none to the arm's server
        3: _trial(3, "used", True, 1),
    }
    scores = {
        1: _scores(1, 0.4, {"na": "baseline"}),
        2: _scores(2, 0.9, {"arm_calls": 0}),
        3: _scores(3, 0.8, {"arm_calls": 1}),
    }
    rows = {r.arm: r for r in arm_rows(trials, scores, ["baseline", "unused", "used"])}
    assert rows["baseline"].baseline and rows["baseline"].attributable
    assert not rows["unused"].attributable and rows["unused"].tool_calls == 0
    assert rows["used"].attributable and rows["used"].tool_calls == 1
    text = arms_text(list(rows.values())).plain
    assert text.count("not attributable") == 1
    assert "unused" in text.split("not attributable")[0].splitlines()[-2]
