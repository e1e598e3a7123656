"""Whose tool a recorded call was: MCP only where something says so."""

from __future__ import annotations

from proctor.scenarios.importers.tool_attribution import ToolAttribution, attribute_tool_call, split_mcp_name


def test_an_mcp_name_gives_the_server_and_the_tools_own_name() -> None:
    assert attribute_tool_call("mcp__time__get_current_time") == ToolAttribution(
        "time", "get_current_time", False
    )
    assert split_mcp_name("mcp__github__list__repos") == ("github", "list__repos")
    assert split_mcp_name("mcp__only") is None and split_mcp_name("Read") is None


def test_a_named_server_or_an_mcp_span_makes_an_mcp_call() -> None:
    assert attribute_tool_call("lookup", server="fs") == ToolAttribution("fs", "lookup", False)
    assert attribute_tool_call("lookup", mcp=True) == ToolAttribution("", "lookup", False)


def test_a_source_that_marks_a_call_built_in_is_believed() -> None:
    assert attribute_tool_call("mcp__time__now", mcp=False) == ToolAttribution("", "mcp__time__now", True)
    # the server it names is only a label then (proctor's export: the router's route)
    assert attribute_tool_call("route", server="proctor-router", mcp=False) == ToolAttribution(
        "proctor-router", "route", True
    )


def test_nothing_said_is_left_open_or_built_in_as_the_source_asks() -> None:
    assert attribute_tool_call("Read").builtin is None  # OpenTelemetry: another span may tell
    assert attribute_tool_call("Read", otherwise=True).builtin is True  # a Claude Code transcript
    assert attribute_tool_call("mcp__fs__read", otherwise=True).builtin is False
