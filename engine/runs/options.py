"""What a run is asked to do, and whether a database's run may be continued with a given suite.

Resuming keeps the run's own models, arms, scenarios, epochs and seed unless the user overrides
them, and is refused with another suite: one run's numbers come from one experiment.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from proctor.scenarios.loader import LoadedSuite
from proctor.store.read.reader import StoreReader


@dataclass(frozen=True)
class RunOptions:
    db: Path
    models: Sequence[str] | None = None
    arms: Sequence[str] | None = None
    scenarios: Sequence[str] | None = None
    epochs: int | None = None
    concurrency: int | None = None
    resume: bool = False
    base_seed: int | None = None
    executor: str = "local"  # where trials are played: "local" (this process) or "ray"
    address: str | None = None  # the Ray cluster (None: start a local Ray instance)
    left_out: Sequence[Mapping[str, str]] = ()
    """What ``--keep-going`` left out before the first trial: ``{"arm"|"model": name, "why": line}``."""


class RunError(Exception):
    """The run cannot start (the database holds another run, a model is misconfigured, ...)."""


def _existing_run(db: Path) -> tuple[str, dict[str, Any]] | None:
    if not db.exists() or db.stat().st_size == 0:  # an empty file is an empty database (see EngineLock)
        return None
    with StoreReader(db) as reader:
        run = reader.run()
    return (run.id, run.config) if run else None


def check_resumable(db: Path, loaded: LoadedSuite, *, resume: bool) -> tuple[str, dict[str, Any]] | None:
    """The run already in ``db`` (id, config), if the user may continue it with ``loaded``.

    A run's numbers come from one suite: resuming with another one would mix two experiments.
    """
    existing = _existing_run(db)
    if existing is None:
        return None
    if not resume:
        raise RunError(
            f"{db} already holds run {existing[0]}; pass --resume to continue it, or choose another --db"
        )
    _check_same_suite(db, existing[1], loaded)
    return existing


def recorded_suite_dir(db: Path) -> Path:
    """The suite folder the run in ``db`` recorded (``proctor run --resume --db DB`` without SUITE)."""
    if not db.is_file():
        raise FileNotFoundError(f"{db}: no such run database")
    existing = _existing_run(db)
    if existing is None:
        raise RunError(f"{db} holds no run to resume; start one with proctor run SUITE --db {db}")
    suite_dir = existing[1].get("suite_dir")
    if not isinstance(suite_dir, str) or not suite_dir:
        raise RunError(
            f"{db}: the run does not record its suite folder; give it: proctor run SUITE --resume --db {db}"
        )
    if not Path(suite_dir).is_dir():
        raise RunError(
            f"{db}: the run's suite folder {suite_dir} is gone; give the suite: proctor run SUITE --resume --db {db}"
        )
    return Path(suite_dir)


def suite_drift(config: dict[str, Any], loaded: LoadedSuite) -> str | None:
    """How ``loaded`` differs from the suite the run recorded, or None when it is the same (or unrecorded)."""
    recorded = config.get("suite_hash")
    if not isinstance(recorded, str) or recorded == loaded.content_hash:
        return None
    return f"content hash {loaded.content_hash[:12]}, the run recorded {recorded[:12]}"


def _check_same_suite(db: Path, config: dict[str, Any], loaded: LoadedSuite) -> None:
    drift = suite_drift(config, loaded)
    if drift is None:
        return
    ran_from = config.get("suite_dir", "?")
    same_place = str(loaded.root) == ran_from
    what = (
        "has changed since the run started" if same_place else f"is not the suite the run used ({ran_from})"
    )
    raise RunError(
        f"{db}: the suite {loaded.root} {what} ({drift}); "
        "resume with the run's own suite, or start a new run with another --db"
    )


def resumed_options(options: RunOptions, config: dict[str, Any]) -> RunOptions:
    """Resuming keeps the run's models, arms, scenarios, epochs and seed unless the user overrides them."""

    def stored_list(key: str) -> list[str] | None:
        value = config.get(key)
        return [str(v) for v in value] if isinstance(value, list) and value else None

    epochs = config.get("epochs")
    seed = config.get("base_seed")
    stored_left_out = config.get("left_out")
    left_out = options.left_out or (
        tuple(dict(x) for x in stored_left_out if isinstance(x, dict))
        if isinstance(stored_left_out, list)
        else ()
    )
    return replace(
        options,
        left_out=left_out,
        models=options.models or stored_list("models"),
        arms=options.arms or stored_list("arms"),
        scenarios=options.scenarios or stored_list("scenarios"),
        epochs=options.epochs or (epochs if isinstance(epochs, int) else None),
        base_seed=options.base_seed
        if options.base_seed is not None
        else (seed if isinstance(seed, int) else 0),
    )


__all__ = [
    "RunError",
    "RunOptions",
    "check_resumable",
    "recorded_suite_dir",
    "resumed_options",
    "suite_drift",
]
