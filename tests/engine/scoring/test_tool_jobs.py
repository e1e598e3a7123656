"""A tool's job (search, read, or neither), for agent harnesses' own tools and real MCP servers'."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from proctor.engine.scoring.tool_jobs import tool_job, words_of

REFERENCE = Path(__file__).parents[1] / "fixtures" / "reference_tools"


@pytest.mark.parametrize(
    ("name", "job"),
    [
        # Claude Code's tools (the first source's fallbacks: Grep, Glob, Read of a source file)
        ("Read", "read"),
        ("Grep", "search"),
        ("Glob", "search"),
        ("LS", None),
        ("TodoRead", None),
        ("WebSearch", None),
        ("Task", None),
        ("ToolSearch", None),
        # opencode, Gemini CLI, proctor's baseline toolbox
        ("read", "read"),
        ("search_file_content", "search"),
        ("read_many_files", "read"),
        ("list_files", None),
        ("read_file", "read"),
        ("grep", "search"),
        # function tools named as their authors like
        ("search_code", "search"),
        ("read_source", "read"),
        ("count_lines", None),
        ("findSymbol", "search"),
        ("getFileContents", "read"),
        ("web_fetch_page", None),
    ],
)
def test_harness_and_function_tools_by_name(name: str, job: str | None) -> None:
    assert tool_job(name) == job


@pytest.mark.parametrize(
    ("command", "job"),
    [
        ("grep -rn 'def handle' src/", "search"),
        ("cd repo && rg -n retry_delay", "search"),
        ("git grep -n backoff", "search"),
        ("find . -name '*.py' | head -20", "search"),  # a search, even piped into head
        ("cat src/app.py", "read"),
        ("sed -n '40,80p' tinyq/retry.py", "read"),
        ("FOO=1 head -50 README.md", "read"),
        ("python -m pytest -q", None),
        ("sed -i s/a/b/ x.py", None),
        ("ls -la", None),
        ("echo 'grep is a word here'", None),
    ],
)
def test_a_shell_call_does_the_job_of_the_programs_it_runs(command: str, job: str | None) -> None:
    assert tool_job("Bash", arguments={"command": command}) == job


def test_codex_shell_commands_come_as_an_argument_list() -> None:
    assert tool_job("shell", arguments={"command": ["bash", "-lc", "rg -n greet"]}) == "search"
    assert tool_job("shell", arguments={"command": ["cat", "a.py"]}) == "read"
    assert tool_job("run_shell_command", arguments={"command": "grep -r x ."}) == "search"


def _reference(server: str) -> list[dict[str, Any]]:
    (path,) = REFERENCE.glob(f"{server}-*.json")
    tools: list[dict[str, Any]] = json.loads(path.read_text())["tools"]
    return tools


def _jobs(server: str) -> dict[str, str]:
    jobs = {
        t["name"]: tool_job(t["name"], description=t.get("description", ""), annotations=t.get("annotations"))
        for t in _reference(server)
    }
    return {name: job for name, job in jobs.items() if job is not None}


def test_real_servers_tools_by_their_definitions() -> None:
    assert _jobs("filesystem") == {
        "read_file": "read",
        "read_text_file": "read",
        "read_media_file": "read",
        "read_multiple_files": "read",
        "search_files": "search",
    }  # not get_file_info (metadata), list_directory, directory_tree, nor the writers
    assert _jobs("memory") == {"search_nodes": "search"}  # read_graph reads no file
    assert _jobs("git") == {} and _jobs("time") == {} and _jobs("everything") == {}


def test_a_tool_that_changes_state_does_neither_job_whatever_its_name() -> None:
    assert tool_job("search_and_replace", annotations={"destructiveHint": True}) is None
    assert tool_job("read_file", annotations={"readOnlyHint": False}) is None
    assert tool_job("read_file", annotations={"readOnlyHint": True}) == "read"


def test_the_description_decides_when_the_name_does_not() -> None:
    assert tool_job("sense_graph", description="Search the symbol graph for callers.") == "search"
    assert tool_job("fetch_it", description="Reads a file of the project, with line numbers.") == "read"
    assert tool_job("fetch_it", description="Reads the weather for a city.") is None


def test_words_of_names_in_every_case() -> None:
    assert (
        words_of("search_files") == words_of("searchFiles") == words_of("search-files") == ["search", "files"]
    )
