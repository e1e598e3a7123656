"""The report's judge variance, built straight from the judgments, is the rows' variance."""

from __future__ import annotations

import statistics
from typing import Any

import pytest

from proctor.engine.reports.arm_comparisons import judge_ranked_rows, judge_score_rows, variance_by_judge
from proctor.engine.reports.verdicts import Verdicts
from proctor.engine.stats import judge_variance
from proctor.store.read.reader import JudgmentRecord, TrialRecord


def _trial(tid: int, scenario: str, arm: str = "mcp", epoch: int = 0) -> TrialRecord:
    return TrialRecord(
        id=tid, scenario=scenario, arm=arm, model="m", epoch=epoch, seed=0, status="finished", attempt=1,
        started_at=0.0, finished_at=1.0, stop="answer", final_answer="a", error="", tool_calls=1,
        input_tokens=1, output_tokens=1, cache_read_tokens=0, cache_write_tokens=0, tokens_estimated=False,
        cost_usd=None, wall_s=None, passed=None,
    )  # fmt: skip


def _judgment(
    jid: int, trial: int, pass_no: int, verdict: Any, judge: str = "llm", source: str = "proctor:llm"
) -> JudgmentRecord:
    return JudgmentRecord(jid, trial, pass_no, judge, source, "v1", "ph", "rh", 0.0, verdict, "", 0.0)


def _verdict(score: float, **criteria: float) -> dict[str, Any]:
    return {"score": score, "criteria": [{"name": n, "score": s} for n, s in criteria.items()]}


TRIALS = [_trial(1, "s1"), _trial(2, "s2"), _trial(3, "s1", arm="base"), _trial(4, "s1", epoch=1)]
JUDGMENTS = [
    _judgment(1, 1, 1, _verdict(0.5, a=0.25, b=1.0)),
    _judgment(2, 1, 2, _verdict(0.5, a=0.75, b=1.0)),
    _judgment(3, 1, 3, _verdict(0.4, b=0.5)),  # a pass that scored one criterion only
    _judgment(4, 2, 1, _verdict(0.3)),  # no criteria: its overall score
    _judgment(5, 2, 2, _verdict(0.9)),
    _judgment(6, 3, 1, {"score": 2.0}),  # unreadable: left out
    _judgment(7, 3, 2, None),  # a judge error
    _judgment(8, 3, 1, _verdict(0.1, a=0.1, z=0.3), judge="other", source="proctor:other"),
    _judgment(9, 4, 1, _verdict(0.6, a=0.6, a2=0.1)),
    _judgment(10, 4, 1, _verdict(0.7, a=0.7)),  # a later row for the same pass: it wins
    _judgment(11, 4, 2, _verdict(0.2, a=0.2)),
    _judgment(12, 1, 1, _verdict(1.0, a=1.0), judge="alice", source="human"),  # humans have none
    _judgment(13, 9, 1, _verdict(1.0, a=1.0)),  # a trial not in the run
]


def test_the_sections_variance_is_judge_variance_of_each_machine_judges_rows() -> None:
    got = variance_by_judge(TRIALS, JUDGMENTS, 0.05, Verdicts())
    assert [v.judge for v in got] == ["llm", "other"]
    for v in got:
        assert v.floor == 0.05
        rows = judge_score_rows(TRIALS, JUDGMENTS, v.judge)
        assert v.by_arm_model == judge_variance(rows, judge_ranked_rows(TRIALS, JUDGMENTS, v.judge))
    assert got[0].by_arm_model[0].criterion.measured == 4  # s1@e0 a and b, s1@e1 a, s2@e0 overall


def test_a_steps_sigma_is_the_spread_of_the_verdicts_overall_score_not_of_its_criteria() -> None:
    (llm, _other) = variance_by_judge(TRIALS, JUDGMENTS, 0.05, Verdicts(), sd="population")
    (mcp,) = [v for v in llm.by_arm_model if v.arm == "mcp"]
    steps = {c.key: (c.mean, c.sd) for c in mcp.step.cells}
    # s1@e0: overall 0.5, 0.5, 0.4 (its criteria's means were 0.625, 0.875, 0.5)
    assert steps[("s1@e0", 0)] == (pytest.approx(1.4 / 3), pytest.approx(statistics.pstdev([0.5, 0.5, 0.4])))
    assert steps[("s1@e1", 0)] == (pytest.approx(0.45), pytest.approx(0.25))  # 0.7 (the later row) and 0.2
    assert llm.sd == "population"


def test_two_trials_in_one_cell_raise_the_rows_error() -> None:
    twins = [*TRIALS, _trial(5, "s1")]  # s1 at epoch 0 twice for mcp × m
    judgments = [*JUDGMENTS, _judgment(14, 5, 2, _verdict(0.5, b=0.5, a=0.5))]
    with pytest.raises(ValueError) as from_rows:
        judge_variance(judge_score_rows(twins, judgments, "llm"))
    with pytest.raises(ValueError, match="duplicate judge score") as from_section:
        variance_by_judge(twins, judgments, 0.05)
    assert str(from_section.value) == str(from_rows.value)
