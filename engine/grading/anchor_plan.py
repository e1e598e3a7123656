"""What locking the anchors will write, and where, before anything is written.

``lock_anchors`` writes exactly what ``plan_lock`` lists, and the console's ``L`` shows the same
list in its confirmation, so a lock never changes a user's files in silence. The lock goes
where the suite looks for it (its ``anchors_lock``, else ``anchors/held-out.lock`` beside
suite.yaml, which a suite finds without a line of its own): suite.yaml is edited only when the
lock is written somewhere else (``proctor anchors lock -o``). The anchors folder is not part of
the suite's content hash, so a run locked from resumes as before (``make demo`` again).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from proctor.engine.grading.anchor_files import (
    ANCHORS_DIR,
    LOCK_NAME,
    AnchorError,
    anchor_key,
    event_log_document,
    safe_name,
    scenario_folder,
    suite_relative,
)
from proctor.scenarios.loader import LoadedSuite
from proctor.scenarios.schema import Scenario
from proctor.store.events import Judged, OperatorCommand, Scored
from proctor.store.read.reader import StoreReader
from proctor.store.scores import ScoreName

GOLD_METRIC = ScoreName.LLM_QUALITY
_NOT_AGENT_EVENTS = (Scored, Judged, OperatorCommand)


def default_lock_path(suite_dir: Path) -> Path:
    return suite_dir / ANCHORS_DIR / LOCK_NAME


def lock_path_of(loaded: LoadedSuite) -> Path:
    """Where the suite looks for its lock: its ``anchors_lock``, else the default place."""
    if loaded.suite.anchors_lock:
        return loaded.root / loaded.suite.anchors_lock
    return default_lock_path(loaded.root)


def configured_lock(loaded: LoadedSuite) -> Path | None:
    """The suite's lock when it has one (named in suite.yaml, or at the default place): runs and
    rubric changes must then pass verification."""
    if loaded.suite.anchors_lock:
        return loaded.root / loaded.suite.anchors_lock
    default = default_lock_path(loaded.root)
    return default if default.is_file() else None


@dataclass(frozen=True)
class Frozen:
    """One held-out trial as the lock freezes it: its agent events and its gold scores."""

    key: str
    event_log: dict[str, Any]
    gold: dict[str, Any]

    @property
    def transcript(self) -> str:
        """Its file, relative to the lock's folder."""
        doc = self.event_log
        name = f"{safe_name(doc['arm'])}__{safe_name(doc['model'])}__e{doc['epoch']}.json"
        return f"{doc['scenario']}/transcripts/{name}"


@dataclass(frozen=True)
class LockPlan:
    lock: Path
    suite_file: Path
    run_id: str
    held: tuple[Scenario, ...]
    frozen: dict[str, list[Frozen]]
    replaced: tuple[str, ...]
    """Anchor folders written by an earlier lock, removed and written again."""
    suite_line: str | None
    """The ``anchors_lock`` line suite.yaml gets, or None: it is left as it is."""

    def files(self) -> list[str]:
        """Every file written, relative to the lock's folder (the lock itself last)."""
        out = []
        for sc in self.held:
            out += [f"{sc.id}/rubric.json", f"{sc.id}/gold.json"]
            out += [f.transcript for f in self.frozen[sc.id]]
        return [*out, self.lock.name]

    def describe(self) -> list[str]:
        """What will be written where, for the confirmation a person reads before it happens."""
        base = self.lock.parent
        lines = [f"writes {len(self.files())} files under {base}/:"]
        lines.append(f"  {self.lock.name}  (the lock: the SHA-256 of every file below)")
        for sc in self.held:
            n = len(self.frozen[sc.id])
            lines.append(f"  {sc.id}/  rubric.json, gold.json, {n} transcript(s) in transcripts/")
        if self.replaced:
            lines.append(f"replaces the anchor folders an earlier lock wrote: {', '.join(self.replaced)}")
        # What happens to suite.yaml first, its path last: a long path must not hide the answer.
        if self.suite_line is None:
            found = suite_relative(self.lock, self.suite_file.parent)
            lines.append(
                f"suite.yaml is not changed: the suite finds {found} by itself, and the anchors are not "
                f"part of the suite's hash, so the run still resumes ({self.suite_file})"
            )
        else:
            lines.append(f"suite.yaml gets the line  {self.suite_line}  ({self.suite_file})")
        lines.append("the run database: the lock's hashes in its anchors table")
        return lines


def plan_lock(loaded: LoadedSuite, db: Path, lock_path: Path | None = None) -> LockPlan:
    """What locking the held-out scenarios of the run in ``db`` writes; AnchorError when it cannot."""
    held = tuple(s for s in loaded.scenarios if s.held_out)
    if not held:
        raise AnchorError(f"{loaded.root}: no held-out scenarios; mark some with 'held_out: true'")
    lock = lock_path or lock_path_of(loaded)
    run_id, frozen = frozen_trials(db, [s.id for s in held])
    missing = [sc.id for sc in held if sc.id not in frozen]
    if missing:
        raise AnchorError(
            f"{db}: no judged, finished trial for held-out scenario(s) {', '.join(missing)}; "
            "run them (and let the judge finish) before locking"
        )
    replaced = []
    for sc in held:
        folder = lock.parent / scenario_folder(sc.id)
        if folder.exists():
            if not (folder / "gold.json").is_file():
                raise AnchorError(
                    f"{folder} exists and is not an anchor folder (no gold.json); "
                    "choose another place for the lock file with -o"
                )
            replaced.append(f"{sc.id}/")
    where = lock.resolve() != lock_path_of(loaded).resolve()
    line = f"anchors_lock: {json.dumps(suite_relative(lock, loaded.root))}" if where else None
    return LockPlan(lock, loaded.root / "suite.yaml", run_id, held, frozen, tuple(replaced), line)


def frozen_trials(db: Path, held: list[str]) -> tuple[str, dict[str, list[Frozen]]]:
    """The run id and, per held-out scenario, its judged trials with their event logs and gold scores."""
    out: dict[str, list[Frozen]] = {}
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
                Frozen(
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


__all__ = [
    "GOLD_METRIC",
    "Frozen",
    "LockPlan",
    "configured_lock",
    "default_lock_path",
    "frozen_trials",
    "lock_path_of",
    "plan_lock",
]
