"""End to end in a real terminal: the console runs under tmux while another process writes events.

Keys go in with ``send-keys``, the screen comes back with ``capture-pane``. The tmux server is
private to the test (its own socket) and is killed at the end.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.app.fixture_store import MODEL, RUN, Fixture

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        shutil.which("tmux") is None, reason="tmux is not installed; the real-terminal test needs it"
    ),
]

WRITER = textwrap.dedent(
    f"""
    import asyncio, sys
    from proctor.store.events import Scored, ToolCall, ToolResult, TrialFinished, Usage
    from proctor.store.write.writer import StoreWriter

    async def main(path):
        w = await StoreWriter.open(path, flush_interval_s=0.01)
        for i in range(30):
            w.emit({RUN!r}, ToolCall(call_id=f"live{{i}}", server="s", tool="probe", arguments={{"i": i}}), trial_id=5, attempt=1)
            w.emit({RUN!r}, ToolResult(call_id=f"live{{i}}", server="s", tool="probe", content=f"live result {{i}}",
                                      is_error=False, latency_s=0.001), trial_id=5, attempt=1)
            await w.flush()
            await asyncio.sleep(0.01)
        w.emit({RUN!r}, TrialFinished(status="finished", stop="answer", final_answer="done live", tool_calls=30,
                                     usage=Usage(input_tokens=5, output_tokens=5), cost_usd=0.0, wall_s=1.0),
               trial_id=5, attempt=1)
        w.emit({RUN!r}, Scored(name="passed", value=1.0, details={{}}), trial_id=5, attempt=1)
        await w.close()

    asyncio.run(main(sys.argv[1]))
    """
)


class Tmux:
    def __init__(self, socket: str, exit_file: Path) -> None:
        self.socket = socket
        self.exit_file = exit_file

    def exit_code(self) -> str:
        """The console's exit status once its shell has written it, else ''."""
        try:
            return self.exit_file.read_text().strip()
        except FileNotFoundError:
            return ""

    def run(self, *args: str) -> str:
        out = subprocess.run(
            ["tmux", "-L", self.socket, "-f", os.devnull, *args], capture_output=True, text=True, check=False
        )
        return out.stdout

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "console")

    def keys(self, *keys: str) -> None:
        for key in keys:
            self.run("send-keys", "-t", "console", key)

    def wait_for(self, predicate: Callable[[str], bool], what: str, limit_s: float = 120.0) -> str:
        deadline = time.monotonic() + limit_s
        while True:
            screen = self.screen()
            if predicate(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; screen:\n{screen}")
            time.sleep(0.05)  # polling the real terminal; the predicate is the synchronisation


@pytest.fixture
def tmux(fx: Fixture, tmp_path: Path) -> Iterator[Tmux]:
    t = Tmux(f"proctor-test-{uuid.uuid4().hex[:8]}", tmp_path / "exit_code")
    # COLUMNS/LINES may be inherited from the test runner and would override the pane's real size.
    # The exit code goes to a file: tmux may leave the finished console a zombie for a while and
    # report the pane dead before it knows the status.
    env = (
        f"env -u COLUMNS -u LINES TERM=xterm-256color {sys.executable} -m proctor.app.tui {fx.db}; "
        f"echo $? > {t.exit_file}"
    )
    t.run("new-session", "-d", "-s", "console", "-x", "120", "-y", "40", env)
    t.run("set-option", "-t", "console", "remain-on-exit", "on")
    try:
        yield t
    finally:
        t.run("kill-server")


def test_console_in_a_real_terminal_follows_another_writer_and_obeys_keys(fx: Fixture, tmux: Tmux) -> None:
    tmux.wait_for(lambda s: "4/6 done" in s and "▶ running" in s, "the dashboard")
    title_before = tmux.run("display-message", "-p", "-t", "console", "#{pane_title}")
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(fx.db)])
    try:
        tmux.keys("G", "Enter")
        tmux.wait_for(lambda s: "trial #5 s3-anchor / baseline" in s, "the running trial's view")
        screen = tmux.wait_for(
            lambda s: "live result 2" in s or "probe #live2" in s, "live events in the transcript"
        )
        assert "● following the tail" in screen or "paused" in screen
        assert writer.wait(timeout=30) == 0
    finally:
        if writer.poll() is None:
            writer.kill()
    tmux.wait_for(lambda s: "✓ passed" in s and "probe #live29" in s, "the trial finishing live")
    tmux.keys("Escape")
    tmux.wait_for(lambda s: "5/6 done" in s, "progress on the dashboard")
    tmux.keys("k", "Enter")
    screen = tmux.wait_for(
        lambda s: "[@click=app.quit]x[/] | x [/] y | title-gone" in s, "hostile output, literally"
    )
    assert "failure mode: tool_misuse" in screen
    title_after = tmux.run("display-message", "-p", "-t", "console", "#{pane_title}")
    assert "pwned" not in title_after and title_after == title_before
    tmux.keys("q")
    deadline = time.monotonic() + 120
    while not (code := tmux.exit_code()):
        assert time.monotonic() < deadline, f"the console did not exit on q; screen:\n{tmux.screen()}"
        time.sleep(0.05)  # polling for the exit file; its content is the synchronisation
    assert code == "0", f"console exited with {code}"


def test_module_entry_point_reports_usage(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "proctor.app.tui"], capture_output=True, text=True, check=False
    )
    assert out.returncode == 2 and "usage" in out.stderr
    assert MODEL
