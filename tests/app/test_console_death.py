"""``kill -9`` of the console stops the engine process, flushed and resumable. How quickly (README:
within a second; it took 4-6 s on a loaded machine when the engine polled its parent and waited
out each server's grace) is tests/bench/bench_console_kill.py's to measure, not a test's.

A stand-in console starts the engine exactly as the console does (``run_engine_process``) on the
demo suite, whose servers are real MCP servers, and is SIGKILLed while trials run.
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

CONSOLE = (
    "import asyncio, sys\n"
    "from pathlib import Path\n"
    "from proctor.app.commands.engine_process import run_engine_process\n"
    "from proctor.engine.runs.options import RunOptions\n"
    "from proctor.scenarios.demo import SUITE_DIR\n"
    "asyncio.run(run_engine_process(SUITE_DIR, RunOptions(db=Path(sys.argv[1]), epochs=30)))\n"
)
LOADED_S = 60.0
"""A deadline for a hang, not a bound: how fast the engine stops is measured by
tests/bench/bench_console_kill.py (median 0.7 s under load), never asserted by a test."""


def _finished(db: Path) -> int:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            return int(conn.execute("SELECT count(*) FROM trials WHERE status = 'finished'").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def _engine_pids(console: int) -> list[int]:
    return [
        int(p.name)
        for p in Path("/proc").iterdir()
        if p.name.isdigit() and _parent(int(p.name)) == console and b"engine-process" in _cmdline(int(p.name))
    ]


def _parent(pid: int) -> int:
    try:
        return int((Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def _cmdline(pid: int) -> bytes:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes()
    except OSError:
        return b""


def _alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def test_kill_9_of_the_console_stops_the_engine(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    console = subprocess.Popen([sys.executable, "-c", CONSOLE, str(db)])
    try:
        deadline = time.monotonic() + 5 * LOADED_S
        while not (db.exists() and _finished(db) >= 2):
            assert console.poll() is None and time.monotonic() < deadline, "the run never got going"
            time.sleep(0.1)
        (engine,) = _engine_pids(console.pid)
        start = time.monotonic()
        console.kill()
        console.wait()
        while _alive(engine) and time.monotonic() - start < LOADED_S:
            time.sleep(0.02)
        took = time.monotonic() - start
    finally:
        if console.poll() is None:
            console.kill()
            console.wait()
    stayed = _alive(engine)
    if stayed:
        os.kill(engine, 9)
    assert not stayed, f"the engine outlived its console by {took:.2f} s"
    conn = sqlite3.connect(db)
    try:
        (status,) = conn.execute("SELECT status FROM runs").fetchone()
    finally:
        conn.close()
    assert status == "interrupted", "flushed and resumable"
