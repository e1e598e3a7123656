"""A run as OpenTelemetry traces (OTLP JSON), following the GenAI and MCP semantic conventions.

Users already look at agent traces in Jaeger, Arize Phoenix or Langfuse; each trial becomes one
trace there. Its root span ``invoke_agent ARM`` carries the scenario, arm, model and epoch and
one ``gen_ai.evaluation.result`` event per proctor score; below it a ``chat MODEL`` span per
model call (tokens, finish reason) and an ``execute_tool TOOL`` span per tool call (the
arguments and the result, the error type; ``mcp.method.name`` ``tools/call`` only for MCP
servers' tools, not the baseline's built-in ones nor tool retrieval's ``route``;
``proctor.tool.builtin`` true or false, the marker ``import otel`` reads back, and
``proctor.mcp.server`` the server's name). The agent and chat spans carry the prompt,
the messages and the answer as ``gen_ai.input.messages``/``gen_ai.output.messages``/
``gen_ai.system_instructions`` (``otel_messages.py``), which is what viewers show as input and
output.

The output is OTLP/JSON as the OpenTelemetry collector's file exporter writes it: one
``ExportTraceServiceRequest`` per line, one line per trial, so memory stays flat and each line
can be POSTed to an OTLP/HTTP endpoint (``/v1/traces``). The messages are built with the
opentelemetry-proto classes and serialized by protobuf; only the ids are re-encoded, since
OTLP/JSON wants trace and span ids in hex where protobuf's JSON uses base64.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from proctor.engine.reports.otel_messages import (
    Conversation,
    MessagesJson,
    answer_messages,
    system_instructions,
    user_messages,
)
from proctor.store.events import (
    AgentBrief,
    ErrorEvent,
    FinalAnswer,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolResult,
    TrialFinished,
    TrialStarted,
)
from proctor.store.read.reader import ScoreRecord, StoredEvent, StoreReader, TrialRecord, read_only_uri
from proctor.store.redaction import redact
from proctor.store.scores import GroundingDetails, LayerDetails, ScoreDetails, UnreadableScore
from proctor.store.tool_origin import is_builtin

if TYPE_CHECKING:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.common.v1.common_pb2 import KeyValue
    from opentelemetry.proto.trace.v1.trace_pb2 import Span

SystemPrompts = dict[str, str | None]
"""A run's system prompts by hash (they are stored once per run, in the blobs table)."""

SCOPE = "proctor"
MAX_ATTRIBUTE_CHARS = 8000
_ID_FIELDS = ("traceId", "spanId", "parentSpanId")
Attributes = dict[str, str | int | float | bool | list[str] | None]


def _nanos(ts: float) -> int:
    return int(ts * 1e9)


def _id(size: int, *parts: object) -> bytes:
    """Deterministic ids, so exporting twice gives the same traces."""
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()[:size]


def _label(score: ScoreRecord) -> str | None:
    """The score's human label where it has one (grounding, the layers), as the conventions ask."""
    try:
        details = score.parsed(ScoreDetails)
    except UnreadableScore:
        return None
    return details.label or None if isinstance(details, GroundingDetails | LayerDetails) else None


def _text(value: object) -> str:
    text = redact(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str))
    return text if len(text) <= MAX_ATTRIBUTE_CHARS else text[:MAX_ATTRIBUTE_CHARS] + "…[truncated]"


def _attributes(values: Attributes) -> list[KeyValue]:
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue

    out = []
    for key, value in values.items():
        if value is None:
            continue
        if isinstance(value, list):
            any_value = AnyValue(
                array_value=ArrayValue(values=[AnyValue(string_value=_text(v)) for v in value])
            )
        elif isinstance(value, bool):
            any_value = AnyValue(bool_value=value)
        elif isinstance(value, int):
            any_value = AnyValue(int_value=value)
        elif isinstance(value, float):
            any_value = AnyValue(double_value=value)
        elif isinstance(value, MessagesJson):  # already redacted and sized: cutting breaks the JSON
            any_value = AnyValue(string_value=value)
        else:
            any_value = AnyValue(string_value=_text(value))
        out.append(KeyValue(key=key, value=any_value))
    return out


