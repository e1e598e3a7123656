"""Whether an arm's difference to the baseline can be put down to its MCP server.

If an arm's agent never called the arm's tools, anything that separates it from the baseline
came from the tool list in its prompt or from chance, not from what the server does: the
report and the console say so next to the comparison instead of presenting it as the server's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import cast

from proctor.store.read.reader import ScoreRecord, TrialRecord
from proctor.store.scores import ADOPTION_BASELINE, AdoptionDetails, ScoreName


def is_baseline(scores: Mapping[ScoreName, ScoreRecord]) -> bool:
    """A baseline trial: its adoption score says "n/a (baseline)" (it had no MCP tools)."""
    adoption = scores.get(ScoreName.ADOPTION)
    return adoption is not None and adoption.detail(AdoptionDetails, "na") == ADOPTION_BASELINE


def arm_tool_calls(trial: TrialRecord, scores: Mapping[ScoreName, ScoreRecord]) -> int | None:
    """Calls to the arm's own servers (adoption's count), else every tool call; None before the end."""
    adoption = scores.get(ScoreName.ADOPTION)
    arm_calls = None if adoption is None else cast(int | None, adoption.detail(AdoptionDetails, "arm_calls"))
    return trial.tool_calls if arm_calls is None else arm_calls


def trial_misses(scores: Mapping[ScoreName, ScoreRecord]) -> int | None:
    """The trial's misses (built-in search/read calls beside the arm's MCP tools for that job,
    engine/scoring/misses.py), None where they were not counted; the report and the console sum these."""
    adoption = scores.get(ScoreName.ADOPTION)
    n = None if adoption is None else adoption.detail(AdoptionDetails, "misses")
    return n if isinstance(n, int) else None


@dataclass(frozen=True)
class Attribution:
    arm: str
    trials: int
    tool_calls: int

    @property
    def attributable(self) -> bool:
        return self.trials == 0 or self.tool_calls > 0

    @property
    def caveat(self) -> str | None:
        if self.attributable:
            return None
        return (
            f"{self.arm}: its MCP tools were never called in {self.trials} trial(s), so its difference "
            "to the baseline is not attributable to the server"
        )


def attribution(
    arm: str, trials: Iterable[TrialRecord], scores: Mapping[int, Mapping[ScoreName, ScoreRecord]]
) -> Attribution:
    """Over the arm's ended trials (running ones have not had their chance to call yet)."""
    counted = [
        calls
        for t in trials
        if t.arm == arm and t.status in ("finished", "error")
        if (calls := arm_tool_calls(t, scores.get(t.id, {}))) is not None
    ]
    return Attribution(arm, len(counted), sum(counted))


__all__ = ["Attribution", "arm_tool_calls", "attribution", "is_baseline", "trial_misses"]
