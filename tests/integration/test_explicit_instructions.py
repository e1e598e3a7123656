"""The offline agent follows "Use TOOL ..." on the real reference servers, through ``proctor run``.

Before, these prompts made no tool call on server-filesystem, mcp-server-git and mcp-server-time,
and ``gzip-file-as-resource`` on server-everything whatever the prompt said. The servers are the
installed reference packages (tests/reference_servers); mcp-server-time is used when a venv of
it is found there (or at ``$PROCTOR_TIME_SERVER``), else its case is skipped.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from proctor.app.cli import main
from proctor.store.events import ToolCall, ToolResult
from proctor.store.read.reader import StoreReader

pytestmark = pytest.mark.slow

REFERENCE = Path(__file__).resolve().parents[1] / "reference_servers"
NODE_BIN = REFERENCE / "node_modules" / ".bin"
GIT_SERVER = REFERENCE / ".venv-git" / "bin" / "mcp-server-git"
PROMPTS = {
    "filesystem": "Use read_text_file to read inventory/stock.py",
    "everything": "Use the echo tool with message hello",
    "git": "Use git_log to show the last commits",
    "time": "call get_current_time for Europe/Paris",
}


def time_server() -> Path | None:
    candidates = [os.environ.get("PROCTOR_TIME_SERVER", "")]
    candidates += [str(p) for p in sorted(REFERENCE.glob(".venv*/bin/mcp-server-time"))]
    return next((Path(c) for c in candidates if c and Path(c).exists()), None)


def _repo(path: Path) -> str:
    env = {"PATH": os.environ["PATH"], "HOME": str(path), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    (path / "inventory").mkdir(parents=True)
    (path / "inventory" / "stock.py").write_text('STOCK = {"apples": 3}\n')
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "Initial stock"]):
        subprocess.run(["git", *args], cwd=path, env=env, check=True)
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=path, env=env, check=True, capture_output=True, text=True
    ).stdout.strip()


def _suite(root: Path, servers: dict[str, dict[str, Any]]) -> Path:
    commit = _repo(root / "user")
    suite = root / "suite"
    (suite / "scenarios").mkdir(parents=True)
    (suite / "suite.yaml").write_text(
        yaml.safe_dump(
            {
                "name": "explicit",
                "repo": {"path": "../user", "commit": commit},
                "mcpServers": servers,
                "arms": {name: {"servers": [name]} for name in servers},
            }
        )
    )
    for name in servers:
        scenario = {"id": name, "prompt": PROMPTS[name], "keywords": {"required": ["x"]}}
        (suite / "scenarios" / f"{name}.yaml").write_text(yaml.safe_dump(scenario))
    return suite


def test_named_tools_are_called_on_the_real_servers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not GIT_SERVER.exists() or not (NODE_BIN / "mcp-server-filesystem").exists():
        pytest.fail("the reference servers are not installed: run `make test` (it installs them)")
    monkeypatch.setenv("PROCTOR_CACHE", str(tmp_path / "cache"))
    servers: dict[str, dict[str, Any]] = {
        "filesystem": {"command": str(NODE_BIN / "mcp-server-filesystem"), "args": ["${PROCTOR_REPO}"]},
        "everything": {"command": str(NODE_BIN / "mcp-server-everything"), "args": ["stdio"]},
        "git": {"command": str(GIT_SERVER), "args": ["--repository", "${PROCTOR_REPO}"]},
    }
    clock = time_server()
    if clock is not None:
        servers["time"] = {"command": str(clock)}
    suite = _suite(tmp_path, servers)
    db = tmp_path / "run.db"
    scenarios = ",".join(servers)
    assert main(["run", str(suite), "--headless", "--db", str(db), "--scenarios", scenarios]) == 0
    made: dict[tuple[str, str], list[tuple[str, dict[str, Any]]]] = {}
    answered: dict[tuple[str, str], list[str]] = {}
    with StoreReader(db) as reader:
        for trial in reader.trials():
            events = [e.event for e in reader.trial_events(trial.id)]
            key = (trial.arm, trial.scenario)
            made[key] = [(e.tool, e.arguments) for e in events if isinstance(e, ToolCall)]
            answered[key] = [e.content for e in events if isinstance(e, ToolResult) and not e.is_error]
    checkout = made[("filesystem", "filesystem")][-1][1]["path"].removesuffix("/inventory/stock.py")
    assert made[("filesystem", "filesystem")][-1] == (
        "read_text_file",
        {"path": f"{checkout}/inventory/stock.py"},
    )
    assert '"apples": 3' in answered[("filesystem", "filesystem")][-1]
    assert made[("everything", "everything")] == [("echo", {"message": "hello"})]
    assert made[("git", "git")][-1] == ("git_log", {"repo_path": checkout})
    assert "Initial stock" in answered[("git", "git")][-1]
    # Where the named tool is not offered, nothing is made up: the echo prompt on git calls no echo.
    assert all(name != "echo" for name, _ in made[("git", "everything")])
    if clock is None:
        pytest.skip("mcp-server-time not installed under tests/reference_servers (nor $PROCTOR_TIME_SERVER)")
    assert made[("time", "time")] == [("get_current_time", {"timezone": "Europe/Paris"})]
    assert "Europe/Paris" in answered[("time", "time")][0]
