"""Anchors: held-out scenarios frozen by SHA-256, and the gate every rubric or judge change must pass.

``lock_anchors`` freezes each held-out scenario from a finished run: every trial's event log,
the rubric, and the gold scores (that run's llm_quality and fairness per trial): exactly the
files ``anchor_plan.plan_lock`` lists, which the console shows before it asks. ``verify_anchors``
re-hashes every locked file, then re-judges the frozen event logs with the current judge and
the current rubric: it passes only if nothing changed on disk and Spearman ρ between the new
llm_quality and the gold llm_quality is at least the threshold. A suite with a lock
(``anchors_lock``, or ``anchors/held-out.lock`` beside suite.yaml) refuses to run
while verification fails (``verify_before_run``).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import shutil
import sqlite3
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proctor.engine.grading.anchor_files import (
    LOCK_SCHEMA,
    AnchorError,
    HashMismatch,
    check_hashes,
    combined_hash,
    read_event_log,
    read_lock,
    rubric_document,
    scenario_folder,
    set_anchors_lock,
    sha256_file,
    suite_relative,
    write_json,
)
from proctor.engine.grading.anchor_plan import (
    GOLD_METRIC,
    configured_lock,
    default_lock_path,
    lock_path_of,
    plan_lock,
)
from proctor.engine.grading.evaluation import digest_of
from proctor.engine.judges.base import Judge, JudgeSubject, judge_answer
from proctor.engine.judges.registry import close_judges, judge_models, make_suite_judges
from proctor.engine.stats import GateResult, spearman_gate
from proctor.engine.stats.anchors_gate import DEFAULT_THRESHOLD
from proctor.engine.suites import load_suite
from proctor.scenarios.loader import LoadedSuite
from proctor.store.schema import configure

RELOCK_HINT = (
    "if the change is deliberate, review it and re-lock: "
    "proctor anchors lock --suite {suite} --db RUN.db (then commit the new lock file)"
)


@dataclass(frozen=True)
class LockResult:
    lock_path: Path
    files: dict[str, str]
    anchors: tuple[str, ...]
    scenarios: tuple[str, ...]
    suite_line: str | None = None
    """The ``anchors_lock`` line written into suite.yaml, or None: suite.yaml was not touched."""


@dataclass(frozen=True)
class VerifyResult:
    lock_path: Path
    mismatches: tuple[HashMismatch, ...]
    gate: GateResult | None
    current: dict[str, float] = field(default_factory=dict)
    gold: dict[str, float] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return not self.mismatches and self.gate is not None and self.gate.passed

    def message(self) -> str:
        if self.mismatches:
            lines = [f"anchors verification FAILED: {len(self.mismatches)} locked file(s) changed"]
            lines += [f"  {m.describe()}" for m in self.mismatches]
            return "\n".join(lines)
        assert self.gate is not None
        rho = "undefined" if self.gate.rho is None else f"{self.gate.rho:.4f}"
        head = "passed" if self.gate.passed else "FAILED"
        lines = [
            f"anchors verification {head}: hashes match; Spearman ρ = {rho} "
            f"(threshold {self.gate.threshold}) over {self.gate.n} anchors: {self.gate.reason}"
        ]
        lines += [f"  {key}: judge error: {err}" for key, err in sorted(self.errors.items())]
        return "\n".join(lines)


def lock_anchors(
    suite_dir: Path, db: Path, *, lock_path: Path | None = None, threshold: float = DEFAULT_THRESHOLD
) -> LockResult:
    """Freeze the held-out scenarios of the run in ``db``: write what ``plan_lock`` lists, no more."""
    loaded = load_suite(suite_dir)
    plan = plan_lock(loaded, db, lock_path)
    lock, base = plan.lock, plan.lock.parent
    files: dict[str, str] = {}
    per_scenario: dict[str, dict[str, str]] = {}
    anchors: dict[str, dict[str, str]] = {}
    for sc in plan.held:
        folder = base / scenario_folder(sc.id)
        if folder.exists():  # an earlier lock's folder (plan_lock refused any other)
            shutil.rmtree(folder)
        write_json(folder / "rubric.json", rubric_document(sc))
        gold_rows: dict[str, dict[str, Any]] = {}
        for item in plan.frozen[sc.id]:
            write_json(base / item.transcript, item.event_log)
            gold_rows[item.key] = item.gold | {"transcript": item.transcript}
            anchors[item.key] = {
                "scenario": sc.id,
                "transcript": item.transcript,
                "gold": f"{sc.id}/gold.json",
            }
        write_json(
            folder / "gold.json",
            {"scenario": sc.id, "source_run": plan.run_id, "metric": GOLD_METRIC, "trials": gold_rows},
        )
        mine = {
            p.relative_to(base).as_posix(): sha256_file(p) for p in sorted(folder.rglob("*")) if p.is_file()
        }
        per_scenario[sc.id] = mine
        files |= mine
    locked_at = dt.datetime.now(dt.UTC)
    write_json(
        lock,
        {
            "schema_version": LOCK_SCHEMA,
            "files": files,
            "anchors": anchors,
            "held_out_dir": suite_relative(base, loaded.root),
            "source_run": plan.run_id,
            "source_db": str(db),
            "locked_at": locked_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "judges": judge_models(loaded.suite),
            "gold_metric": GOLD_METRIC,
            "spearman_threshold": threshold,
        },
    )
    if plan.suite_line is not None:
        set_anchors_lock(plan.suite_file, suite_relative(lock, loaded.root))
    _record(db, plan.run_id, lock, per_scenario, locked_at.timestamp())
    return LockResult(lock, files, tuple(sorted(anchors)), tuple(s.id for s in plan.held), plan.suite_line)


def _record(db: Path, run_id: str, lock: Path, per_scenario: dict[str, dict[str, str]], ts: float) -> None:
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        configure(conn)
        conn.executemany(
            "INSERT OR REPLACE INTO anchors (scenario, lock_file, sha256, source_run, locked_at) VALUES (?, ?, ?, ?, ?)",
            [
                (sc, str(lock.resolve()), combined_hash(files), run_id, ts)
                for sc, files in sorted(per_scenario.items())
            ],
        )
    finally:
        conn.close()


async def verify_anchors(
    suite_dir: Path,
    *,
    lock_path: Path | None = None,
    threshold: float | None = None,
    judges: list[Judge] | None = None,
) -> VerifyResult:
    """Re-hash every locked file; if all match, re-judge the frozen event logs and apply the gate."""
    loaded = load_suite(suite_dir)
    lock = lock_path or lock_path_of(loaded)
    data = read_lock(lock)
    mismatches = tuple(check_hashes(lock, {str(k): str(v) for k, v in data["files"].items()}))
    if mismatches:
        return VerifyResult(lock, mismatches, None)
    limit = threshold if threshold is not None else float(data.get("spearman_threshold", DEFAULT_THRESHOLD))
    own = judges is None
    active = make_suite_judges(loaded.suite) if judges is None else judges
    try:
        current, gold, errors = await _rejudge_anchors(loaded, lock.parent, data, active)
    finally:
        if own:
            await close_judges(active)
    return VerifyResult(lock, (), spearman_gate(current, gold, limit), current, gold, errors)


async def _rejudge_anchors(
    loaded: LoadedSuite, base: Path, lock: dict[str, Any], judges: list[Judge]
) -> tuple[dict[str, float], dict[str, float], dict[str, str]]:
    anchors = lock.get("anchors")
    if not isinstance(anchors, dict) or not anchors:
        raise AnchorError("the lock file lists no anchors")
    passes = range(1, loaded.suite.judge.passes + 1)
    current: dict[str, float] = {}
    gold: dict[str, float] = {}
    errors: dict[str, str] = {}
    gold_docs: dict[str, Any] = {}
    locked = lock.get("files", {})
    for key, entry in sorted(anchors.items()):
        if entry["gold"] not in locked or entry["transcript"] not in locked:
            raise AnchorError(f"the lock file's anchor {key!r} names a file the lock does not hash")
        if entry["gold"] not in gold_docs:
            gold_docs[entry["gold"]] = json.loads((base / entry["gold"]).read_text(encoding="utf-8"))
        gold[key] = float(gold_docs[entry["gold"]]["trials"][key][GOLD_METRIC])
        try:
            scenario = loaded.scenario(entry["scenario"])
        except KeyError:
            errors[key] = f"scenario {entry['scenario']!r} is no longer in the suite"
            continue
        digest = digest_of(read_event_log(base / entry["transcript"]))
        subject = JudgeSubject(scenario, digest.answer_text, digest.audit_text, "", "")
        outcomes = await asyncio.gather(*(judge_answer(j, subject, p) for j in judges for p in passes))
        scores = [o.verdict.score for o in outcomes if o.verdict is not None]
        if scores:
            current[key] = statistics.fmean(scores)
        else:
            errors[key] = "; ".join(sorted({o.error for o in outcomes}))
    return current, gold, errors


async def check_before_run(loaded: LoadedSuite) -> None:
    """Raise ``AnchorError`` (hash diff or ρ, and how to re-lock) when the suite's anchors fail."""
    if configured_lock(loaded) is None:
        return
    result = await verify_anchors(loaded.root)
    if not result.passed:
        hint = RELOCK_HINT.format(suite=loaded.root)
        raise AnchorError(f"refusing to run {loaded.suite.name!r}: {result.message()}\n{hint}")


def verify_before_run(loaded: LoadedSuite) -> None:
    """The CLI's check before a run starts (outside any event loop)."""
    asyncio.run(check_before_run(loaded))


__all__ = [
    "GOLD_METRIC",
    "AnchorError",
    "LockResult",
    "VerifyResult",
    "check_before_run",
    "configured_lock",
    "default_lock_path",
    "lock_anchors",
    "lock_path_of",
    "verify_anchors",
    "verify_before_run",
]
