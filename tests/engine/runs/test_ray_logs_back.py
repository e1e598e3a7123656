"""A worker that cannot write its server logs beside the driver's database (as on another
machine, where that path does not exist) writes them in its own temp folder, and the driver
copies them into ``DB.logs/ray-HOST-PID/`` when the run ends.

The second node runs in a mount namespace of its own (``unshare -m``) in which the folder that
holds the run's database is read-only: its workers see the path but cannot create anything
there, as a worker on another machine could not. Needs the right to make mount namespaces
(root here); skipped without it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from proctor.app.exit_codes import ExitCode
from proctor.scenarios.demo import SUITE_DIR
from proctor.store.events import TrialFinished
from proctor.store.read.reader import StoreReader
from tests.engine.ray_cluster import RAY, Cluster, start_cluster

pytest.importorskip("ray")
pytestmark = pytest.mark.slow

_READ_ONLY = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" "$1" && shift && exec "$@"'


def _can_unshare(folder: Path) -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", _READ_ONLY, "sh", str(folder), "true"],
        capture_output=True,
        timeout=30,
    )
    return probe.returncode == 0


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[Cluster, Path]]:
    cluster = start_cluster()
    try:
        runs = cluster.root / "runs"
        runs.mkdir()
        if not _can_unshare(runs):
            pytest.skip("cannot make a mount namespace here (unshare -m needs CAP_SYS_ADMIN)")
        unshare = ("unshare", "-m", "--propagation", "private", "sh", "-c", _READ_ONLY, "sh", str(runs), RAY)
        cluster.start_node("remote", ray=unshare)
        yield cluster, runs
    finally:
        cluster.stop()


def _hosts(db: Path) -> set[str]:
    with StoreReader(db) as reader:
        return {
            s.event.host
            for t in reader.trials()
            for s in reader.trial_events(t.id)
            if isinstance(s.event, TrialFinished) and not s.abandoned
        }


def test_logs_a_worker_kept_in_its_temp_folder_are_copied_beside_the_database(
    cluster: tuple[Cluster, Path],
) -> None:
    ray_cluster, runs = cluster
    db = runs / "run.db"
    args = [sys.executable, "-m", "proctor.app.cli", "run", str(SUITE_DIR), "--db", str(db), "--headless"]
    args += ["--executor", "ray", "--address", ray_cluster.address, "--concurrency", "2"]
    args += ["--arms", "codeintel,codeintel+distractors", "--scenarios", "retry-delay-cap,dead-letter"]
    done = subprocess.run(args, env=ray_cluster.driver_env, capture_output=True, text=True, timeout=240)
    assert done.returncode == ExitCode.OK, done.stderr[-3000:]
    kept_away = Path(tempfile.gettempdir()) / "proctor-ray-logs"
    remote = []
    try:
        for host in _hosts(db):
            name = f"ray-{host.replace(':', '-')}"
            copied = db.parent / f"{db.name}.logs" / name
            assert copied.is_dir() and any(copied.iterdir()), f"no logs of {host} beside the database"
            if (kept_away / name).is_dir():  # the read-only node's worker: it wrote them there
                remote.append(name)
                own = sorted(p.name for p in (kept_away / name).iterdir())
                assert own and sorted(p.name for p in copied.iterdir()) == own
                assert all((copied / n).read_bytes() == (kept_away / name / n).read_bytes() for n in own)
        assert remote, "no trial ran on the node that could not write beside the database"
    finally:
        for name in remote:
            shutil.rmtree(kept_away / name, ignore_errors=True)
