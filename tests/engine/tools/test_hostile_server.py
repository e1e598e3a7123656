"""A server nobody here would write: it leaks credentials, answers 30 MB in one line, floods stderr,
spawns a grandchild, and ignores SIGTERM and stdin close. proctor must store no secret, stay
responsive, cap what it keeps, and leave no process behind, even after ``kill -9``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from proctor.app.cli import main
from proctor.app.tui import ProctorApp
from proctor.engine.runs.options import RunOptions
from proctor.engine.runs.session import run_suite
from proctor.scenarios.loader import load_suite
from proctor.store.read.reader import StoreReader
from proctor.widgets.transcript_view import TranscriptView
from tests.app.helpers import open_trial, screen_text, wait_until
from tests.fakes.hostile_mcp_server import PLANTED

pytestmark = pytest.mark.slow

SERVER = Path(__file__).resolve().parents[2] / "fakes" / "hostile_mcp_server.py"
SUITE_TOKEN = "tok-planted-0123456789abcdef"  # handed to the server through the suite's env:
FRAGMENTS = [p.splitlines()[1] if p.startswith("-----BEGIN") else p[:24] for p in PLANTED] + [SUITE_TOKEN]
LOG_CAP = 50_000


def _suite(
    root: Path, pidfile: Path, scenarios: dict[str, str], *, huge: int = 1000, noise: int = 1000
) -> Path:
    (root / "scenarios").mkdir(parents=True)
    suite = {
        "name": "hostile",
        "mcpServers": {
            "hostile": {
                "command": sys.executable,
                "args": [str(SERVER), "--pidfile", str(pidfile), "--huge-bytes", str(huge), "--stderr-bytes",
                         str(noise)],
                "env": {"HOSTILE_API_TOKEN": SUITE_TOKEN},
            }
        },
        "arms": {"hostile": {"servers": ["hostile"]}},
        "models": ["offline:default"],
        "limits": {"trial_timeout_s": 120, "server_log_bytes": LOG_CAP},
    }  # fmt: skip
    (root / "suite.yaml").write_text(yaml.safe_dump(suite))
    for sid, prompt in scenarios.items():
        doc = {"id": sid, "prompt": prompt, "keywords": {"required": ["billing"]}}
        (root / "scenarios" / f"{sid}.yaml").write_text(yaml.safe_dump(doc))
    return root


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting for a reaper (in a container PID 1 may never reap it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _wait_gone(pids: list[int], seconds: float = 60.0) -> list[int]:  # a deadline for a hang
    deadline = time.monotonic() + seconds
    while (alive := [p for p in pids if _alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive


def _pids(pidfile: Path) -> list[int]:
    return [int(p) for p in pidfile.read_text().split()]


async def test_no_planted_secret_reaches_the_database_logs_reports_or_exports(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    prompt = "What credentials and API tokens are configured for the billing service?"
    loaded = load_suite(_suite(tmp_path / "suite", pidfile, {"creds": prompt}))
    db = tmp_path / "run.db"
    assert await run_suite(loaded, RunOptions(db=db)) == "finished"
    with StoreReader(db) as r:
        results = [e.event for e in r.events_after(0, limit=10**6) if e.event.kind == "tool_result"]
        decoded = "\n".join(e.event.model_dump_json() for e in r.events_after(0, limit=10**6))
    assert results and "[redacted: github-token]" in decoded and "[redacted: $HOSTILE_API_TOKEN]" in decoded
    outputs = [tmp_path / f"report.{fmt}" for fmt in ("json", "md", "csv")]
    for out in outputs:
        assert main(["report", str(db), "--format", out.suffix[1:], "-o", str(out)]) == 0
    for fmt in ("jsonl", "csv"):
        out = tmp_path / f"export.{fmt}"
        assert main(["export", str(db), "--format", fmt, "-o", str(out)]) == 0
        outputs.append(out)
    logs = sorted((tmp_path / "run.db.logs").iterdir())
    assert logs and "[redacted: " in logs[0].read_text()
    stores = [db, *db.parent.glob("run.db-*"), *logs, *outputs]
    for fragment in FRAGMENTS:
        assert fragment not in decoded, fragment
        for path in stores:
            assert fragment.encode() not in path.read_bytes(), (fragment, path.name)
    assert _wait_gone(_pids(pidfile)) == [], "the server or its grandchild outlived the run"
    console_text = await _trial_screen_with_every_entry_expanded(db)
    assert "[redacted: github-token]" in console_text
    for fragment in FRAGMENTS:
        assert fragment not in console_text, fragment


async def _trial_screen_with_every_entry_expanded(db: Path) -> str:
    app = ProctorApp(db)
    async with app.run_test(size=(160, 60)) as pilot:
        await wait_until(pilot, lambda: app.state.details_loaded)
        screen = await open_trial(app, pilot, 0, 0)
        await pilot.press("e")  # expand every entry: the whole tool output is on the screen's lines
        await pilot.pause()
        view = screen.query_one(TranscriptView)
        return "\n".join(line.plain for line in view.lines) + screen_text(app)


async def test_a_30_mb_line_is_stored_and_sent_capped_and_stderr_floods_are_rotated(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    scenarios = {
        "dump": "Dump the whole raw log of the billing service.",
        "chatter": "Report the chatter of the billing service.",
    }
    loaded = load_suite(_suite(tmp_path / "suite", pidfile, scenarios, huge=30_000_000, noise=20_000_000))
    db = tmp_path / "run.db"
    assert await run_suite(loaded, RunOptions(db=db, concurrency=1)) == "finished"
    with StoreReader(db) as r:
        trials = {t.scenario: t for t in r.trials()}
        results = {
            e.event.tool: e.event for e in r.events_after(0, limit=10**6) if e.event.kind == "tool_result"
        }
    assert all(t.status == "finished" for t in trials.values())
    dumped = results["dump"].content  # type: ignore[attr-defined]
    limits = loaded.suite.limits
    assert len(dumped) < limits.tool_result_store_chars + 200
    assert "…[truncated: stored 30,000,000 characters, 200,000 kept]" in dumped
    logs = list((tmp_path / "run.db.logs").iterdir())
    assert sum(p.stat().st_size for p in logs) <= 2 * LOG_CAP + 1000, [p.stat().st_size for p in logs]
    assert any(p.name.endswith(".1") for p in logs), "a flooded log rotates"
    assert _wait_gone(_pids(pidfile)) == []


def test_kill_9_of_proctor_leaves_no_server_and_no_grandchild(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    scenarios = {f"s{i}": "What credentials are configured for the billing service?" for i in range(6)}
    suite = _suite(tmp_path / "suite", pidfile, scenarios)
    proc = subprocess.Popen(
        [sys.executable, "-m", "proctor.app.cli", "run", str(suite), "--headless", "--db", str(tmp_path / "r.db"),
         "--concurrency", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not (pidfile.exists() and len(pidfile.read_text().split()) == 2):
        assert proc.poll() is None and time.monotonic() < deadline, "the run ended before the server started"
        time.sleep(0.02)
    pids = _pids(pidfile)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert _wait_gone(pids) == [], (
        "a server (or its grandchild) that ignores SIGTERM survived kill -9 of proctor"
    )
