"""Every token shape, planted in every field a server, a suite or a model controls, reaches no sink.

A hand-written stdio server (``tests/fakes/leaky_jsonrpc_server.py``, no SDK) puts credentials
in its server info, tool names, descriptions, schemas, results, error results, JSON-RPC errors,
log notifications, an invalid JSON-RPC line and stderr, touching other characters and across the
store's cut. The suite puts them in its name, an arm's and a server's name, a scenario's prompt,
env and headers. The offline model quotes what it read back in its answers and arguments. Then
every sink in ``proctor.store.write.sinks.SINKS`` is read as bytes: the database file and its WAL, every
log, every report and export format, and the headless terminal; the console's engine log too.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from proctor.app.commands.engine_process import run_engine_process
from proctor.engine.runs.options import RunOptions
from proctor.store.schema import init_db
from proctor.store.write.sinks import SINKS
from tests.engine.tools.test_hostile_server import _trial_screen_with_every_entry_expanded
from tests.fakes.leaky_jsonrpc_server import GITHUB, SHAPES

pytestmark = pytest.mark.slow

SERVER = Path(__file__).resolve().parents[1] / "fakes" / "leaky_jsonrpc_server.py"
ENV_TOKEN = "tok-leaky-env-0123456789abcdef"  # a secret-looking env name's value
PLAIN = "plain-header-value-9876543210"  # a header's value, also handed on under a plain name
NAME_TOKEN = "ghp_" + "N4meT0ken" * 5  # in the suite's, an arm's and a server's name
PROMPT_TOKEN = "sk-ant-api03-" + "P" * 40  # in a prompt: the model repeats it in arguments
CUT = 1000
SCENARIOS = {
    "creds": f"Look up the credentials configured for the billing service ({PROMPT_TOKEN}).",
    "ledger": "Read the billing ledger of the billing service.",
    "audit": "Audit the permissions of the billing service account.",
    "rotate": "Rotate the signing keys of the billing service.",
    "history": "Summarize the deployment history of the billing service.",
    "vault": "Open the vault of the billing service.",
}


def _fragments() -> list[str]:
    """Pieces of every planted value, its head and its tail: a cut (the store's, pydantic's
    quoting of a rejected line) must leave neither."""
    values = [*SHAPES, ENV_TOKEN, PLAIN, NAME_TOKEN, PROMPT_TOKEN]
    heads = [v.splitlines()[1] if v.startswith("-----BEGIN") else v[:16] for v in values]
    tails = [v[-16:] for v in values if not v.startswith("-----BEGIN")]  # what a cut from the left keeps
    return [*heads, *tails, GITHUB[4:20]]


def _suite(root: Path) -> Path:
    (root / "scenarios").mkdir(parents=True)
    server = f"srv_{NAME_TOKEN}"
    suite = {
        "name": f"suite {NAME_TOKEN}",
        "mcpServers": {
            server: {
                "command": sys.executable,
                "args": [str(SERVER), "--cut", str(CUT)],
                "env": {"LEAKY_API_TOKEN": ENV_TOKEN, "LEAKY_PLAIN": PLAIN},
            },
            "remote": {"url": "http://127.0.0.1:9/mcp", "headers": {"X-Workspace": PLAIN}},
        },
        "arms": {f"arm_{NAME_TOKEN}": {"servers": [server]}},
        "models": ["offline:default"],
        "limits": {"trial_timeout_s": 60, "tool_result_store_chars": CUT, "server_log_bytes": 200_000},
    }
    (root / "suite.yaml").write_text(yaml.safe_dump(suite))
    for sid, prompt in SCENARIOS.items():
        doc = {"id": sid, "prompt": prompt, "keywords": {"required": ["billing"]}}
        (root / "scenarios" / f"{sid}.yaml").write_text(yaml.safe_dump(doc))
    return root


def _cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | {"COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "proctor.app.cli", *args],
        capture_output=True,
        timeout=timeout,
        env=env,
        check=False,
    )


async def _console_engine(suite: Path, db: Path) -> None:
    """The console's engine process, as ``proctor run`` starts it, until its run is finished."""
    init_db(db)
    engine = asyncio.create_task(run_engine_process(suite, RunOptions(db=db)))
    deadline = asyncio.get_running_loop().time() + 120
    while not engine.done():
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            done = conn.execute("SELECT status FROM runs").fetchall() == [("finished",)]
        finally:
            conn.close()
        if done:
            break
        assert asyncio.get_running_loop().time() < deadline, "the console's engine did not finish"
        await asyncio.sleep(0.2)
    engine.cancel()
    with pytest.raises(asyncio.CancelledError):
        await engine


