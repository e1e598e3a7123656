"""Efficiency: ½·max(0, 1 − tokens/token_ceiling) + ½·max(0, 1 − wall/time_ceiling).

``tokens`` are the agent's tokens for the trial (input + output of its model calls, tool I/O
included, judge tokens excluded); ``wall_s`` is the trial's wall-clock time. Both halves are
clamped at 0, so a trial over a ceiling scores 0 on that half, never below.
"""

from __future__ import annotations

from dataclasses import dataclass

from proctor.store.scores import EfficiencyDetails


@dataclass(frozen=True)
class Efficiency:
    value: float
    token_part: float
    time_part: float
    tokens: int
    wall_s: float
    token_ceiling: int
    time_ceiling_s: float

    def to_details(self) -> EfficiencyDetails:
        return EfficiencyDetails(
            value=self.value,
            token_part=self.token_part,
            time_part=self.time_part,
            tokens=self.tokens,
            wall_s=self.wall_s,
            token_ceiling=self.token_ceiling,
            time_ceiling_s=self.time_ceiling_s,
        )


def efficiency(tokens: int, wall_s: float, token_ceiling: int, time_ceiling_s: float) -> Efficiency:
    if token_ceiling <= 0 or time_ceiling_s <= 0:
        raise ValueError("ceilings must be positive")
    if tokens < 0 or wall_s < 0:
        raise ValueError("tokens and wall time cannot be negative")
    token_part = max(0.0, 1.0 - tokens / token_ceiling)
    time_part = max(0.0, 1.0 - wall_s / time_ceiling_s)
    return Efficiency(
        value=0.5 * token_part + 0.5 * time_part,
        token_part=token_part,
        time_part=time_part,
        tokens=tokens,
        wall_s=wall_s,
        token_ceiling=token_ceiling,
        time_ceiling_s=time_ceiling_s,
    )
