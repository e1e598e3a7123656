"""MCP-Atlas import: the shared sample, the upstream CSV shape, Parquet, and malformed tables."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from proctor.engine.runs.imported_runs import save_import
from proctor.engine.scoring import partition
from proctor.scenarios.importers.common import ImportFormatError
from proctor.scenarios.importers.mcp_atlas import REFERENCE_ARM, REFERENCE_MODEL, read_mcp_atlas
from proctor.scenarios.loader import load_suite
from proctor.store.read.reader import StoreReader

FIXTURES = Path(__file__).parents[3] / ".." / "shared" / "fixtures"
BARBER = "6888e207a34beb25cfedda3b"


def shared(*parts: str) -> Path:
    path = FIXTURES.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared fixture {path} is absent (the shared/ folder beside the repository)")
    return path


def _trajectory() -> list[dict[str, Any]]:
    return [
        {
            "role": "assistant",
            "content": "Listing files.",
            "tool_calls": [
                {
                    "id": "c1",
                    "function": {"name": "filesystem_list_directory", "arguments": '{"path": "/data"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "[FILE] pets.csv"}]},
        {
            "role": "assistant",
            "content": "Two sums at once.",
            "tool_calls": [
                {
                    "id": "c2",
                    "function": {"name": "calculator_calculate", "arguments": '{"expression": "1+2"}'},
                },
                {
                    "id": "c3",
                    "function": {"name": "calculator_calculate", "arguments": '{"expression": "3+4"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "3"}]},
        {"role": "tool", "tool_call_id": "c3", "content": [{"type": "text", "text": "7"}]},
        {"role": "assistant", "content": "The sums are 3 and 7."},
    ]


def _write_csv(path: Path, rows: list[dict[str, str]], header: list[str] | None = None) -> Path:
    header = header or ["TASK", "ENABLED_TOOLS", "PROMPT", "TRAJECTORY", "GTFA_CLAIMS"]
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)
    return path


def _row(**over: str) -> dict[str, str]:
    row = {
        "TASK": "5c6d7e8f9a",
        "ENABLED_TOOLS": json.dumps(["filesystem_list_directory", "calculator_calculate"]),
        "PROMPT": "Sum the profits.",
        "TRAJECTORY": json.dumps(_trajectory()),
        # pandas writes list cells as Python literals; the upstream sample CSV has them so
        "GTFA_CLAIMS": "['The first sum is 3.', \"The second sum isn't 8, it is 7.\"]",
    }
    return row | over


def test_shared_sample_becomes_a_loadable_suite_and_a_reference_run(tmp_path: Path) -> None:
    source = shared("mcp-atlas", "public_sample_10.json")
    rows = json.loads(source.read_text())
    saved = save_import(read_mcp_atlas(source), tmp_path / "atlas")
    loaded = load_suite(saved.out_dir)
    assert len(loaded.scenarios) == len(rows) == 10
    assert list(loaded.suite.arms) == ["baseline"]
    barber = loaded.scenario(BARBER)
    assert barber.claims == next(r["GTFA_CLAIMS"] for r in rows if r["TASK"] == BARBER)
    assert [(c.server, c.tool) for step in barber.gold_tool_calls for c in step] == [
        ("cli-mcp-server", "show_security_rules"),
        ("cli-mcp-server", "run_command"),
        ("cli-mcp-server", "run_command"),
        ("calculator", "calculate"),
        ("calculator", "calculate"),
    ]
    assert barber.gold_tool_calls[1][0].arguments == {"command": "ls"}
    assert barber.complexity == "multi"
    no_trajectory = next(r for r in rows if "TRAJECTORY" not in r)
    assert len([c for s in loaded.scenario(no_trajectory["TASK"]).gold_tool_calls for c in s]) == len(
        no_trajectory["GOLD_TOOL_CALLS"]
    )

    assert saved.db is not None and saved.trials == 2
    with StoreReader(saved.db) as reader:
        trials = reader.trials()
        assert {(t.arm, t.model, t.status) for t in trials} == {(REFERENCE_ARM, REFERENCE_MODEL, "finished")}
        trial = next(t for t in trials if t.scenario == BARBER)
        digest = partition([e.event for e in reader.trial_events(trial.id)])
        config = reader.run().config  # type: ignore[union-attr]
    gtfa = next(r["GTFA"] for r in rows if r["TASK"] == BARBER)
    assert digest.final_answer == gtfa
    assert [c.result for c in digest.tool_calls if c.tool == "calculate"] == ["4.25625", "32.5"]
    assert config["suite_dir"] == str(saved.out_dir)
    assert config["imported"]["format"] == "mcp-atlas"


def test_upstream_csv_shape_with_python_literal_claims(tmp_path: Path) -> None:
    imported = read_mcp_atlas(_write_csv(tmp_path / "tasks.csv", [_row()]))
    (scenario,) = imported.scenarios
    assert scenario["claims"] == ["The first sum is 3.", "The second sum isn't 8, it is 7."]
    gold = scenario["gold_tool_calls"]
    assert [[c["arguments"]["expression"] for c in step] for step in gold[1:]] == [["1+2", "3+4"]]
    assert scenario["complexity"] == "multi"
    (t,) = imported.trajectories
    assert t.final_answer == "The sums are 3 and 7."  # no GTFA column: the last assistant prose
    assert any("filesystem" in n and "--servers" in n for n in imported.notes)
    assert t.arm == REFERENCE_ARM and any("re-judging needs their arm" in n for n in imported.notes)


def test_servers_file_adds_an_mcp_arm_and_names_what_it_lacks(tmp_path: Path) -> None:
    servers = tmp_path / "mcp.json"
    servers.write_text(
        json.dumps({"mcpServers": {"calculator": {"command": "uvx", "args": ["mcp-server-calculator"]}}})
    )
    imported = read_mcp_atlas(_write_csv(tmp_path / "t.csv", [_row()]), servers_file=servers)
    assert imported.suite["arms"]["mcp"]["servers"] == ["calculator"]
    assert any("filesystem" in n and "does not define" in n for n in imported.notes)
    assert [t.arm for t in imported.trajectories] == ["mcp"]  # in a suite arm, so it can be re-judged
    assert not any("re-judging" in n for n in imported.notes)


@pytest.mark.parametrize(
    ("row", "header", "message"),
    [
        (
            None,
            ["TASK", "PROMPT"],
            r"t\.csv: its header lacks column\(s\) GTFA_CLAIMS.*TASK, PROMPT, GTFA_CLAIMS are required",
        ),
        (
            {"GTFA_CLAIMS": "just one sentence"},
            None,
            r"t\.csv: row 1 \(TASK 5c6d7e8f9a\), field 'GTFA_CLAIMS': expected a list",
        ),
        ({"GTFA_CLAIMS": "[]"}, None, r"field 'GTFA_CLAIMS': is empty"),
        ({"GTFA_CLAIMS": "[1, 2]"}, None, r"field 'GTFA_CLAIMS'\[0\]: expected a string, got int"),
        ({"PROMPT": "  "}, None, r"row 1 \(TASK 5c6d7e8f9a\), field 'PROMPT': is empty"),
        ({"TRAJECTORY": "[{broken"}, None, r"field 'TRAJECTORY': not a JSON list of chat messages"),
    ],
)
def test_malformed_csv_is_refused_with_file_row_and_field(
    tmp_path: Path, row: dict[str, str] | None, header: list[str] | None, message: str
) -> None:
    rows = [] if row is None else [_row(**row)]
    path = _write_csv(tmp_path / "t.csv", rows, header)
    with pytest.raises(ImportFormatError, match=message):
        read_mcp_atlas(path)


def test_duplicate_task_ids_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ImportFormatError, match=r"row 2 .*'5c6d7e8f9a' is already used by .*row 1"):
        read_mcp_atlas(_write_csv(tmp_path / "t.csv", [_row(), _row()]))


def test_json_rows_bad_json_and_missing_columns(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[{"TASK": "a",]')
    with pytest.raises(ImportFormatError, match=r"bad\.json: line 1, column \d+: not valid JSON"):
        read_mcp_atlas(bad)
    missing = tmp_path / "rows.json"
    missing.write_text(json.dumps([{"TASK": "a", "PROMPT": "p"}]))
    with pytest.raises(ImportFormatError, match=r"rows\.json: row 1: lacks column GTFA_CLAIMS"):
        read_mcp_atlas(missing)
    claims_text = tmp_path / "text.json"
    claims_text.write_text(json.dumps([{"TASK": "a", "PROMPT": "p", "GTFA_CLAIMS": {"a": 1}}]))
    with pytest.raises(ImportFormatError, match=r"field 'GTFA_CLAIMS': expected a list of claims, got dict"):
        read_mcp_atlas(claims_text)
    other = tmp_path / "t.xlsx"
    other.write_text("")
    with pytest.raises(ImportFormatError, match=r"unsupported file type \.xlsx"):
        read_mcp_atlas(other)


@pytest.mark.skipif(importlib.util.find_spec("pyarrow") is not None, reason="pyarrow is installed here")
def test_parquet_without_pyarrow_says_how_to_fix(tmp_path: Path) -> None:
    path = tmp_path / "MCP-Atlas.parquet"
    path.write_bytes(b"PAR1")
    with pytest.raises(
        ImportFormatError, match=r"MCP-Atlas\.parquet: reading Parquet needs pyarrow.*pip install pyarrow"
    ):
        read_mcp_atlas(path)


def test_parquet_with_pyarrow(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    row = _row()
    table = pa.table(
        {
            "TASK": [row["TASK"]],
            "PROMPT": [row["PROMPT"]],
            "ENABLED_TOOLS": [json.loads(row["ENABLED_TOOLS"])],
            "TRAJECTORY": [row["TRAJECTORY"]],
            "GTFA_CLAIMS": [["claim one", "claim two"]],
        }
    )
    pq.write_table(table, tmp_path / "a.parquet")
    (scenario,) = read_mcp_atlas(tmp_path / "a.parquet").scenarios
    assert scenario["claims"] == ["claim one", "claim two"]
