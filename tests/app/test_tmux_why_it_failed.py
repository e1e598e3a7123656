"""The demo's failed trials in a real terminal (tmux, private socket) at 100x30 and 160x50.

A finished demo run (its suite copied, so locking anchors writes into the test's folder) opened
with ``proctor watch``: the line under the matrix and the trial header say which rule failed a
trial and with what numbers, 160 columns and 50 rows are used, ``?`` starts with the screen's
keys, the anchors' L says what it writes and the result of V is never under a notification,
and Ctrl-C quits. Every wait is on what the screen shows, with a deadline; nothing here depends
on how long the test's path is (assertions read words that come before any path).
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from proctor.app.cli import main
from proctor.scenarios.demo import SUITE_DIR

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

REASON_24 = "✗ failed on grounding: 7 of 27 citations grounded (26%) < scoring.pass_requires_grounding 80%"
TO_24 = [*"jjjjjjj", *"lll"]  # the trial: sqlite-claim / codeintel_stale


class Terminal:
    def __init__(self, socket: str, exit_file: Path) -> None:
        self.socket = socket
        self.exit_file = exit_file

    def tmux(self, *args: str) -> str:
        out = subprocess.run(
            ["tmux", "-L", self.socket, "-f", os.devnull, *args], capture_output=True, text=True, check=False
        )
        return out.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "console")

    def keys(self, *keys: str) -> None:
        for key in keys:
            self.tmux("send-keys", "-t", "console", key)

    def wait_for(self, predicate: Callable[[str], bool], what: str, limit_s: float = 30.0) -> str:
        deadline = time.monotonic() + limit_s
        while True:
            shown = self.screen()
            if predicate(shown):
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {limit_s} s waiting for {what}; screen:\n{shown}")
            time.sleep(0.05)  # polling the real terminal; the predicate is the synchronisation

    def exit_code(self, limit_s: float = 30.0) -> str:
        deadline = time.monotonic() + limit_s
        while not (self.exit_file.exists() and self.exit_file.read_text().strip()):
            assert time.monotonic() < deadline, f"the console did not exit; screen:\n{self.screen()}"
            time.sleep(0.05)  # polling for the exit file; its content is the synchronisation
        return self.exit_file.read_text().strip()


@pytest.fixture(scope="module")
def finished_demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("why")
    suite = root / "demo"
    shutil.copytree(SUITE_DIR, suite, ignore=shutil.ignore_patterns("__pycache__", "anchors"))
    db = root / "demo.db"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["run", str(suite), "--headless", "--db", str(db)]) == 0
    return suite, db


def _open(tmp_path: Path, finished_demo: tuple[Path, Path], size: tuple[int, int]) -> Iterator[Terminal]:
    template = finished_demo[1]
    db = tmp_path / "demo.db"
    shutil.copy(template, db)
    t = Terminal(f"proctor-why-{uuid.uuid4().hex[:8]}", tmp_path / "exit_code")
    command = (
        f"env -u COLUMNS -u LINES TERM=xterm-256color {sys.executable} -m proctor.app.cli watch {db}; "
        f"echo $? > {t.exit_file}; sleep 60"
    )
    t.tmux("new-session", "-d", "-s", "console", "-x", str(size[0]), "-y", str(size[1]), command)
    try:
        t.wait_for(lambda s: "40/40 done" in s and "worker-pool-lifecycle" in s, "the finished demo")
        yield t
    finally:
        t.tmux("kill-server")


@pytest.fixture
def at_100x30(tmp_path: Path, finished_demo: tuple[Path, Path]) -> Iterator[Terminal]:
    yield from _open(tmp_path, finished_demo, (100, 30))


@pytest.fixture
def at_160x50(tmp_path: Path, finished_demo: tuple[Path, Path]) -> Iterator[Terminal]:
    yield from _open(tmp_path, finished_demo, (160, 50))


def _line_with(screen: str, text: str) -> str:
    return next((line for line in screen.splitlines() if text in line), "")


def test_at_100x30_the_failed_trial_says_why_under_the_matrix_and_in_its_header(at_100x30: Terminal) -> None:
    t = at_100x30
    t.keys(*TO_24)
    shown = t.wait_for(lambda s: REASON_24 in s, "the reason under the matrix")
    assert _line_with(shown, "#24 sqlite-claim / codeintel_stale").lstrip().startswith("#24")
    assert _line_with(shown, REASON_24).strip() == REASON_24  # whole, not cut at 100 columns
    t.keys("Enter")
    shown = t.wait_for(
        lambda s: "trial #24 sqlite-claim" in s and REASON_24 in s and "loading…" not in s, "the trial header"
    )
    lines = shown.splitlines()
    head = next(i for i, line in enumerate(lines) if "trial #24 sqlite-claim" in line)
    assert lines[head + 1].strip() == REASON_24
    t.keys("Escape", "C-c")
    assert t.exit_code() == "0"


def test_at_160x50_the_matrix_and_panels_use_the_terminal(at_160x50: Terminal) -> None:
    t = at_160x50
    t.keys(*TO_24)
    shown = t.wait_for(lambda s: "trial #24 · scores" in s and "why trials failed" in s, "the tall panels")
    rows = [line for line in shown.splitlines() if line.startswith((" sqlite-claim", " dead-letter"))]
    assert len(rows) == 2 and all(len(line.rstrip()) >= 140 for line in rows), rows
    assert _line_with(shown, REASON_24).strip() == REASON_24
    assert "why trials failed · 23 of 40" in shown and "6 failed on grounding" in shown
    empty = [line for line in shown.splitlines() if not line.strip()]
    assert len(empty) <= 12, f"{len(empty)} empty rows:\n{shown}"
    t.keys("Enter")
    shown = t.wait_for(lambda s: "trial #24 sqlite-claim" in s, "the trial view")
    assert _line_with(shown, REASON_24).strip() == REASON_24


def test_help_opens_on_the_keys_of_the_screen_underneath(at_100x30: Terminal) -> None:
    t = at_100x30
    t.keys("?")
    shown = t.wait_for(lambda s: "KEYS OF THIS SCREEN" in s, "the help page")
    assert "Open trial" in shown and "Next failure" in shown and "LEGEND" not in shown


def test_anchors_lock_says_what_it_writes_and_verify_shows_its_result_clear_of_notices(
    at_100x30: Terminal, finished_demo: tuple[Path, Path]
) -> None:
    suite, _ = finished_demo
    suite_yaml = (suite / "suite.yaml").read_bytes()
    t = at_100x30
    t.keys("3")
    t.wait_for(lambda s: "anchors · held-out scenarios" in s and "unlocked" in s, "the anchors view")
    t.keys("L")
    shown = t.wait_for(lambda s: "lock anchors: this will write" in s, "the lock's question")
    assert "writes 13 files under" in shown and "held-out.lock  (the lock" in shown
    assert "suite.yaml is not changed: the suite finds" in shown
    assert not (suite / "anchors").exists(), "nothing is written before the answer"
    t.keys("y")
    t.wait_for(lambda s: "lock_anchors: done" in s, "the lock's outcome", limit_s=60)
    assert (suite / "anchors" / "held-out.lock").is_file()
    assert (suite / "suite.yaml").read_bytes() == suite_yaml
    t.keys("V")
    shown = t.wait_for(lambda s: "verify_anchors: done" in s, "the verification's outcome", limit_s=60)
    # Read while the "queued" notice may still be up: the result is whole, nothing lies over it.
    assert "verify_anchors: done  anchors verification passed: hashes match" in shown
