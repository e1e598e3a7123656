"""MCPAgentBench import: its checkout's tasks, skip list and servers; published results scored as upstream.

The benchmark has no licence, so these fixtures are written here in its shape with made-up
values (tool names, arguments, scores); nothing is copied from it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from proctor.app.cli import main
from proctor.engine.runs.imported_runs import save_import
from proctor.scenarios.importers.common import ImportFormatError
from proctor.scenarios.importers.mcpagentbench import read_mcpagentbench
from proctor.scenarios.loader import load_suite
from proctor.scenarios.schema import StdioServer

TASKS: list[dict[str, Any]] = [
    {"id": "daytask_1_tool_1", "content": "Track parcel 42.", "tools": [["parcel_tracker"]], "inputs": [[{"number": "42"}]]},
    {"id": "daytask_2_parallel_tools_1", "content": "Weather in Oslo and Rome?",
     "tools": [["weather", "weather"]], "inputs": [[{"city": "Oslo"}, {"city": "Rome"}]]},
    {"id": "protask_2_sequential_tools_1", "content": "Find user Ada, then her orders.",
     "tools": [["find_user"], ["orders"]], "inputs": [[{"name": "Ada"}], [{"user_id": 1, "limit": 5}]]},
    {"id": "protask_1_tool_2", "content": "Brainstorm a slogan.", "tools": [["idea_engine"]], "inputs": [[{"topic": "tea"}]]},
]  # fmt: skip


def _write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _checkout(root: Path) -> Path:
    _write(root / "data" / "tasks.json", TASKS)
    _write(root / "configs" / "evaluation_config.json", {"skip_input_tools": ["idea_engine"]})
    for tool in ("parcel_tracker", "weather", "find_user", "orders", "idea_engine"):
        (root / "servers").mkdir(exist_ok=True)
        (root / "servers" / f"{tool}.py").write_text("# a FastMCP server\n")
    return root


def _result(task: dict[str, Any], tools: list[list[str]], inputs: list[list[Any]]) -> dict[str, Any]:
    return {
        "task_id": task["id"],
        "task_content": task["content"],
        "expected_tools": task["tools"],
        "expected_inputs": task["inputs"],
        "tools_used": tools,
        "inputs_used": inputs,
        "score": 0,
        "match": False,
        "index": 1,
        "an_unknown_key": "kept out of the way",
    }


# Hand-computed with upstream's rules (src/evaluate.py), gold-call weights 1, 2, 2, 1 (of 6):
#   parcel: "42" as the int 42 -> str() equal             TEFS yes  TFS yes   weight 1
#   weather: both cities, but in two sequential steps     TEFS no   TFS yes   weight 2
#   user/orders: limit "5" vs 5 -> str equal; in order    TEFS yes  TFS yes   weight 2
#   idea_engine: on the skip list, any arguments pass     TEFS yes  TFS yes   weight 1
# TEFS = (1 + 2 + 1) / 6 = 66.67 %, TFS = 6 / 6 = 100.00 %
RUN1 = [
    _result(TASKS[0], [["parcel_tracker"]], [[{"number": 42}]]),
    _result(TASKS[1], [["weather"], ["weather"]], [[{"city": "Rome"}], [{"city": "Oslo"}]]),
    _result(TASKS[2], [["find_user"], ["orders"]], [[{"name": "Ada"}], [{"user_id": "1", "limit": "5"}]]),
    _result(TASKS[3], [["idea_engine"]], [[{"topic": "coffee", "style": "short"}]]),
]
# Run 2: parcel 42.0 -> "42.0" != "42" fails both; weather parallel passes both; orders never
# called fails both; a task only the results file has (weight 1) passes both.
# TEFS = (2 + 1 + 1) / 7 = 57.14 %, TFS = 57.14 %
EXTRA = {"id": "protask_3_seq_tools_9", "content": "x" * 100 + "...", "tools": [["clock"]], "inputs": [[{}]]}
RUN2 = [
    _result(TASKS[0], [["parcel_tracker"]], [[{"number": 42.0}]]),
    _result(TASKS[1], [["weather", "weather"]], [[{"city": "Rome"}, {"city": "Oslo"}]]),
    _result(TASKS[2], [["find_user"]], [[{"name": "Ada"}]]),
    _result(TASKS[3], [["idea_engine"]], [[{}]]),
    _result(EXTRA, [["clock"]], [[{}]]),
]


def _results(root: Path, name: str, rows: list[dict[str, Any]], tefs: float, tfs: float) -> Path:
    summary = {"total_tasks": len(rows), "model_score": tefs, "ignore_parallel_score": tfs}
    return _write(
        root / "results" / "tool10" / name, {"evaluation_summary": summary, "detailed_results": rows}
    )


def test_checkout_tasks_become_gold_steps_scored_in_upstreams_mode(tmp_path: Path) -> None:
    root = _checkout(tmp_path / "repo")
    saved = save_import(read_mcpagentbench(root), tmp_path / "suite")
    loaded = load_suite(saved.out_dir)
    assert saved.db is None
    shapes = {s.id: [[c.tool for c in step] for step in s.gold_tool_calls] for s in loaded.scenarios}
    assert shapes["daytask_2_parallel_tools_1"] == [["weather", "weather"]]
    assert shapes["protask_2_sequential_tools_1"] == [["find_user"], ["orders"]]
    by_id = {s.id: s for s in loaded.scenarios}
    assert by_id["daytask_2_parallel_tools_1"].complexity == "dual-parallel"
    assert by_id["protask_2_sequential_tools_1"].complexity == "dual-serial"
    assert (
        by_id["daytask_1_tool_1"].category == "daily" and by_id["protask_1_tool_2"].category == "professional"
    )
    assert loaded.suite.scoring.tool_match == "mcpagentbench"
    assert loaded.suite.scoring.names_only_tools == ["idea_engine"]
    assert list(loaded.suite.arms) == ["baseline"]


def test_published_results_reproduce_their_scores_per_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _checkout(tmp_path / "repo")
    r1 = _results(root, "acme-7b_general_test_run1_results.json", RUN1, 66.67, 100.0)
    r2 = _results(root, "acme-7b_general_test_run2_results.json", RUN2, 57.14, 57.14)
    out = tmp_path / "suite"
    argv = ["import", "mcpagentbench", str(root), "--results", str(r2), "--results", str(r1), "-o", str(out)]
    assert main(argv) == 0
    assert "9 imported trials" in capsys.readouterr().out
    assert main(["report", str(out / "imported.db"), "--format", "json"]) == 0
    (arm,) = json.loads(capsys.readouterr().out)["arms"]
    assert arm["model"] == "imported:acme-7b@tool10" and arm["tool_match"] == "mcpagentbench"
    epochs = {
        e["epoch"]: (round(100 * e["tfs"], 2), round(100 * e["tefs"], 2)) for e in arm["tool_match_by_epoch"]
    }
    assert epochs == {0: (100.0, 66.67), 1: (57.14, 57.14)}  # run1 is epoch 0 whatever the order given
    assert main(["report", str(out / "imported.db"), "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert "(mcpagentbench)" in md and "| 0 | 100.00 % | 66.67 % |" in md
    assert len(load_suite(out).scenarios) == 5  # the results-only task became a scenario


def test_python_interpreter_serves_each_tool_from_the_checkout(tmp_path: Path) -> None:
    root = _checkout(tmp_path / "repo")
    loaded = load_suite(
        save_import(read_mcpagentbench(root, python="/opt/py311/bin/python"), tmp_path / "s").out_dir
    )
    arm = loaded.suite.arms["mcpagentbench"]
    assert arm.servers == ["find_user", "idea_engine", "orders", "parcel_tracker", "weather"]
    server = loaded.servers["weather"]
    assert isinstance(server, StdioServer) and server.command == "/opt/py311/bin/python"
    assert server.args == [str((root / "servers" / "weather.py").resolve())]


def test_a_task_file_alone_works_without_the_skip_list(tmp_path: Path) -> None:
    imported = read_mcpagentbench(_write(tmp_path / "tasks.json", TASKS))
    assert imported.suite["scoring"]["names_only_tools"] == []
    assert any("skip list" in n for n in imported.notes)


@pytest.mark.parametrize(
    ("task", "message"),
    [
        ({"content": "x", "tools": [["a"]], "inputs": [[{}]]}, r"task 0: field 'id' is missing"),
        ({"id": "t", "content": " ", "tools": [["a"]], "inputs": [[{}]]}, r"\(id t\): field 'content'"),
        ({"id": "t", "content": "x", "tools": ["a"], "inputs": [[{}]]}, r"field 'tools': expected a list of steps"),
        ({"id": "t", "content": "x", "tools": [["a"]], "inputs": []}, r"field 'inputs': expected one list"),
        ({"id": "t", "content": "x", "tools": [["a", "b"]], "inputs": [[{}]]}, r"field 'inputs\[0\]': expected 2"),
        ({"id": "t", "content": "x", "tools": [["a"]], "inputs": [["q"]]}, r"field 'inputs\[0\]\[0\]': expected an argument object"),
    ],
)  # fmt: skip
def test_malformed_tasks_are_refused_with_task_and_field(
    tmp_path: Path, task: dict[str, Any], message: str
) -> None:
    with pytest.raises(ImportFormatError, match=message):
        read_mcpagentbench(_write(tmp_path / "tasks.json", [task]))


def test_a_folder_that_is_not_a_checkout_is_refused(tmp_path: Path) -> None:
    with pytest.raises(
        ImportFormatError, match=r"not an MCPAgentBench checkout \(data/tasks.json is missing\)"
    ):
        read_mcpagentbench(tmp_path)
