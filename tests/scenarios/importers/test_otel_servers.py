"""Which imported OpenTelemetry calls were MCP calls: a span's own evidence, then its arm's other
traces, then the suite; never a scope or a server label that proves nothing. (The real traces of
agents with their own tools and an MCP server are in ``test_otel_mixed.py``.)"""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from proctor.scenarios.importers.common import ImportedCall, ImportedTrajectory, ImportedTurn
from proctor.scenarios.importers.otel_servers import attribute_servers, mcp_scope, span_attribution
from proctor.scenarios.importers.otlp import TraceSpan
from proctor.scenarios.importers.tool_attribution import ToolAttribution


def _span(scope: str = "pydantic-ai", **attrs: Any) -> TraceSpan:
    return TraceSpan(
        Span(name="execute_tool x"), {k.replace("__", "."): v for k, v in attrs.items()}, "t", scope=scope
    )


@pytest.mark.parametrize(
    ("scope", "mcp"),
    [
        ("mcp-python-sdk", True),
        ("fastmcp", True),
        ("opentelemetry.instrumentation.mcp.instrumentation", True),  # OpenLLMetry's
        ("openinference.instrumentation.mcp", True),
        ("my-mcp-agent", False),  # a tracer the app named itself proves nothing
        ("opentelemetry.instrumentation.mcpx", False),
        ("pydantic-ai", False),
    ],
)
def test_only_an_mcp_clients_instrumentation_scope_is_evidence(scope: str, mcp: bool) -> None:
    assert mcp_scope(scope) is mcp
    assert span_attribution(_span(scope), "lookup", False).builtin is (False if mcp else None)


def test_proctors_marker_decides_and_its_server_name_stays_a_label() -> None:
    named_builtin = _span(proctor__tool__builtin=False, proctor__mcp__server="builtin")
    assert span_attribution(named_builtin, "grep", False) == ToolAttribution("builtin", "grep", False)
    own = _span(proctor__tool__builtin=True, proctor__mcp__server="builtin")
    assert span_attribution(own, "grep", True) == ToolAttribution("builtin", "grep", True)  # marker beats all


def test_an_export_made_before_the_marker_is_read_as_that_exporter_wrote_it() -> None:
    # It left mcp.method.name out of every built-in call: the baseline's and tool retrieval's route.
    route = _span(proctor__mcp__server="proctor-router")
    assert span_attribution(route, "route", False) == ToolAttribution("proctor-router", "route", True)
    served = _span(proctor__mcp__server="fs", mcp__method__name="tools/call")
    assert span_attribution(served, "read_text_file", False) == ToolAttribution("fs", "read_text_file", False)


def test_a_span_with_an_mcp_call_inside_or_a_server_named_is_an_mcp_call() -> None:
    assert span_attribution(_span(), "read_text_file", True).builtin is False
    assert span_attribution(_span(mcp__server__name="fs"), "x", False) == ToolAttribution("fs", "x", False)
    assert span_attribution(_span(), "mcp__fs__x", False) == ToolAttribution("fs", "x", False)
    assert span_attribution(_span(), "search_code", False).builtin is None  # left to the file and suite


def _trial(arm: str, *calls: ImportedCall) -> ImportedTrajectory:
    return ImportedTrajectory("s", arm, "m", 1, (ImportedTurn("", calls),), "answer")


def _marks(trials: list[ImportedTrajectory]) -> dict[str, list[tuple[str, str, bool | None]]]:
    out: dict[str, list[tuple[str, str, bool | None]]] = {}
    for t in trials:
        out.setdefault(t.arm, []).extend(
            (c.server, c.tool, c.builtin) for turn in t.turns for c in turn.calls
        )
    return out


def test_another_arms_mcp_tool_of_the_same_name_does_not_make_an_arms_own_function_mcp() -> None:
    fs = _trial("fs_agent", ImportedCall("1", "", "search_files", {}, False))
    base = _trial("baseline", ImportedCall("2", "", "search_files", {}))
    again = _trial("fs_agent", ImportedCall("3", "", "search_files", {}))
    got, notes = attribute_servers([fs, base, again], {"fs_agent": ["fs"]})
    marks = _marks(got)
    assert marks["baseline"] == [("", "search_files", True)]
    assert marks["fs_agent"] == [
        ("fs", "search_files", False),
        ("fs", "search_files", False),
    ]  # its own arm's
    assert any("1 tool call(s) (search_files) show no sign of an MCP server" in n for n in notes)


def test_a_tool_the_suites_arm_lists_is_an_mcp_call_and_goes_to_the_server_listing_it() -> None:
    t = _trial("two", ImportedCall("1", "", "search_files", {}), ImportedCall("2", "", "Read", {}))
    got, notes = attribute_servers([t], {"two": ["fs", "git"]}, {"two": {"search_files": frozenset({"fs"})}})
    assert _marks(got)["two"] == [("fs", "search_files", False), ("", "Read", True)]
    assert any("attributed to the one server of their arm that lists the tool" in n for n in notes)