async def test_no_planted_secret_reaches_any_sink(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite")
    db = tmp_path / "run.db"
    headless = _cli("run", str(suite), "--headless", "--db", str(db))
    assert headless.returncode == 0, headless.stderr.decode()[-3000:]
    sinks: dict[str, list[Path]] = {"database": [db], "wal": list(db.parent.glob("run.db-*"))}
    sinks["terminal"] = [tmp_path / "terminal.txt"]
    sinks["terminal"][0].write_bytes(headless.stdout + headless.stderr)
    for fmt in ("json", "md", "csv", "junit"):
        out = tmp_path / f"report.{fmt}"
        done = _cli("report", str(db), "--format", fmt, "-o", str(out))
        assert done.returncode == 0, done.stderr.decode()
        sinks.setdefault("report", []).append(out)
        sinks["terminal"][0].write_bytes(sinks["terminal"][0].read_bytes() + done.stdout + done.stderr)
    for fmt in ("jsonl", "csv", "otel"):
        out = tmp_path / f"export.{fmt}"
        done = _cli("export", str(db), "--format", fmt, "-o", str(out))
        assert done.returncode == 0, done.stderr.decode()
        sinks.setdefault("export", []).append(out)
    console_db = tmp_path / "console" / "run.db"
    console_db.parent.mkdir()
    await _console_engine(suite, console_db)
    sinks["database"].append(console_db)
    logs = [*(tmp_path / "run.db.logs").iterdir(), *(console_db.parent / "run.db.logs").iterdir()]
    sinks["server-log"] = [p for p in logs if p.name != "engine.stderr.log"]
    sinks["engine-log"] = [p for p in logs if p.name == "engine.stderr.log"]
    sinks["log-file-name"] = [tmp_path / "log-names.txt"]
    sinks["log-file-name"][0].write_text("\n".join(p.name for p in logs))
    sinks["console"] = [tmp_path / "console.txt"]  # a trial's screen, every entry expanded
    sinks["console"][0].write_text(await _trial_screen_with_every_entry_expanded(console_db))
    assert "[redacted: github-token]" in sinks["console"][0].read_text()

    assert set(sinks) == {s.name for s in SINKS}, (
        "every sink listed in proctor.store.write.sinks is read here"
    )
    everything = b"".join(p.read_bytes() for paths in sinks.values() for p in paths)
    assert b"[redacted: github-token]" in everything and b"[redacted: $LEAKY_API_TOKEN]" in everything
    assert b"[redacted: $header X-Workspace]" in everything, "a header's value is a secret under any name"
    assert sinks["server-log"] and sinks["engine-log"], [p.name for p in logs]
    engine_log = sinks["engine-log"][0].read_bytes()
    assert b"Failed to parse JSONRPC message" in engine_log, "the mcp SDK's log reaches the engine log"
    assert b"input: [redacted: github-token]" in engine_log, "the line it quotes is redacted"
    leaks = [
        (fragment, name, path.name)
        for name, paths in sinks.items()
        for path in paths
        for fragment in _fragments()
        if fragment.encode() in (data := path.read_bytes()) or _in_utf16(fragment, data)
    ]
    assert leaks == []
    with sqlite3.connect(db) as conn:
        arms = {r[0] for r in conn.execute("SELECT arm FROM trials")}
        (suite_name,) = conn.execute("SELECT suite FROM runs").fetchone()
    assert arms == {"arm_[redacted: github-token]"} and suite_name == "suite [redacted: github-token]"
    assert (
        re.search(rb"\[redacted: [a-z-]+\]\n\xe2\x80\xa6\[truncated: stored", everything)
        or b"[redacted" in everything
    )


def _in_utf16(fragment: str, data: bytes) -> bool:
    """SQLite may store text as UTF-16; proctor's databases are UTF-8, but look anyway."""
    return fragment.encode("utf-16-le") in data


def test_the_sink_list_names_where_each_is_and_what_redacts_it() -> None:
    assert all(s.where and s.guard for s in SINKS)
    assert len({s.name for s in SINKS}) == len(SINKS)
    json.dumps([s.name for s in SINKS])
