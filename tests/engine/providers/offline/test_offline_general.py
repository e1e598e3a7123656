"""The offline agent's planner and argument filler on the reference servers' real tool definitions."""

from __future__ import annotations

from typing import Any

import pytest

from proctor.engine.providers.offline.fill import Context, fill_tool
from proctor.engine.providers.offline.intent import action_clauses
from proctor.engine.providers.offline.plan import (
    discovery_tool,
    has_question,
    is_discovery_tool,
    plan_requests,
)
from proctor.engine.providers.offline.results import listed_paths, root_hint, roots_from
from proctor.engine.tools.toolbox import ToolSpec
from tests.engine.reference_tools import SERVERS, reference_tools, schema_errors

ROOT = "/srv/checkout"
CTX = Context(root=ROOT)


def plan(task: str, tools: list[ToolSpec], ctx: Context = CTX) -> list[tuple[str, dict[str, Any]]]:
    """The calls the agent would make: per request, the first candidate it can fill."""
    out = []
    for request in plan_requests(task, tools):
        for tool in request.candidates:
            args = fill_tool(tool, request.clause, ctx)
            if args is not None:
                assert schema_errors(tool, args) == [], (tool.name, args)
                out.append((tool.name, args))
                break
    return out


@pytest.mark.parametrize("scope", ["alone", "all four"])
@pytest.mark.parametrize(
    ("server", "task", "expected"),
    [
        (
            "filesystem",
            "list the files in the repository and read committed.txt",
            [("list_directory", {"path": ROOT}), ("read_text_file", {"path": f"{ROOT}/committed.txt"})],
        ),
        ("git", "show the git log of the repository", [("git_log", {"repo_path": ROOT})]),
        (
            "memory",
            "create an entity named Alice of type person in the knowledge graph",
            [
                (
                    "create_entities",
                    {"entities": [{"name": "Alice", "entityType": "person", "observations": []}]},
                )
            ],
        ),
        ("everything", "echo hello", [("echo", {"message": "hello"})]),
    ],
)
def test_the_example_prompts_call_the_right_tools_with_values_from_the_prompt(
    scope: str, server: str, task: str, expected: list[tuple[str, dict[str, Any]]]
) -> None:
    tools = reference_tools(server) if scope == "alone" else reference_tools()
    assert plan(task, tools) == expected


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        ("get the sum of 2 and 3", [("get-sum", {"a": 2, "b": 3})]),
        (
            "Please get the sum of 2 and 3, then echo 'all done'",
            [("get-sum", {"a": 2, "b": 3}), ("echo", {"message": "all done"})],
        ),
        (
            "create entities named Alice and Bob of type person",
            [
                (
                    "create_entities",
                    {
                        "entities": [
                            {"name": "Alice", "entityType": "person", "observations": []},
                            {"name": "Bob", "entityType": "person", "observations": []},
                        ]
                    },
                )
            ],
        ),
        (
            "create a relation from Alice to Bob of type knows",
            [("create_relations", {"relations": [{"from": "Alice", "to": "Bob", "relationType": "knows"}]})],
        ),
        (
            'add the observation "likes tea" to Alice',
            [("add_observations", {"observations": [{"entityName": "Alice", "contents": ["likes tea"]}]})],
        ),
        (
            "create an entity named Ada Lovelace of type person with the observation 'wrote the first program'",
            [
                (
                    "create_entities",
                    {
                        "entities": [
                            {
                                "name": "Ada Lovelace",
                                "entityType": "person",
                                "observations": ["wrote the first program"],
                            }
                        ]
                    },
                )
            ],
        ),
        ("search the knowledge graph for Alice", [("search_nodes", {"query": "Alice"})]),
        ("delete the entities Alice and Bob", [("delete_entities", {"entityNames": ["Alice", "Bob"]})]),
        ("read the whole knowledge graph", [("read_graph", {})]),
        ("open the nodes Alice and Bob", [("open_nodes", {"names": ["Alice", "Bob"]})]),
        (
            "read the first 2 lines of src/app.py",
            [("read_text_file", {"path": f"{ROOT}/src/app.py", "head": 2})],
        ),
        (
            "replace 'hello' with 'goodbye' in committed.txt",
            [
                (
                    "edit_file",
                    {"path": f"{ROOT}/committed.txt", "edits": [{"oldText": "hello", "newText": "goodbye"}]},
                )
            ],
        ),
        ("write 'hi' to notes.txt", [("write_file", {"path": f"{ROOT}/notes.txt", "content": "hi"})]),
        ("create a directory named build", [("create_directory", {"path": f"{ROOT}/build"})]),
        ("find all .txt files in the repository", [("search_files", {"path": ROOT, "pattern": "*.txt"})]),
        ("show the directory tree of the repository", [("directory_tree", {"path": ROOT})]),
        ("show the status of the repository", [("git_status", {"repo_path": ROOT})]),
        ("show commit 54b0866", [("git_show", {"repo_path": ROOT, "revision": "54b0866"})]),
        ("list the remote git branches", [("git_branch", {"repo_path": ROOT, "branch_type": "remote"})]),
        (
            'commit the staged changes with message "fix typo"',
            [("git_commit", {"repo_path": ROOT, "message": "fix typo"})],
        ),
        (
            "create a branch named feature-x",
            [("git_create_branch", {"repo_path": ROOT, "branch_name": "feature-x"})],
        ),
        ("get the structured content for Chicago", [("get-structured-content", {"location": "Chicago"})]),
        ("get an annotated error message", [("get-annotated-message", {"messageType": "error"})]),
        ("get 4 resource links", [("get-resource-links", {"count": 4})]),
        (
            "trigger a long running operation for 3 seconds with 2 steps",
            [("trigger-long-running-operation", {"duration": 3, "steps": 2})],
        ),
        (
            "read the last 5 lines of committed.txt",
            [("read_text_file", {"path": f"{ROOT}/committed.txt", "tail": 5})],
        ),
        (
            "list the files with their sizes, sorted by size",
            [("list_directory_with_sizes", {"path": ROOT, "sortBy": "size"})],
        ),
    ],
)
def test_more_requests_to_the_reference_servers(
    task: str, expected: list[tuple[str, dict[str, Any]]]
) -> None:
    assert plan(task, reference_tools()) == expected


