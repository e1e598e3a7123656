"""MCPAgentBench-style import on synthetic files (no public sample exists)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from proctor.engine.runs.imported_runs import save_import
from proctor.engine.scoring import match_tool_calls
from proctor.engine.scoring.transcript import ToolCallRecord
from proctor.scenarios.import_common import ImportFormatError
from proctor.scenarios.import_mcpagentbench import read_mcpagentbench
from proctor.scenarios.loader import load_suite

TASKS: list[dict[str, Any]] = [
    {"id": "s1", "query": "Weather in Oslo?", "type": "single", "domain": "general",
     "solution": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"id": "p1", "query": "Weather in Oslo and Rome?", "type": "dual_parallel",
     "solution": [[{"name": "get_weather", "arguments": {"city": "Oslo"}}, {"name": "get_weather", "arguments": {"city": "Rome"}}]]},
    {"task_id": 7, "task": "Find the user, then their orders.", "complexity": "Dual Serial",
     "solution": [[{"tool": "find_user", "parameters": '{"name": "Ada"}'}], {"calls": [{"name": "orders", "args": {"user_id": 1}}]}]},
    {"id": "m1", "question": "Plan a trip.", "domain": "professional", "tools": [{"name": "a"}, {"name": "b"}],
     "solution": [[{"name": "a", "server": "travel"}], [{"name": "b"}, {"name": "c"}], [{"name": "d", "arguments": {}}]]},
]  # fmt: skip


def _write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_tasks_become_gold_steps_with_their_complexity(tmp_path: Path) -> None:
    saved = save_import(read_mcpagentbench(_write(tmp_path / "tasks.json", TASKS)), tmp_path / "suite")
    assert saved.db is None
    loaded = load_suite(saved.out_dir)
    assert [s.id for s in loaded.scenarios] == ["7", "m1", "p1", "s1"]
    shapes = {s.id: [[c.tool for c in step] for step in s.gold_tool_calls] for s in loaded.scenarios}
    assert shapes == {
        "s1": [["get_weather"]],
        "p1": [["get_weather", "get_weather"]],
        "7": [["find_user"], ["orders"]],
        "m1": [["a"], ["b", "c"], ["d"]],
    }
    complexity = {s.id: s.complexity for s in loaded.scenarios}
    assert complexity == {"s1": "single", "p1": "dual-parallel", "7": "dual-serial", "m1": "multi"}
    serial = loaded.scenario("7")
    assert serial.prompt == "Find the user, then their orders."
    assert serial.gold_tool_calls[0][0].arguments == {"name": "Ada"}
    assert loaded.scenario("m1").gold_tool_calls[0][0].server == "travel"
    assert loaded.scenario("m1").category == "professional"
    assert list(loaded.suite.arms) == ["baseline"]


def test_imported_gold_calls_score_with_tefs(tmp_path: Path) -> None:
    saved = save_import(read_mcpagentbench(_write(tmp_path / "tasks.json", TASKS[1:2])), tmp_path / "suite")
    (scenario,) = load_suite(saved.out_dir).scenarios
    rome = ToolCallRecord("a", "w", "get_weather", {"city": "Rome"}, step=0)
    oslo = ToolCallRecord("b", "w", "get_weather", {"city": "Oslo"}, step=0)
    together = match_tool_calls(scenario.gold_tool_calls, [[rome, oslo]])
    one_by_one = match_tool_calls(scenario.gold_tool_calls, [[rome], [oslo]])
    assert (together.finished, together.efficiently_finished) == (True, True)
    assert (one_by_one.finished, one_by_one.efficiently_finished) == (True, False)


def test_jsonl_folder_and_tasks_key_layouts(tmp_path: Path) -> None:
    folder = tmp_path / "bench"
    folder.mkdir()
    (folder / "a.jsonl").write_text("\n".join(json.dumps(t) for t in TASKS[:2]) + "\n\n")
    _write(folder / "b.json", {"tasks": TASKS[2:]})
    imported = read_mcpagentbench(folder)
    assert sorted(s["id"] for s in imported.scenarios) == ["7", "m1", "p1", "s1"]
    assert any("2 candidate tool definitions" in n for n in imported.notes)


def test_a_label_that_contradicts_the_shape_is_kept_with_a_note(tmp_path: Path) -> None:
    task = TASKS[0] | {"type": "multi"}
    imported = read_mcpagentbench(_write(tmp_path / "t.json", [task]))
    assert imported.scenarios[0]["complexity"] == "multi"
    assert any("labelled multi but its solution has the shape of single" in n for n in imported.notes)


def test_servers_file_adds_an_mcp_arm(tmp_path: Path) -> None:
    servers = _write(
        tmp_path / "mcp.json", {"mcpServers": {"mock": {"command": "python", "args": ["mock.py"]}}}
    )
    imported = read_mcpagentbench(_write(tmp_path / "t.json", TASKS), servers_file=servers)
    assert imported.suite["arms"]["mcp"]["servers"] == ["mock"]


@pytest.mark.parametrize(
    ("task", "message"),
    [
        ({"id": "x", "query": "q"}, r"task 0 \(id x\): field 'solution' is missing"),
        ({"id": "x", "query": "q", "solution": []}, r"field 'solution': expected a non-empty list of steps"),
        ({"id": "x", "query": "q", "solution": [[]]}, r"field 'solution'\[0\]: an empty step"),
        (
            {"id": "x", "query": "q", "solution": [{"arguments": {}}]},
            r"field 'solution'\[0\]: the call has no 'name'",
        ),
        (
            {"id": "x", "query": "q", "solution": [{"name": "a", "arguments": "{oops"}]},
            r"field 'solution'\[0\]: arguments are not valid JSON",
        ),
        (
            {"id": "x", "query": "q", "solution": [{"name": "a", "arguments": [1]}]},
            r"arguments must be a JSON object, got list",
        ),
        ({"id": "x", "query": "q", "solution": ["a"]}, r"field 'solution'\[0\]: expected a call object"),
        (
            {"id": "x", "query": "q", "type": "triple", "solution": [{"name": "a"}]},
            r"field 'type': 'triple' is not a complexity",
        ),
        ({"query": "q", "solution": [{"name": "a"}]}, r"task 0: field 'id' is missing"),
        ({"id": "x", "solution": [{"name": "a"}]}, r"field 'query' is missing or empty"),
    ],
)
def test_malformed_tasks_are_refused_with_task_and_field(
    tmp_path: Path, task: dict[str, Any], message: str
) -> None:
    path = _write(tmp_path / "t.json", [task])
    with pytest.raises(ImportFormatError, match=message) as info:
        read_mcpagentbench(path)
    assert str(info.value).startswith(f"{path}: task 0")


def test_bad_json_lines_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(TASKS[0]) + "\n{broken\n")
    with pytest.raises(ImportFormatError, match=r"t\.jsonl: line 2, column 2: not valid JSON"):
        read_mcpagentbench(path)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ImportFormatError, match=r"empty: no \*\.json or \*\.jsonl files"):
        read_mcpagentbench(empty)
