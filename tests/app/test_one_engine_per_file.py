"""Attack: a second ``proctor`` engine reaches a running database through another name for it.

The first engine runs the offline demo; while it runs, five more start on the same file through
a symlink, a hard link, a symlinked directory with ``..``, a relative path and the absolute
path. Each must be refused before it runs a trial (exit 2, naming the holder's pid and the
file's real path), and the run must hold each trial once.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def _demo(db: str, cwd: Path, epochs: int) -> subprocess.Popen[str]:
    args = [sys.executable, "-m", "proctor.app.cli", "demo", "--headless", "--db", db]
    args += ["--arms", "baseline", "--epochs", str(epochs), "--concurrency", "1"]
    return subprocess.Popen(args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _wait_until_running(db: Path, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while True:
        assert proc.poll() is None, (
            f"the first engine ended early: {proc.stderr.read() if proc.stderr else ''}"
        )
        assert time.monotonic() < deadline, "the first engine never started a trial"
        try:
            conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
            try:
                started = conn.execute("SELECT count(*) FROM trials WHERE status != 'queued'").fetchone()[0]
            finally:
                conn.close()
            if started:
                return
        except sqlite3.Error:
            pass
        time.sleep(0.05)


def test_a_second_engine_is_refused_through_every_name_of_the_database(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    (runs / "inner").mkdir(parents=True)
    db = runs / "run.db"
    real = os.path.realpath(db)
    first = _demo(str(db), tmp_path, epochs=300)  # 3,000 trials: minutes, far longer than the test
    try:
        _wait_until_running(db, first)
        (tmp_path / "link.db").symlink_to(db)
        (tmp_path / "other").mkdir()
        os.link(db, tmp_path / "other" / "hard.db")
        (tmp_path / "deep").symlink_to(runs / "inner")
        names = {
            "symlink": str(tmp_path / "link.db"),
            "hard link": str(tmp_path / "other" / "hard.db"),
            "dot-dot": str(tmp_path / "deep" / ".." / "run.db"),  # deep/.. is runs, not tmp_path
            "relative": "runs/run.db",
            "absolute": str(db),
        }
        seconds = {form: _demo(name, tmp_path, epochs=300) for form, name in names.items()}
        try:
            outcomes = {
                form: (p.wait(timeout=90), p.stderr.read() if p.stderr else "") for form, p in seconds.items()
            }
        finally:
            for p in seconds.values():
                if p.poll() is None:
                    p.kill()
                    p.wait(timeout=30)
        for form, (code, err) in outcomes.items():
            assert code == 2, f"{form}: a second engine ran (exit {code}): {err}"
            assert "is being run by another proctor process" in err, f"{form}: {err}"
            assert f"pid {first.pid}" in err, f"{form}: the holder's pid is not named: {err}"
            assert real in err, f"{form}: the real file is not named: {err}"
        assert first.poll() is None, "the first engine must keep running"
    finally:
        first.terminate()
        first.wait(timeout=60)
    conn = sqlite3.connect(db)
    try:
        twice = conn.execute(
            "SELECT count(*) FROM (SELECT trial_id FROM events WHERE kind = 'trial_started' "
            "GROUP BY trial_id HAVING count(*) > 1)"
        ).fetchone()[0]
    finally:
        conn.close()
    assert twice == 0, f"{twice} trials were started by two engines"
