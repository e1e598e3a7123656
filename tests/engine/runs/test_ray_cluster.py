"""``--executor ray`` on a real two-node cluster (two raylets on this machine, one CPU each), as a
user with two machines meets it: a driver killed with ``kill -9`` and resumed, SIGTERM, a node
that lacks a variable, a node whose server will not start, and a node lost in the middle of a
run. Every trial ends exactly once, and no server outlives its worker.

Slow (a cluster takes ~30 s to start here), so one cluster serves the module and each run is a
handful of short offline trials; the test that kills a node runs last.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from proctor.app.exit_codes import ExitCode
from proctor.scenarios.demo import SUITE_DIR
from proctor.store.events import TrialFinished
from proctor.store.read.reader import StoreReader
from tests.engine.ray_cluster import Cluster, Node, start_cluster

pytest.importorskip("ray")
pytestmark = pytest.mark.slow

SERVERS = "proctor.scenarios.demo.servers"  # in the command line of every demo server
RUN_TIMEOUT_S = 240


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    cluster = start_cluster()
    try:
        # node_b's PATH starts with an empty folder whose name the suite in
        # test_a_node_whose_server_will_not_start… refuses (a server gets the node's PATH).
        broken = cluster.root / "broken-bin"
        broken.mkdir()
        cluster.start_node("node_b", env={"PATH": f"{broken}:{os.environ['PATH']}"})
        yield cluster
    finally:
        cluster.stop()


def _run(
    cluster: Cluster, db: Path, *more: str, suite: Path = SUITE_DIR, address: str = ""
) -> subprocess.Popen[str]:
    args = [sys.executable, "-m", "proctor.app.cli", "run", str(suite), "--db", str(db), "--headless"]
    args += ["--executor", "ray", "--address", address or cluster.address, "--concurrency", "2", *more]
    return subprocess.Popen(
        args, env=cluster.driver_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _placements(db: Path) -> list[str]:
    log = db.parent / f"{db.name}.logs" / "ray-placements.log"
    return log.read_text().splitlines() if log.exists() else []


def _wait_for(predicate: object, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def _ends(db: Path) -> dict[int, list[TrialFinished]]:
    """Each trial's ``trial_finished`` events that count (of attempts not abandoned)."""
    with StoreReader(db) as reader:
        ends: dict[int, list[TrialFinished]] = {t.id: [] for t in reader.trials()}
        for t in reader.trials():
            for stored in reader.trial_events(t.id):
                if isinstance(stored.event, TrialFinished) and not stored.abandoned:
                    ends[t.id].append(stored.event)
    return ends


def _no_leftovers(cluster: Cluster) -> None:
    """Every server of the run's workers is gone within a few seconds."""
    deadline = time.monotonic() + 15
    while (left := cluster.leftovers(SERVERS)) and time.monotonic() < deadline:
        time.sleep(0.3)
    assert left == []


# Four short trials: two with a stdio server, two with an HTTP server proctor launches.
SMALL = ("--arms", "codeintel,codeintel+distractors", "--scenarios", "retry-delay-cap,dead-letter")


def test_a_driver_killed_with_kill_9_leaves_no_server_and_resume_ends_each_trial_once(
    cluster: Cluster, tmp_path: Path
) -> None:
    db = tmp_path / "run.db"
    driver = _run(cluster, db, *SMALL)
    try:
        _wait_for(lambda: len(_placements(db)) >= 2 and cluster.leftovers(SERVERS))
    finally:
        driver.kill()  # SIGKILL: no cleanup of its own; Ray ends its workers
        driver.communicate(timeout=30)
    _no_leftovers(cluster)

    resumed = _run(cluster, db, "--resume")
    _out, err = resumed.communicate(timeout=RUN_TIMEOUT_S)
    assert resumed.returncode == ExitCode.OK, err[-3000:]
    ends = _ends(db)
    assert len(ends) == 4 and all(len(e) == 1 and e[0].status == "finished" for e in ends.values())
    hosts = {e[0].host for e in ends.values()}
    assert all(hosts) and len({h.rsplit(":", 1)[1] for h in hosts}) >= 1
    _no_leftovers(cluster)


def test_sigterm_stops_a_ray_run_as_a_local_one_143_and_the_resume_hint(
    cluster: Cluster, tmp_path: Path
) -> None:
    db = tmp_path / "run.db"
    driver = _run(cluster, db, *SMALL)
    try:
        _wait_for(lambda: len(_placements(db)) >= 1)
    finally:
        driver.send_signal(signal.SIGTERM)
        _out, err = driver.communicate(timeout=60)
    assert driver.returncode == ExitCode.TERMINATED, err[-3000:]
    assert f"resume with proctor run --resume --db {db}\n" in err  # one line, however long the path
    assert "Traceback" not in err and "SIGTERM" not in err  # no Python or absl stack dump
    _no_leftovers(cluster)


def _run_with_a_driver_only_variable(
    cluster: Cluster, tmp_path: Path, value: str, address: str = ""
) -> tuple[int, str, str]:
    """The demo suite with a server that needs ``PROCTOR_TEST_DRIVER_ONLY``, set on the driver
    only (the nodes were started before): (exit code, stdout, stderr) of its run."""
    suite = tmp_path / "suite"
    shutil.copytree(SUITE_DIR, suite, ignore=shutil.ignore_patterns("__pycache__"))
    text = (suite / "suite.yaml").read_text()
    marker = "    timeout_s: 20\n"
    text = text.replace(marker, marker + '    env: {DEMO_TOKEN: "${PROCTOR_TEST_DRIVER_ONLY}"}\n', 1)
    (suite / "suite.yaml").write_text(text)
    env_before = dict(cluster.driver_env)
    cluster.driver_env["PROCTOR_TEST_DRIVER_ONLY"] = value
    try:
        driver = _run(cluster, tmp_path / "run.db", *SMALL, suite=suite, address=address)
        out, err = driver.communicate(timeout=RUN_TIMEOUT_S)
    finally:
        cluster.driver_env = env_before
    return driver.returncode, out, err


