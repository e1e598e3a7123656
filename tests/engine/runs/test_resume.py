"""Kill a real headless run with SIGKILL, resume it, and check every trial finished exactly once."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from proctor.store.events import TrialFinished
from proctor.store.read.reader import StoreReader

pytestmark = pytest.mark.slow

PROCTOR = [sys.executable, "-m", "proctor.app.cli"]


def _finished_count(db: Path) -> int:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            return int(
                conn.execute("SELECT count(*) FROM trials WHERE status IN ('finished','error')").fetchone()[0]
            )
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def test_sigkill_then_resume_finishes_every_trial_exactly_once(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    args = [
        *PROCTOR,
        "demo",
        "--headless",
        "--db",
        str(db),
        "--arms",
        "codeintel",
        "--epochs",
        "3",
        "--concurrency",
        "1",
    ]
    proc = subprocess.Popen(
        args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.monotonic() + 120
    while _finished_count(db) < 4:
        assert proc.poll() is None, "the run ended before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()

    with StoreReader(db) as r:
        before = {e.id: e.kind for e in r.events_after(0, limit=10**6)}
        done_before = {t.id: t.attempt for t in r.trials() if t.status in ("finished", "error")}
        total = len(r.trials())
    assert 4 <= len(done_before) < total

    resumed = subprocess.run([*args, "--resume"], capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr

    with StoreReader(db) as r:
        after = r.events_after(0, limit=10**6)
        trials = r.trials()
        scored = {s.trial_id for s in r.scores() if s.name == "passed"}
    assert scored == {t.id for t in trials}, "a finished trial was left unscored"
    kinds_after = {e.id: e.kind for e in after}
    assert all(kinds_after.get(i) == k for i, k in before.items()), "a committed event was lost"
    assert all(t.status == "finished" for t in trials)
    live_finishes: dict[int, int] = {}
    for e in after:
        if isinstance(e.event, TrialFinished) and not e.abandoned:
            assert e.trial_id is not None
            live_finishes[e.trial_id] = live_finishes.get(e.trial_id, 0) + 1
    assert live_finishes == {t.id: 1 for t in trials}
    for t in trials:
        if t.id in done_before:
            assert t.attempt == done_before[t.id], "a finished trial was run again"
    rerun = [t for t in trials if t.id not in done_before]
    assert rerun and all(t.attempt >= 1 for t in rerun)


def test_without_resume_an_existing_run_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    suite = Path(__file__).resolve().parents[3] / "scenarios" / "demo"
    base = [
        *PROCTOR,
        "run",
        str(suite),
        "--headless",
        "--db",
        str(db),
        "--arms",
        "baseline",
        "--scenarios",
        "retry-delay-cap",
    ]
    first = subprocess.run(base, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    # stderr is a pipe here, as in CI logs: plain progress lines, not a redrawn bar.
    assert "proctor: 0/1 trials done, 0 errors" in first.stderr
    assert "proctor: 1/1 trials done, 0 errors" in first.stderr and "\x1b[" not in first.stderr
    second = subprocess.run(base, capture_output=True, text=True, timeout=120)
    assert second.returncode == 2
    assert "--resume" in second.stderr
