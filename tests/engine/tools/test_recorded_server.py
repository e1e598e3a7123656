"""A ``replay:`` arm serves a recorded run back through a real MCP server, result for result.

The recording is made by ``proctor run`` against a real stdio MCP server (tests/fakes/
content_mcp_server.py, built on the mcp SDK: text, images, audio, embedded and linked resources,
structured content); the replay runs the same suite with the replay arm, and the tool results
recorded the second time must equal the first. An unrecorded call gets an MCP tool error that
names the tool and the arguments.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from proctor.app.cli import main
from proctor.engine.tools.mcp_toolbox import ServerPool
from proctor.engine.tools.recorded_server import Replayer
from proctor.engine.tools.recordings import Recording, call_key, load_recording
from proctor.scenarios.loader import load_suite
from proctor.store.events import ToolCall, ToolResult
from proctor.store.read.reader import StoreReader

pytestmark = pytest.mark.slow

FAKES = Path(__file__).resolve().parents[2] / "fakes"
GOLD = [
    [{"tool": "picture", "arguments": {}}, {"tool": "stats", "arguments": {}}],
    [{"tool": "everything", "arguments": {}}],
    [{"tool": "picture", "arguments": {}}],  # the same call twice: served in recorded order
]


def _suite(root: Path, run: str = "RUN") -> Path:
    (root / "scenarios").mkdir(parents=True, exist_ok=True)
    suite = {
        "name": "replay",
        "mcpServers": {
            "content": {"command": sys.executable, "args": [str(FAKES / "content_mcp_server.py")]}
        },
        "arms": {"live": {"servers": ["content"]}, "replayed": {"replay": {"db": "first.db", "run": run}}},
        "models": ["offline:gold"],
    }
    (root / "suite.yaml").write_text(yaml.safe_dump(suite))
    scenario = {"id": "blocks", "prompt": "Show every kind of block.", "gold_tool_calls": GOLD}
    (root / "scenarios" / "blocks.yaml").write_text(yaml.safe_dump(scenario))
    return root


def _results(db: Path, arm: str) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """Each call and its result, in the order the calls were made (parallel results may land in any order)."""
    with StoreReader(db) as reader:
        (trial,) = [t for t in reader.trials() if t.arm == arm]
        events = [e.event for e in reader.trial_events(trial.id)]
    results = {e.call_id: e for e in events if isinstance(e, ToolResult)}
    kept = {"content", "is_error", "structured", "blocks", "tool"}
    return [
        (c.tool, c.arguments, results[c.call_id].model_dump(include=kept))
        for c in events
        if isinstance(c, ToolCall)
    ]


def _record(tmp_path: Path) -> tuple[Path, str]:
    suite = _suite(tmp_path)
    assert main(["run", str(suite), "--headless", "--db", str(suite / "first.db"), "--arms", "live"]) == 0
    with StoreReader(suite / "first.db") as reader:
        run = reader.run()
    assert run is not None
    _suite(tmp_path, run.id)
    return suite, run.id


def test_a_replayed_run_records_the_same_tool_results(tmp_path: Path) -> None:
    suite, _ = _record(tmp_path)
    assert (
        main(["run", str(suite), "--headless", "--db", str(suite / "second.db"), "--arms", "replayed"]) == 0
    )
    first, again = _results(suite / "first.db", "live"), _results(suite / "second.db", "replayed")
    assert len(first) == 4 and {r[2]["blocks"][0]["type"] for r in first if r[2]["blocks"]} >= {
        "image",
        "text",
    }
    assert again == first
    assert (
        _blobs(suite / "second.db") == _blobs(suite / "first.db") != set()
    )  # images, audio, blobs: same bytes


def _blobs(db: Path) -> set[bytes]:
    with StoreReader(db) as reader:
        (trial,) = reader.trials()
        shas = {
            b.sha256
            for e in reader.trial_events(trial.id)
            if isinstance(e.event, ToolResult)
            for b in e.event.blocks
            if b.sha256
        }
        return {found[1] for found in map(reader.blob, shas) if found is not None}


def test_an_unrecorded_call_is_a_tool_error_naming_tool_and_arguments(tmp_path: Path) -> None:
    suite, run = _record(tmp_path)
    loaded = load_suite(suite)
    (server,) = loaded.suite.arms["replayed"].servers

    async def call() -> tuple[list[str], str, bool]:
        with tempfile.TemporaryDirectory() as logs:
            pool = ServerPool(Path(logs))
            try:
                conn = await pool.acquire(server, loaded.servers[server])
                out = await conn.call("flood", {"n": 3}, 10.0)
                return sorted(t.name for t in conn.tools), out.content, out.is_error
            finally:
                await pool.aclose()

    tools, content, is_error = asyncio.run(call())
    assert not any("flood" in k for k in load_recording(suite / "first.db", run, None)[0].results)
    assert tools == ["chatty", "everything", "flood", "picture", "stats"]  # the recorded tools/list
    assert is_error
    assert (
        content
        == f'no recording for flood with arguments {{"n": 3}} in run {run} (arm live); 0 call(s) of flood were recorded, with other arguments'
    )


@pytest.mark.parametrize(
    ("replay", "message"),
    [
        ({"db": "missing.db", "run": "x"}, "missing.db does not exist: record the run first"),
        ({"db": "first.db", "run": "not-it"}, "holds run '{run}', not 'not-it'; set run: {run}"),
        ({"db": "first.db", "run": "{run}", "arm": "other"}, "has no arm 'other' (its arms: live)"),
    ],
)
def test_a_replay_arm_that_cannot_be_served_stops_the_run_before_any_trial(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], replay: dict[str, str], message: str
) -> None:
    suite, run = _record(tmp_path)
    config = yaml.safe_load((suite / "suite.yaml").read_text())
    config["arms"]["replayed"]["replay"] = {k: v.format(run=run) for k, v in replay.items()}
    (suite / "suite.yaml").write_text(yaml.safe_dump(config))
    capsys.readouterr()
    code = main(["run", str(suite), "--headless", "--db", str(suite / "third.db"), "--arms", "replayed"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "suite.yaml: field 'arms.replayed.replay': " in err and message.format(run=run) in err
    assert not (suite / "third.db").exists()


def test_several_results_for_one_call_are_served_in_recorded_order_then_again(tmp_path: Path) -> None:
    suite, run = _record(tmp_path)
    recording, reader = load_recording(suite / "first.db", run, "live")
    with reader:
        (stats,) = recording.results[call_key("stats", {})]
        key = call_key("echo", {"text": "x", "n": 1})
        one = stats.model_copy(update={"structured": {"n": 1}})
        two = stats.model_copy(update={"structured": {"n": 2}})
        replayer = Replayer(Recording(run, "live", [], {key: [one, two]}), reader)
        served = [replayer.answer("echo", {"n": 1, "text": "x"}).structured_content for _ in range(3)]
    assert served == [{"n": 1}, {"n": 2}, {"n": 1}]  # argument order does not matter; the list wraps
