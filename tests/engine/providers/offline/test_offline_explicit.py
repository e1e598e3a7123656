"""The offline agent calls the tool a prompt names, with the arguments the prompt gives.

Run on the reference servers' real tool definitions (fixtures/reference_tools/, the time
server's from ``dump_tools.py``): before, these prompts made no call at all on the filesystem,
git and time servers, and ``gzip-file-as-resource`` on the everything server.
"""

from __future__ import annotations

from typing import Any

import pytest

from proctor.engine.providers.base import ToolOutcome, ToolResults, UserMessage
from proctor.engine.providers.offline.act import fill_request
from proctor.engine.providers.offline.agent import OfflineProvider
from proctor.engine.providers.offline.explicit import bound_arguments, explicit_requests
from proctor.engine.providers.offline.fill import Context
from proctor.engine.tools.toolbox import ToolSpec
from tests.engine.reference_tools import reference_tools, schema_errors

ROOT = "/srv/checkout"
ALL = ("filesystem", "git", "memory", "everything", "time")


def planned(task: str, tools: list[ToolSpec]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for request in explicit_requests(task, tools):
        (tool,) = request.candidates
        args = fill_request(tool, request, Context(root=ROOT))
        assert args is not None, (tool.name, request)
        assert schema_errors(tool, args) == [], (tool.name, args)
        out.append((tool.name, args))
    return out


@pytest.mark.parametrize("scope", ["alone", "all five"])
@pytest.mark.parametrize(
    ("server", "task", "expected"),
    [
        (
            "filesystem",
            "Use read_text_file to read inventory/stock.py",
            [("read_text_file", {"path": f"{ROOT}/inventory/stock.py"})],
        ),
        (
            "filesystem",
            'Use search_files with pattern "*.py"',
            [("search_files", {"path": ROOT, "pattern": "*.py"})],
        ),
        ("everything", "Use the echo tool with message hello", [("echo", {"message": "hello"})]),
        ("everything", "Use get-sum with a=2 and b=3", [("get-sum", {"a": 2, "b": 3})]),
        # spaced as proctor init writes it: "with NAME = VALUE" is the value, not "="
        ("everything", "Use get-sum with a = 2, b = 3.", [("get-sum", {"a": 2, "b": 3})]),
        ("everything", "Use the echo tool with message = 'hi there'", [("echo", {"message": "hi there"})]),
        (
            "git",
            "Call git_show with revision : HEAD~1",
            [("git_show", {"repo_path": ROOT, "revision": "HEAD~1"})],
        ),
        # what follows the name wins over the same property named before it
        (
            "everything",
            "The message: unknown yet. Use the echo tool with message = 'hi'",
            [("echo", {"message": "hi"})],
        ),
        # an array of objects written out, as JSON and as the Python literal proctor init writes
        (
            "memory",
            'Use create_entities with entities = [{"name": "Ada [x]", "entityType": "person", "observations": []}]',
            [
                (
                    "create_entities",
                    {"entities": [{"name": "Ada [x]", "entityType": "person", "observations": []}]},
                )
            ],
        ),
        (
            "memory",
            "Use create_entities with entities = [{'name': \"O'Neil\", 'entityType': 'person', 'observations': ['a}']}].",
            [
                (
                    "create_entities",
                    {"entities": [{"name": "O'Neil", "entityType": "person", "observations": ["a}"]}]},
                )
            ],
        ),
        (
            "time",
            "call get_current_time for Europe/Paris",
            [("get_current_time", {"timezone": "Europe/Paris"})],
        ),
        (
            "time",
            "Use convert_time to convert 14:30 from Europe/Paris to Asia/Tokyo",
            [
                (
                    "convert_time",
                    {"source_timezone": "Europe/Paris", "time": "14:30", "target_timezone": "Asia/Tokyo"},
                )
            ],
        ),
        ("git", "Use git_log to show the last commits", [("git_log", {"repo_path": ROOT})]),
        (
            "git",
            "Call git_show with revision HEAD~1",
            [("git_show", {"repo_path": ROOT, "revision": "HEAD~1"})],
        ),
        (
            "memory",
            "Use create_entities to create an entity named Alice of type person",
            [
                (
                    "create_entities",
                    {"entities": [{"name": "Alice", "entityType": "person", "observations": []}]},
                )
            ],
        ),
    ],
)
def test_a_named_tool_is_called_with_the_values_the_prompt_gives(
    scope: str, server: str, task: str, expected: list[tuple[str, dict[str, Any]]]
) -> None:
    tools = reference_tools(server) if scope == "alone" else reference_tools(*ALL)
    assert planned(task, tools) == expected


def test_several_named_tools_are_called_in_prompt_order() -> None:
    task = "Use `list_directory` on inventory/ and then call read_text_file with path inventory/stock.py"
    assert planned(task, reference_tools("filesystem")) == [
        ("list_directory", {"path": f"{ROOT}/inventory"}),
        ("read_text_file", {"path": f"{ROOT}/inventory/stock.py"}),
    ]


@pytest.mark.parametrize(
    "task",
    [
        "What does read_text_file return for a binary file?",  # a name without a cue is a topic
        "Read the file inventory/stock.py",  # no tool named: the general planner's job
        "Use the echo server to say hi",  # "echo" is a tool, "echo server" is not a tool named
    ],
)
def test_only_a_cued_tool_name_is_an_instruction(task: str) -> None:
    assert explicit_requests(task, reference_tools(*ALL)) == []


async def test_the_agent_follows_the_instruction_where_it_used_to_pick_another_tool() -> None:
    tools = reference_tools("everything")
    session = OfflineProvider().session(0)
    messages: list = [UserMessage("Use the echo tool with message hello")]
    turn = await session.turn("", messages, tools)
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [("echo", {"message": "hello"})]
    messages.append(ToolResults([ToolOutcome(turn.tool_calls[0].call_id, "echo", "Echo: hello")]))
    last = await session.turn("", messages, tools)
    assert last.tool_calls == [] and "Echo: hello" in last.text


@pytest.mark.parametrize(
    "written",
    [
        "(1, 2)",  # a tuple: not JSON
        "[{'name': b'x'}]",  # bytes
        "[{'name': 'x'}",  # never closed
        "[__import__('os')]",  # not a literal: never evaluated
        "[" * 30_000,
        "[" * 5_000 + "]" * 5_000,  # too deep for either parser
    ],
)
def test_a_written_out_value_that_is_not_plain_json_is_not_bound(written: str) -> None:
    (tool,) = [t for t in reference_tools("memory") if t.name == "create_entities"]
    assert "entities" not in bound_arguments(f"Use create_entities with entities = {written}", tool)


async def test_an_absolute_path_given_by_name_needs_no_root_so_none_is_asked_for() -> None:
    tools = reference_tools("filesystem")
    given = [UserMessage("Use read_text_file with path = '/srv/files/notes.txt'")]
    turn = await OfflineProvider().session(0).turn("", given, tools)
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [
        ("read_text_file", {"path": "/srv/files/notes.txt"})
    ]
    relative = [UserMessage("Use read_text_file with path = 'notes.txt'")]  # where is it? ask first
    turn = await OfflineProvider().session(0).turn("", relative, tools)
    assert [c.name for c in turn.tool_calls] == ["list_allowed_directories"]

    # errorPath is a boolean, but its name says "path": it needs no root either
    url = [UserMessage("Use trigger-url-elicitation with url = 'https://example.com'")]
    turn = await OfflineProvider().session(0).turn("", url, reference_tools("everything"))
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [
        ("trigger-url-elicitation", {"url": "https://example.com"})
    ]
