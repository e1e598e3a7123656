"""A Ray node whose Python has Ray but no proctor, as a second machine set up with ``pip install
ray`` alone: the run stops before any trial with exit 2, naming the node and the fix, instead of
a worker's ``ModuleNotFoundError`` traceback.

On one machine a node would find proctor anyway if it shared the driver's environment, so the
node is started from a virtual environment of its own whose packages are this environment's,
linked one by one, less proctor's (its distribution metadata and its editable-install hook).
The driver runs from a folder outside the checkout.
"""

from __future__ import annotations

import site
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from proctor.app.exit_codes import ExitCode
from proctor.scenarios.demo import SUITE_DIR
from tests.engine.ray_cluster import Cluster, start_cluster

pytest.importorskip("ray")
pytestmark = pytest.mark.slow


def _python_without_proctor(root: Path) -> Path:
    """A venv that imports Ray (and its dependencies) from this environment, but not proctor."""
    packages = root / "site-without-proctor"
    packages.mkdir()
    for here in site.getsitepackages():
        for entry in Path(here).iterdir():
            name = entry.name.lower()
            if name.startswith(("proctor", "__editable__")) or (packages / entry.name).exists():
                continue
            (packages / entry.name).symlink_to(entry)
    venv = root / "venv-ray-only"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    (Path(purelib) / "packages.pth").write_text(f"{packages}\n")
    probe = subprocess.run(
        [
            str(python),
            "-c",
            "import ray, importlib.metadata as m, importlib.util as u; m.version('ray'); "
            "print(u.find_spec('proctor') is None and not [d for d in m.distributions() if d.name == 'proctor'])",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert probe.stdout.strip() == "True", probe.stderr[-2000:]  # Ray yes, proctor no
    return python


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    cluster = start_cluster()
    try:
        python = _python_without_proctor(cluster.root)
        cluster.start_node("bare", ray=(str(python), "-m", "ray.scripts.scripts"))
        yield cluster
    finally:
        cluster.stop()


def test_a_node_without_proctor_stops_the_run_with_exit_2_naming_it(cluster: Cluster, tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    args = [sys.executable, "-m", "proctor.app.cli", "run", str(SUITE_DIR), "--db", str(db), "--headless"]
    args += ["--executor", "ray", "--address", cluster.address, "--concurrency", "2"]
    args += ["--arms", "codeintel", "--scenarios", "retry-delay-cap"]
    done = subprocess.run(
        args, env=cluster.driver_env, cwd=tmp_path, capture_output=True, text=True, timeout=240
    )
    said = " ".join(done.stderr.split())  # the console wraps long lines
    assert done.returncode == ExitCode.BAD_INPUT, done.stderr[-3000:]
    bare = cluster.nodes[-1]
    assert f":{bare.manager_port}): no proctor" in said, said
    assert "pip install 'proctor[ray]==" in said
    assert "Traceback" not in done.stderr and "ModuleNotFoundError" not in done.stderr
