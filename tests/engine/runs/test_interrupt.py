"""Ctrl-C and SIGKILL: the run stops, and no MCP server process outlives it."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def _processes_mentioning(marker: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmd:
                pids.append(int(entry.name))
    return pids


def _descendants(root: int) -> set[int]:
    parent: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                parent[int(entry.name)] = int(fields[1])
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, ppid in parent.items() if ppid in frontier} - found
        found |= frontier
    return found


def _alive(pids: set[int]) -> set[int]:
    out = set()
    for pid in pids:
        try:
            state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            out.add(pid)
    return out


def _wait_for_trials(db: Path, n: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while True:
        assert proc.poll() is None, "the run ended too early"
        assert time.monotonic() < deadline
        try:
            conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
            done = conn.execute("SELECT count(*) FROM trials WHERE status != 'queued'").fetchone()[0]
            conn.close()
            if done >= n:
                return
        except sqlite3.Error:
            pass
        time.sleep(0.05)


def _as_from_a_terminal() -> None:
    """A job started in the background (CI, nohup) inherits SIGINT/SIGHUP ignored; a terminal does not."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def _start(tmp_path: Path) -> tuple[subprocess.Popen[bytes], Path, str]:
    cache = tmp_path / "cache-marker-dir"
    env = dict(os.environ, PROCTOR_CACHE=str(cache))
    db = tmp_path / "run.db"
    args = [sys.executable, "-m", "proctor.app.cli", "demo", "--headless", "--db", str(db)]
    args += [
        "--arms",
        "codeintel,codeintel+distractors",
        "--epochs",
        "40",
        "--concurrency",
        "2",
    ]  # long enough to be mid-run
    proc = subprocess.Popen(
        args,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=_as_from_a_terminal,
    )
    return proc, db, str(cache)


def _wait_for_servers(proc: subprocess.Popen[bytes], n: int) -> set[int]:
    """Descendants of the run once at least ``n`` server processes are up."""
    deadline = time.monotonic() + 120
    while len(found := _descendants(proc.pid)) < n:
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    return found


def _gone(marker: str, timeout: float = 60.0) -> list[int]:  # a deadline for a hang, not a bound
    deadline = time.monotonic() + timeout
    while (left := _processes_mentioning(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 143)])
def test_ctrl_c_sigterm_and_sighup_stop_cleanly_and_reap_every_server(
    tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    proc, db, marker = _start(tmp_path)
    _wait_for_trials(db, 3, proc)
    assert _processes_mentioning(marker), "servers should be running mid-run"
    servers = _wait_for_servers(proc, 4)  # codeintel, weather, handbook and the HTTP tickets server
    os.kill(proc.pid, sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err.decode()
    assert b"--resume" in err
    assert _gone(marker) == []
    assert _alive(servers) == set()
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT status FROM runs").fetchone()[0] == "interrupted"
    conn.close()


def test_sigkill_leaves_no_server_behind(tmp_path: Path) -> None:
    proc, db, marker = _start(tmp_path)
    _wait_for_trials(db, 3, proc)
    servers = _wait_for_servers(proc, 4)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert _gone(marker) == []
    deadline = time.monotonic() + 60
    while _alive(servers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _alive(servers) == set(), "a server outlived a SIGKILLed proctor"
