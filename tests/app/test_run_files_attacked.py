"""Attacks on a real ``proctor demo`` run's files: the WAL deleted mid-run, and a full disk.

Each must end in exit 2 with a message saying what happened, what was kept and how to resume
(never a traceback), keep every trial that was committed, and leave a database that a report
reads and a resume finishes.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

DEMO = ["--headless", "--arms", "baseline", "--epochs", "30", "--concurrency", "2"]


def _proctor(*args: str) -> list[str]:
    return [sys.executable, "-m", "proctor.app.cli", *args]


def _finished(db: Path) -> int:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    except sqlite3.Error:
        return 0
    try:
        return int(conn.execute("SELECT count(*) FROM trials WHERE status = 'finished'").fetchone()[0])
    except sqlite3.Error:
        return 0
    finally:
        conn.close()


def _trials_finished_twice(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(
            conn.execute(
                "SELECT count(*) FROM (SELECT trial_id FROM events WHERE kind = 'trial_finished' "
                "AND abandoned = 0 GROUP BY trial_id HAVING count(*) > 1)"
            ).fetchone()[0]
        )
    finally:
        conn.close()


def test_deleting_the_wal_mid_run_keeps_every_committed_trial_and_says_so(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    proc = subprocess.Popen(
        _proctor("demo", "--db", str(db), *DEMO), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 90
        while (before := _finished(db)) < 5:
            assert proc.poll() is None and time.monotonic() < deadline, "the run never got going"
            time.sleep(0.02)
        db.with_name("run.db-wal").unlink()
        _, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    assert proc.returncode == 2, err
    assert "Traceback" not in err and "not a SQLite database" not in err
    assert "run.db's WAL file was deleted while the run was writing it" in err
    assert f"Resume with proctor run --resume --db {db}" in err
    kept = _finished(db)
    assert kept >= before, f"{before - kept} committed trials lost"
    resumed = subprocess.run(
        _proctor("demo", "--db", str(db), *DEMO), capture_output=True, text=True, timeout=180
    )
    assert resumed.returncode == 0, resumed.stderr
    assert _finished(db) == 300 and _trials_finished_twice(db) == 0


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "tiny"
    mount.mkdir()
    try:
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=600k", "tmpfs", str(mount)], capture_output=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(
            f"cannot mount a tmpfs to fill ({exc}); tests/store/write/test_writer_file_safety.py covers SQLITE_FULL"
        )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs to fill ({done.stderr.decode().strip()}): needs root")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, timeout=30)


def test_a_full_disk_ends_in_exit_2_with_what_was_kept_and_how_to_resume(tiny_disk: Path) -> None:
    db = tiny_disk / "run.db"
    run = subprocess.run(
        _proctor("demo", "--db", str(db), *DEMO), capture_output=True, text=True, timeout=180
    )
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr
    assert f"{db}: the disk is full" in run.stderr
    assert "of 300 trials done" in run.stderr and f"resume with proctor run --resume --db {db}" in run.stderr
    report = subprocess.run(
        _proctor("report", str(db), "--format", "json"), capture_output=True, text=True, timeout=120
    )
    assert report.returncode == 0, report.stderr
