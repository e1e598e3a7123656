"""A finished run of five arms over eight scenarios (written with the real StoreWriter): the
shape of ``make demo``, for the dashboard's layout at the sizes people use.

Arm and scenario names are as long as the demo's, fairness is fixed per cell (one pair rounds
to a Δ of zero), and timestamps are pinned so the screens do not depend on the clock.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from proctor.store.events import RunFinished, RunStarted, Scored, TrialFinished, TrialStarted, Usage
from proctor.store.write.writer import StoreWriter, TrialRow

RUN = "run-wide"
MODEL = "offline:default"
ARMS = ("baseline", "codeintel", "codeintel+distractors", "codeintel_stale", "codeintel_remote")
SCENARIOS = (
    "backoff-callers",
    "backoff-vs-jitter",
    "config-env-overrides",
    "dead-letter",
    "retry-delay-cap",
    "sqlite-claim",
    "token-bucket-refill",
    "worker-pool-lifecycle",
)


def fairness(scenario: int, arm: int) -> float:
    """Fixed scores; codeintel on the second scenario is 0.004 under the baseline (Δ ±0.00)."""
    if (scenario, arm) in ((1, 0), (1, 1)):
        return 0.82 if arm == 0 else 0.816
    return round(0.30 + ((scenario * 7 + arm * 13) % 11) * 0.05, 2)


async def build_wide(root: Path) -> Path:
    db = root / "wide.db"
    w = await StoreWriter.open(db, flush_interval_s=0.001)
    await w.create_run(RUN, "demo", {})
    rows = [TrialRow(s, a, MODEL, 0, 1) for s in SCENARIOS for a in ARMS]
    await w.add_trials(RUN, rows)
    w.emit(RUN, RunStarted(run_id=RUN, suite="demo", config={}, trials=len(rows)))
    for tid, row in enumerate(rows, start=1):
        s, a = SCENARIOS.index(row.scenario), ARMS.index(row.arm)
        value = fairness(s, a)
        w.emit(RUN, TrialStarted(scenario=row.scenario, arm=row.arm, model=MODEL, epoch=0, seed=1, attempt=1),
               trial_id=tid, attempt=1)  # fmt: skip
        finished = TrialFinished(
            status="finished", stop="answer", final_answer="done", tool_calls=2,
            usage=Usage(input_tokens=100, output_tokens=10, estimated=True), cost_usd=0.0, wall_s=1.0,
        )  # fmt: skip
        w.emit(RUN, finished, trial_id=tid, attempt=1)
        w.emit(RUN, Scored(name="fairness", value=value, details={}), trial_id=tid, attempt=1)
        w.emit(RUN, Scored(name="passed", value=float(value >= 0.75), details={}), trial_id=tid, attempt=1)
    w.emit(RUN, RunFinished(run_id=RUN, status="finished"))
    await w.close()
    conn = sqlite3.connect(db)
    with conn:
        for tid in range(1, len(rows) + 1):
            conn.execute(
                "UPDATE trials SET started_at = ?, finished_at = ? WHERE id = ?",
                (1_700_000_000.0 + tid, 1_700_000_001.0 + tid, tid),
            )
        conn.execute("UPDATE runs SET created_at = 1700000000, started_at = 1700000000")
    conn.close()
    return db


__all__ = ["ARMS", "MODEL", "RUN", "SCENARIOS", "build_wide", "fairness"]
