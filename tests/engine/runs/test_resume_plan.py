"""Resuming: the printed resume command is a whole command that works (``--resume --db`` finds
the suite the run recorded), and resuming with other models, arms, scenarios or epochs never
leaves trials queued in a run marked finished."""

from __future__ import annotations

import asyncio
import io
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
import yaml

from proctor.app.cli import main
from proctor.engine.suites import load_suite
from proctor.store.events import RunFinished, RunStarted, TrialStarted
from proctor.store.read.reader import StoreReader
from proctor.store.write.writer import StoreWriter, TrialRow

PROCTOR = [sys.executable, "-m", "proctor.app.cli"]
NO_KEY_MODEL = "anthropic:claude-sonnet-4-5"


def _cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def _suite(root: Path) -> Path:
    (root / "scenarios").mkdir(parents=True)
    suite = {"name": "plan", "arms": {"baseline": {"baseline": True}}, "models": ["offline:default"]}
    (root / "suite.yaml").write_text(yaml.safe_dump(suite))
    for sid in ("one", "two"):
        scenario = {"id": sid, "prompt": f"Say {sid}.", "claims": [f"It says {sid}."]}
        (root / "scenarios" / f"{sid}.yaml").write_text(yaml.safe_dump(scenario))
    return root


async def _stopped_run(db: Path, suite: Path, *, started: tuple[str, ...] = ()) -> None:
    """A run of ``NO_KEY_MODEL`` as the engine left one that stopped before its trials (its key
    was missing): its config records the suite, its two trials are queued (``started`` ones with
    an abandoned attempt)."""
    loaded = load_suite(suite)
    config = {
        "suite": "plan",
        "suite_dir": str(loaded.root),
        "suite_hash": loaded.content_hash,
        "models": [NO_KEY_MODEL],
        "arms": ["baseline"],
        "scenarios": ["one", "two"],
        "epochs": 1,
        "base_seed": 0,
    }
    async with await StoreWriter.open(db) as writer:
        await writer.create_run("r1", "plan", config)
        await writer.add_trials("r1", [TrialRow(s, "baseline", NO_KEY_MODEL, 0, 0) for s in ("one", "two")])
        writer.emit("r1", RunStarted(run_id="r1", suite="plan", config=config, trials=2))
        with StoreReader(db) as reader:
            ids = {t.scenario: t.id for t in reader.trials()}
        for sid in started:
            writer.emit(
                "r1",
                TrialStarted(scenario=sid, arm="baseline", model=NO_KEY_MODEL, epoch=0, seed=0, attempt=1),
                trial_id=ids[sid],
                attempt=1,
            )
        writer.emit("r1", RunFinished(run_id="r1", status="error", message=f"{NO_KEY_MODEL}: no API key"))


def test_resuming_with_other_models_leaves_no_trial_queued_in_a_finished_run(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite")
    db = tmp_path / "run.db"
    asyncio.run(_stopped_run(db, suite))
    code, _, err = _cli(
        "run", str(suite), "--resume", "--db", str(db), "--models", "offline:default", "--headless"
    )
    assert code == 0, err
    with StoreReader(db) as reader:
        run = reader.run()
        trials = reader.trials()
    assert run is not None and run.status == "finished"
    assert [(t.model, t.status) for t in trials] == [("offline:default", "finished")] * 2
    assert run.config["models"] == ["offline:default"]  # a later --resume plays this plan
    code, _, err = _cli("run", "--resume", "--db", str(db), "--headless")
    assert code == 0 and "no API key" not in err


def test_trials_started_under_the_earlier_plan_leave_the_run_interrupted_not_finished(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite")
    db = tmp_path / "run.db"
    asyncio.run(_stopped_run(db, suite, started=("one",)))
    code, _, err = _cli(
        "run", str(suite), "--resume", "--db", str(db), "--models", "offline:default", "--headless"
    )
    assert code == 3, err
    with StoreReader(db) as reader:
        run = reader.run()
        kept = [(t.model, t.status, t.attempt) for t in reader.trials() if t.model == NO_KEY_MODEL]
    assert run is not None and run.status == "interrupted"
    assert kept == [(NO_KEY_MODEL, "queued", 1)]  # its abandoned attempt is kept, not dropped
    _, md, _ = _cli("report", str(db), "--format", "md")
    assert "**Not every trial ran: 2 of 3 trials done (run status interrupted)." in md


def test_resume_without_the_suite_finds_the_one_the_run_recorded(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite")
    db = tmp_path / "run.db"
    asyncio.run(_stopped_run(db, suite))
    code, _, err = _cli("run", "--resume", "--db", str(db), "--models", "offline:default", "--headless")
    assert code == 0, err
    with StoreReader(db) as reader:
        assert {t.status for t in reader.trials()} == {"finished"}


def test_run_without_a_suite_or_a_run_to_resume_says_what_to_give(tmp_path: Path) -> None:
    code, _, err = _cli("run", "--headless")
    assert code == 2 and "give the suite folder (proctor run SUITE)" in err
    code, _, err = _cli("run", "--resume", "--db", str(tmp_path / "none.db"))
    assert code == 2 and "no such run database" in err


def _finished(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            return int(conn.execute("SELECT count(*) FROM trials WHERE status = 'finished'").fetchone()[0])
    except sqlite3.Error:
        return 0


@pytest.mark.slow
def test_the_printed_resume_command_continues_an_interrupted_run(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    first = [*PROCTOR, "demo", "--headless", "--db", str(db), "--arms", "baseline", "--epochs", "4"]
    proc = subprocess.Popen(
        [*first, "--concurrency", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 120
        while _finished(db) < 1:  # a condition, not a time: one trial is on disk
            assert proc.poll() is None and time.monotonic() < deadline, "the run never got going"
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    (hint,) = [line for line in err.splitlines() if "resume with " in line]
    command = shlex.split(hint.split("resume with ", 1)[1])
    assert command[:2] == ["proctor", "run"] and command[-2:] == ["--db", str(db)]
    resumed = subprocess.run(
        [*PROCTOR, *command[1:], "--headless"], capture_output=True, text=True, timeout=300
    )
    assert resumed.returncode == 0, resumed.stderr
    with StoreReader(db) as reader:
        assert [t.status for t in reader.trials()] == ["finished"] * 40
