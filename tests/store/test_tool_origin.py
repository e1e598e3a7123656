"""The built-in marker: one predicate over events, their Structs and their payloads; the marker
decides, never the server's name; events written before it read as they always did."""

from __future__ import annotations

import json

import pytest

from proctor.store.event_structs import decode_report_event
from proctor.store.events import ListedTool, ToolCall, ToolResult, ToolsListed, parse_event
from proctor.store.tool_origin import is_builtin


def _call(server: str = "builtin", builtin: bool | None = None) -> ToolCall:
    return ToolCall(call_id="c1", server=server, tool="grep", arguments={}, builtin=builtin)


@pytest.mark.parametrize(
    ("server", "builtin", "expected"),
    [
        ("builtin", False, False),  # a user's MCP server named "builtin"
        ("fs", True, True),  # an agent's own tool, whatever label it carries
        ("builtin", None, True),  # written before the marker: the baseline's, as it always read
        ("proctor-router", None, True),  # the router's route, before the marker
        ("fs", None, False),
        ("", None, False),
    ],
)
def test_the_marker_decides_and_an_unmarked_event_reads_as_before(
    server: str, builtin: bool | None, expected: bool
) -> None:
    call = _call(server=server, builtin=builtin)
    payload = call.model_dump_json()
    assert is_builtin(call) is expected
    assert is_builtin(parse_event(payload)) is expected  # type: ignore[arg-type]
    assert is_builtin(json.loads(payload)) is expected
    struct = decode_report_event("json", payload.encode())
    assert struct is not None and is_builtin(struct) is expected  # type: ignore[arg-type]


def test_an_event_without_the_marker_is_stored_as_before() -> None:
    # Old databases hold payloads without the key; new unmarked events (there are none from the
    # producers) would not add it either, so they read the same.
    old = '{"kind":"tool_call","call_id":"c1","server":"builtin","tool":"grep","arguments":{}}'
    assert parse_event(old).model_dump_json() == old
    assert '"builtin":false' in _call(builtin=False).model_dump_json()


def test_results_and_listed_tools_carry_the_marker_too() -> None:
    result = ToolResult(
        call_id="c1", server="builtin", tool="grep", content="", is_error=False, latency_s=0.0, builtin=False
    )
    listed = ToolsListed(
        tools=[ListedTool(name="grep", server="builtin", description="", input_schema={}, builtin=False)]
    )
    assert not is_builtin(parse_event(result.model_dump_json()))  # type: ignore[arg-type]
    back = parse_event(listed.model_dump_json())
    assert isinstance(back, ToolsListed) and not is_builtin(back.tools[0])
    struct = decode_report_event("json", listed.model_dump_json().encode())
    assert struct is not None and not is_builtin(struct.tools[0])  # type: ignore[union-attr]
