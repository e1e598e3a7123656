"""OTLP/JSON traces: a trace per trial, GenAI and MCP attributes, parsed back by opentelemetry-proto."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from proctor.app.cli import main
from proctor.engine.reports.otel_export import from_otlp_json
from tests.app.fixture_store import Fixture, build


def _attrs(span: Span) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in span.attributes:
        kind = kv.value.WhichOneof("value")
        value = getattr(kv.value, kind)
        out[kv.key] = [v.string_value for v in value.values] if kind == "array_value" else value
    return out


@pytest.fixture
async def fx(tmp_path: Path) -> Fixture:
    return await build(tmp_path)


def test_each_started_trial_is_one_trace_that_parses_back(
    fx: Fixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FIXTURE_TOKEN", "pwned-title")  # a secret-named variable's value is redacted
    out = tmp_path / "traces.jsonl"
    assert main(["export", str(fx.db), "--format", "otel", "-o", str(out)]) == 0
    assert "traces" in capsys.readouterr().err
    lines = out.read_text().splitlines()
    assert "pwned-title" not in out.read_text()
    requests = [from_otlp_json(json.loads(line)) for line in lines]
    roots: dict[int, Span] = {}
    children: dict[int, list[Span]] = {}
    for request in requests:
        (resource,) = request.resource_spans
        (scope,) = resource.scope_spans
        root, *rest = scope.spans
        trial = _attrs(root)["proctor.trial.id"]
        roots[trial], children[trial] = root, rest
        assert all(s.trace_id == root.trace_id and s.parent_span_id == root.span_id for s in rest)
        raw = json.loads(lines[len(roots) - 1])["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
        assert len(raw["traceId"]) == 32 and len(raw["spanId"]) == 16  # OTLP/JSON: hex ids
    assert len({r.trace_id for r in roots.values()}) == len(roots) >= 4
    assert fx.queued not in roots  # a trial that never started has no trace

    root = roots[fx.passed_mcp]
    attrs = _attrs(root)
    assert root.name == "invoke_agent mcp-good" and attrs["gen_ai.operation.name"] == "invoke_agent"
    assert attrs["gen_ai.provider.name"] == "offline" and attrs["gen_ai.request.model"] == "default"
    assert root.status.code == Status.STATUS_CODE_OK
    evaluations = {
        {kv.key: kv.value for kv in e.attributes}["gen_ai.evaluation.name"].string_value
        for e in root.events
        if e.name == "gen_ai.evaluation.result"
    }
    assert "grounding" in evaluations
    tools = [s for s in children[fx.passed_mcp] if s.name.startswith("execute_tool")]
    assert tools and tools[0].name == "execute_tool grep"
    tool = _attrs(tools[0])
    assert tool["mcp.method.name"] == "tools/call" and tool["gen_ai.tool.name"] == "grep"
    assert json.loads(tool["gen_ai.tool.call.arguments"]) == {"pattern": "Job"}
    chats = [s for s in children[fx.passed_mcp] if s.name.startswith("chat ")]
    assert chats and _attrs(chats[0])["gen_ai.operation.name"] == "chat"
    assert chats[0].kind == Span.SPAN_KIND_CLIENT
    assert _attrs(chats[0])["gen_ai.response.finish_reasons"]
    assert roots[fx.errored].status.code == Status.STATUS_CODE_ERROR


def test_exporting_twice_gives_the_same_traces(fx: Fixture, tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert main(["export", str(fx.db), "--format", "otel", "-o", str(a)]) == 0
    assert main(["export", str(fx.db), "--format", "otel", "-o", str(b)]) == 0
    assert a.read_bytes() == b.read_bytes()