def test_a_variable_the_driver_has_and_a_node_lacks_stops_the_run_naming_node_and_variable(
    cluster: Cluster, tmp_path: Path
) -> None:
    secret = "value-that-must-not-be-printed"
    code, out, err = _run_with_a_driver_only_variable(cluster, tmp_path, secret)
    assert code == ExitCode.BAD_INPUT, err[-3000:]
    assert "PROCTOR_TEST_DRIVER_ONLY" in err and secret not in err + out
    node_ports = {n.manager_port for n in cluster.nodes}
    said = " ".join(err.split())  # the console wraps long lines
    assert all(f":{port})" in said for port in node_ports), said  # each node named (neither has it)
    assert "Traceback" not in err


def test_through_ray_client_the_run_plays_each_trial_once_and_keeps_each_workers_logs(
    cluster: Cluster, tmp_path: Path
) -> None:
    db = tmp_path / "run.db"
    driver = _run(cluster, db, *SMALL, address=cluster.client_address())
    _out, err = driver.communicate(timeout=RUN_TIMEOUT_S)
    assert driver.returncode == ExitCode.OK, err[-3000:] + cluster.client_server_logs()
    ends = _ends(db)
    assert len(ends) == 4 and all(len(e) == 1 and e[0].status == "finished" for e in ends.values())
    hosts = {e[0].host for e in ends.values()}
    assert all(hosts)
    logs = db.parent / f"{db.name}.logs"
    assert {f"ray-{h.replace(':', '-')}" for h in hosts} <= {p.name for p in logs.iterdir()}
    assert "Traceback" not in err
    _no_leftovers(cluster)


def test_through_ray_client_a_variable_a_node_lacks_is_checked_at_start(
    cluster: Cluster, tmp_path: Path
) -> None:
    code, _out, err = _run_with_a_driver_only_variable(cluster, tmp_path, "x", cluster.client_address())
    assert code == ExitCode.BAD_INPUT, err[-3000:] + cluster.client_server_logs()
    said = " ".join(err.split())
    assert "PROCTOR_TEST_DRIVER_ONLY" in said and all(f":{n.manager_port})" in said for n in cluster.nodes)


def test_a_node_whose_server_will_not_start_is_quarantined_and_its_trials_play_elsewhere(
    cluster: Cluster, tmp_path: Path
) -> None:
    suite = tmp_path / "suite"
    shutil.copytree(SUITE_DIR, suite, ignore=shutil.ignore_patterns("__pycache__"))
    (suite / "picky_start.py").write_text(
        "import os, runpy, sys\n"
        "if 'broken-bin' in os.environ.get('PATH', ''):\n"
        "    sys.exit('this node cannot start the server: its PATH is broken')\n"
        f"runpy.run_module('{SERVERS}.codeintel', run_name='__main__')\n"
    )
    text = (suite / "suite.yaml").read_text()
    text = text.replace(
        f"args: [-m, {SERVERS}.codeintel, ", "args: ['${PROCTOR_SUITE_DIR}/picky_start.py', ", 1
    )
    (suite / "suite.yaml").write_text(text)
    db = tmp_path / "run.db"
    driver = _run(
        cluster,
        db,
        "--arms",
        "codeintel",
        "--scenarios",
        "retry-delay-cap,dead-letter",
        "--epochs",
        "2",
        suite=suite,
    )
    out, err = driver.communicate(timeout=RUN_TIMEOUT_S)
    assert driver.returncode == ExitCode.OK, err[-3000:] + out[-3000:]
    ends = _ends(db)
    assert len(ends) == 4 and all(len(e) == 1 and e[0].status == "finished" for e in ends.values())
    notes = "\n".join(_placements(db))
    logs = sorted((db.parent / f"{db.name}.logs").glob("ray-*/codeintel.stderr.log"))
    assert "quarantined: server 'codeintel' did not start there but does elsewhere" in notes, notes + "".join(
        p.read_text() for p in logs
    )
    with StoreReader(db) as reader:
        lost = [
            e for e in reader.events_of_kind("error") if getattr(e.event, "error_type", "") == "server_start"
        ]
    assert lost and all(e.abandoned and "PATH is broken" in e.event.message for e in lost)  # type: ignore[union-attr]
    _no_leftovers(cluster)


def test_a_node_lost_in_the_middle_of_a_run_costs_no_trial(cluster: Cluster, tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    node_b: Node = cluster.nodes[1]
    driver = _run(cluster, db, *SMALL, "--epochs", "2")
    try:
        _wait_for(lambda: len(_placements(db)) >= 3)
        os.kill(cluster.raylet(node_b), signal.SIGKILL)
        _out, err = driver.communicate(timeout=RUN_TIMEOUT_S)
    finally:
        driver.kill()
    assert driver.returncode == ExitCode.OK, err[-3000:]
    ends = _ends(db)
    assert len(ends) == 8 and all(len(e) == 1 and e[0].status == "finished" for e in ends.values())
    attempts = Counter(line.split()[1] for line in _placements(db) if line.startswith("trial "))
    assert sum(attempts.values()) >= 8
    _no_leftovers(cluster)
