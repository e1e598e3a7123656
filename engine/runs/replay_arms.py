"""Before a run: every selected ``replay:`` arm must name a recording that can be served.

The arm's mock server would otherwise fail to start in every trial; the run is refused instead,
naming suite.yaml, the field and the fix, before any trial is spent.
"""

from __future__ import annotations

from collections.abc import Sequence

from proctor.engine.tools.recordings import RecordingError, recorded_arm
from proctor.scenarios.loader import LoadedSuite, SuiteError


def check_replay_arms(loaded: LoadedSuite, arms: Sequence[str]) -> None:
    """Raise SuiteError for each selected replay arm whose database, run or arm is not there."""
    problems = []
    for name in arms:
        replay = loaded.suite.arms[name].replay
        if replay is None:
            continue
        try:
            recorded_arm((loaded.root / replay.db).resolve(), replay.run, replay.arm)
        except RecordingError as exc:
            problems.append(f"{loaded.root / 'suite.yaml'}: field 'arms.{name}.replay': {exc}")
    if problems:
        raise SuiteError("\n".join(problems))


def servable_arms(loaded: LoadedSuite) -> list[str]:
    """The suite's arms, less the replay arms whose recording is not there (yet)."""
    out = []
    for name, arm in loaded.suite.arms.items():
        if arm.replay is not None:
            try:
                recorded_arm((loaded.root / arm.replay.db).resolve(), arm.replay.run, arm.replay.arm)
            except RecordingError:
                continue
        out.append(name)
    return out


__all__ = ["check_replay_arms", "servable_arms"]
