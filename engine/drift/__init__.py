"""Drift between a recorded run and its replay: per-call diffs, masks, per-server counts.

The two names every report reads live here, apart from the diffing modules, which only a replay
run's report loads.
"""

from typing import Literal

Status = Literal["identical", "changed", "new_error", "fixed_error", "missing", "skipped"]

REPLAY_KEY = "replay"  # the run config's key that makes a run a replay

__all__ = ["REPLAY_KEY", "Status"]