def test_a_read_without_a_file_name_takes_a_file_an_earlier_listing_showed() -> None:
    tools = reference_tools("filesystem")
    ctx = Context(root=ROOT, files=(f"{ROOT}/committed.txt", f"{ROOT}/README.md"))
    assert plan("read the readme file", tools, ctx) == [("read_text_file", {"path": f"{ROOT}/README.md"})]
    assert plan("read the first file", tools, ctx) == [("read_text_file", {"path": f"{ROOT}/committed.txt"})]
    # a file the prompt names is taken where the listing showed it
    nested = Context(root=ROOT, files=(f"{ROOT}/src/app.py",))
    assert plan("read app.py", tools, nested) == [("read_text_file", {"path": f"{ROOT}/src/app.py"})]
    # but nothing is written, moved or deleted unless the prompt names it
    assert plan("write 'x' to the first file", tools, ctx) == []


def test_without_a_known_root_paths_stay_relative_for_the_server_to_resolve_or_refuse() -> None:
    unknown = Context()
    assert plan("show the git log", reference_tools("git"), unknown) == [("git_log", {"repo_path": "."})]
    assert plan("read committed.txt", reference_tools("filesystem"), unknown) == [
        ("read_text_file", {"path": "committed.txt"})
    ]


def test_every_filled_argument_object_is_valid_for_its_schema() -> None:
    tools = reference_tools()
    prompts = [
        "list the files and read committed.txt",
        "show the git log",
        "create an entity named Alice of type person",
        "echo hello",
        "get the sum of 2 and 3.5",
        "delete the entity Alice",
        "move a.txt to b.txt",
        "trigger a long running operation for 3 seconds",
        "get 4 resource links",
        "stage committed.txt and commit with message 'x'",
        "toggle simulated logging",
        "diff the repository against main",
    ]
    checked = 0
    for task in prompts:
        for clause in action_clauses(task):
            for tool in tools:
                args = fill_tool(tool, clause, CTX)
                if args is not None:
                    assert schema_errors(tool, args) == [], (task, tool.name, args)
                    checked += 1
    assert checked > 50


