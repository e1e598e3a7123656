"""The first minute of ``make demo`` in a real terminal at 100x30 (tmux, private socket).

What a newcomer sees: startup says what is happening (never "no run recorded yet · 0/0 done"),
the compact matrix shows every arm with its Δ, no rate is shown once the run has finished,
help lists keys as they are typed, and leaving says how to report the run. Every wait is on a
condition with a deadline.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

ARMS = ("baseline", "codeintel", "codeintel+", "codeintel_s")
# Deadlines only stop a hang: every wait ends on its condition, however busy the machine is.
LOADED_S = 600.0
KEY_S = 120.0


class Terminal:
    def __init__(self, socket: str) -> None:
        self.socket = socket
        self.seen: list[str] = []  # every screen captured while waiting

    def tmux(self, *args: str) -> str:
        out = subprocess.run(
            ["tmux", "-L", self.socket, "-f", os.devnull, *args], capture_output=True, text=True, check=False
        )
        return out.stdout

    def screen(self) -> str:
        shown = self.tmux("capture-pane", "-p", "-t", "demo")
        self.seen.append(shown)
        return shown

    def lines(self) -> list[str]:
        """The shell's lines as printed: -J joins the lines the terminal wrapped (a long path
        wraps wherever its length puts it)."""
        return self.tmux("capture-pane", "-p", "-J", "-t", "demo").splitlines()

    def wait_for(self, predicate: Callable[[str], bool], what: str, limit_s: float) -> str:
        deadline = time.monotonic() + limit_s
        while True:
            shown = self.screen()
            if predicate(shown):
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {limit_s} s waiting for {what}; screen:\n{shown}")
            time.sleep(0.05)  # polling the real terminal; the predicate is the synchronisation


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[tuple[Terminal, Path, Path]]:
    t = Terminal(f"proctor-demo-{uuid.uuid4().hex[:8]}")
    db = tmp_path / "demo.db"
    exit_file = tmp_path / "exit_code"
    command = (
        f"env -u COLUMNS -u LINES TERM=xterm-256color {sys.executable} -m proctor.app.cli demo --db {db}; "
        f"echo $? > {exit_file}; sleep 60"
    )
    t.tmux("new-session", "-d", "-s", "demo", "-x", "100", "-y", "30", command)
    try:
        yield t, exit_file, db
    finally:
        t.tmux("kill-server")


def matrix_rows(screen: str) -> list[str]:
    return [
        line
        for line in screen.splitlines()
        if (re.match(r"^[ ⚓][a-z]", line) and "✗" in line) or "✓" in line
    ]


def test_the_first_minute_of_the_demo_at_100_columns(terminal: tuple[Terminal, Path, Path]) -> None:
    term, exit_file, db = terminal
    # Startup: the console says what it is waiting for.
    term.wait_for(
        lambda s: "starting the engine" in s or "starting servers" in s or " done " in s,
        "the first frame of the console",
        limit_s=LOADED_S,
    )
    # Every arm fits, compact, with its Δ; the run finishes.
    screen = term.wait_for(
        lambda s: "40/40 done" in s and "…scoring" not in s,
        "the demo to finish and be scored",
        limit_s=LOADED_S,
    )
    header = next(line for line in screen.splitlines() if "baseline" in line and "codeintel" in line)
    for arm in ARMS:
        assert arm in header, header
    rows = [line for line in screen.splitlines() if re.search(r"[✓✗] \d\.\d\d .*[+\-±]\d\.\d\d", line)]
    assert len(rows) == 10, screen
    for line in rows:
        assert len(re.findall(r"[✓✗!] \d\.\d\d", line)) == 4 and len(re.findall(r"[+\-±]\d\.\d\d", line)) == 3
    assert "more" not in header
    assert "trials/min" not in screen  # a finished run has no rate
    startup = [s for s in term.seen if "40/40" not in s]
    assert any("starting the engine" in s or "starting servers" in s for s in startup)
    assert not any("no run recorded yet" in s or "0/0 done" in s for s in term.seen)
    assert not any("-0.00" in s for s in term.seen)
    # Help: keys as typed, grouped, over the whole screen.
    term.tmux("send-keys", "-t", "demo", "?")
    term.wait_for(lambda s: "KEYS OF THIS SCREEN" in s or "LEGEND" in s, "help", limit_s=KEY_S)
    term.tmux("send-keys", "-t", "demo", "End")
    shown = term.wait_for(lambda s: "Failures only" in s, "the keys of the dashboard", limit_s=KEY_S)
    assert re.search(r"!  Failures only", shown) and "exclamation_mark" not in shown
    term.tmux("send-keys", "-t", "demo", "Escape")
    term.wait_for(lambda s: "40/40 done" in s, "back on the dashboard", limit_s=KEY_S)
    # Leaving: a finished run closes at once and says how to report it.
    term.tmux("send-keys", "-t", "demo", "q")
    deadline = time.monotonic() + KEY_S
    while not exit_file.exists() or not exit_file.read_text().strip():
        assert time.monotonic() < deadline, f"the console did not exit; screen:\n{term.screen()}"
        time.sleep(0.05)  # polling for the exit file; its content is the synchronisation
    assert exit_file.read_text().strip() == "0"
    (hint,) = [line for line in term.lines() if "next: proctor report" in line]
    assert f"next: proctor report {db} --format md" in hint
