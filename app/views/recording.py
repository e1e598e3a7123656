"""A replay run's recording, for the compare view: the trial of the same key in another database.

A run made by ``proctor replay`` records where its recording is (``config.replay``); the compare
view shows each replayed trial against the recorded one, call by call. The recording is read
through a feed of its own (read-only, aiosqlite), its trial found by (scenario, arm, model,
epoch), and its transcript folded as the console folds any transcript.
"""

from __future__ import annotations

from pathlib import Path

from proctor.app.views.feed import StoreFeed
from proctor.app.views.transcript_state import TranscriptState
from proctor.engine.drift.runs_diff import REPLAY_KEY, DriftError, replay_source
from proctor.store.read.reader import RunRecord, TrialRecord

TrialKey = tuple[str, str, str, int]


class Recording:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._feed = StoreFeed(path)
        self._trials: dict[TrialKey, TrialRecord] | None = None
        self.transcripts: dict[TrialKey, TranscriptState] = {}

    @property
    def name(self) -> str:
        return self.path.name

    def trial(self, key: TrialKey) -> TrialRecord | None:
        return None if self._trials is None else self._trials.get(key)

    async def load(self, key: TrialKey) -> None:
        """Read the recording's trials once, then the transcript of ``key``'s trial."""
        if self._trials is None:
            snap = await self._feed.snapshot()
            self._trials = {t.key: t for t in snap.trials} if snap is not None else {}
        trial = self._trials.get(key)
        if trial is None or key in self.transcripts:
            return
        state = TranscriptState(trial.id)
        self.transcripts[key] = state
        loaded = await self._feed.load_trial(trial.id)
        state.load(loaded.events, loaded.texts)

    async def close(self) -> None:
        await self._feed.close()


def recording_of(db: Path, run: RunRecord | None) -> Recording | None:
    """The recording of the replay run in ``db``; None for another run. A recording that is gone
    raises ``DriftError`` saying where it was."""
    if run is None or REPLAY_KEY not in run.config:
        return None
    source, _, _ = replay_source(db, run.config)
    return Recording(source)


__all__ = ["DriftError", "Recording", "TrialKey", "recording_of"]
