"""Judge panels: every judge judges every pass, majority decides passed, agreement is reported."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from proctor.engine.judges.base import ClaimJudgment, JudgeOutcome, JudgeSubject, Verdict
from proctor.engine.judges.offline import OfflineJudge
from proctor.engine.judges.panel import human_label, panel_summary, trial_key, verdicts_pass
from proctor.store.read.reader import StoreReader
from proctor.store.records import JudgmentMeta
from tests.engine.judging_fixture import MODEL, build_run


class FixedJudge:
    """Says every claim is ``verdict`` (so it passes or fails everything)."""

    def __init__(self, judge_id: str, verdict: str) -> None:
        self.judge_id = judge_id
        self.verdict = verdict

    async def judge(self, subject: JudgeSubject, pass_no: int) -> JudgeOutcome:
        claims = [ClaimJudgment(claim=c, verdict=self.verdict) for c in subject.scenario.claims]  # type: ignore[arg-type]
        score = 1.0 if self.verdict == "fulfilled" else 0.0
        return JudgeOutcome(Verdict(score=score, claims=claims), "", JudgmentMeta(source="proctor:test"))


class ContrarianJudge:
    """Scores 1 − the offline judge's score: a judge that ranks trials backwards."""

    judge_id = "test:contrarian"

    async def judge(self, subject: JudgeSubject, pass_no: int) -> JudgeOutcome:
        offline = OfflineJudge().verdict(subject)
        return JudgeOutcome(
            Verdict(score=round(1 - offline.score, 6)), "", JudgmentMeta(source="proctor:test")
        )


async def test_every_panel_judge_judges_every_pass_and_the_majority_decides(tmp_path: Path) -> None:
    judges = [OfflineJudge(), FixedJudge("test:yes", "fulfilled"), FixedJudge("test:no", "not")]
    fx = await build_run(tmp_path, judges=judges)
    with StoreReader(fx.db) as r:
        judgments = r.judgments(4)
        passed = {t.id: t.passed for t in r.trials()}
        details = {s.trial_id: s.details for s in r.scores() if s.name == "passed"}
    assert sorted((j.judge, j.pass_no) for j in judgments) == [
        ("offline:lexical", 1),
        ("offline:lexical", 2),
        ("test:no", 1),
        ("test:no", 2),
        ("test:yes", 1),
        ("test:yes", 2),
    ]
    assert passed[4] is True and details[4]["votes"] == {
        "offline:lexical": True,
        "test:yes": True,
        "test:no": False,
    }
    assert passed[1] is False and details[1]["votes"]["offline:lexical"] is False
    assert details[1]["rule"].startswith("panel majority of 3 judges")


async def test_panel_summary_tau_b_and_human_agreement(tmp_path: Path) -> None:
    fx = await build_run(tmp_path, judges=[OfflineJudge(), ContrarianJudge()])
    conn = sqlite3.connect(fx.db)
    conn.execute(
        "INSERT INTO judgments (trial_id, attempt, pass_no, judge, source, verdict, created_at) "
        "VALUES (3, 1, 1, 'alice', 'human:import', ?, ?)",
        ('{"score": 1.0}', time.time()),
    )
    conn.commit()
    conn.close()
    with StoreReader(fx.db) as r:
        trials, judgments = r.trials(), r.judgments()
    labels = {s.id: dict(s.human_labels) for s in fx.loaded.scenarios}
    summary = panel_summary(trials, judgments, claims_threshold=0.75, scenario_labels=labels)
    assert summary.judges == ("offline:lexical", "test:contrarian")
    assert summary.human_judges == ("alice",)
    (pair,) = summary.pairs
    assert pair.tau_b.value == pytest.approx(-1.0) and pair.tau_b.n == 16
    assert summary.human_labelled == 4  # s1 mcp epochs 0 and 1, s1 baseline epoch 0, alice's trial 3
    agreement = {h.judge: h.agreement for h in summary.human}
    assert (agreement["offline:lexical"].agreed, agreement["offline:lexical"].n) == (2, 4)
    assert "panel majority" in agreement


def test_trial_keys_and_pass_rules() -> None:
    labels = {f"mcp/{MODEL}": True, trial_key("baseline", MODEL, 0): False}
    assert human_label(labels, "mcp", MODEL, 7) is True
    assert human_label(labels, "baseline", MODEL, 0) is False
    assert human_label(labels, "baseline", MODEL, 1) is None
    half = [ClaimJudgment(claim="a", verdict="fulfilled"), ClaimJudgment(claim="b", verdict="partially")]
    assert verdicts_pass([Verdict(score=0.1, claims=half)], 0.75) is True
    assert verdicts_pass([Verdict(score=0.1, claims=half)], 0.8) is False
    assert verdicts_pass([Verdict(score=0.9, key_points_success=False)], 0.75) is False
    assert verdicts_pass([Verdict(score=0.5)], 0.75) is True
    assert verdicts_pass([], 0.75) is None
