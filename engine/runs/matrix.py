"""Expanding a suite into its trial matrix: scenario × arm × model × epoch.

Every arm and scenario of one epoch shares that epoch's seed, so arms are compared on paired
trials (same scenario, same seed), which is what McNemar and the paired bootstrap assume.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from proctor.engine.providers.offline.gold import missing_gold
from proctor.engine.runs.replay_arms import check_replay_arms
from proctor.scenarios.loader import LoadedSuite, SuiteError
from proctor.store.write.writer import TrialRow


def epoch_seed(base_seed: int, epoch: int) -> int:
    digest = hashlib.sha256(f"proctor:{base_seed}:{epoch}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def select(names: Sequence[str], wanted: Sequence[str] | None, what: str, where: str) -> list[str]:
    """``wanted`` in suite order, or all; an unknown name is an error that lists the valid ones."""
    if not wanted:
        return list(names)
    unknown = [w for w in wanted if w not in names]
    if unknown:
        raise SuiteError(
            f"{where}: unknown {what} {', '.join(map(repr, unknown))}; valid: {', '.join(names)}"
        )
    return [n for n in names if n in wanted]


def check_size(loaded: LoadedSuite, *, epochs: int, scenarios: int, arms: int, models: int) -> None:
    """Refuse a matrix above ``limits.max_trials`` before a single row is built: 10^8 epochs
    would otherwise fill memory for a minute and end in MemoryError."""
    limit = loaded.suite.limits.max_trials
    total = epochs * scenarios * arms * models
    if total > limit:
        raise SuiteError(
            f"{loaded.root / 'suite.yaml'}: the run would have {total:,} trials ({epochs:,} epochs x "
            f"{scenarios} scenarios x {arms} arms x {models} models), above limits.max_trials = {limit:,}; "
            "lower --epochs or select fewer arms/scenarios/models, or raise limits.max_trials in suite.yaml"
        )


def check_planned_size(
    loaded: LoadedSuite,
    *,
    models: Sequence[str] | None,
    arms: Sequence[str] | None,
    scenarios: Sequence[str] | None,
    epochs: int | None,
) -> None:
    """``check_size`` for a run about to start, from its command line (before any database exists)."""
    where = str(loaded.root / "suite.yaml")
    scenario_ids = select([s.id for s in loaded.scenarios], scenarios, "scenario", where)
    arm_names = select(list(loaded.suite.arms), arms, "arm", where)
    check_size(
        loaded,
        epochs=epochs or loaded.suite.epochs,
        scenarios=len(scenario_ids),
        arms=len(arm_names),
        models=len(models or loaded.suite.models),
    )
    check_playable(loaded, models or loaded.suite.models, scenario_ids)
    check_replay_arms(loaded, arm_names)


def check_playable(loaded: LoadedSuite, models: Sequence[str], scenario_ids: Sequence[str]) -> None:
    """Refuse a model that cannot play a selected scenario (``offline:gold`` without gold calls)."""
    chosen = [s for s in loaded.scenarios if s.id in set(scenario_ids)]
    files = {s.id: loaded.scenario_files.get(s.id, loaded.root) for s in chosen}
    problems = missing_gold(chosen, models, files)
    if problems:
        more = f"\n(and {len(problems) - 10} more)" if len(problems) > 10 else ""
        raise SuiteError("\n".join(problems[:10]) + more)


def expand(
    loaded: LoadedSuite,
    *,
    models: Sequence[str],
    arms: Sequence[str] | None = None,
    scenarios: Sequence[str] | None = None,
    epochs: int,
    base_seed: int = 0,
) -> list[TrialRow]:
    where = str(loaded.root / "suite.yaml")
    arm_names = select(list(loaded.suite.arms), arms, "arm", where)
    scenario_ids = select([s.id for s in loaded.scenarios], scenarios, "scenario", where)
    check_size(loaded, epochs=epochs, scenarios=len(scenario_ids), arms=len(arm_names), models=len(models))
    check_playable(loaded, models, scenario_ids)
    check_replay_arms(loaded, arm_names)
    return [
        TrialRow(scenario=s, arm=a, model=m, epoch=e, seed=epoch_seed(base_seed, e))
        for e in range(epochs)
        for s in scenario_ids
        for a in arm_names
        for m in models
    ]
