"""``proctor gate`` and ``proctor report`` on a run that is still being written: a CI step racing the
run is told the run is in progress and how many trials are done; the gate refuses without
``--partial``. The run is a real headless run, caught while it writes (a condition on the
database: trials finished), and stopped at the end."""

from __future__ import annotations

import io
import re
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from proctor.app.cli import main

pytestmark = pytest.mark.slow

IN_PROGRESS = re.compile(r"the run is still in progress \((\d+) of 400 trials done\)")


def _cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def _scored_pairs(db: Path) -> int:
    """Scenario-epoch pairs whose baseline and codeintel trials both have a fairness score."""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            row = conn.execute(
                "SELECT count(*) FROM (SELECT t.scenario, t.epoch FROM trials t JOIN scores s ON s.trial_id = t.id "
                "WHERE s.name = 'fairness' GROUP BY t.scenario, t.epoch HAVING count(DISTINCT t.arm) = 2)"
            ).fetchone()
            return int(row[0])
    except sqlite3.Error:
        return 0


def test_gate_and_report_on_a_run_in_progress_say_so_and_the_gate_refuses(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    run = subprocess.Popen(
        [
            sys.executable, "-m", "proctor.app.cli", "demo", "--headless", "--db", str(db),
            "--arms", "baseline,codeintel", "--epochs", "20", "--concurrency", "2",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 180
        while _scored_pairs(db) < 2:  # a condition on the database, not a time
            assert run.poll() is None and time.monotonic() < deadline, "the run never got going"
            time.sleep(0.05)
        code, out, err = _cli("gate", str(db), "--baseline", "baseline", "--min-delta", "0")
        assert code == 2 and out == "", err
        found = IN_PROGRESS.search(err)
        assert found is not None and 4 <= int(found.group(1)) < 400, err
        assert "pass --partial to gate the trials done so far" in err

        code, out, _ = _cli("gate", str(db), "--baseline", "baseline", "--min-delta", "-1", "--partial")
        first = out.splitlines()[0]
        assert re.fullmatch(r"gate: The run is still in progress: \d+ of 400 trials done\. .*", first), out
        assert "fairness gate: baseline 'baseline'" in out and code in (0, 3)

        code, md, err = _cli("report", str(db), "--format", "md")
        assert code == 0
        assert re.search(r"^\*\*The run is still in progress: \d+ of 400 trials done\.", md, re.M), md[:500]
        assert "proctor report: The run is still in progress:" in err
        assert run.poll() is None, "the run finished under the checks: it must still be writing"
    finally:
        if run.poll() is None:
            run.send_signal(signal.SIGINT)
        run.wait(timeout=120)
    code, out, err = _cli("gate", str(db), "--baseline", "baseline", "--min-delta", "-1")
    assert "still in progress" not in err + out  # stopped: no longer being written
    assert out.startswith("gate: Not every trial ran: ")