class _TraceBuilder:
    """The spans of one trial, from its stored events in order."""

    def __init__(self, run_id: str, trial: TrialRecord, system_prompts: SystemPrompts | None = None) -> None:
        self.run_id, self.trial = run_id, trial
        self.system_prompts = system_prompts if system_prompts is not None else {}
        self.conversation = Conversation()
        self.system: MessagesJson | None = None
        self.chat_input: MessagesJson | None = None
        self.trace_id = _id(16, run_id, trial.id, trial.attempt)
        self.root_id = _id(8, run_id, trial.id, trial.attempt, "root")
        self.spans: list[Span] = []
        self.open_calls: dict[str, tuple[StoredEvent, ToolCall]] = {}
        self.request_ts: float | None = None
        self.start: float | None = None
        self.end: float | None = None
        self.error: str = ""

    def _span(
        self, name: str, start: float, end: float, attrs: Attributes, key: object, *, client: bool = False
    ) -> Span:
        from opentelemetry.proto.trace.v1.trace_pb2 import Span

        span = Span(
            trace_id=self.trace_id,
            span_id=_id(8, self.run_id, self.trial.id, self.trial.attempt, key),
            parent_span_id=self.root_id,
            name=name,
            kind=Span.SPAN_KIND_CLIENT if client else Span.SPAN_KIND_INTERNAL,
            start_time_unix_nano=_nanos(start),
            end_time_unix_nano=_nanos(max(start, end)),
            attributes=_attributes(attrs),
        )
        self.spans.append(span)
        return span

    def add(self, stored: StoredEvent) -> None:
        from opentelemetry.proto.trace.v1.trace_pb2 import Status

        ev, ts = stored.event, stored.ts
        self.start = ts if self.start is None else min(self.start, ts)
        self.end = ts if self.end is None else max(self.end, ts)
        if isinstance(ev, AgentBrief):
            self.conversation.prompts = list(ev.prompts)
            prompt = self.system_prompts.get(ev.system_prompt_sha256)
            self.system = system_instructions(prompt) if prompt else None
        elif isinstance(ev, ModelRequest):
            self.request_ts = ts
            self.chat_input = self.conversation.request()
        elif isinstance(ev, ModelResponse):
            start = self.request_ts if self.request_ts is not None else ts - ev.latency_s
            provider, _, name = ev.model.rpartition(":")
            self._span(
                f"chat {ev.model}",
                start,
                ts,
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.provider.name": provider or None,
                    "gen_ai.request.model": name,
                    "gen_ai.response.model": name,
                    "gen_ai.usage.input_tokens": ev.usage.input_tokens,
                    "gen_ai.usage.output_tokens": ev.usage.output_tokens,
                    "gen_ai.response.finish_reasons": [ev.stop_reason],
                    "gen_ai.system_instructions": self.system,
                    "gen_ai.input.messages": self.chat_input or self.conversation.request(),
                    "gen_ai.output.messages": self.conversation.response(ev),
                    # OpenInference's output, which Phoenix lists (it would show {"model": ...}).
                    "output.value": ev.text
                    or _text([{"name": c.name, "arguments": c.arguments} for c in ev.tool_calls]),
                    "proctor.turn": ev.turn,
                    "proctor.tokens_estimated": ev.usage.estimated,
                    "proctor.cost_usd": ev.cost_usd,
                },
                ("chat", stored.id),
                client=True,
            )
            self.request_ts = None
            self.chat_input = None
        elif isinstance(ev, ToolCall):
            self.open_calls[ev.call_id] = (stored, ev)
        elif isinstance(ev, ToolResult):
            self.conversation.result(ev)
            # Built-in calls (the baseline's tools, tool retrieval's route, an agent's own): not MCP calls.
            builtin = is_builtin(ev)
            began = self.open_calls.pop(ev.call_id, None)
            start = began[0].ts if began else ts - ev.latency_s
            arguments = began[1].arguments if began else {}
            if began and began[1].tool != ev.tool and arguments.get("tool") == ev.tool:
                # A call through tool retrieval's router: the span is the MCP call it made.
                arguments = arguments.get("arguments") or {}
            span = self._span(
                f"execute_tool {ev.tool}",
                start,
                ts,
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": ev.tool,
                    "gen_ai.tool.call.id": ev.call_id,
                    "gen_ai.tool.type": "function" if builtin else "extension",
                    "gen_ai.tool.call.arguments": _text(arguments),
                    "input.value": _text(arguments),  # OpenInference's input: Phoenix lists it
                    "gen_ai.tool.call.result": _text(
                        ev.structured if ev.structured and not ev.content else ev.content
                    ),
                    "mcp.method.name": None if builtin else "tools/call",
                    "proctor.mcp.server": ev.server,  # a label ("builtin" for the baseline's)
                    "proctor.tool.builtin": builtin,  # the marker: import reads it back
                    "error.type": (ev.error_type or "tool_error") if ev.is_error else None,
                },
                ("tool", ev.call_id, stored.id),
            )
            if ev.is_error:
                span.status.CopyFrom(Status(code=Status.STATUS_CODE_ERROR, message=_text(ev.content[:500])))
        elif isinstance(ev, ErrorEvent) and ev.fatal:
            self.error = f"{ev.error_type}: {ev.message}"
        elif isinstance(ev, TrialFinished) and ev.status == "error":
            self.error = self.error or ev.error or "error"

    def root(self, scores: list[ScoreRecord], final_answer: str | None) -> Span:
        from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

        t = self.trial
        start = self.start if self.start is not None else (t.started_at or 0.0)
        end = self.end if self.end is not None else (t.finished_at or start)
        span = Span(
            trace_id=self.trace_id,
            span_id=self.root_id,
            name=f"invoke_agent {t.arm}",
            kind=Span.SPAN_KIND_INTERNAL,
            start_time_unix_nano=_nanos(start),
            end_time_unix_nano=_nanos(end),
            attributes=_attributes(
                {
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": t.arm,
                    "gen_ai.provider.name": t.model.rpartition(":")[0] or None,
                    "gen_ai.request.model": t.model.rpartition(":")[2],
                    "proctor.model": t.model,
                    "gen_ai.usage.input_tokens": t.input_tokens,
                    "gen_ai.usage.output_tokens": t.output_tokens,
                    "proctor.run.id": self.run_id,
                    "proctor.trial.id": t.id,
                    "proctor.scenario": t.scenario,
                    "proctor.arm": t.arm,
                    "proctor.epoch": t.epoch,
                    "proctor.attempt": t.attempt,
                    "proctor.status": t.status,
                    "proctor.passed": t.passed,
                    "proctor.cost_usd": t.cost_usd,
                    "proctor.final_answer": final_answer,
                    "gen_ai.system_instructions": self.system,
                    "gen_ai.input.messages": user_messages(self.conversation.prompts)
                    if self.conversation.prompts
                    else None,
                    "gen_ai.output.messages": answer_messages(final_answer, t.stop)
                    if final_answer is not None
                    else None,
                    # Phoenix (20.26) leaves an agent span's input and output empty without these.
                    "input.value": "\n\n".join(self.conversation.prompts) or None,
                    "output.value": final_answer,
                    # Viewers list attributes, not span events: each score is also one attribute.
                    **{f"proctor.score.{s.name}": s.value for s in scores},
                }
            ),
        )
        for s in scores:
            span.events.add(
                time_unix_nano=_nanos(end),
                name="gen_ai.evaluation.result",
                attributes=_attributes(
                    {
                        "gen_ai.evaluation.name": s.name,
                        "gen_ai.evaluation.score.value": s.value,
                        "gen_ai.evaluation.score.label": _label(s),
                    }
                ),
            )
        if self.error or t.status == "error":
            span.status.CopyFrom(
                Status(code=Status.STATUS_CODE_ERROR, message=_text(self.error or t.error or ""))
            )
        elif t.status == "finished":
            span.status.CopyFrom(Status(code=Status.STATUS_CODE_OK))
        return span


