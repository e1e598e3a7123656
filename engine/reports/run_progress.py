"""How much of a run has been played, and whether it is still being written.

A report or a gate on a run where nothing (or not everything) ran must say so before any number:
"the 95 % CI contains 0 for each arm" over 0 of 40 trials reads as a finding. A run is in
progress while its status is ``running`` and an engine holds its lock (a console watching a
finished run holds the lock too, but its status is not ``running``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from proctor.engine.reports.report_model import RunProgress
from proctor.store.lock import EngineLock, resume_command
from proctor.store.read.reader import RunRecord, StoreReader, TrialRecord

DONE = ("finished", "error")


def is_in_progress(db: Path, run: RunRecord | None) -> bool:
    """Whether an engine is writing the run in ``db`` now."""
    return run is not None and run.status in ("created", "running") and EngineLock.is_held(db)


def run_progress(in_progress: bool, config: Mapping[str, Any], trials: Sequence[TrialRecord]) -> RunProgress:
    """Trials done of all, and what ``--keep-going`` left out that still has no trial."""
    present_arms = {t.arm for t in trials}
    present_models = {t.model for t in trials}
    left_out = []
    recorded = config.get("left_out")
    for entry in recorded if isinstance(recorded, list) else []:
        if not isinstance(entry, dict):
            continue
        arm, model, why = entry.get("arm"), entry.get("model"), str(entry.get("why", ""))
        if isinstance(arm, str) and arm not in present_arms:
            left_out.append(f"arm {arm}: {why}")
        elif isinstance(model, str) and model not in present_models:
            left_out.append(f"model {model}: {why}")
    return {
        "trials": len(trials),
        "done": sum(t.status in DONE for t in trials),
        "in_progress": in_progress,
        "left_out": left_out,
    }


def read_progress(db: Path) -> tuple[RunProgress, str | None]:
    """The run's progress and status, read from ``db`` (the gate's, which builds no report)."""
    with StoreReader(db) as reader:
        run = reader.run()
        trials = reader.trials()
    config = run.config if run is not None else {}
    return run_progress(is_in_progress(db, run), config, trials), run.status if run is not None else None


def progress_lines(progress: RunProgress, status: str | None, db: Path | None = None) -> list[str]:
    """What a reader must know before any number: the run is being written, did not all run, or
    left arms out. Empty when every trial of the run is done and nothing was left out."""
    total, done = progress["trials"], progress["done"]
    out = []
    if progress["in_progress"]:
        out.append(
            f"The run is still in progress: {done} of {total} trials done. What follows covers those "
            f"{done} only; report again when it has finished."
        )
    elif done < total:
        resume = (
            f" {resume_command(db)} plays {'them' if done == 0 else 'the rest'}." if db is not None else ""
        )
        state = f"run status {status or 'unknown'}"
        out.append(
            f"Nothing ran: none of the {total} trials was played ({state}).{resume}"
            if done == 0
            else f"Not every trial ran: {done} of {total} trials done ({state}). What follows covers only "
            f"the trials done.{resume}"
        )
    out += [f"Left out before the first trial (--keep-going): {line}" for line in progress["left_out"]]
    return out


__all__ = ["DONE", "is_in_progress", "progress_lines", "read_progress", "run_progress"]
