"""The node check before a Ray run: it answers on a node where proctor cannot be imported, and
says what differs from the driver, with names only, never values."""

from __future__ import annotations

import subprocess
import sys
import sysconfig

import pytest

from proctor.engine.runs import ray_probe
from proctor.engine.runs.ray_probe import NodeView, problems

DRIVER = NodeView("head", "3.11.9", "0.4.0", "2.60.0", (), ())


def test_a_node_without_proctor_is_named_with_the_fix() -> None:
    there = NodeView("gpu-2", "3.11.4", "", "2.60.0", (), ())
    assert problems("gpu-2 (10.0.0.7:6380)", DRIVER, there) == [
        "node gpu-2 (10.0.0.7:6380): no proctor (the driver has 0.4.0): "
        "pip install 'proctor[ray]==0.4.0' there"
    ]


def test_another_version_or_python_is_named() -> None:
    there = NodeView("gpu-2", "3.12.1", "0.3.9", "2.59.0", (), ())
    found = " | ".join(problems("n", DRIVER, there))
    assert "proctor 0.3.9 (the driver has 0.4.0)" in found
    assert "Ray 2.59.0 (the driver has 2.60.0)" in found
    assert "Python 3.12.1 (the driver has 3.11.9)" in found


def test_only_what_the_driver_has_and_the_node_lacks_is_a_problem() -> None:
    driver = NodeView("head", "3.11.9", "0.4.0", "2.60.0", ("UNSET_EVERYWHERE",), ("npx",))
    there = NodeView("n", "3.11.2", "0.4.0", "2.60.0", ("UNSET_EVERYWHERE", "GH_TOKEN"), ("npx", "uvx"))
    assert problems("n", driver, there) == [
        "node n: not set there: GH_TOKEN (set on the driver; export them before that node's 'ray start')",
        "node n: server commands not found there: uvx",
    ]


def test_the_probe_reports_names_never_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROBE_SET", "s3cr3t-value")
    monkeypatch.delenv("PROBE_UNSET", raising=False)
    view = ray_probe.probe(["PROBE_SET", "PROBE_UNSET"], ["sh", "no-such-command-here"])
    assert view["missing_variables"] == ("PROBE_UNSET",)
    assert view["missing_commands"] == ("no-such-command-here",)
    assert "s3cr3t-value" not in repr(view)


def test_the_probe_runs_where_proctor_cannot_be_imported() -> None:
    """Shipped by value: a node without proctor runs it (and says so) instead of crashing the driver."""
    cloudpickle = pytest.importorskip("ray.cloudpickle")
    cloudpickle.register_pickle_by_value(ray_probe)
    try:
        blob = cloudpickle.dumps(ray_probe.probe)
    finally:
        cloudpickle.unregister_pickle_by_value(ray_probe)
    # -S: no site-packages .pth files, so proctor's editable install is invisible; Ray's
    # cloudpickle is found through the plain site-packages folder, as on a node with Ray alone.
    code = (
        "import sys, pickle; sys.path.append(sys.argv[1]); import ray.cloudpickle\n"
        "try:\n    import proctor\nexcept ImportError:\n    pass\nelse:\n    sys.exit('proctor importable')\n"
        "view = pickle.loads(sys.stdin.buffer.read())(['HOME'], [])\nprint(view['host'], view['python'])"
    )
    done = subprocess.run(
        [sys.executable, "-S", "-c", code, sysconfig.get_paths()["purelib"]],
        input=blob,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert done.stdout.decode().split()[1].startswith(sysconfig.get_python_version())
