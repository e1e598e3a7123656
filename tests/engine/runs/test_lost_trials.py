"""A trial lost to where it ran (an ``infrastructure`` error: its Ray worker or node died) is
played again as a new attempt, a bounded number of times, and ``--resume`` plays again a trial
whose last attempt was lost so, never one that failed on its own. Ray-free: an executor that
loses chosen trials stands in for a cluster (the real one is in test_ray_cluster.py)."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Collection
from pathlib import Path

import pytest

from proctor.engine.runs import runner as runner_module
from proctor.engine.runs.executors import LocalExecutor
from proctor.engine.runs.options import RunOptions
from proctor.engine.runs.runner import LOST_RETRIES, Run
from proctor.engine.runs.session import run_suite
from proctor.engine.runs.trial_play import failed
from proctor.engine.runs.trial_seam import TrialContext
from proctor.scenarios.demo import SUITE_DIR
from proctor.scenarios.loader import load_suite
from proctor.store.events import ErrorEvent, TrialFinished
from proctor.store.read.reader import StoreReader


class Losing(LocalExecutor):
    """Loses the first ``losses`` attempts of ``scenario`` to 'the infrastructure'; ``agent_fails``
    makes every attempt of ``other`` fail on its own instead."""

    def __init__(self, scenario: str, losses: int, agent_fails: str = "") -> None:
        self.scenario, self.losses, self.agent_fails = scenario, losses, agent_fails
        self.plays: Counter[int] = Counter()

    async def start(self, run: Run, models: Collection[str]) -> None:
        await super().start(run, models)

    async def play(self, run: Run, ctx: TrialContext) -> TrialFinished:
        self.plays[ctx.trial_id] += 1
        if ctx.scenario.id == self.scenario and self.plays[ctx.trial_id] <= self.losses:
            ctx.emit(ErrorEvent(where="worker", error_type="RayActorError", message="node lost", fatal=True,
                                infrastructure=True))  # fmt: skip
            return failed("error", "the Ray worker vm:1 failed: node lost", 0.01).model_copy(
                update={"host": "vm:1"}
            )
        if ctx.scenario.id == self.agent_fails:
            ctx.emit(ErrorEvent(where="agent", error_type="ValueError", message="bad answer", fatal=True))
            return failed("error", "bad answer", 0.01)
        return await super().play(run, ctx)


def _run(db: Path, executor: Losing, monkeypatch: pytest.MonkeyPatch, *, resume: bool = False) -> str:
    monkeypatch.setattr(runner_module, "make_executor", lambda options: executor)
    options = RunOptions(db=db, arms=["baseline"], scenarios=["retry-delay-cap", "dead-letter", "token-bucket-refill"],
                         resume=resume)  # fmt: skip
    return asyncio.run(run_suite(load_suite(SUITE_DIR), options))


def _by_scenario(db: Path) -> dict[str, tuple[str, int]]:
    with StoreReader(db) as reader:
        return {t.scenario: (t.status, t.attempt) for t in reader.trials()}


def test_a_lost_attempt_is_played_again_and_its_events_abandoned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "run.db"
    executor = Losing("dead-letter", losses=1)
    assert _run(db, executor, monkeypatch) == "finished"
    assert _by_scenario(db)["dead-letter"] == ("finished", 2)
    with StoreReader(db) as reader:
        lost = [e for e in reader.events_of_kind("error") if isinstance(e.event, ErrorEvent)]
    assert len(lost) == 1 and lost[0].abandoned and lost[0].attempt == 1


def test_retries_are_bounded_then_the_trial_ends_in_error_and_resume_plays_it_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "run.db"
    first = Losing("dead-letter", losses=LOST_RETRIES + 1, agent_fails="token-bucket-refill")
    _run(db, first, monkeypatch)
    assert max(first.plays.values()) == LOST_RETRIES + 1
    trials = _by_scenario(db)
    assert trials["dead-letter"] == ("error", LOST_RETRIES + 1)
    assert trials["token-bucket-refill"][0] == "error"

    again = Losing("", losses=0, agent_fails="token-bucket-refill")
    assert _run(db, again, monkeypatch, resume=True) == "finished"
    after = _by_scenario(db)
    assert after["dead-letter"] == ("finished", LOST_RETRIES + 2)  # lost to the infrastructure: played again
    assert after["token-bucket-refill"] == trials["token-bucket-refill"]  # failed on its own: kept as it was
    assert after["retry-delay-cap"] == trials["retry-delay-cap"]
    assert len(again.plays) == 1
