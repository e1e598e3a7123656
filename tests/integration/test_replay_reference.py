"""A run against the real server-everything, served back by a ``replay:`` arm: the same results.

server-everything (npm, installed under tests/reference_servers) answers with text, an image
and structuredContent; ``offline:gold`` makes the same calls in both runs, so the second run,
which never starts server-everything, must record exactly the results of the first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from proctor.app.cli import main
from proctor.store.events import ToolCall, ToolResult
from proctor.store.read.reader import StoreReader

pytestmark = pytest.mark.slow

EVERYTHING = (
    Path(__file__).resolve().parents[1]
    / "reference_servers"
    / "node_modules"
    / ".bin"
    / "mcp-server-everything"
)
GOLD = [
    [
        {"tool": "echo", "server": "everything", "arguments": {"message": "hello"}},
        {"tool": "get-sum", "server": "everything", "arguments": {"a": 2, "b": 3}},
    ],
    [
        {"tool": "get-tiny-image", "server": "everything", "arguments": {}},
        {"tool": "get-structured-content", "server": "everything", "arguments": {"location": "New York"}},
    ],
]


def _write(suite: Path, run: str) -> None:
    config = {
        "name": "replay-everything",
        "mcpServers": {"everything": {"command": str(EVERYTHING), "args": ["stdio"]}},
        "arms": {"live": {"servers": ["everything"]}, "replayed": {"replay": {"db": "first.db", "run": run}}},
        "models": ["offline:gold"],
    }
    (suite / "suite.yaml").write_text(yaml.safe_dump(config))


def _calls(db: Path, arm: str) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    with StoreReader(db) as reader:
        (trial,) = [t for t in reader.trials() if t.arm == arm]
        events = [e.event for e in reader.trial_events(trial.id)]
        scores = {s.name.value: s.value for s in reader.scores(trial.id)}
    assert scores["tfs"] == scores["tefs"] == 1.0
    results = {e.call_id: e for e in events if isinstance(e, ToolResult)}
    kept = {"tool", "content", "is_error", "structured", "blocks"}
    return [
        (c.tool, c.arguments, results[c.call_id].model_dump(include=kept))
        for c in events
        if isinstance(c, ToolCall)
    ]


def test_server_everything_served_back_gives_the_same_results(tmp_path: Path) -> None:
    if not EVERYTHING.exists():
        pytest.fail("server-everything is not installed: run `make test` (it installs the reference servers)")
    suite = tmp_path / "suite"
    (suite / "scenarios").mkdir(parents=True)
    scenario = {
        "id": "kinds",
        "prompt": "Echo, add, and fetch an image and a forecast.",
        "gold_tool_calls": GOLD,
    }
    (suite / "scenarios" / "kinds.yaml").write_text(yaml.safe_dump(scenario))
    _write(suite, "not-recorded-yet")
    assert main(["run", str(suite), "--headless", "--db", str(suite / "first.db"), "--arms", "live"]) == 0
    with StoreReader(suite / "first.db") as reader:
        run = reader.run()
    assert run is not None
    _write(suite, run.id)
    assert (
        main(["run", str(suite), "--headless", "--db", str(suite / "second.db"), "--arms", "replayed"]) == 0
    )
    first, again = _calls(suite / "first.db", "live"), _calls(suite / "second.db", "replayed")
    kinds = {b["type"] for _, _, r in first for b in r["blocks"]}
    assert len(first) == 4 and kinds >= {"text", "image"} and any(r["structured"] for _, _, r in first)
    assert again == first
