"""LiveMCPBench import: tasks with key points, the server catalogue, labelled trajectories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from proctor.engine.runs.imported_runs import save_import
from proctor.engine.scoring import partition
from proctor.scenarios.importers.common import ImportFormatError
from proctor.scenarios.importers.livemcpbench import ARM, read_livemcpbench
from proctor.scenarios.loader import load_suite
from proctor.scenarios.schema import StdioServer
from proctor.store.events import ToolResult
from proctor.store.read.reader import StoreReader

FIXTURES = Path(__file__).parents[3] / ".." / "shared" / "fixtures"
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
        "task_success": "success",
    }
    return entry | over


def _verdict(task_id: str = "t1", judge: str = "success", **over: Any) -> dict[str, Any]:
    entry = {
        "task_id": task_id,
        "question": "What time is it in Oslo?",
        "judge": judge,
        "judge_reason": f"judged {judge}",
        "reward": int(judge == "success"),
        "category": "daily",
        "response": "It is 10:00.",
        "messages": _trajectory(task_id)["messages"],
    }
    return entry | over


def _checkout(
    root: Path,
    tasks: list[dict[str, Any]],
    runs: dict[str, list[dict[str, Any]]],
    judges: dict[str, dict[str, list[dict[str, Any]]]],
) -> Path:
    """A folder laid out as the LiveMCPBench repository: tasks, annotated runs, judges' verdicts."""
    (root / "annotated_data").mkdir(parents=True)
    _write(root / "annotated_data" / "all_annotations.json", tasks)
    (root / "baseline" / "annotation").mkdir(parents=True)
    for run, entries in runs.items():
        _write(root / "baseline" / "annotation" / f"{run}.json", entries)
    for judge, by_run in judges.items():
        (root / "evaluator" / "output" / judge).mkdir(parents=True)
        for run, entries in by_run.items():
            _write(root / "evaluator" / "output" / judge / f"{run}.json", entries)
    (root / "evaluator" / "output" / "human_agreement_x.csv").write_text("Model,human_agreement\n")
    return root


def _write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_shared_checkout_imports_each_trajectory_once_with_every_judge(tmp_path: Path) -> None:
    folder = shared("livemcpbench")
    tasks = json.loads((folder / "annotated_data" / "all_annotations.json").read_text())
    saved = save_import(read_livemcpbench(folder), tmp_path / "live")
    loaded = load_suite(saved.out_dir)
    assert len(loaded.scenarios) == len(tasks) == 17
    first = loaded.scenario(tasks[0]["task_id"])
    assert first.key_points == [
        "Retrieve character statistics data for Valorant",
        "Generate an enhancement program",
    ]
    assert first.category == "Leisure"
    arm = loaded.suite.arms[ARM]
    assert arm.servers == ["time", "memory", "calculator"]
    assert arm.tool_retrieval is not None and arm.tool_retrieval.top_k == 8
    time_server = loaded.servers["time"]
    assert isinstance(time_server, StdioServer)
    assert time_server.args == ["mcp-server-time", "--local-timezone=America/New_York"]
    assert "timezone" in time_server.description

    assert saved.db is not None and (saved.trials, saved.judgments) == (12, 12 * 11)
    with StoreReader(saved.db) as reader:
        trials = {t.scenario: t for t in reader.trials()}
        assert len(trials) == 12 and {t.arm for t in trials.values()} == {ARM}
        assert {t.model for t in trials.values()} == {
            "imported:claude-sonnet-4-20250514_Qwen3-Embedding-0.6B"
        }
        by_trial = {(j.trial_id, j.judge): j for j in reader.judgments()}
        human = by_trial[(trials[NVDA].id, "human")]
        assert human.source == "livemcpbench:human"
        assert human.verdict == {
            "score": 1.0,
            "key_points_success": True,
            "rationale": "human label: success",
        }
        assert by_trial[(trials[GOLD].id, "human")].verdict["key_points_success"] is False  # type: ignore[index]
        judge = by_trial[(trials[GOLD].id, "openai_gpt-4.1-mini")]
        assert judge.source == "livemcpbench:judge"
        assert judge.verdict is not None and judge.verdict["score"] == 0.0
        assert judge.verdict["rationale"].startswith("failure: ")
        judges = {j.judge for j in reader.judgments() if j.source == "livemcpbench:judge"}
        assert len(judges) == 10 and "claude-opus-4-20250514" in judges
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


def test_verdicts_without_an_annotated_trajectory_bring_their_own(tmp_path: Path) -> None:
    root = _checkout(
        tmp_path / "repo",
        [_task("t1"), _task("t2")],
        {"run-a": [_trajectory("t1", extra_field={"kept": True})]},
        {
            "judge-x": {"run-a": [_verdict("t1", "failure")], "run-b": [_verdict("t2", "success")]},
            "judge-y": {"run-a": [_verdict("t1", "success", unknown_key=1)]},
        },
    )
    imported = read_livemcpbench(root)
    by_model = {(t.model, t.scenario): t for t in imported.trajectories}
    assert sorted(by_model) == [("imported:run-a", "t1"), ("imported:run-b", "t2")]
    run_a = by_model[("imported:run-a", "t1")]
    assert [(j.judge, j.verdict and j.verdict["key_points_success"]) for j in run_a.judgments] == [
        ("human", True),
        ("judge-x", False),
        ("judge-y", True),
    ]
    run_b = by_model[("imported:run-b", "t2")]
    assert [j.judge for j in run_b.judgments] == ["judge-x"]  # no human label for an unannotated run
    assert run_b.final_answer == "It is 10:00."


