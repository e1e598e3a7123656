"""The trial view's citation panel in a real terminal (tmux, private socket) at 100x30 and 160x50.

On a stale-index trial of the demo: every citation's line number shows (paths are cut from the
left), each hallucinated citation shows the line it points at and why, and the side column widens
when the terminal does. Every wait is on a condition with a deadline.
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

ROW = re.compile(r"(?P<glyph>[✓?✗])  (?P<status>grounded|unresolved|hallucinated) +(?P<cite>\S+)\s*$")


class Terminal:
    def __init__(self, socket: str) -> None:
        self.socket = socket

    def tmux(self, *args: str) -> str:
        out = subprocess.run(
            ["tmux", "-L", self.socket, "-f", os.devnull, *args], capture_output=True, text=True, check=False
        )
        return out.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "watch")

    def wait_for(self, predicate: Callable[[str], bool], what: str, limit_s: float = 60) -> str:
        deadline = time.monotonic() + limit_s
        while True:
            shown = self.screen()
            if predicate(shown):
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {limit_s} s waiting for {what}; screen:\n{shown}")
            time.sleep(0.05)  # polling the real terminal; the predicate is the synchronisation


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("demo") / "demo.db"
    subprocess.run(
        [sys.executable, "-m", "proctor.app.cli", "demo", "--headless", "--db", str(db)],
        check=True,
        capture_output=True,
    )
    return db


@pytest.fixture
def terminal(demo_db: Path) -> Iterator[Terminal]:
    t = Terminal(f"proctor-cite-{uuid.uuid4().hex[:8]}")
    command = f"env -u COLUMNS -u LINES TERM=xterm-256color {sys.executable} -m proctor.app.cli watch {demo_db}; sleep 60"
    t.tmux("new-session", "-d", "-s", "watch", "-x", "100", "-y", "30", command)
    try:
        yield t
    finally:
        t.tmux("kill-server")


def _side(screen: str) -> list[str]:
    """The side column's text: what stands right of the transcript's border on each row."""
    lines = screen.splitlines()
    border = next((line.index("│ scores") for line in lines if line.rstrip().endswith("│ scores")), -1)
    if border < 0:
        return []  # not the trial view (yet)
    return [line[border + 2 :] for line in lines if line[border : border + 1] == "│"]


def _citation_rows(screen: str) -> list[re.Match[str]]:
    return [m for line in _side(screen) if (m := ROW.search(line))]


def _numbered(m: re.Match[str]) -> bool:
    return re.search(r":\d+(?:[-–]\d+)?$", m.group("cite")) is not None


def _side_width(screen: str, columns: int) -> int:
    line = next(line for line in screen.splitlines() if line.rstrip().endswith("│ scores"))
    return columns - line.index("│ scores")


def test_citation_panel_keeps_line_numbers_and_widens_with_the_terminal(terminal: Terminal) -> None:
    t = terminal
    t.wait_for(lambda s: "codeintel_s" in s and "baseline" in s, "the dashboard's matrix")
    # Trial #24 of the demo: sqlite-claim on the stale-index arm (the path to it).
    t.tmux("send-keys", "-t", "watch", *("j" * 7), *("l" * 3), "Enter")
    narrow = t.wait_for(
        lambda s: len(_citation_rows(s)) >= 2 and all(_numbered(m) for m in _citation_rows(s)),
        "citation rows that end in their line numbers",
        limit_s=30,
    )
    rows = _citation_rows(narrow)
    assert any(m.group("cite").startswith("…/") for m in rows)  # cut from the left at 100 columns
    side = "\n".join(_side(narrow))
    assert re.search(r"^   \d+│ \S", side, flags=re.MULTILINE)  # the line it points at
    assert "why: " in side
    t.tmux("resize-window", "-t", "watch", "-x", "160", "-y", "50")
    wide = t.wait_for(
        lambda s: any(m.group("cite").startswith("tinyq/storage/") for m in _citation_rows(s)),
        "whole paths at 160 columns",
    )
    assert _side_width(wide, 160) > _side_width(narrow, 100) + 10
    assert all(_numbered(m) for m in _citation_rows(wide))