def trial_trace(
    run_id: str,
    trial: TrialRecord,
    events: list[StoredEvent],
    scores: list[ScoreRecord],
    system_prompts: SystemPrompts | None = None,
) -> ExportTraceServiceRequest:
    """One trial as an OTLP export request: one resource, one scope, its spans.

    ``system_prompts`` maps a system prompt's hash (``AgentBrief``) to its text, when known."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.common.v1.common_pb2 import InstrumentationScope
    from opentelemetry.proto.resource.v1.resource_pb2 import Resource
    from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans

    builder = _TraceBuilder(run_id, trial, system_prompts)
    final = None
    for stored in events:
        builder.add(stored)
        if isinstance(stored.event, FinalAnswer):
            final = stored.event.text
        elif isinstance(stored.event, TrialStarted):
            builder.start = stored.ts
    spans = [builder.root(scores, final if final is not None else trial.final_answer), *builder.spans]
    resource = Resource(attributes=_attributes({"service.name": "proctor", "proctor.run.id": run_id}))
    scope = ScopeSpans(scope=InstrumentationScope(name=SCOPE), spans=spans)
    return ExportTraceServiceRequest(resource_spans=[ResourceSpans(resource=resource, scope_spans=[scope])])


def to_otlp_json(request: ExportTraceServiceRequest) -> dict[str, Any]:
    """OTLP/JSON: protobuf's JSON mapping with enums as integers and ids in hex."""
    from google.protobuf.json_format import MessageToDict

    data = MessageToDict(request, use_integers_for_enums=True)
    _recode_ids(data, lambda v: base64.b64decode(v).hex())
    return data


