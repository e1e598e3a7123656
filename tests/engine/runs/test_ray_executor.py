"""``--executor ray``: the demo played by two Ray worker processes gives the local run's record.

One local Ray instance with two CPUs serves the module (so two workers); the reference is the
same demo run with the local executor, same seeds. Reports are compared after dropping what
legitimately differs between two runs (the run's id and times, wall clocks, latencies, and the
scores computed from wall time), and each trial's transcript is compared event by event.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from proctor.engine.reports.report import build_report
from proctor.engine.runs.options import RunOptions
from proctor.engine.runs.ray_executor import RayExecutor
from proctor.engine.runs.runner import Run
from proctor.engine.runs.session import run_suite
from proctor.scenarios.demo import SUITE_DIR
from proctor.scenarios.loader import LoadedSuite, load_suite
from proctor.store.events import ErrorEvent, Judged, Scored, TrialFinished
from proctor.store.read.reader import StoreReader, TrialRecord

ray = pytest.importorskip("ray")

pytestmark = pytest.mark.slow

# Differ between any two runs: when, how long, where, and the scores that weigh wall time in.
TIMED = {"wall_s", "latency_s", "time_part", "efficiency", "fairness", "fairness_delta", "host"}
RANKED = {"rank", "tied_with", "pareto"}  # follow from fairness means


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    ray.init(
        address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR
    )
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def loaded() -> LoadedSuite:
    return load_suite(SUITE_DIR)


@pytest.fixture(scope="module")
def local_db(loaded: LoadedSuite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("local") / "local.db"
    assert asyncio.run(run_suite(loaded, RunOptions(db=db, concurrency=4))) == "finished"
    return db


@dataclass
class Played:
    status: str
    run: Run


async def _play(loaded: LoadedSuite, options: RunOptions, **kwargs: Any) -> Played:
    runs: list[Run] = []
    status = await run_suite(loaded, options, on_start=lambda run, todo: runs.append(run), **kwargs)
    return Played(status, runs[0])


def _normal(value: Any, *, drop: set[str]) -> Any:
    if isinstance(value, dict):
        return {k: _normal(v, drop=drop) for k, v in value.items() if k not in drop}
    if isinstance(value, list):
        return [_normal(v, drop=drop) for v in value]
    return value


def _report(db: Path, *, drop: frozenset[str] = frozenset()) -> dict[str, Any]:
    report = build_report(db)
    report["run"] = {k: v for k, v in report["run"].items() if k not in ("id", "started", "finished")}
    del report["ranking"]
    normal: dict[str, Any] = _normal(report, drop=TIMED | RANKED | set(drop))
    return normal


def _transcripts(db: Path) -> dict[int, list[str]]:
    """Each trial's current attempt, without wall clocks and latencies, as a sorted multiset:
    the results of parallel tool calls arrive in whatever order the servers answer."""
    out: dict[int, list[str]] = {}
    with StoreReader(db) as reader:
        for t in reader.trials():
            out[t.id] = sorted(
                json.dumps(_normal(e.event.model_dump(), drop=TIMED | {"attempt"}), sort_keys=True)
                for e in reader.trial_events(t.id)
                if not isinstance(e.event, (Scored, Judged))  # compared through the report
            )
    return out


def _by_key(db: Path) -> dict[tuple[str, str, str, int], tuple[Any, list[str]]]:
    """Each trial's report entry and transcript by what it is, not by its id or attempt."""
    transcripts = _transcripts(db)
    out = {}
    for t in _report(db, drop=frozenset({"attempt"}))["trials"]:
        key = (t["scenario"], t["arm"], t["model"], t["epoch"])
        out[key] = ({k: v for k, v in t.items() if k != "id"}, transcripts[t["id"]])
    return out


def _worker_log_dirs(db: Path) -> list[Path]:
    return sorted(p for p in (db.parent / f"{db.name}.logs").glob("ray-*") if p.is_dir())


