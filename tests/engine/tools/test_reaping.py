"""Every process a server starts is reaped, whatever the server does and whoever is killed when.

The servers are hand-written (tests/fakes/raw_stdio_server.py, no SDK): they double-fork and call
``setsid``, ignore SIGTERM, spawn grandchildren. Signals land at random moments in bounded loops.
After each test no process carrying the test's marker may be alive (scanned in /proc).
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from proctor.engine.tools.mcp_connection import McpConnection
from proctor.engine.tools.supervise import KILLED_LOG, killed_notes
from proctor.scenarios.schema import StdioServer

RAW = Path(__file__).resolve().parents[2] / "fakes" / "raw_stdio_server.py"
LOADED_S = 60.0  # a deadline only stops a hang: each wait ends on its condition, however busy the machine


def marked(marker: str) -> list[tuple[int, str]]:
    """Live (not zombie) processes whose command line carries ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker in cmdline and state != "Z":
            found.append((int(entry.name), cmdline))
    return found


def wait_until(check: object, seconds: float = LOADED_S) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


def read_or_empty(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:  # between a rotation's rename and the new file
        return ""


def gone(marker: str, seconds: float = LOADED_S) -> list[tuple[int, str]]:
    """What is still alive after ``seconds``; SIGKILLed then, so one failure does not leak."""
    wait_until(lambda: not marked(marker), seconds)
    left = marked(marker)
    for pid, _ in left:
        os.kill(pid, signal.SIGKILL)
    return left


def supervisor_argv(
    log: Path, marker: str, *flags: str, parent: int | None = None, log_bytes: int = 1_000_000
) -> list[str]:
    return [
        sys.executable, "-m", "proctor.engine.tools.supervise", "--parent", str(parent or os.getpid()),
        "--log", str(log), "--log-bytes", str(log_bytes), "--",
        sys.executable, str(RAW), "--marker", marker, *flags,
    ]  # fmt: skip


def start_supervisor(
    log: Path, marker: str, *flags: str, log_bytes: int = 1_000_000
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        supervisor_argv(log, marker, *flags, log_bytes=log_bytes),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )


def test_a_server_that_double_forks_and_calls_setsid_is_killed_and_named(tmp_path: Path) -> None:
    marker = f"reap-{uuid.uuid4().hex}"
    log = tmp_path / "raw.stderr.log"
    sup = start_supervisor(log, marker, "--escape")
    try:
        assert wait_until(lambda: any("escaped" in c for _, c in marked(marker))), "the daemon never started"
        (daemon,) = [pid for pid, c in marked(marker) if "escaped" in c]
        assert sup.stdin is not None
        sup.stdin.close()  # the server exits on end of input; its daemon does not
        assert sup.wait(timeout=60) == 0
    finally:
        left = gone(marker)
    assert left == [], "a daemon that left the process group outlived its server"
    named = (tmp_path / KILLED_LOG).read_text()
    # By its pid: the command line shown is cut at a length the interpreter's path decides.
    assert f"raw: killed pid {daemon} (" in named
    assert "outlived their server" in killed_notes(tmp_path)[0]


def test_kill_9_of_a_supervisor_kills_its_server_and_grandchild(tmp_path: Path) -> None:
    marker = f"reap-{uuid.uuid4().hex}"
    cfg = StdioServer(
        command=sys.executable, args=[str(RAW), "--marker", marker, "--ignore-term", "--grandchild"]
    )

    async def scenario() -> None:
        conn = McpConnection("raw", cfg, tmp_path)
        try:
            await conn.start()
            assert (await conn.call("echo", {"text": "hi"}, 10.0)).content == "echo: hi"
            assert wait_until(lambda: any("grandchild" in c for _, c in marked(marker)))
            (sup,) = [p for p, c in marked(marker) if "proctor.engine.tools.supervise" in c]
            os.kill(sup, signal.SIGKILL)
            # The server dies with it: proctor sees its pipes close.
            assert wait_until(
                lambda: all("supervise" in c or "grandchild" in c for _, c in marked(marker)), 5
            )
        finally:
            async with asyncio.timeout(30):
                await conn.aclose()

    asyncio.run(scenario())
    assert gone(marker) == [], "the server or its grandchild outlived a killed supervisor"


@pytest.mark.parametrize("round_", range(4))
def test_stop_signals_at_random_moments_leave_no_process(tmp_path: Path, round_: int) -> None:
    """A handler that took a lock deadlocked the supervisor (2 of 10 kill rounds under load)."""
    rng = random.Random(round_)
    marker = f"reap-{uuid.uuid4().hex}"
    sup = start_supervisor(tmp_path / "raw.stderr.log", marker, "--ignore-term", "--grandchild", "--escape")
    try:
        time.sleep(rng.uniform(0.0, 0.4))  # sometimes before the supervisor has installed anything
        for _ in range(rng.randint(1, 20)):  # a storm: every one must be harmless
            sig = rng.choice([signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGCHLD])
            try:
                sup.send_signal(sig)
            except ProcessLookupError:
                break
            time.sleep(rng.uniform(0.0, 0.01))
        sup.send_signal(signal.SIGTERM)
        sup.wait(timeout=15)
    finally:
        left = gone(marker)
    assert left == []


@pytest.mark.parametrize("round_", range(3))
def test_kill_9_of_proctor_at_random_moments_leaves_no_process(tmp_path: Path, round_: int) -> None:
    rng = random.Random(100 + round_)
    marker = f"reap-{uuid.uuid4().hex}"
    log = tmp_path / "raw.stderr.log"
    # A stand-in for proctor: it starts the supervisor with itself as --parent, then sleeps.
    code = (
        "import os, subprocess, sys, time\n"
        "argv = sys.argv[1:]\n"
        "argv[argv.index('--parent') + 1] = str(os.getpid())\n"
        "subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True)\n"
        "time.sleep(600)\n"
    )
    argv = supervisor_argv(log, marker, "--ignore-term", "--grandchild", "--escape")
    proctor = subprocess.Popen([sys.executable, "-c", code, *argv])
    try:
        time.sleep(rng.uniform(0.05, 1.2))
        proctor.kill()
        proctor.wait()
    finally:
        left = gone(marker)
    assert left == []


def test_writers_of_one_log_share_its_cap(tmp_path: Path) -> None:
    """per_trial servers write one file from a supervisor each: the cap holds for the file."""
    marker = f"reap-{uuid.uuid4().hex}"
    log = tmp_path / "raw.stderr.log"
    cap = 50_000
    sups = [start_supervisor(log, marker, "--stderr-bytes", "400000", log_bytes=cap) for _ in range(4)]
    try:
        for sup in sups:
            assert sup.stdin is not None
            sup.stdin.close()
        for sup in sups:
            sup.wait(timeout=30)
    finally:
        left = gone(marker)
    assert left == []
    sizes = [p.stat().st_size for p in tmp_path.glob("raw.stderr.log*")]
    assert sum(sizes) <= 2 * cap + 1000, sizes


def test_a_token_across_a_64_kib_read_is_redacted(tmp_path: Path) -> None:
    marker = f"reap-{uuid.uuid4().hex}"
    log = tmp_path / "raw.stderr.log"
    token = "ghp_" + "A1b2C3d4E5" * 4
    line = "x" * 65530 + " " + token + " tail"  # the token starts 5 bytes before a 64 KiB boundary
    sup = start_supervisor(log, marker, "--stderr-line", line, log_bytes=1_000_000)
    try:
        assert sup.stdin is not None
        sup.stdin.close()
        sup.wait(timeout=15)
    finally:
        left = gone(marker)
    assert left == []
    text = log.read_text()
    assert "[redacted: github-token]" in text and "tail" in text
    assert token[:10] not in text and token[-12:] not in text


def test_an_over_long_line_keeps_no_part_of_a_token_at_the_cut(tmp_path: Path) -> None:
    marker = f"reap-{uuid.uuid4().hex}"
    log = tmp_path / "raw.stderr.log"
    cap = 40_000  # one line keeps 10,000 bytes; 8,192 more are read to see a token whole
    token = "ghp_" + "Q9w8E7r6T5" * 4
    line = "y " * 9_090 + token + " " + "z" * 50_000
    sup = start_supervisor(log, marker, "--stderr-line", line, log_bytes=cap)
    try:
        assert sup.stdin is not None
        sup.stdin.close()
        sup.wait(timeout=15)
    finally:
        left = gone(marker)
    assert left == []
    text = log.read_text()
    assert "…[line cut: " in text and token[:8] not in text


def test_a_launched_servers_stdout_is_redacted_and_capped(tmp_path: Path) -> None:
    from proctor.engine.tools.mcp_launch import launched

    marker = f"reap-{uuid.uuid4().hex}"
    token = "sk-ant-api03-" + "Z" * 40
    header = "h3adr-s3cret-value-0042xyz"  # a value of the server's headers:, in no environment

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    flags = [
        "--no-protocol",
        "--port",
        str(port),
        "--stdout-line",
        f"key {token} header {header}",
        "--stdout-bytes",
        "3000000",
    ]
    cfg = StdioServer(command=sys.executable, args=[str(RAW), "--marker", marker, *flags])
    log_path = tmp_path / "raw.stderr.log"
    cap = 60_000

    async def scenario() -> None:
        with open(log_path, "a", encoding="utf-8") as log:
            url = f"http://127.0.0.1:{port}/mcp"
            async with launched(cfg, url, log, log_path, cap, 30.0, {header: "Authorization"}):
                # The chatter and the line after it, all written before the log is read.
                assert wait_until(lambda: "header" in read_or_empty(log_path), 20)

    try:
        asyncio.run(scenario())
    finally:
        left = gone(marker)
    assert left == []
    files = list(tmp_path.glob("raw.stderr.log*"))
    text = "".join(p.read_text() for p in files)
    assert token[:16] not in text and header not in text
    assert "[redacted: $Authorization]" in text
    assert sum(p.stat().st_size for p in files) <= 2 * cap + 1000
    assert "chatter" in text


def test_the_engine_process_notices_its_console_is_gone_from_its_stdin(tmp_path: Path) -> None:
    from proctor.app.commands.engine_process import _end_of_file

    read, write = os.pipe()

    async def scenario() -> bool:
        waiting = asyncio.create_task(_end_of_file(read))
        for _ in range(10):  # it is reading the pipe, which nobody writes or closes yet
            await asyncio.sleep(0)
        early = waiting.done()
        os.close(write)  # the console's end: gone
        async with asyncio.timeout(LOADED_S):  # a deadline for a hang; its speed is bench_console_kill's
            await waiting  # it ends once the end is closed (a TimeoutError if it never notices)
        return early

    try:
        early = asyncio.run(scenario())
    finally:
        os.close(read)
    assert not early, "it returned before the console's end of the pipe was closed"
