"""OTLP/JSON trace files as spans grouped by trace, parsed with the opentelemetry-proto classes.

A file holds one ``ExportTraceServiceRequest`` per line, as the OpenTelemetry collector's file
exporter and ``proctor export --format otel`` write it, or one request as a whole document. The
spans of one trace may spread over several lines (exporters batch by time). Lines holding an
``ExportLogsServiceRequest`` (in the same file or a second one) give log records, kept on the span
they name: some instrumentations (opentelemetry-instrumentation-openai-v2) write message content
there, not in span attributes. Every error names the file, the line and the field.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from proctor.scenarios.importers.common import ImportFormatError, read_text

if TYPE_CHECKING:
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue
    from opentelemetry.proto.trace.v1.trace_pb2 import Span

WRITE_OTLP = "write traces with an OpenTelemetry collector's file exporter, or `proctor export --format otel`"
_ID_HEX_DIGITS = {"traceId": 32, "spanId": 16, "parentSpanId": 16}  # OTLP/JSON log records too
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_STATUS_ERROR = 2  # Status.STATUS_CODE_ERROR


@dataclass
class TraceSpan:
    """A span, its attributes as Python values, and where it stands (file, line, trace, name)."""

    span: Span
    attrs: dict[str, Any]
    where: str
    logs: list[tuple[str, Any]] = field(default_factory=list)  # (event name, body) of its log records
    scope: str = ""  # the instrumentation scope that wrote it (e.g. ``mcp-python-sdk``, ``fastmcp``)

    @property
    def seconds(self) -> float:
        return max(0, self.span.end_time_unix_nano - self.span.start_time_unix_nano) / 1e9

    @property
    def failed(self) -> bool:
        """Status ERROR or an ``error.type``, as the conventions record a failed operation."""
        return self.span.status.code == _STATUS_ERROR or bool(self.attrs.get("error.type"))


def _documents(path: Path) -> list[tuple[int, Any]]:
    """(line, JSON value): the whole file as one document, else one per non-empty line."""
    text = read_text(path)
    if not text.strip():
        raise ImportFormatError(f"{path}: is empty; {WRITE_OTLP}")
    try:
        return [(1 + len(text) - len(text.lstrip("\n")), json.loads(text))]
    except json.JSONDecodeError as whole:
        docs: list[tuple[int, Any]] = []
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                docs.append((n, json.loads(line)))
            except json.JSONDecodeError as exc:
                n, err = (
                    (n, exc) if docs else (whole.lineno, whole)
                )  # not JSON Lines either: the whole's error
                raise ImportFormatError(
                    f"{path}: line {n}, column {err.colno}: not valid JSON ({err.msg}); each line must hold "
                    "one OTLP/JSON ExportTraceServiceRequest (or the file one whole request)"
                ) from exc
        return docs


def _request(data: Any, where: str) -> ExportTraceServiceRequest | ExportLogsServiceRequest:
    from google.protobuf.json_format import ParseDict, ParseError
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    if not isinstance(data, dict) or not {"resourceSpans", "resourceLogs"} & set(data):
        got = (
            f"keys {', '.join(sorted(map(str, data))[:6])}" if isinstance(data, dict) else type(data).__name__
        )
        raise ImportFormatError(
            f"{where}: not OTLP/JSON traces (an ExportTraceServiceRequest has 'resourceSpans'; got {got}); "
            + WRITE_OTLP
        )
    _recode_ids(data)
    request = ExportTraceServiceRequest() if "resourceSpans" in data else ExportLogsServiceRequest()
    try:  # OTLP/JSON receivers ignore unknown fields, as the OTLP specification asks
        return ParseDict(data, request, ignore_unknown_fields=True)
    except (ParseError, ValueError) as exc:
        raise ImportFormatError(
            f"{where}: not valid OTLP/JSON ({str(exc).rstrip('.')}); {WRITE_OTLP}"
        ) from exc


def _recode_ids(node: Any) -> None:
    """OTLP/JSON writes trace and span ids in hex; protobuf's JSON mapping reads base64."""
    if isinstance(node, dict):
        for key, value in node.items():
            size = _ID_HEX_DIGITS.get(key)
            if size and isinstance(value, str) and len(value) == size and _HEX.match(value):
                node[key] = base64.b64encode(bytes.fromhex(value)).decode()
            else:
                _recode_ids(value)
    elif isinstance(node, list):
        for item in node:
            _recode_ids(item)


def value_of(v: AnyValue) -> Any:
    """An attribute value as Python: lists and key-value lists (structured attributes) included."""
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [value_of(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: value_of(kv.value) for kv in v.kvlist_value.values}
    if kind == "bytes_value":
        return base64.b64encode(v.bytes_value).decode()
    return None if kind is None else getattr(v, kind)


def read_traces(path: Path, logs: Path | None = None) -> Iterator[list[TraceSpan]]:
    """The file's spans, one list per trace, traces in order of first appearance; log records
    (of ``path`` or ``logs``) on the spans they name."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    traces: dict[bytes, list[TraceSpan]] = {}
    records: dict[tuple[bytes, bytes], list[tuple[str, Any]]] = {}
    for source in [path, *([logs] if logs is not None else [])]:
        for n, data in _documents(source):
            request = _request(data, f"{source}: line {n}")
            if not isinstance(request, ExportTraceServiceRequest):
                for rl in request.resource_logs:
                    for sl in rl.scope_logs:
                        for r in sl.log_records:
                            attrs = {kv.key: value_of(kv.value) for kv in r.attributes}
                            name = r.event_name or str(attrs.get("event.name") or "")
                            records.setdefault((r.trace_id, r.span_id), []).append((name, value_of(r.body)))
                continue
            for rs in request.resource_spans:
                for ss in rs.scope_spans:
                    for span in ss.spans:
                        where = f"{source}: line {n}, trace {span.trace_id.hex()}, span {span.name!r}"
                        if len(span.trace_id) != 16:
                            raise ImportFormatError(
                                f"{where}, field 'traceId': expected 32 hex digits; {WRITE_OTLP}"
                            )
                        attrs = {kv.key: value_of(kv.value) for kv in span.attributes}
                        traces.setdefault(span.trace_id, []).append(
                            TraceSpan(span, attrs, where, scope=ss.scope.name)
                        )
    for spans in traces.values():
        for s in spans:
            s.logs = records.get((s.span.trace_id, s.span.span_id), [])
    yield from traces.values()


__all__ = ["WRITE_OTLP", "TraceSpan", "read_traces", "value_of"]
