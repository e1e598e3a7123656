"""First paint of ``proctor watch`` in a real terminal (tmux), against a bare Textual app.

The goal is absolute (the operator waits for it): the dashboard's matrix is on screen within
1.0 s of the command. The reference is the same measurement for a minimal Textual app that
paints one line, taken in the same run, so a slow machine shows up as a high reference rather
than as a regression. Each figure is the median of five launches.
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bench_line import bench_line

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
GOAL_S = 1.0
RUNS = 5
MINIMAL_APP = """
from textual.app import App
from textual.widgets import Static
class Minimal(App[None]):
    def compose(self):
        yield Static("minimal-app-painted")
Minimal().run()
"""


def _first_paint(command: list[str], marker: str) -> float:
    session = f"proctor-bench-{time.monotonic_ns()}"
    start = time.perf_counter()
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", session, "-x", "100", "-y", "30", *command], check=True
    )
    try:
        while True:
            shown = subprocess.run(
                ["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True
            )
            if marker in shown.stdout:
                return time.perf_counter() - start
            if time.perf_counter() - start > 30:
                raise RuntimeError(f"{marker!r} never appeared: {shown.stdout[-500:]}")
            time.sleep(0.01)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)


def main() -> int:
    if shutil.which("tmux") is None:
        print("BENCH watch_first_paint nan s goal <=1 FAIL (tmux is not installed)")
        return 1
    # One session holds the tmux server for the whole bench: when each measured session was the
    # last, the server exited as it ended, and the next new-session could reach it dying (exit 1).
    keeper = f"proctor-bench-keeper-{time.monotonic_ns()}"
    subprocess.run(["tmux", "new-session", "-d", "-s", keeper, "sleep 600"], check=True)
    try:
        return _measure()
    finally:
        subprocess.run(["tmux", "kill-session", "-t", keeper], check=False)


def _measure() -> int:
    from tests.app.fixture_store import build

    with tempfile.TemporaryDirectory() as tmp:
        fx = asyncio.run(build(Path(tmp)))
        proctor = [sys.executable, "-m", "proctor.app.cli", "watch", str(fx.db)]
        minimal = [sys.executable, "-c", MINIMAL_APP]
        watch = statistics.median(_first_paint(proctor, "s1-intro") for _ in range(RUNS))
        reference = statistics.median(_first_paint(minimal, "minimal-app-painted") for _ in range(RUNS))
    ok = bench_line("watch_first_paint", watch, "s", "<=", GOAL_S, digits=3)
    ok &= bench_line("watch_first_paint_vs_bare_textual", watch / reference, "x", "<=", 3)
    print(f"reference: a bare Textual app paints in {reference:.3f} s on this machine")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
