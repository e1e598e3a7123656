"""LiveMCPBench import: tasks with key points, the server catalogue, labelled trajectories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from proctor.engine.runs.imported_runs import save_import
from proctor.engine.scoring import partition
from proctor.scenarios.import_common import ImportFormatError
from proctor.scenarios.import_livemcpbench import ARM, read_livemcpbench
from proctor.scenarios.loader import load_suite
from proctor.scenarios.schema import StdioServer
from proctor.store.events import ToolResult
from proctor.store.reader import StoreReader

FIXTURES = Path(__file__).parents[2] / ".." / "shared" / "fixtures"
NVDA, GOLD = "39c4c9fc-9074-474a-850f-4b088d499d8c", "b276e772-28b5-42fd-bb85-fd73e017fe25"


def shared(*parts: str) -> Path:
    path = FIXTURES.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared fixture {path} is absent (the shared/ folder beside the repository)")
    return path


def _task(task_id: str = "t1", **over: Any) -> dict[str, Any]:
    task = {
        "task_id": task_id,
        "Question": "What time is it in Oslo?",
        "answers": "",
        "category": "Travel",
        "file_name": "",
        "Annotator Metadata": {"Steps": "1. get the time\n2. tell it", "Number of steps": "2"},
    }
    return task | over


def _trajectory(task_id: str = "t1", **over: Any) -> dict[str, Any]:
    entry = _task(task_id) | {
        "response": "It is 10:00.",
        "messages": [
            {"role": "system", "content": "be helpful"},
            {"role": "user", "content": "What time is it in Oslo?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "x",
                        "function": {
                            "name": "execute-tool",
                            "arguments": json.dumps(
                                {
                                    "server_name": "time",
                                    "tool_name": "get_current_time",
                                    "params": {"timezone": "Europe/Oslo"},
                                }
                            ),
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "x", "content": "meta=None content=[...] isError=False"},
            {"role": "assistant", "content": "It is 10:00."},
        ],
        "human_task_success": "success",
        "judge_verdicts": {"j1": {"reward": 1, "judge": "success", "judge_reason": "tool used"}},
    }
    return entry | over


def _write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_shared_sample_folder_imports_tasks_servers_and_labelled_trials(tmp_path: Path) -> None:
    folder = shared("livemcpbench")
    tasks = json.loads((folder / "tasks_sample.json").read_text())
    saved = save_import(read_livemcpbench(folder), tmp_path / "live")
    loaded = load_suite(saved.out_dir)
    assert len(loaded.scenarios) == len(tasks) + 2  # the two trajectories' tasks are not in the task sample
    first = loaded.scenario(tasks[0]["task_id"])
    assert first.key_points == ["get bbc news today", "filter the content"]
    assert first.category == "Finance"
    arm = loaded.suite.arms[ARM]
    assert arm.servers == ["time", "memory", "calculator"]
    assert arm.tool_retrieval is not None and arm.tool_retrieval.top_k == 8
    time_server = loaded.servers["time"]
    assert isinstance(time_server, StdioServer)
    assert time_server.args == ["mcp-server-time", "--local-timezone=America/New_York"]
    assert "timezone" in time_server.description

    assert saved.db is not None and (saved.trials, saved.judgments) == (2, 8)
    with StoreReader(saved.db) as reader:
        trials = {t.scenario: t for t in reader.trials()}
        assert {t.arm for t in trials.values()} == {ARM}
        judgments = reader.judgments()
        by_trial = {(j.trial_id, j.judge): j for j in judgments}
        assert by_trial[(trials[NVDA].id, "human")].verdict == {
            "score": 1.0,
            "passed": True,
            "rationale": "human label: success",
            "label": "success",
        }
        assert by_trial[(trials[NVDA].id, "human")].source == "livemcpbench:human"
        assert by_trial[(trials[GOLD].id, "human")].verdict["passed"] is False  # type: ignore[index]
        judge = by_trial[(trials[GOLD].id, "openai_gpt-4.1-mini")]
        assert judge.source == "livemcpbench:judge"
        assert judge.verdict is not None and judge.verdict["score"] == 0.0
        assert judge.verdict["rationale"].startswith("The agent did not successfully retrieve")
        nvda = partition([e.event for e in reader.trial_events(trials[NVDA].id)])
        gold_events = [e.event for e in reader.trial_events(trials[GOLD].id)]
    assert [(c.server, c.tool, dict(c.arguments)) for c in nvda.tool_calls][1] == (
        "yahoo-finance",
        "get_current_stock_price",
        {"symbol": "NVDA"},
    )
    assert nvda.tool_calls[0].server == "copilot" and nvda.tool_calls[0].tool == "route"
    assert "$171.38" in nvda.final_answer
    assert [e.is_error for e in gold_events if isinstance(e, ToolResult)][:2] == [False, True]


def test_explicit_files_model_name_and_repeated_trajectories(tmp_path: Path) -> None:
    tasks = _write(tmp_path / "all_annotations.json", [_task()])
    tools = _write(
        tmp_path / "tools.json",
        [
            {
                "name": "Time",
                "description": "time zones",
                "config": {"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}},
                "tools": {},
            }
        ],
    )
    runs = _write(tmp_path / "runs.json", [_trajectory(), _trajectory()])
    imported = read_livemcpbench(tasks, tools=tools, trajectories=[runs], model="claude-x", top_k=3)
    assert imported.suite["arms"][ARM] == {
        "servers": ["time"],
        "tool_retrieval": {"top_k": 3},
        "description": "the LiveMCPTool catalogue behind top-k tool retrieval",
    }
    assert [(t.model, t.epoch) for t in imported.transcripts] == [
        ("imported:claude-x", 0),
        ("imported:claude-x", 1),
    ]
    assert len(imported.scenarios) == 1


def test_without_a_catalogue_only_the_baseline_arm(tmp_path: Path) -> None:
    imported = read_livemcpbench(_write(tmp_path / "tasks.json", [_task(answers="10:00")]))
    assert list(imported.suite["arms"]) == ["baseline"]
    assert imported.scenarios[0]["claims"] == ["10:00"]
    assert any("--tools" in n for n in imported.notes)


def test_a_verdict_without_reward_or_status_is_a_judge_error(tmp_path: Path) -> None:
    entry = _trajectory(judge_verdicts={"j2": {"judge_reason": "Thoughts extract failed."}})
    (t,) = read_livemcpbench(_write(tmp_path / "runs.json", [entry])).transcripts
    (_, j2) = t.judgments
    assert (j2.judge, j2.verdict, j2.error) == ("j2", None, "the source verdict has no reward or status")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            [_trajectory(human_task_success="maybe")],
            r"entry 0 \(task_id t1\), field 'human_task_success': 'maybe'.*\"success\" or \"failure\"",
        ),
        ([_task(**{"Annotator Metadata": "steps"})], r"field 'Annotator Metadata': missing or not an object"),
        (
            [_task(**{"Annotator Metadata": {"Tools": "x"}})],
            r"field 'Annotator Metadata', field 'Steps': is empty",
        ),
        ([_task(Question="")], r"entry 0 \(task_id t1\), field 'Question': is empty"),
        ([_trajectory(messages="hello")], r"field 'messages': expected a list of chat messages, got str"),
        ([_trajectory(judge_verdicts=["j"])], r"field 'judge_verdicts': expected an object"),
        (
            [{"name": "x", "config": {}, "tools": {}}],
            r"entry 0 \(x\), field 'config.mcpServers': missing or empty",
        ),
        ({"task_id": "t1"}, r"expected a JSON list of objects, got dict"),
        ([{"foo": 1}], r"not a LiveMCPBench file"),
    ],
)
def test_malformed_files_are_refused_with_file_entry_and_field(
    tmp_path: Path, data: Any, message: str
) -> None:
    with pytest.raises(ImportFormatError, match=message):
        read_livemcpbench(_write(tmp_path / "f.json", data))


def test_bad_json_and_unknown_trajectory_task(tmp_path: Path) -> None:
    bad = tmp_path / "tasks.json"
    bad.write_text('[{"task_id": "t1"')
    with pytest.raises(ImportFormatError, match=r"tasks\.json: line 1, column \d+: not valid JSON"):
        read_livemcpbench(bad)
    orphan = _trajectory()
    del orphan["Question"]
    with pytest.raises(ImportFormatError, match=r"task t1 is in no tasks file.*give the tasks file too"):
        read_livemcpbench(_write(tmp_path / "runs.json", [orphan]))
