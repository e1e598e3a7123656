"""The judged claims coverage the arms' summaries take: per trial, the mean over machine passes."""

from __future__ import annotations

from typing import Any

from proctor.engine.reports.aggregate import claims_coverage
from proctor.engine.reports.verdicts import Verdicts, judged_coverage
from proctor.store.read.reader import JudgmentRecord


def _judgment(jid: int, trial: int, pass_no: int, verdict: Any, judge: str = "a") -> JudgmentRecord:
    return JudgmentRecord(jid, trial, pass_no, judge, "proctor:x", "v1", "ph", "rh", 0.0, verdict, "", 0.0)


def _claims(*verdicts: str) -> dict[str, Any]:
    return {"score": 0.5, "claims": [{"claim": f"c{i}", "verdict": v} for i, v in enumerate(verdicts)]}


SHARED = _claims("fulfilled", "not", "partially")
JUDGMENTS = [
    _judgment(1, 2, 1, SHARED),
    _judgment(2, 2, 2, SHARED),  # an agreeing pass: the same verdict object
    _judgment(3, 2, 1, _claims("fulfilled"), judge="b"),
    _judgment(4, 1, 1, {"score": 1.0}),  # no claims judged
    _judgment(5, 1, 1, _claims("partially", "not"), judge="b"),
    _judgment(6, 3, 1, {"score": 1.0}),  # a trial whose passes judged no claim
    _judgment(7, 4, 1, None),  # a judge error
]


def test_each_trial_gets_the_mean_of_its_passes_that_judged_claims_and_no_other() -> None:
    verdicts = Verdicts()
    parsed = verdicts.by_judge_and_trial(JUDGMENTS)
    coverage = judged_coverage(JUDGMENTS, verdicts, parsed)
    assert coverage == {2: (0.5 + 0.5 + 1.0) / 3, 1: 0.25}
    assert list(coverage) == [1, 2]  # in the order the verdicts list the trials
    for trial, value in coverage.items():
        assert value == claims_coverage(trial, {}, parsed)
    assert judged_coverage(JUDGMENTS) == coverage  # reading the verdicts itself
