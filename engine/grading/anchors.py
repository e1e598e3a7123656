"""Anchors: held-out scenarios frozen by SHA-256, and the gate every rubric or judge change must pass.

``lock_anchors`` freezes each held-out scenario from a finished run: every trial's event log,
the rubric, and the gold scores (that run's llm_quality and fairness per trial). ``verify_anchors``
re-hashes every locked file, then re-judges the frozen event logs with the current judge and
the current rubric: it passes only if nothing changed on disk and Spearman ρ between the new
llm_quality and the gold llm_quality is at least the threshold. A suite with ``anchors_lock``
refuses to run while verification fails (``verify_before_run``).
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
    ANCHORS_DIR,
    LOCK_NAME,
    LOCK_SCHEMA,
    AnchorError,
    HashMismatch,
    anchor_key,
    check_hashes,
    combined_hash,
    event_log_document,
    read_event_log,
    read_lock,
    rubric_document,
    safe_name,
    scenario_folder,
    set_anchors_lock,
    sha256_file,
    suite_relative,
    write_json,
)
from proctor.engine.grading.evaluation import digest_of
from proctor.engine.judges.base import Judge, JudgeSubject, judge_answer
from proctor.engine.judges.registry import close_judges, judge_models, make_suite_judges
from proctor.engine.stats import GateResult, spearman_gate
from proctor.engine.stats.anchors_gate import DEFAULT_THRESHOLD
from proctor.engine.suites import load_suite
from proctor.scenarios.loader import LoadedSuite
from proctor.store.events import Judged, OperatorCommand, Scored
from proctor.store.read.reader import StoreReader
from proctor.store.schema import configure
from proctor.store.scores import ScoreName

GOLD_METRIC = ScoreName.LLM_QUALITY
RELOCK_HINT = (
    "if the change is deliberate, review it and re-lock: "
    "proctor anchors lock --suite {suite} --db RUN.db (then commit the new lock file)"
)
_NOT_AGENT_EVENTS = (Scored, Judged, OperatorCommand)


@dataclass(frozen=True)
class LockResult:
    lock_path: Path
    files: dict[str, str]
    anchors: tuple[str, ...]
    scenarios: tuple[str, ...]


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


def default_lock_path(suite_dir: Path) -> Path:
    return suite_dir / ANCHORS_DIR / LOCK_NAME


def lock_path_of(loaded: LoadedSuite) -> Path:
    if loaded.suite.anchors_lock:
        return loaded.root / loaded.suite.anchors_lock
    return default_lock_path(loaded.root)


@dataclass(frozen=True)
class _Frozen:
    key: str
    event_log: dict[str, Any]
    gold: dict[str, Any]


def _frozen_trials(db: Path, held: list[str]) -> tuple[str, dict[str, list[_Frozen]]]:
    """The run id and, per held-out scenario, its judged trials with their event logs and gold scores."""
    out: dict[str, list[_Frozen]] = {}
    with StoreReader(db) as reader:
        run = reader.run()
        if run is None:
            raise AnchorError(f"{db} holds no run")
        scores = {(s.trial_id, s.name): s.value for s in reader.scores()}
        for t in reader.trials():
            gold = scores.get((t.id, GOLD_METRIC))
            if t.scenario not in held or t.status not in ("finished", "error") or gold is None:
                continue
            events = [e.event for e in reader.trial_events(t.id) if not e.abandoned]
            agent = [e for e in events if not isinstance(e, _NOT_AGENT_EVENTS)]
            out.setdefault(t.scenario, []).append(
                _Frozen(
                    anchor_key(t.scenario, t.arm, t.model, t.epoch),
                    event_log_document(t.scenario, t.arm, t.model, t.epoch, t.id, agent),
                    {
                        GOLD_METRIC: gold,
                        ScoreName.FAIRNESS: scores.get((t.id, ScoreName.FAIRNESS)),
                        ScoreName.PASSED: scores.get((t.id, ScoreName.PASSED)),
                        "trial_id": t.id,
                    },
                )
            )
    return run.id, out


def lock_anchors(
    suite_dir: Path, db: Path, *, lock_path: Path | None = None, threshold: float = DEFAULT_THRESHOLD
) -> LockResult:
    """Freeze the held-out scenarios of the run in ``db``; write the lock and point suite.yaml at it."""
    loaded = load_suite(suite_dir)
    held = [s for s in loaded.scenarios if s.held_out]
    if not held:
        raise AnchorError(f"{loaded.root}: no held-out scenarios; mark some with 'held_out: true'")
    lock = lock_path or default_lock_path(loaded.root)
    base = lock.parent
    run_id, frozen = _frozen_trials(db, [s.id for s in held])
    missing = [sc.id for sc in held if sc.id not in frozen]
    if missing:
        raise AnchorError(
            f"{db}: no judged, finished trial for held-out scenario(s) {', '.join(missing)}; "
            "run them (and let the judge finish) before locking"
        )
    files: dict[str, str] = {}
    per_scenario: dict[str, dict[str, str]] = {}
    anchors: dict[str, dict[str, str]] = {}
    for sc in held:
        folder = base / scenario_folder(sc.id)
        if folder.exists():
            if not (folder / "gold.json").is_file():
                raise AnchorError(
                    f"{folder} exists and is not an anchor folder (no gold.json); "
                    "choose another place for the lock file with -o"
                )
            shutil.rmtree(folder)
        write_json(folder / "rubric.json", rubric_document(sc))
        gold_rows: dict[str, dict[str, Any]] = {}
        for item in frozen[sc.id]:
            doc = item.event_log
            name = f"{safe_name(doc['arm'])}__{safe_name(doc['model'])}__e{doc['epoch']}.json"
            rel = f"{sc.id}/transcripts/{name}"
            write_json(base / rel, doc)
            gold_rows[item.key] = item.gold | {"transcript": rel}
            anchors[item.key] = {"scenario": sc.id, "transcript": rel, "gold": f"{sc.id}/gold.json"}
        write_json(
            folder / "gold.json",
            {"scenario": sc.id, "source_run": run_id, "metric": GOLD_METRIC, "trials": gold_rows},
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
            "source_run": run_id,
            "source_db": str(db),
            "locked_at": locked_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "judges": judge_models(loaded.suite),
            "gold_metric": GOLD_METRIC,
            "spearman_threshold": threshold,
        },
    )
    set_anchors_lock(loaded.root / "suite.yaml", suite_relative(lock, loaded.root))
    _record(db, run_id, lock, per_scenario, locked_at.timestamp())
    return LockResult(lock, files, tuple(sorted(anchors)), tuple(s.id for s in held))


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
    if not loaded.suite.anchors_lock:
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
    "default_lock_path",
    "lock_anchors",
    "lock_path_of",
    "verify_anchors",
    "verify_before_run",
]
