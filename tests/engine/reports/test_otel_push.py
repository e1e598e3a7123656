"""``export --format otel --endpoint``: a real demo run pushed through the OpenTelemetry OTLP/HTTP
exporter over real HTTP to a local receiver that decodes protobuf with opentelemetry-proto; and
the GenAI messages (prompt, conversation, answer) that trace viewers show as input and output."""

from __future__ import annotations

import json
import socket
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from proctor.app.cli import main
from proctor.engine.reports.otel_export import from_otlp_json, trace_requests
from proctor.engine.reports.otel_push import PushError, push_traces
from proctor.engine.runs.options import RunOptions
from proctor.engine.runs.session import run_suite
from proctor.scenarios.demo import SUITE_DIR
from proctor.scenarios.loader import load_suite
from proctor.store.read.reader import StoreReader

pytestmark = pytest.mark.slow
TOKEN = "s3cret-collector-token"


@dataclass
class Receiver:
    """An OTLP/HTTP traces endpoint on 127.0.0.1 that answers ``status`` and keeps what it got."""

    status: int = 200
    fail_after: int | None = None  # answer ``status`` from this request on (counted from 0)
    requests: list[ExportTraceServiceRequest] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    url: str = ""

    def spans(self) -> list[Span]:
        return [
            s for r in self.requests for rs in r.resource_spans for ss in rs.scope_spans for s in ss.spans
        ]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    state = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            state.headers.append({k.lower(): v for k, v in self.headers.items()})
            failing = state.fail_after is None or len(state.headers) > state.fail_after
            if state.status != 200 and failing:
                self.send_response(state.status)
                self.send_header("Retry-After", "0")  # a 503 is retried at once: the test stays fast
                self.end_headers()
                self.wfile.write(b"not here")
                return
            assert self.path == "/v1/traces"
            assert self.headers["Content-Type"] == "application/x-protobuf"
            state.requests.append(ExportTraceServiceRequest.FromString(body))
            reply = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run of the demo suite, one scenario: the baseline (built-in tools), an MCP arm and
    one behind tool retrieval (its ``route`` search runs in proctor, ``execute`` calls MCP)."""
    import asyncio

    db = tmp_path_factory.mktemp("demo") / "demo.db"
    options = RunOptions(
        db=db, arms=["baseline", "codeintel", "codeintel+distractors"], scenarios=["retry-delay-cap"]
    )
    assert asyncio.run(run_suite(load_suite(SUITE_DIR), options)) == "finished"
    return db


def _attrs(span: Span) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in span.attributes:
        kind = kv.value.WhichOneof("value")
        value = getattr(kv.value, kind)
        out[kv.key] = [v.string_value for v in value.values] if kind == "array_value" else value
    return out


def _file_spans(db: Path, tmp_path: Path) -> dict[bytes, Span]:
    out = tmp_path / "traces.jsonl"
    assert main(["export", str(db), "--format", "otel", "-o", str(out)]) == 0
    requests = [from_otlp_json(json.loads(line)) for line in out.read_text().splitlines()]
    return {s.span_id: s for r in requests for s in r.resource_spans[0].scope_spans[0].spans}


def test_push_sends_the_file_exports_spans_as_protobuf_with_auth_headers(
    demo_db: Path, receiver: Receiver, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = _file_spans(demo_db, tmp_path)
    capsys.readouterr()
    argv = ["export", str(demo_db), "--format", "otel", "--endpoint", receiver.url]
    assert main([*argv, "--header", f"Authorization=Bearer {TOKEN}", "--header", "x-team=eval"]) == 0
    err = capsys.readouterr().err
    traces = len({s.trace_id for s in expected.values()})
    assert f"pushed {traces} traces ({len(expected)} spans) to {receiver.url}/v1/traces" in err
    assert TOKEN not in err
    assert (
        receiver.headers[0]["authorization"] == f"Bearer {TOKEN}" and receiver.headers[0]["x-team"] == "eval"
    )
    got = {s.span_id: s for s in receiver.spans()}
    assert got.keys() == expected.keys()
    for span_id, span in expected.items():
        pushed = got[span_id]
        assert (pushed.trace_id, pushed.parent_span_id, pushed.name, pushed.kind) == (
            span.trace_id,
            span.parent_span_id,
            span.name,
            span.kind,
        )
        assert (pushed.start_time_unix_nano, pushed.end_time_unix_nano) == (
            span.start_time_unix_nano,
            span.end_time_unix_nano,
        )
        assert _attrs(pushed) == _attrs(span) and pushed.status.code == span.status.code
        assert [(e.name, _attrs(e)) for e in pushed.events] == [(e.name, _attrs(e)) for e in span.events]  # type: ignore[arg-type]
    roots = [s for s in got.values() if not s.parent_span_id]
    assert len(roots) == traces and all(
        any(e.name == "gen_ai.evaluation.result" for e in r.events) for r in roots
    )


def test_push_with_out_also_writes_the_otlp_json_file(
    demo_db: Path, receiver: Receiver, tmp_path: Path
) -> None:
    out = tmp_path / "both.jsonl"
    argv = ["export", str(demo_db), "--format", "otel", "--endpoint", receiver.url + "/v1/traces"]
    assert main([*argv, "-o", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert len(lines) == len({s.trace_id for s in receiver.spans()}) > 0


def _messages(span: Span, key: str) -> list[dict[str, Any]]:
    value = json.loads(_attrs(span)[key])
    assert isinstance(value, list)
    return value


def test_agent_and_chat_spans_carry_prompt_conversation_and_answer(demo_db: Path) -> None:
    with StoreReader(demo_db) as reader:
        requests = list(trace_requests(reader))
        answers = {t.id: t.final_answer for t in reader.trials()}
    (scenario,) = [s for s in load_suite(SUITE_DIR).scenarios if s.id == "retry-delay-cap"]
    prompt = scenario.prompts()[0]
    for request in requests:
        root, *children = request.resource_spans[0].scope_spans[0].spans
        attrs = _attrs(root)
        system = _messages(root, "gen_ai.system_instructions")
        assert system[0]["type"] == "text" and len(system[0]["content"]) > 50
        user = _messages(root, "gen_ai.input.messages")
        assert [m["role"] for m in user] == ["user"] and user[0]["parts"][0]["type"] == "text"
        if attrs["proctor.scenario"] == "retry-delay-cap":
            assert user[0]["parts"][0]["content"] == prompt
        assert attrs["output.value"] == answers[attrs["proctor.trial.id"]]  # what Phoenix lists
        assert attrs["input.value"] == "\n\n".join(p["parts"][0]["content"] for p in user)
        (answer,) = _messages(root, "gen_ai.output.messages")
        assert answer["role"] == "assistant"
        assert answer["parts"][0]["content"] == answers[attrs["proctor.trial.id"]]
        chats = [s for s in children if s.name.startswith("chat ")]
        assert len(chats) >= 2, "the demo agent calls a tool, then answers"
        first, last = (
            _messages(chats[0], "gen_ai.input.messages"),
            _messages(chats[-1], "gen_ai.input.messages"),
        )
        assert first == user
        calls = [
            p for p in _messages(chats[0], "gen_ai.output.messages")[0]["parts"] if p["type"] == "tool_call"
        ]
        assert calls and calls[0]["name"] and isinstance(calls[0]["arguments"], dict)
        # The last call saw the first reply and its tool result, chained by the call id.
        roles = [m["role"] for m in last]
        assert roles[:3] == ["user", "assistant", "tool"], roles
        assert last[2]["parts"][0] == {
            **last[2]["parts"][0],
            "type": "tool_call_response",
            "id": calls[0]["id"],
        }
        final = _messages(chats[-1], "gen_ai.output.messages")[0]
        assert not [p for p in final["parts"] if p["type"] == "tool_call"]


def test_builtin_tools_and_tool_search_are_not_labelled_mcp_calls(demo_db: Path) -> None:
    with StoreReader(demo_db) as reader:
        spans = [s for r in trace_requests(reader) for s in r.resource_spans[0].scope_spans[0].spans]
    arm_of = {s.trace_id: _attrs(s)["gen_ai.agent.name"] for s in spans if not s.parent_span_id}
    tools = [(arm_of[s.trace_id], _attrs(s)) for s in spans if s.name.startswith("execute_tool ")]
    builtin = [a for arm, a in tools if arm == "baseline" or a["gen_ai.tool.name"] == "route"]
    mcp = [a for arm, a in tools if arm != "baseline" and a["gen_ai.tool.name"] != "route"]
    assert (
        builtin and mcp and {"baseline", "codeintel+distractors"} <= {arm for arm, a in tools if a in builtin}
    )
    assert all("mcp.method.name" not in a and a["gen_ai.tool.type"] == "function" for a in builtin)
    assert all(a["mcp.method.name"] == "tools/call" and a["gen_ai.tool.type"] == "extension" for a in mcp)
    assert all(a["input.value"] == a["gen_ai.tool.call.arguments"] for _, a in tools)


@pytest.mark.parametrize("status", [415, 401, 500])
def test_a_refusing_endpoint_exits_2_naming_the_url_and_status(
    demo_db: Path, receiver: Receiver, status: int, capsys: pytest.CaptureFixture[str]
) -> None:
    receiver.status = status
    argv = ["export", str(demo_db), "--format", "otel", "--endpoint", receiver.url]
    assert main([*argv, "--header", f"authorization=Bearer {TOKEN}"]) == 2
    err = capsys.readouterr().err
    assert f"OTLP push to {receiver.url}/v1/traces failed: HTTP {status}" in err
    assert "not here" in err and "0 trace(s) were sent" in err and TOKEN not in err


def test_an_unavailable_collector_is_retried_then_named(demo_db: Path, receiver: Receiver) -> None:
    receiver.status = 503
    with StoreReader(demo_db) as reader, pytest.raises(PushError) as failed:
        push_traces(trace_requests(reader), receiver.url, timeout_s=5)
    assert "HTTP 503 Service Unavailable" in str(failed.value) and receiver.url in str(failed.value)
    assert len(receiver.headers) >= 2, "the exporter retries a 503 answer"


def test_connection_refused_exits_2_naming_the_url(demo_db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv = ["export", str(demo_db), "--format", "otel", "--endpoint", f"http://127.0.0.1:{port}"]
    assert main([*argv, "--timeout", "0.5"]) == 2
    err = capsys.readouterr().err
    assert f"http://127.0.0.1:{port}/v1/traces" in err and "connection refused" in err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--format", "otel", "--endpoint", "127.0.0.1:4318"], "is not an http(s) URL"),
        (["--format", "jsonl", "--endpoint", "http://127.0.0.1:4318"], "go with --format otel"),
        (["--format", "otel", "--endpoint", "http://127.0.0.1:9", "--header", f"auth {TOKEN}"], "KEY=VALUE"),
    ],
)
def test_bad_push_flags_exit_2_without_showing_header_values(
    demo_db: Path, argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", str(demo_db), *argv]) == 2
    err = capsys.readouterr().err
    assert says in err and TOKEN not in err


def test_without_the_exporter_library_exits_2_saying_what_to_install(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.http.trace_exporter", None)
    assert main(["export", str(demo_db), "--format", "otel", "--endpoint", "http://127.0.0.1:9"]) == 2
    assert "pip install 'proctor[otel]'" in capsys.readouterr().err


def test_large_runs_go_in_batches_and_a_failure_says_how_many_traces_went(
    demo_db: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("proctor.engine.reports.otel_push.BATCH_SPANS", 3)
    with StoreReader(demo_db) as reader:
        requests = list(trace_requests(reader))
    spans = sum(len(r.resource_spans[0].scope_spans[0].spans) for r in requests)
    result = push_traces(requests, receiver.url)
    assert (result.traces, result.spans, result.requests) == (len(requests), spans, len(requests))
    assert len(receiver.requests) == len(requests) == 3  # each trace has more than 3 spans

    receiver.status, receiver.fail_after = 415, len(receiver.headers) + 1
    with pytest.raises(PushError, match=r"HTTP 415 .*; 1 trace\(s\) were sent before it"):
        push_traces(requests, receiver.url)
