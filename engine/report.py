"""The run report as plain data, read from the store only (so a finished run needs no engine)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from proctor.store.reader import StoreReader, TrialRecord

OFFLINE_NOTE = "offline agent: token counts are estimates, cost is zero"


def trial_status(t: TrialRecord) -> str:
    """queued, running, finished or error (the JSON report's vocabulary)."""
    return t.status if t.status in ("queued", "running", "finished", "error") else "error"


def build_report(db: Path) -> dict[str, Any]:
    with StoreReader(db) as reader:
        run = reader.run()
        trials = reader.trials()
        scores = reader.scores()
        judgments = reader.judgments()
    by_trial: dict[int, dict[str, Any]] = {}
    for s in scores:
        by_trial.setdefault(s.trial_id, {})[s.name] = {"value": s.value, "details": s.details}
    passes: dict[int, list[dict[str, Any]]] = {}
    for j in judgments:
        passes.setdefault(j.trial_id, []).append(
            {
                "pass": j.pass_no,
                "judge": j.judge,
                "source": j.source,
                "verdict": j.verdict,
                "error": j.error or None,
            }
        )
    models = sorted({t.model for t in trials})
    return {
        "run": None
        if run is None
        else {
            "id": run.id,
            "suite": run.suite,
            "config": run.config,
            "status": run.status,
            "started": run.started_at,
            "finished": run.finished_at,
        },
        "notes": [OFFLINE_NOTE] if any(m.startswith("offline:") for m in models) else [],
        "trials": [_trial(t, by_trial.get(t.id, {}), passes.get(t.id, [])) for t in trials],
    }


def _trial(t: TrialRecord, scores: dict[str, Any], judgments: list[dict[str, Any]]) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": t.id,
        "scenario": t.scenario,
        "arm": t.arm,
        "model": t.model,
        "epoch": t.epoch,
        "seed": t.seed,
        "attempt": t.attempt,
        "status": trial_status(t),
        "stop": t.stop,
        "passed": t.passed,
        "final_answer": t.final_answer,
        "tool_calls": t.tool_calls,
        "tokens": {
            "input": t.input_tokens,
            "output": t.output_tokens,
            "cache_read": t.cache_read_tokens,
            "cache_write": t.cache_write_tokens,
            "estimated": t.tokens_estimated,
        },
        "cost_usd": t.cost_usd,
        "wall_s": t.wall_s,
        "error": t.error or None,
    }
    if scores:
        row["scores"] = scores
    row["judgments"] = judgments
    return row
