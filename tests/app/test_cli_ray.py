"""``proctor run --executor ray`` from the command line: refused clearly, or played end to end."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from proctor.app.cli import main
from proctor.app.commands.engine_process import options_from_json, options_json
from proctor.app.exit_codes import ExitCode
from proctor.engine.runs.options import RunOptions
from proctor.scenarios.demo import SUITE_DIR
from proctor.store.read.reader import StoreReader

PROCTOR = [sys.executable, "-m", "proctor.app.cli"]


def test_without_ray_installed_the_error_names_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # what find_spec reports when Ray is not installed
    db = tmp_path / "run.db"
    code = main(["run", str(SUITE_DIR), "--db", str(db), "--headless", "--executor", "ray"])
    assert code == ExitCode.BAD_INPUT
    assert "pip install 'proctor[ray]'" in capsys.readouterr().err
    assert not db.exists()


def test_address_needs_the_ray_executor(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "run.db"
    assert main(["run", str(SUITE_DIR), "--db", str(db), "--headless", "--address", "auto"]) == (
        ExitCode.BAD_INPUT
    )
    assert "--executor ray" in capsys.readouterr().err
    assert not db.exists()


def test_the_consoles_engine_process_gets_every_run_option_executor_included(tmp_path: Path) -> None:
    options = RunOptions(db=tmp_path / "run.db", models=["offline:single"], epochs=2, executor="ray",
                         address="auto", concurrency=3)  # fmt: skip
    assert options_from_json(options_json(options)) == options
    kept_going = replace(options, left_out=({"arm": "codeintel", "why": "suite.yaml: no such command"},))
    assert options_from_json(options_json(kept_going)) == kept_going


def test_the_run_command_loads_ray_only_for_a_ray_run() -> None:
    probe = "import sys, proctor.app.commands.runs, proctor.engine.runs.session; print('ray' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.slow
def test_run_with_the_ray_executor_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    db = tmp_path / "run.db"
    args = [
        *PROCTOR,
        "run",
        str(SUITE_DIR),
        "--db",
        str(db),
        "--headless",
        "--executor",
        "ray",
        "--arms",
        "baseline,codeintel",
        "--scenarios",
        "retry-delay-cap,dead-letter",
        "--concurrency",
        "2",
    ]
    done = subprocess.run(args, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == ExitCode.OK, done.stderr[-2000:]
    assert "codeintel" in done.stdout  # the summary table
    with StoreReader(db) as reader:
        trials = reader.trials()
        passed = {s.trial_id for s in reader.scores() if s.name == "passed"}
    assert len(trials) == 4 and all(t.status == "finished" for t in trials)
    assert passed == {t.id for t in trials}  # scored in the driver, as a local run is
    placements = (db.parent / f"{db.name}.logs" / "ray-placements.log").read_text().splitlines()
    assert sorted(int(line.split()[1]) for line in placements) == [t.id for t in trials]