def from_otlp_json(data: dict[str, Any]) -> ExportTraceServiceRequest:
    """Parse OTLP/JSON (hex ids) back into the protobuf message; raises ``ParseError`` when invalid."""
    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    copy = json.loads(json.dumps(data))
    _recode_ids(copy, lambda v: base64.b64encode(bytes.fromhex(v)).decode())
    return ParseDict(copy, ExportTraceServiceRequest())


def _recode_ids(node: Any, recode: Any) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _ID_FIELDS and isinstance(value, str) and value:
                node[key] = recode(value)
            else:
                _recode_ids(value, recode)
    elif isinstance(node, list):
        for item in node:
            _recode_ids(item, recode)


def _trial_ids(reader: StoreReader) -> list[int]:
    """The run's trial ids in order, without loading every trial's record (answers included) at
    once: only each id is held, so a large run's export stays flat in memory."""
    conn = sqlite3.connect(read_only_uri(reader.path), uri=True)
    try:
        conn.execute("PRAGMA busy_timeout=5000")
        return [int(r[0]) for r in conn.execute("SELECT id FROM trials ORDER BY id")]
    finally:
        conn.close()


def _system_prompts(reader: StoreReader, events: list[StoredEvent], known: SystemPrompts) -> SystemPrompts:
    """``known`` plus the text of each system prompt these events name (read once per run)."""
    for stored in events:
        ev = stored.event
        if isinstance(ev, AgentBrief) and ev.system_prompt_sha256 not in known:
            blob = reader.blob(ev.system_prompt_sha256)
            known[ev.system_prompt_sha256] = blob[1].decode("utf-8", "replace") if blob else None
    return known


def trace_requests(reader: StoreReader) -> Iterator[ExportTraceServiceRequest]:
    """One export request per trial that has started, in trial order, built one trial at a time."""
    run = reader.run()
    run_id = run.id if run is not None else "run"
    prompts: SystemPrompts = {}
    for trial_id in _trial_ids(reader):
        trial = reader.trial(trial_id)
        if trial is None:
            continue
        events = [e for e in reader.trial_events(trial.id) if not e.abandoned]
        if not events:
            continue
        prompts = _system_prompts(reader, events, prompts)
        yield trial_trace(run_id, trial, events, reader.scores(trial.id), prompts)


def trace_lines(reader: StoreReader) -> Iterator[str]:
    """One OTLP/JSON line per trial that has started, in trial order."""
    for request in trace_requests(reader):
        yield json.dumps(to_otlp_json(request), separators=(",", ":"))


def export_otel(db: Path, out: TextIO) -> int:
    """Write the run's traces to ``out``; returns the number of traces (trials) written."""
    n = 0
    with StoreReader(db) as reader:
        for line in trace_lines(reader):
            out.write(line + "\n")
            n += 1
    return n


__all__ = [
    "export_otel",
    "from_otlp_json",
    "to_otlp_json",
    "trace_lines",
    "trace_requests",
    "trial_trace",
]