def test_a_verdict_with_neither_judge_nor_reward_is_a_judge_error(tmp_path: Path) -> None:
    entry = _verdict(judge="", reward=None)
    root = _checkout(tmp_path / "repo", [_task()], {"run": [_trajectory()]}, {"j2": {"run": [entry]}})
    (t,) = read_livemcpbench(root).trajectories
    (_, j2) = t.judgments
    assert (j2.judge, j2.verdict, j2.error) == (
        "j2",
        None,
        "the source verdict has neither 'judge' nor 'reward'",
    )


def test_report_reproduces_upstream_agreement_figures_on_the_shared_subset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """NOTE.md of the shared subset gives the figures upstream's human_agreement.py computes on it."""
    from proctor.app.cli import main

    saved = save_import(read_livemcpbench(shared("livemcpbench")), tmp_path / "live")
    assert main(["report", str(saved.db), "--format", "json"]) == 0
    judges = json.loads(capsys.readouterr().out)["judges"]
    agreement = {a["judge"]: a["percent"] for a in judges["human"]["agreement"]}
    assert agreement == {
        "claude-opus-4-20250514": 91.67,
        "claude-sonnet-4-20250514": 58.33,
        "deepseek_deepseek-chat-v3-0324": 83.33,
        "deepseek_deepseek-r1-0528": 83.33,
        "models_gemini-2.5-pro": 91.67,
        "openai_gpt-4.1": 100.0,
        "openai_gpt-4.1-mini": 83.33,
        "qwen25_72b_int4_instruct": 83.33,
        "qwen_qwen3-235b-a22b": 83.33,
        "qwen_qwen3-32b": 83.33,
        "panel majority": 83.33,
    }
    assert judges["human"]["success"]["percent"] == 41.67
    assert judges["human"]["any_judge"]["percent"] == 100.0
    assert len(judges["panel"]["pairs"]) == 45
    assert main(["report", str(saved.db), "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert "| openai\\_gpt-4.1-mini | " in md and "83.33 % (10/12)" in md
    assert "Any judge of that panel agrees with the human label: 100.00 % (12/12)." in md


def test_an_even_split_of_judges_counts_as_success_as_upstream(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from proctor.app.cli import main

    root = _checkout(
        tmp_path / "repo",
        [_task()],
        {"run": [_trajectory(task_success="failure")]},
        {"a": {"run": [_verdict(judge="success")]}, "b": {"run": [_verdict(judge="failure")]}},
    )
    saved = save_import(read_livemcpbench(root), tmp_path / "suite")
    assert main(["report", str(saved.db), "--format", "json"]) == 0
    judges = json.loads(capsys.readouterr().out)["judges"]
    assert judges["panel"]["majority"]["passed"] == 1 and judges["panel"]["majority"]["tied"] == 1
    agreement = {a["judge"]: a["percent"] for a in judges["human"]["agreement"]}
    assert agreement == {"a": 0.0, "b": 100.0, "panel majority": 0.0}
    assert judges["human"]["any_judge"]["percent"] == 100.0
    assert judges["human"]["success"]["percent"] == 0.0


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
    runs = _write(tmp_path / "runs.json", [_trajectory(), _trajectory("t2")])
    verdicts = tmp_path / "judge-z" / "runs.json"
    verdicts.parent.mkdir()
    _write(verdicts, [_verdict("t2", "failure")])
    imported = read_livemcpbench(
        tasks, tools=tools, trajectories=[runs], verdicts=[verdicts], model="claude-x", top_k=3
    )
    assert imported.suite["arms"][ARM] == {
        "servers": ["time"],
        "tool_retrieval": {"top_k": 3},
        "description": "the LiveMCPTool catalogue behind top-k tool retrieval",
    }
    assert [(t.model, t.scenario, [j.judge for j in t.judgments]) for t in imported.trajectories] == [
        ("imported:claude-x", "t1", ["human"]),
        ("imported:claude-x", "t2", ["human", "judge-z"]),
    ]
    assert len(imported.scenarios) == 2


def test_without_a_catalogue_only_the_baseline_arm(tmp_path: Path) -> None:
    imported = read_livemcpbench(_write(tmp_path / "tasks.json", [_task(answers="10:00")]))
    assert list(imported.suite["arms"]) == ["baseline"]
    assert imported.scenarios[0]["claims"] == ["10:00"]
    assert any("--tools" in n for n in imported.notes)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            [_trajectory(task_success="maybe")],
            r"entry 0 \(task_id t1\), field 'task_success': 'maybe'.*\"success\" or \"failure\"",
        ),
        ([_task(**{"Annotator Metadata": "steps"})], r"field 'Annotator Metadata': missing or not an object"),
        (
            [_task(**{"Annotator Metadata": {"Tools": "x"}})],
            r"field 'Annotator Metadata', field 'Steps': is empty",
        ),
        ([_task(Question="")], r"entry 0 \(task_id t1\), field 'Question': is empty"),
        ([_trajectory(messages="hello")], r"field 'messages': expected a list of chat messages, got str"),
        ([_verdict(judge="", reward="yes")], r"field 'reward': 'yes' is not a label"),
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
