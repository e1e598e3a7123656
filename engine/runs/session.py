"""A run from start to finish: anchors checked, trials run and scored, operator commands served.

This is the one place the engine's parts are put together, so the CLI, the console and the
benchmarks start runs the same way: judges are built from the suite and closed at the end,
commands from the store are served while trials run (and, for a console, afterwards), and
every server process and the database are closed however the run ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

from proctor.engine.grading.anchors import check_before_run
from proctor.engine.grading.rejudge import load_run_suite
from proctor.engine.judges.registry import close_judges, make_suite_judges
from proctor.engine.runs.operator_commands import consume_operator_commands, execute_with_operator_commands
from proctor.engine.runs.options import RunError, RunOptions
from proctor.engine.runs.runner import Run, open_run
from proctor.engine.runs.trial_scoring import score_unscored, scoring_hook
from proctor.engine.runs.trial_seam import TrialHook
from proctor.engine.suites import admit
from proctor.scenarios.loader import LoadedSuite
from proctor.store.read.reader import TrialRecord


async def run_suite(
    loaded: LoadedSuite,
    options: RunOptions,
    *,
    score: bool = True,
    judge_model: str | None = None,
    extra_hooks: Sequence[TrialHook] = (),
    on_start: Callable[[Run, list[TrialRecord]], None] | None = None,
    on_progress: Callable[[TrialRecord], None] | None = None,
    serve_after: bool = False,
    check_anchors: bool = True,
) -> str:
    """Run what is left of the run in ``options.db``; return finished, cancelled or error.

    With ``serve_after`` (a console hosting the run) operator commands keep being served after
    the last trial until the task is cancelled.
    """
    loaded = admit(loaded)  # idempotent: callers may hand a suite loaded without it
    if check_anchors:
        await check_before_run(loaded)
    judges = make_suite_judges(loaded.suite, judge_model) if score else []
    try:
        run, todo = await open_run(loaded, options)
        try:
            if judges:
                run.hooks.append(scoring_hook(judges, loaded.suite.judge.passes))
            run.hooks.extend(extra_hooks)
            run.on_progress = on_progress
            if on_start is not None:
                on_start(run, todo)
            status = await execute_with_operator_commands(run, todo)
            if judges and status == "finished":
                await score_unscored(run, judges, loaded.suite.judge.passes)
            if serve_after:
                await consume_operator_commands(run, stop=asyncio.Event())
            return status
        finally:
            await run.aclose()
    finally:
        await close_judges(judges)


async def serve_run(db: Path) -> None:
    """Serve operator commands for a run no live engine holds, until cancelled (``proctor watch``).

    If another process holds the run (it is executing it, or already serving it), that process
    serves the commands and this returns at once.
    """
    run_id, loaded = load_run_suite(db)
    del run_id
    judges = make_suite_judges(loaded.suite)
    try:
        try:
            run, _ = await open_run(loaded, RunOptions(db=db, resume=True), expand_matrix=False)
        except RunError:
            return
        try:
            run.hooks.append(scoring_hook(judges, loaded.suite.judge.passes))
            await consume_operator_commands(run, stop=asyncio.Event())
        finally:
            await run.aclose()
    finally:
        await close_judges(judges)
