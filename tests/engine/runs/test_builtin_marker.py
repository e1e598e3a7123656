"""A run of the demo suite where the baseline arm uses proctor's built-in toolbox and the other
arm an MCP server the user named ``builtin``: the marker on each event, never the server's name,
says which calls were built-in, in the events, the run's tool surface, the OTel export (and its
import back), and the replay."""

from __future__ import annotations

import asyncio
import io
import json
import shutil
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
import yaml

from proctor.app.cli import main
from proctor.engine.drift.runs_diff import replay_drift
from proctor.engine.reports.tool_surface import read_run_surface
from proctor.engine.runs.options import RunOptions
from proctor.engine.runs.session import run_suite
from proctor.scenarios.demo import SUITE_DIR
from proctor.scenarios.loader import load_suite
from proctor.store.events import ToolCall, ToolResult, ToolsListed
from proctor.store.read.reader import StoreReader
from proctor.store.scores import AdoptionDetails, ScoreName
from proctor.store.tool_origin import is_builtin

SCENARIO = "retry-delay-cap"


def proctor(*args: str | Path) -> int:
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        return main([str(a) for a in args])


def _suite(root: Path) -> Path:
    """The demo suite with its code-intelligence server renamed ``builtin``, in arm ``mine``."""
    suite = root / "suite"
    shutil.copytree(SUITE_DIR / "scenarios", suite / "scenarios")
    data = yaml.safe_load((SUITE_DIR / "suite.yaml").read_text())
    data["repo"]["source"] = str(SUITE_DIR / "repo")
    data["mcpServers"] = {"builtin": data["mcpServers"]["codeintel"]}
    data["arms"] = {"baseline": {"baseline": True}, "mine": {"servers": ["builtin"]}}
    (suite / "suite.yaml").write_text(yaml.safe_dump(data))
    return suite


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("marker")
    suite, db = _suite(root), root / "run.db"
    options = RunOptions(db=db, arms=["baseline", "mine"], scenarios=[SCENARIO])
    assert asyncio.run(run_suite(load_suite(suite), options)) == "finished"
    return suite, db


def _tool_events(db: Path) -> dict[str, list[ToolCall | ToolResult]]:
    with StoreReader(db) as r:
        arms = {t.id: t.arm for t in r.trials()}
        out: dict[str, list[ToolCall | ToolResult]] = {}
        for t in arms:
            events = [e.event for e in r.trial_events(t) if not e.abandoned]
            out[arms[t]] = [e for e in events if isinstance(e, ToolCall | ToolResult)]
    return out


def test_every_tool_event_says_whether_it_was_built_in_whatever_its_servers_name(
    recorded: tuple[Path, Path],
) -> None:
    _, db = recorded
    events = _tool_events(db)
    assert events["baseline"] and events["mine"]
    assert {(e.server, e.builtin) for e in events["baseline"]} == {("builtin", True)}
    assert {(e.server, e.builtin) for e in events["mine"]} == {("builtin", False)}
    with StoreReader(db) as r:
        listed = {
            t.arm: [
                x for e in r.trial_events(t.id) if isinstance(e.event, ToolsListed) for x in e.event.tools
            ]
            for t in r.trials()
        }
        adoption = {t.arm: r.scores(t.id) for t in r.trials()}
    assert {x.builtin for x in listed["baseline"]} == {True} and {x.builtin for x in listed["mine"]} == {
        False
    }
    mine = next(s for s in adoption["mine"] if s.name == ScoreName.ADOPTION)
    assert mine.detail(AdoptionDetails, "arm_calls") == len(
        [e for e in events["mine"] if isinstance(e, ToolCall)]
    )
    assert mine.detail(AdoptionDetails, "misses") == 0  # no built-in tool in an MCP arm: nothing to miss


def test_a_server_named_builtin_is_part_of_the_runs_tool_surface(recorded: tuple[Path, Path]) -> None:
    _, db = recorded
    with StoreReader(db) as r:
        surface = read_run_surface(r, r.max_event_id()).surface()
    assert list(surface) == ["builtin"]  # the user's server; the baseline's built-ins are no surface
    assert {"search_symbols", "find_definition", "read_lines"} <= set(surface["builtin"])


