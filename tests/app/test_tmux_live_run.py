"""In a real terminal (tmux): q on a live run asks, stops the engine process, exits 130 and
prints the resume command; the run is interrupted, resumable, and no engine is left behind."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


LOADED_S = 600.0
"""A deadline only stops a hang: every wait ends on its condition, however busy the machine is."""


def _screen(session: str) -> str:
    """The pane; -J joins the lines the terminal wrapped (a long path wraps where its length says)."""
    return subprocess.run(
        ["tmux", "capture-pane", "-p", "-J", "-t", session], capture_output=True, text=True
    ).stdout


def _wait(session: str, text: str, limit_s: float = LOADED_S) -> str:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        shown = _screen(session)
        if text in shown:
            return shown
        time.sleep(0.1)  # polling the real terminal; the text is the synchronisation
    raise AssertionError(f"{text!r} never appeared; screen:\n{_screen(session)}")


def _finished(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            return int(conn.execute("SELECT count(*) FROM trials WHERE status = 'finished'").fetchone()[0])
    except sqlite3.Error:  # not created yet
        return 0


def test_q_on_a_live_run_asks_then_stops_it_resumably(tmp_path: Path) -> None:
    assert shutil.which("tmux"), "tmux is needed for the real-terminal tests"
    db = tmp_path / "demo.db"
    session = f"proctor-live-{time.monotonic_ns()}"
    command = f"{sys.executable} -m proctor.app.cli demo --db {db} --epochs 30; echo EXIT=$?; sleep 30"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "120", "-y", "35", command], check=True)
    try:
        _wait(session, "▶running")  # trials are running: the run exists and is live
        deadline = time.monotonic() + LOADED_S
        while _finished(db) < 1:  # a trial on disk, however slow the machine: then q
            assert time.monotonic() < deadline, f"no trial finished; screen:\n{_screen(session)}"
            time.sleep(0.05)
        subprocess.run(["tmux", "send-keys", "-t", session, "q"], check=True)
        asked = _wait(session, "stop the run?")
        assert "The run stays resumable" in asked
        subprocess.run(["tmux", "send-keys", "-t", session, "y"], check=True)
        done = [line.rstrip() for line in _wait(session, "EXIT=").splitlines()]
        assert (
            "EXIT=130" in done and f"proctor: interrupted; resume with proctor run --resume --db {db}" in done
        )
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)
    deadline = time.monotonic() + 60  # it notices its parent is gone within a second (a quiet machine)
    while (left := _engine_processes(db)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert left == "", "no engine process may outlive the console"
    conn = sqlite3.connect(db)
    try:
        (status,) = conn.execute("SELECT status FROM runs").fetchone()
        finished, total = conn.execute("SELECT sum(status = 'finished'), count(*) FROM trials").fetchone()
    finally:
        conn.close()
    assert status == "interrupted" and 0 < finished < total


def test_closing_the_terminal_ends_the_console_and_frees_the_run(tmp_path: Path) -> None:
    """Textual's orderly exit writes to the terminal; with the terminal gone it blocked forever,
    leaving a console that still held the run's lock (found with tmux kill-session)."""
    import asyncio

    from proctor.store.lock import EngineLock
    from tests.app.fixture_store import build

    fx = asyncio.run(build(tmp_path))
    session = f"proctor-hup-{time.monotonic_ns()}"
    command = f"{sys.executable} -m proctor.app.cli watch {fx.db}"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "100", "-y", "30", command], check=True)
    try:
        _wait(session, "s1-intro")
        pid = subprocess.run(
            ["pgrep", "-n", "-f", f"cli watch {fx.db}"], capture_output=True, text=True
        ).stdout.strip()
        assert pid
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)
    deadline = time.monotonic() + 120
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not Path(f"/proc/{pid}").exists(), "the console outlived its terminal"
    assert not EngineLock.is_held(fx.db)


def _engine_processes(db: Path) -> str:
    return subprocess.run(["pgrep", "-f", f"engine-process.*{db}"], capture_output=True, text=True).stdout