async def test_ray_run_gives_the_local_record_from_two_worker_processes(
    ray_cluster: None, loaded: LoadedSuite, local_db: Path, tmp_path: Path
) -> None:
    db = tmp_path / "ray.db"
    played = await _play(loaded, RunOptions(db=db, concurrency=4, executor="ray"))
    assert played.status == "finished"

    assert _report(db) == _report(local_db)
    assert _transcripts(db) == _transcripts(local_db)

    executor = played.run.executor
    assert isinstance(executor, RayExecutor)
    with StoreReader(db) as reader:
        trials = reader.trials()
    assert sorted(executor.placements) == [t.id for t in trials]
    pids = {where.rsplit(":", 1)[1] for where in executor.placements.values()}
    assert len(pids) == 2 and str(os.getpid()) not in pids
    # Each worker started its own MCP servers: their stderr logs sit in one folder per worker.
    assert [p.name.rsplit("-", 1)[1] for p in _worker_log_dirs(db)] == sorted(pids)
    assert all(any(p.glob("*.stderr.log")) for p in _worker_log_dirs(db))


async def test_an_interrupted_ray_run_resumes_where_it_stopped(
    ray_cluster: None, loaded: LoadedSuite, local_db: Path, tmp_path: Path
) -> None:
    db = tmp_path / "ray.db"
    ended: list[TrialRecord] = []
    task = asyncio.current_task()
    assert task is not None

    def progress(record: TrialRecord) -> None:
        ended.append(record)
        if len(ended) == 6:
            task.cancel()  # as Ctrl-C does: trials in flight are given up, the rest never start

    options = RunOptions(db=db, concurrency=4, executor="ray", arms=["baseline", "codeintel"])
    with pytest.raises(asyncio.CancelledError):
        await run_suite(loaded, options, on_progress=progress)
    task.uncancel()
    with StoreReader(db) as reader:
        first = {t.id: t for t in reader.trials()}
    done_first = {i for i, t in first.items() if t.status in ("finished", "error")}
    assert 6 <= len(done_first) < len(first)

    resumed = await _play(loaded, RunOptions(db=db, resume=True, executor="ray"))
    assert resumed.status == "finished"
    executor = resumed.run.executor
    assert isinstance(executor, RayExecutor)
    assert set(executor.placements) == set(first) - done_first  # finished trials are never played again

    with StoreReader(db) as reader:
        after = {t.id: t for t in reader.trials()}
    assert all(after[i].attempt == 1 for i in done_first)
    assert all(t.status == "finished" for t in after.values())
    ours, local = _by_key(db), _by_key(local_db)
    assert ours == {key: local[key] for key in ours}


async def test_a_trial_lost_with_its_worker_is_played_again_on_another(
    ray_cluster: None, loaded: LoadedSuite, tmp_path: Path
) -> None:
    db = tmp_path / "ray.db"
    runs: list[Run] = []
    killed: list[str] = []

    def progress(record: TrialRecord) -> None:
        executor = runs[0].executor
        assert isinstance(executor, RayExecutor)
        if not killed:  # the first trial is done; kill a worker that is playing another one
            victim = next(w for w in executor._workers if w.busy)
            killed.append(victim.where)
            ray.kill(victim.actor)

    options = RunOptions(db=db, concurrency=4, executor="ray", arms=["baseline", "codeintel"])
    status = await run_suite(
        loaded, options, on_start=lambda run, todo: runs.append(run), on_progress=progress
    )
    assert status == "finished"
    with StoreReader(db) as reader:
        trials = reader.trials()
        lost = [
            e
            for e in reader.events_of_kind("error")
            if isinstance(e.event, ErrorEvent) and e.event.where == "worker"
        ]
        hosts = {
            t.id: e.event.host
            for t in trials
            for e in reader.trial_events(t.id)
            if isinstance(e.event, TrialFinished)
        }
    assert lost and all(killed[0] in e.event.message for e in lost)  # type: ignore[union-attr]
    assert all(e.abandoned and e.event.infrastructure for e in lost), lost  # type: ignore[union-attr]
    assert all(t.status == "finished" for t in trials)  # every lost trial was played again
    again = {e.trial_id for e in lost}
    assert {t.id for t in trials if t.attempt == 2} == again
    assert all(hosts[i] and hosts[i] != killed[0] for i in again)  # played on the other worker
    assert all(hosts.values())  # each trial's end says which worker played it