def _spans(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text().splitlines():
        for rs in json.loads(line)["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for s in ss["spans"]:
                    attrs = {a["key"]: next(iter(a["value"].values())) for a in s.get("attributes", [])}
                    out.append({"name": s["name"], **attrs})
    return out


def test_the_otel_export_marks_built_in_calls_and_its_import_reads_the_mark_back(
    recorded: tuple[Path, Path], tmp_path: Path
) -> None:
    suite, db = recorded
    traces = tmp_path / "t.jsonl"
    assert proctor("export", db, "--format", "otel", "-o", traces) == 0
    tools = [s for s in _spans(traces) if s.get("gen_ai.operation.name") == "execute_tool"]
    arm_of = {s["proctor.arm"]: s for s in _spans(traces) if "proctor.arm" in s}
    assert len(arm_of) == 2
    marks = {(s["proctor.mcp.server"], s["proctor.tool.builtin"], s.get("mcp.method.name")) for s in tools}
    assert marks == {("builtin", True, None), ("builtin", False, "tools/call")}
    assert proctor("import", "otel", traces, "-o", tmp_path / "imp", "--suite", suite) == 0
    back = _tool_events(tmp_path / "imp" / "imported.db")
    assert {(e.server, is_builtin(e)) for e in back["baseline"]} == {("builtin", True)}
    assert {(e.server, is_builtin(e)) for e in back["mine"]} == {("builtin", False)}


def test_a_server_named_builtin_is_replayed_and_the_built_in_tools_are_not(
    recorded: tuple[Path, Path], tmp_path: Path
) -> None:
    _, db = recorded
    new = tmp_path / "replay.db"
    assert proctor("replay", db, "--db", new) == 0
    drift = replay_drift(new)
    assert drift is not None
    by_status: dict[str, set[tuple[str, str]]] = {}
    for c in drift.calls:
        by_status.setdefault(c.diff.status, set()).add((c.key[1], c.server))
    mine_calls = len([e for e in _tool_events(db)["mine"] if isinstance(e, ToolCall)])
    assert {arm for arm, _ in by_status.pop("skipped")} == {"baseline"}
    assert all(arm == "mine" for calls in by_status.values() for arm, _ in calls)
    assert sum(1 for c in drift.calls if c.key[1] == "mine") == mine_calls


def test_an_export_made_before_the_marker_reads_its_builtin_server_as_built_in(
    recorded: tuple[Path, Path], tmp_path: Path
) -> None:
    # proctor before the marker wrote proctor.mcp.server and, for a server it took for built-in by
    # that name, no mcp.method.name and gen_ai.tool.type "function": both arms' calls, here.
    suite, db = recorded
    traces, old = tmp_path / "t.jsonl", tmp_path / "old.jsonl"
    assert proctor("export", db, "--format", "otel", "-o", traces) == 0
    lines = []
    for line in traces.read_text().splitlines():
        request = json.loads(line)
        for rs in request["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for s in ss["spans"]:
                    kept = [a for a in s.get("attributes", []) if a["key"] != "proctor.tool.builtin"]
                    if {"key": "proctor.mcp.server", "value": {"stringValue": "builtin"}} in kept:
                        kept = [a for a in kept if a["key"] not in ("mcp.method.name", "gen_ai.tool.type")]
                        kept.append({"key": "gen_ai.tool.type", "value": {"stringValue": "function"}})
                    s["attributes"] = kept
        lines.append(json.dumps(request))
    old.write_text("\n".join(lines) + "\n")
    assert proctor("import", "otel", old, "-o", tmp_path / "imp", "--suite", suite) == 0
    back = _tool_events(tmp_path / "imp" / "imported.db")
    assert {is_builtin(e) for e in back["baseline"]} == {True}
    assert {is_builtin(e) for e in back["mine"]} == {True}  # as it read then: the name was all it had
