"""The live run's scoring hook: each trial is scored by the grading package as it finishes."""

from __future__ import annotations

from collections.abc import Sequence

from proctor.engine.grading.evaluation import TrialInput
from proctor.engine.grading.score_trial import score_trial, tool_schemas
from proctor.engine.judges.base import Judge
from proctor.engine.runs.runner import Run, TrialContext, TrialHook
from proctor.store.events import Event
from proctor.store.reader import TrialRecord


def trial_input(run: Run, scenario_id: str, arm: str, model: str, events: Sequence[Event]) -> TrialInput:
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
    )


def scoring_hook(judge: Judge | Sequence[Judge], passes: int) -> TrialHook:
    async def hook(ctx: TrialContext, record: TrialRecord) -> None:
        trial = trial_input(ctx.run, ctx.scenario.id, ctx.arm, ctx.model, list(ctx.events))
        await score_trial(trial, judge, range(1, passes + 1), ctx.emit)

    return hook
