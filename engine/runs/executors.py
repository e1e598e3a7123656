"""Where a run's trials are played: in the engine's own process, or on a Ray cluster.

This is the one seam between the runner and the place trials run. The runner keeps everything
that makes a run a run (the trial matrix, resume, concurrency limits, the one store writer, the
scoring hooks); an executor only turns a trial into its events and its ``TrialFinished``. The
local executor is the engine's own code path; the Ray executor (``ray_executor.py``) ships the
trial to a worker process and replays what the worker sends back. Ray is optional and heavy, so
it is imported only when a run asks for it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Collection

from proctor.engine.runs.options import RunError, RunOptions
from proctor.engine.runs.trial_play import play_trial
from proctor.engine.runs.trial_seam import RunServices, TrialContext, TrialExecutor
from proctor.store.events import TrialFinished

EXECUTORS = ("local", "ray")
RAY_MISSING = "--executor ray needs Ray, which is not installed: pip install 'proctor[ray]'"


class LocalExecutor:
    """Trials as asyncio tasks in this process, sharing the run's server pool and providers."""

    async def start(self, run: RunServices, models: Collection[str]) -> None:
        for model in models:
            run.env.provider(model)  # a missing key fails the run now, not every trial later

    async def play(self, run: RunServices, ctx: TrialContext) -> TrialFinished:
        return await play_trial(run.env, ctx.spec, ctx)

    async def aclose(self) -> None:
        return None


def check_executor(options: RunOptions) -> None:
    """Refuse an unknown executor, or Ray when it is not installed, before anything starts."""
    if options.executor not in EXECUTORS:
        raise RunError(f"unknown executor {options.executor!r}: use {' or '.join(EXECUTORS)}")
    if options.executor == "local" and options.address is not None:
        raise RunError("--address is the Ray cluster to use: give it with --executor ray")
    if options.executor == "ray" and importlib.util.find_spec("ray") is None:
        raise RunError(RAY_MISSING)


def make_executor(options: RunOptions) -> TrialExecutor:
    check_executor(options)
    if options.executor == "ray":
        from proctor.engine.runs.ray_executor import RayExecutor

        return RayExecutor(address=options.address)
    return LocalExecutor()


__all__ = ["EXECUTORS", "RAY_MISSING", "LocalExecutor", "check_executor", "make_executor"]
