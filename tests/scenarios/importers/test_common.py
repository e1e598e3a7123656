"""Shared import machinery: list cells, key points, complexity, and the all-or-nothing write."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.scenarios.importers.chat_turns import openai_messages_to_turns
from proctor.scenarios.importers.common import (
    ImportFormatError,
    complexity_of,
    key_points_from_steps,
    parse_list_text,
    scenario_id,
    split_prefixed,
    str_list,
)
from proctor.scenarios.importers.suite_files import staged_dir


def test_list_cells_accept_json_and_python_literals_but_never_evaluate() -> None:
    assert parse_list_text('["a", "b"]') == ["a", "b"]
    assert parse_list_text("['The avg is $6,446.20.', 'It\\'s 340.40']") == [
        "The avg is $6,446.20.",
        "It's 340.40",
    ]
    with pytest.raises(ValueError):
        parse_list_text("[__import__('os').system('false')]")
    with pytest.raises(ValueError):
        parse_list_text("a claim, not a list")


def test_str_list_errors_say_where_and_how_to_fix() -> None:
    with pytest.raises(
        ImportFormatError, match=r"f.csv: row 3, field 'X': expected a list of claims.*JSON list"
    ):
        str_list("one claim", "f.csv: row 3, field 'X'", "claims", '["a"]')
    with pytest.raises(ImportFormatError, match=r"field 'X'\[1\]: expected a string, got int"):
        str_list(["a", 2], "field 'X'", "claims", '["a"]')
    with pytest.raises(ImportFormatError, match="got dict"):
        str_list({"a": 1}, "field 'X'", "claims", '["a"]')
    assert str_list(["  a ", "", "b"], "w", "claims", "[]") == ["a", "b"]


def test_key_points_drop_numbering_and_blank_lines() -> None:
    steps = "1. get bbc news today\n\n2) filter the content\n- tell the user\n10: done"
    assert key_points_from_steps(steps) == [
        "get bbc news today",
        "filter the content",
        "tell the user",
        "done",
    ]


@pytest.mark.parametrize(
    ("shape", "expected"),
    [([[1]], "single"), ([[1, 2]], "dual-parallel"), ([[1], [2]], "dual-serial"), ([[1], [2, 3]], "multi")],
)
def test_complexity_follows_the_solution_shape(shape: list[list[int]], expected: str) -> None:
    assert complexity_of(shape) == expected


def test_ids_and_prefixed_tool_names() -> None:
    assert scenario_id("task 12/a?") == "task-12-a"
    assert scenario_id("///") == "task"
    assert split_prefixed("cli-mcp-server_run_command") == ("cli-mcp-server", "run_command")
    assert split_prefixed("calculate") == ("", "calculate")


def test_messages_become_turns_with_parallel_calls_and_results() -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": "two at once",
            "tool_calls": [
                {"id": "a", "function": {"name": "s_one", "arguments": '{"x": 1}'}},
                {"id": "b", "function": {"name": "s_two", "arguments": "{not json"}},
            ],
        },
        {"role": "tool", "tool_call_id": "b", "content": [{"type": "text", "text": "B"}]},
        {"role": "tool", "tool_call_id": "a", "content": "A"},
        {"role": "assistant", "content": "done"},
    ]
    turns = openai_messages_to_turns(messages, "w", lambda n, a: (*split_prefixed(n), a))
    assert [t.text for t in turns] == ["two at once", "done"]
    assert [(c.server, c.tool, c.arguments) for c in turns[0].calls] == [
        ("s", "one", {"x": 1}),
        ("s", "two", {"_unparsed": "{not json"}),
    ]
    assert [(r.call_id, r.tool, r.content) for r in turns[0].results] == [
        ("b", "two", "B"),
        ("a", "one", "A"),
    ]
    with pytest.raises(ImportFormatError, match=r"w\[0\], field 'role': 'robot'"):
        openai_messages_to_turns([{"role": "robot"}], "w", lambda n, a: ("", n, a))


def test_staged_dir_leaves_nothing_when_the_body_fails(tmp_path: Path) -> None:
    out = tmp_path / "suite"
    with pytest.raises(RuntimeError), staged_dir(out) as stage:
        (stage / "suite.yaml").write_text("half")
        raise RuntimeError("boom")
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_staged_dir_moves_into_place_and_replaces_only_earlier_suites(tmp_path: Path) -> None:
    out = tmp_path / "suite"
    with staged_dir(out) as stage:
        (stage / "suite.yaml").write_text("one")
    assert (out / "suite.yaml").read_text() == "one"
    with pytest.raises(ImportFormatError, match="--force"), staged_dir(out):
        pass
    with staged_dir(out, force=True) as stage:
        (stage / "suite.yaml").write_text("two")
    assert (out / "suite.yaml").read_text() == "two"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["suite"]
    other = tmp_path / "home"
    other.mkdir()
    (other / "notes.txt").write_text("keep me")
    with pytest.raises(ImportFormatError, match="not a suite folder"), staged_dir(other, force=True):
        pass
    assert (other / "notes.txt").read_text() == "keep me"
