"""``proctor gate NEW --max-changed N``: a replay run fails when more than N calls drifted.

A call drifted when its result changed or it erred where the recording did not (``new_error``);
a fixed error, a skipped built-in tool and an identical result never count. The per-server
counts are printed so a failing gate says where to look.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from proctor.engine.drift.runs_diff import Drift, DriftError, replay_drift
from proctor.store.display_text import one_line


@dataclass(frozen=True)
class DriftGateResult:
    max_changed: int
    drift: Drift

    @property
    def drifted(self) -> int:
        return self.drift.drifted

    @property
    def passed(self) -> bool:
        return self.drifted <= self.max_changed

    @property
    def reason(self) -> str:
        t = self.drift.totals
        word = "at most" if self.passed else "more than"
        return (
            f"{self.drifted} call(s) drifted ({t['changed']} changed, {t['new_error']} new error), "
            f"{word} the {self.max_changed} allowed"
        )


def decide_drift(db: Path, max_changed: int) -> DriftGateResult:
    if max_changed < 0:
        raise DriftError(f"--max-changed {max_changed}: give 0 or more")
    drift = replay_drift(db)
    if drift is None:
        raise DriftError(
            f"{db}: not a replay run; --max-changed gates a run made by 'proctor replay DB --db NEW' "
            "(for a run of agents use --baseline and --min-delta)"
        )
    return DriftGateResult(max_changed, drift)


def format_drift(result: DriftGateResult) -> str:
    lines = [f"drift gate: {'passed' if result.passed else 'FAILED'}: {result.reason}"]
    for s in result.drift.servers:
        c = s.counts
        if c["changed"] or c["new_error"] or c["fixed_error"]:
            lines.append(
                f"  {one_line(s.server, 40)}: {c['changed']} changed, {c['new_error']} new error, "
                f"{c['fixed_error']} fixed error, {c['identical']} identical"
            )
    return "\n".join(lines)


__all__ = ["DriftGateResult", "decide_drift", "format_drift"]
