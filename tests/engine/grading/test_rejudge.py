"""Re-judging adds passes to stored trials; a tailing reader sees them and variance follows."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.engine.grading.rejudge import RejudgeError, RejudgeTarget, rejudge_db, rejudge_trials
from proctor.engine.judges.base import ClaimJudgment, JudgeOutcome, JudgeSubject, Verdict
from proctor.engine.judges.offline import OfflineJudge
from proctor.engine.reports.arm_comparisons import judge_score_rows
from proctor.engine.stats import judge_variance
from proctor.scenarios.workspace import Workspace
from proctor.store.events import Judged, Scored
from proctor.store.read.reader import EventTail, StoreReader
from proctor.store.records import JudgmentMeta
from proctor.store.write.writer import StoreWriter
from tests.engine.judging_fixture import RUN_ID, Fixture, NoisyJudge, build_run


def _scenario_sd(fx: Fixture, trial_ids: set[int], judge: str) -> float | None:
    with StoreReader(fx.db) as r:
        trials = [t for t in r.trials() if t.id in trial_ids]
        rows = judge_score_rows(trials, r.judgments(), judge)
    (only,) = judge_variance(rows, sd="population")
    return only.scenario.mean_sd


async def test_rejudge_adds_passes_seen_by_a_tail_and_variance_moves(tmp_path: Path) -> None:
    fx = await build_run(tmp_path, judges=[NoisyJudge()])
    targets = {1, 3}
    before = _scenario_sd(fx, targets, "test:noisy")
    assert before == pytest.approx(0.05)  # passes 1 and 2 score 0.3 and 0.4

    with StoreReader(fx.db) as reader:
        tail = EventTail(reader, after_id=reader.max_event_id())
        async with await StoreWriter.open(fx.db) as writer:
            target = RejudgeTarget(fx.db, writer, RUN_ID, fx.loaded, Workspace.prepare(fx.loaded))
            results = await rejudge_trials(target, [NoisyJudge()], passes=2, trial_ids=sorted(targets))
            seen = tail.poll()

    assert [r.new_passes for r in results] == [{"test:noisy": (3, 4)}] * 2
    judged = [(e.trial_id, e.event.pass_no) for e in seen if isinstance(e.event, Judged)]
    assert sorted(judged) == [(1, 3), (1, 4), (3, 3), (3, 4)]
    quality = [e.event for e in seen if isinstance(e.event, Scored) and e.event.name == "llm_quality"]
    assert [q.details["passes"] for q in quality] == [4, 4]
    assert quality[0].value == pytest.approx((0.3 + 0.4 + 0.5 + 0.6) / 4)
    assert all(e.attempt == 1 and not e.abandoned for e in seen)

    after = _scenario_sd(fx, targets, "test:noisy")
    assert after == pytest.approx(0.1118, abs=1e-4)  # population σ of 0.3, 0.4, 0.5, 0.6
    with StoreReader(fx.db) as r:
        untouched = [j.pass_no for j in r.judgments(2)]
    assert untouched == [1, 2]


async def test_pass_numbers_continue_per_judge(tmp_path: Path) -> None:
    fx = await build_run(tmp_path)
    async with await StoreWriter.open(fx.db) as writer:
        target = RejudgeTarget(fx.db, writer, RUN_ID, fx.loaded, Workspace.prepare(fx.loaded))
        first = await rejudge_trials(target, [OfflineJudge(), NoisyJudge()], passes=1, trial_ids=[5])
        second = await rejudge_trials(target, [OfflineJudge()], passes=2, trial_ids=[5])
    assert first[0].new_passes == {"offline:lexical": (3,), "test:noisy": (1,)}
    assert second[0].new_passes == {"offline:lexical": (4, 5)}
    with StoreReader(fx.db) as r:
        quality = next(s for s in r.scores(5) if s.name == "llm_quality")
    assert quality.details["passes"] == 5  # every offline pass, not the other judge's


class PerfectJudge:
    judge_id = "test:perfect"

    async def judge(self, subject: JudgeSubject, pass_no: int) -> JudgeOutcome:
        claims = [ClaimJudgment(claim=c, verdict="fulfilled") for c in subject.scenario.claims]
        return JudgeOutcome(Verdict(score=1.0, claims=claims), "", JudgmentMeta(source="proctor:test"))


async def test_rejudge_can_flip_a_failure_and_clears_its_failure_mode(tmp_path: Path) -> None:
    fx = await build_run(tmp_path)
    with StoreReader(fx.db) as r:
        assert r.trial(1) is not None and r.trial(1).passed is False  # type: ignore[union-attr]
    async with await StoreWriter.open(fx.db) as writer:
        target = RejudgeTarget(fx.db, writer, RUN_ID, fx.loaded, Workspace.prepare(fx.loaded))
        (result,) = await rejudge_trials(target, [PerfectJudge()], passes=1, trial_ids=[1])
    assert result.passed is True and result.llm_quality == 1.0
    with StoreReader(fx.db) as r:
        scores = {s.name: s for s in r.scores(1)}
        assert r.trial(1).passed is True  # type: ignore[union-attr]
    assert scores["failure_mode"].details["mode"] is None
    assert scores["fairness"].value is not None and scores["fairness"].value > 0.6


async def test_unfinished_trials_are_skipped_and_unknown_ids_refused(tmp_path: Path) -> None:
    fx = await build_run(tmp_path)
    async with await StoreWriter.open(fx.db) as writer:
        target = RejudgeTarget(fx.db, writer, RUN_ID, fx.loaded, Workspace.prepare(fx.loaded))
        with pytest.raises(RejudgeError, match="no trial with id 999"):
            await rejudge_trials(target, [OfflineJudge()], passes=1, trial_ids=[999])
        with pytest.raises(RejudgeError, match="at least 1"):
            await rejudge_trials(target, [OfflineJudge()], passes=0)
        await writer.execute("UPDATE trials SET status = 'running' WHERE id = 2")
        (skipped,) = await rejudge_trials(target, [OfflineJudge()], passes=1, trial_ids=[2])
    assert skipped.skipped == "trial is running, not finished"


async def test_rejudge_db_loads_the_suite_from_the_run_config(tmp_path: Path) -> None:
    fx = await build_run(tmp_path)
    results = await rejudge_db(fx.db, passes=1, trial_ids=[4, 6])
    assert [r.new_passes for r in results] == [{"offline:lexical": (3,)}] * 2
    with StoreReader(fx.db) as r:
        assert sorted(j.pass_no for j in r.judgments(4)) == [1, 2, 3]
    (fx.suite_dir / "suite.yaml").unlink()
    with pytest.raises(RejudgeError, match="cannot be loaded"):
        await rejudge_db(fx.db)
