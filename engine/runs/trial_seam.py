"""The seam between the runner and where trials are played: the types both sides speak.

``runner.Run`` implements ``RunServices``; executors (local, Ray), the server warm-up and the
scoring hooks are written against these types only, so none of them imports the runner and
no import cycle exists, not even one for the type checker.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from typing import Protocol

from proctor.engine.runs.options import RunOptions
from proctor.engine.runs.trial_play import TrialEnv, TrialSpec
from proctor.engine.tools.mcp_toolbox import ServerPool
from proctor.engine.tools.toolbox import Blob
from proctor.scenarios.loader import LoadedSuite
from proctor.scenarios.schema import Scenario
from proctor.scenarios.workspace import Workspace
from proctor.store.events import Event, TrialFinished
from proctor.store.read.reader import TrialRecord
from proctor.store.records import JudgmentMeta
from proctor.store.write.writer import StoreWriter


class RunServices(Protocol):
    """What a run lends its trials, its executor and its hooks (``runner.Run`` is the one)."""

    loaded: LoadedSuite
    options: RunOptions
    writer: StoreWriter
    run_id: str
    workspace: Workspace
    pool: ServerPool
    env: TrialEnv


@dataclass
class TrialContext:
    """What a trial (and a hook after it) needs: its row, its scenario, and the run's services."""

    run: RunServices
    trial_id: int
    attempt: int
    scenario: Scenario
    arm: str
    model: str
    epoch: int
    seed: int
    events: list[Event] = field(default_factory=list)

    @property
    def spec(self) -> TrialSpec:
        return TrialSpec(
            self.trial_id, self.attempt, self.scenario.id, self.arm, self.model, self.epoch, self.seed
        )

    def put_blob(self, blob: Blob) -> None:
        self.run.writer.put_blob(blob.sha256, blob.mime_type, blob.data)

    def emit(self, event: Event, judgment: JudgmentMeta | None = None) -> None:
        self.events.append(event)
        self.run.writer.emit(
            self.run.run_id, event, trial_id=self.trial_id, attempt=self.attempt, judgment=judgment
        )


TrialHook = Callable[[TrialContext, TrialRecord], Awaitable[None]]
"""Runs after a trial's end is stored (scoring is one); a hook that raises is recorded, not fatal."""


class TrialExecutor(Protocol):
    """Plays trials for a run; ``start`` before the first, ``aclose`` when the run ends."""

    async def start(self, run: RunServices, models: Collection[str]) -> None:
        """Get ready to play trials of ``models``; raise RunError if they cannot be played."""
        ...

    async def play(self, run: RunServices, ctx: TrialContext) -> TrialFinished:
        """Emit the trial's events through ``ctx`` in order; return its (not yet emitted) end."""
        ...

    async def aclose(self) -> None: ...


__all__ = ["RunServices", "TrialContext", "TrialExecutor", "TrialHook"]
