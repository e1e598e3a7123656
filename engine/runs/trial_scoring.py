"""The live run's scoring: each trial as it finishes, and on resume whatever an interruption left unscored."""

from __future__ import annotations

from collections.abc import Sequence

from proctor.engine.grading.evaluation import TrialInput
from proctor.engine.grading.rejudge import RejudgeTarget, rejudge_trials
from proctor.engine.grading.score_trial import score_trial, tool_schemas
from proctor.engine.judges.base import Judge
from proctor.engine.runs.trial_seam import RunServices, TrialContext, TrialHook
from proctor.store.events import Event
from proctor.store.read.reader import StoreReader, TrialRecord
from proctor.store.scores import ScoreName


def trial_input(
    run: RunServices, scenario_id: str, arm: str, model: str, events: Sequence[Event]
) -> TrialInput:
    loaded = run.loaded
    scenario = loaded.scenario(scenario_id)
    return TrialInput(
        scenario=scenario,
        arm_name=arm,
        arm=loaded.suite.arms[arm],
        model=model,
        events=events,
        repo=run.workspace.repo_for(scenario),
        scoring=loaded.suite.scoring,
        tool_schemas=tool_schemas(events),
        judge_sd=loaded.suite.judge.sd,
    )


def scoring_hook(judge: Judge | Sequence[Judge], passes: int) -> TrialHook:
    async def hook(ctx: TrialContext, record: TrialRecord) -> None:
        trial = trial_input(ctx.run, ctx.scenario.id, ctx.arm, ctx.model, list(ctx.events))
        await score_trial(trial, judge, range(1, passes + 1), ctx.emit)

    return hook


async def score_unscored(run: RunServices, judges: Sequence[Judge], passes: int) -> list[int]:
    """Score every ended trial that has no ``passed`` score yet; return their ids.

    A process killed between a trial's end and its last judge pass leaves the trial finished
    (so it is not run again) but unscored; without this it would stay out of every figure.
    """
    await run.writer.flush()
    with StoreReader(run.options.db) as reader:
        scored = reader.trials_with_score(ScoreName.PASSED)  # ids only: 10k trials' details cost 50 MB
        ids = [t.id for t in reader.trials() if t.status in ("finished", "error") and t.id not in scored]
    if ids:
        target = RejudgeTarget(run.options.db, run.writer, run.run_id, run.loaded, run.workspace)
        await rejudge_trials(target, judges, passes=passes, trial_ids=ids, top_up=True)
    return ids
