"""Misses: built-in search/read calls made while the arm offered an MCP tool for that job."""

from __future__ import annotations

from typing import Any

from proctor.engine.scoring.misses import count_misses
from proctor.engine.scoring.trial_digest import ToolCallRecord
from proctor.store.events import ListedTool


def _call(tool: str, server: str = "builtin", builtin: bool = True, **arguments: Any) -> ToolCallRecord:
    return ToolCallRecord(
        call_id=tool, server=server, tool=tool, arguments=arguments, step=0, has_result=True, builtin=builtin
    )


def _listed(name: str, server: str = "fs", builtin: bool = False, **kw: Any) -> ListedTool:
    return ListedTool(name=name, server=server, description="", input_schema={}, builtin=builtin, **kw)


HARNESS = [
    _listed("Read", "builtin", True),
    _listed("Grep", "builtin", True),
    _listed("Bash", "builtin", True),
]


def test_a_built_in_search_or_read_beside_an_mcp_tool_for_that_job_is_a_miss() -> None:
    listed = [*HARNESS, _listed("search_files"), _listed("read_text_file")]
    calls = [
        _call("Grep", pattern="retry"),
        _call("read_text_file", server="fs", builtin=False, path="a.py"),
        _call("Read", file_path="a.py"),
        _call("Bash", command="rg -n backoff"),
        _call("Bash", command="python -m pytest"),
    ]
    m = count_misses(calls, listed, arm_servers=["fs"])
    assert m.count == 3
    assert m.missed == ("Grep (search)", "Read (read)", "Bash (search)")
    assert m.offered == {"search": ("search_files",), "read": ("read_text_file",)}


def test_no_miss_where_the_arm_offers_no_mcp_tool_for_the_job() -> None:
    listed = [*HARNESS, _listed("read_text_file"), _listed("write_file", annotations={"readOnlyHint": False})]
    calls = [_call("Grep", pattern="x"), _call("Read", file_path="a.py")]
    m = count_misses(calls, listed, arm_servers=["fs"])
    assert (m.count, m.missed) == (1, ("Read (read)",))  # no MCP search tool: the Grep missed nothing


def test_only_the_arms_own_servers_offer_a_job() -> None:
    listed = [*HARNESS, _listed("search_docs", server="distractor")]
    assert count_misses([_call("Grep")], listed, arm_servers=["fs"]).count == 0
    assert count_misses([_call("Grep")], listed, arm_servers=[]).count == 1


def test_mcp_calls_count_as_offered_when_no_tool_list_was_recorded() -> None:
    calls = [_call("search_code"), _call("read_text_file", server="fs", builtin=False), _call("read_source")]
    m = count_misses(calls, None, arm_servers=["fs"])
    assert (m.count, m.missed) == (1, ("read_source (read)",))
    assert (
        count_misses([_call("read_source")], None, arm_servers=["fs"]).count is None
    )  # nothing known offered


def test_a_built_in_tool_is_read_by_its_own_description_when_its_name_says_nothing() -> None:
    own = _listed("lookup", "builtin", True)
    listed = [
        own.model_copy(update={"description": "Search the project's files for a text."}),
        _listed("search_files"),
    ]
    assert count_misses([_call("lookup")], listed, arm_servers=["fs"]).missed == ("lookup (search)",)
