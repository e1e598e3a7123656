"""The offline agent drives general-purpose MCP servers: one call per requested action, in order."""

from __future__ import annotations

import json
from typing import Any

from proctor.engine.providers.offline.agent import OfflineProvider
from proctor.engine.providers.prices import PriceTable
from proctor.engine.runs.agent_loop import run_agent
from proctor.engine.tools.retrieval import RetrievalToolbox
from proctor.engine.tools.toolbox import Toolbox
from proctor.scenarios.schema import Limits
from proctor.store.events import Event, ToolCall
from tests.engine.reference_tools import ReferenceToolbox

ROOT = "/srv/checkout"
FILES = {"committed.txt": "hello from committed\n", "src/app.py": "print('hi')\n", ".git/HEAD": "ref\n"}


async def _run(
    toolbox: Toolbox, *prompts: str, seed: int = 1
) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    events: list[Event] = []
    result = await run_agent(
        model_id="offline:default",
        session=OfflineProvider().session(seed),
        toolbox=toolbox,
        prompts=list(prompts),
        limits=Limits(),
        prices=PriceTable(),
        emit=events.append,
    )
    return result.final_answer, [(e.tool, e.arguments) for e in events if isinstance(e, ToolCall)]


async def test_it_asks_where_it_may_look_then_lists_and_reads_and_cites_the_file() -> None:
    box = ReferenceToolbox(ROOT, FILES, "filesystem")
    answer, calls = await _run(box, "list the files in the repository and read committed.txt")
    assert calls == [
        ("list_allowed_directories", {}),
        ("list_directory", {"path": ROOT}),
        ("read_text_file", {"path": f"{ROOT}/committed.txt"}),
    ]
    assert "[FILE] committed.txt" in answer
    assert "`committed.txt:1`: `hello from committed`" in answer
    assert box.invalid == []


async def test_a_later_call_takes_the_file_an_earlier_listing_showed() -> None:
    box = ReferenceToolbox(ROOT, FILES, "filesystem")
    _, calls = await _run(box, "list the files in the repository, then read the first file")
    assert calls[-1] == ("read_text_file", {"path": f"{ROOT}/committed.txt"})  # not .git/HEAD


async def test_without_a_discovery_tool_it_learns_the_root_from_the_refusal() -> None:
    box = ReferenceToolbox(ROOT, FILES, "git")
    answer, calls = await _run(box, "show the git log of the repository")
    assert calls == [("git_log", {"repo_path": "."}), ("git_log", {"repo_path": ROOT})]
    assert "outside the allowed repository" in answer and "Message: initial commit" in answer
    assert box.invalid == []


async def test_a_root_one_server_reveals_serves_the_others() -> None:
    box = ReferenceToolbox(ROOT, FILES, "filesystem", "git")
    _, calls = await _run(box, "show the git log of the repository")
    assert calls == [("list_allowed_directories", {}), ("git_log", {"repo_path": ROOT})]


async def test_knowledge_graph_requests_over_two_steps() -> None:
    box = ReferenceToolbox(ROOT, FILES, "memory")
    answer, calls = await _run(
        box,
        "create entities named Alice and Bob of type person",
        "create a relation from Alice to Bob of type knows, then read the knowledge graph",
    )
    assert [name for name, _ in calls] == ["create_entities", "create_relations", "read_graph"]
    assert calls[0][1]["entities"][1] == {"name": "Bob", "entityType": "person", "observations": []}
    assert calls[1][1] == {"relations": [{"from": "Alice", "to": "Bob", "relationType": "knows"}]}
    assert '"relationType": "knows"' in answer
    assert box.invalid == []


async def test_everything_server_echo_and_sum() -> None:
    box = ReferenceToolbox(ROOT, FILES, "everything")
    answer, calls = await _run(box, "echo hello")
    assert calls == [("echo", {"message": "hello"})] and "Echo: hello" in answer
    answer, calls = await _run(box, "get the sum of 2 and 3")
    assert calls == [("get-sum", {"a": 2, "b": 3})] and "is 5" in answer


async def test_a_request_no_tool_serves_is_reported_not_guessed() -> None:
    box = ReferenceToolbox(ROOT, FILES, "memory", "everything")
    answer, calls = await _run(box, "echo hello and show the git log")
    assert calls == [("echo", {"message": "hello"})]
    assert "I did not show the git log: none of the tools does that." in answer


async def test_through_tool_retrieval_it_routes_then_executes() -> None:
    box = RetrievalToolbox(ReferenceToolbox(ROOT, FILES), top_k=6)
    _, calls = await _run(box, "echo hello")
    assert calls[0][0] == "route"
    assert calls[1] == ("execute", {"tool": "echo", "arguments": {"message": "hello"}})


async def test_the_same_seed_gives_the_same_calls_and_answer() -> None:
    prompt = "list the files in the repository and read committed.txt"
    runs = [await _run(ReferenceToolbox(ROOT, FILES), prompt, seed=7) for _ in range(2)]
    assert runs[0] == runs[1]
    assert json.dumps(runs[0][1]).count("read_text_file") == 1