def test_a_tool_whose_required_values_the_prompt_lacks_is_not_called() -> None:
    tools = reference_tools("everything")
    assert plan("get the sum", tools) == []  # a and b have no default: no number, no call
    assert plan("write to the file", reference_tools("filesystem")) == []


def test_questions_and_answer_directives_are_not_requests() -> None:
    tools = reference_tools()
    for task in [
        "Where is compute_backoff defined? Cite file:line for both.",
        "Which places in the repo use it? List each one with file:line.",
        "Point me to the lines.",
    ]:
        assert [r for r in plan_requests(task, tools) if r.candidates] == [], task
    assert has_question("What caps the delay? Cite it.")
    assert not has_question("Can you list the files?")
    assert plan("Can you list the files?", reference_tools("filesystem")) == [
        ("list_directory", {"path": ROOT})
    ]


def test_a_request_no_tool_serves_is_kept_and_unmatched() -> None:
    (request,) = plan_requests("show the git log", reference_tools("memory"))
    assert request.candidates == ()


def test_the_ranking_is_deterministic_and_ignores_deprecated_tools_when_better_ones_exist() -> None:
    tools = reference_tools("filesystem")
    (read,) = plan_requests("read committed.txt", tools)
    assert read.candidates[0].name == "read_text_file"
    assert "read_file" not in [t.name for t in read.candidates]  # deprecated, far behind
    assert plan_requests("read committed.txt", tools) == [read]


def test_discovery_tools_are_found_by_what_they_say() -> None:
    tools = reference_tools()
    found = {t.name for t in tools if is_discovery_tool(t)}
    assert found == {"list_allowed_directories", "get-roots-list"}
    finder = discovery_tool(tools, "filesystem")
    assert finder is not None and finder.name == "list_allowed_directories"
    git_finder = discovery_tool(reference_tools("git"), "git")
    assert git_finder is None


def test_roots_and_listings_are_read_from_the_servers_own_output() -> None:
    assert roots_from("Allowed directories:\n/srv/checkout\n/srv/other") == ["/srv/checkout", "/srv/other"]
    roots = "Current MCP Roots (1 total):\n\n1. checkout\n   URI: file:///srv/check%20out\n"
    assert roots_from(roots) == ["/srv/check out"]
    refusal = (
        "Error executing tool git_log: Repository path '.' is outside the allowed repository '/srv/checkout'"
    )
    assert root_hint(refusal, ["."]) == "/srv/checkout"
    denied = "Access denied - path outside allowed directories: /etc/passwd not in /srv/checkout"
    assert root_hint(denied, ["/etc/passwd"]) == "/srv/checkout"
    assert root_hint("ENOENT: no such file or directory, open '/srv/checkout/x'", ["/srv/checkout/x"]) == ""
    assert listed_paths("[DIR] .git\n[FILE] committed.txt\n[DIR] src", ROOT) == (
        [f"{ROOT}/committed.txt"],
        [f"{ROOT}/.git", f"{ROOT}/src"],
    )
    tree = '[{"name": "a.txt", "type": "file"}, {"name": "src", "type": "directory", "children": [{"name": "b.py", "type": "file"}]}]'
    assert listed_paths(tree, ROOT) == ([f"{ROOT}/a.txt", f"{ROOT}/src/b.py"], [f"{ROOT}/src"])
    assert listed_paths(f"{ROOT}/a.txt\n{ROOT}/src/b.py", ROOT)[0] == [f"{ROOT}/a.txt", f"{ROOT}/src/b.py"]


def test_the_fixtures_hold_the_four_servers() -> None:
    names = {s: {t.name for t in reference_tools(s)} for s in SERVERS}
    assert {"list_allowed_directories", "read_text_file"} <= names["filesystem"]
    assert {"git_log", "git_show"} <= names["git"]
    assert {"create_entities", "read_graph"} <= names["memory"]
    assert {"echo", "get-sum"} <= names["everything"]
