"""``proctor export DB --format otel --endpoint URL``: a run's traces pushed over OTLP/HTTP.

Arize Phoenix and other collectors take OTLP/HTTP in protobuf only (Phoenix answers 415 to
OTLP/JSON), so the traces go through the OpenTelemetry exporter library
(opentelemetry-exporter-otlp-proto-http, the ``otel`` extra): each span built for the file export
becomes the SDK's ``ReadableSpan`` with the same ids, times, attributes, events and status, and
the exporter encodes and sends them, with its retries of 429/502/503/504 answers. The exporter uses
``requests`` (not the ``httpx2`` the model SDKs use); its session is given a hook that keeps
the last answer or connection error, since the exporter only logs them, so a failure names the
URL and the status. Header values (auth tokens) are passed to the exporter and never printed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from proctor.store.redaction import redact

if TYPE_CHECKING:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
    from opentelemetry.sdk.trace import ReadableSpan

MISSING = (
    "--endpoint needs the OpenTelemetry OTLP/HTTP exporter, which is not installed: "
    "pip install 'proctor[otel]' (or opentelemetry-exporter-otlp-proto-http)"
)
BATCH_SPANS = 512
_HINTS = {
    401: "the endpoint wants credentials: pass them with --header (e.g. --header 'authorization=Bearer …')",
    403: "the endpoint refused these credentials: check the --header values",
    404: "no OTLP traces receiver at this path: OTLP/HTTP traces usually go to /v1/traces",
    405: "this URL does not take POST: OTLP/HTTP traces usually go to /v1/traces",
    415: "the endpoint does not take OTLP protobuf at this path",
}


class PushError(Exception):
    """The push could not start or the endpoint refused it; the message names the URL and why."""


@dataclass(frozen=True)
class PushResult:
    url: str
    traces: int
    spans: int
    requests: int


def traces_url(endpoint: str) -> str:
    """The OTLP/HTTP traces URL: an endpoint given without a path gets ``/v1/traces``."""
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise PushError(
            f"--endpoint {shown_url(endpoint)!r} is not an http(s) URL; "
            "give the collector's OTLP/HTTP address, e.g. http://127.0.0.1:6006/v1/traces"
        )
    if parts.path in ("", "/"):
        return urlunsplit(parts._replace(path="/v1/traces"))
    return endpoint


def shown_url(url: str) -> str:
    """``url`` fit for a message: no user or password, secret shapes redacted."""
    parts = urlsplit(url)
    if parts.username or parts.password:
        host = parts.hostname or ""
        parts = parts._replace(netloc=host + (f":{parts.port}" if parts.port else ""))
    return redact(urlunsplit(parts))


def parse_headers(items: Iterable[str]) -> dict[str, str]:
    """``--header K=V`` (repeatable) as a dict; an error names the flag, never a value."""
    headers: dict[str, str] = {}
    for n, item in enumerate(items, 1):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key or any(c.isspace() or c == ":" for c in key):
            raise PushError(
                f"--header number {n} is not KEY=VALUE (the value is not shown); "
                "write it as --header 'authorization=Bearer TOKEN'"
            )
        headers[key.lower()] = value.strip()
    return headers


def _value(v: AnyValue) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return tuple(_value(x) for x in v.array_value.values)
    return getattr(v, kind) if kind else None


def _attributes(kvs: Iterable[KeyValue]) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in kvs}


def readable_spans(request: ExportTraceServiceRequest) -> Iterator[ReadableSpan]:
    """The request's spans as the SDK's ``ReadableSpan``: the same ids, times and attributes."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import Event, ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    kinds = {1: SpanKind.INTERNAL, 2: SpanKind.SERVER, 3: SpanKind.CLIENT, 4: SpanKind.PRODUCER}
    kinds[5] = SpanKind.CONSUMER
    sampled = TraceFlags(TraceFlags.SAMPLED)
    for resource_spans in request.resource_spans:
        resource = Resource(_attributes(resource_spans.resource.attributes))
        for scope_spans in resource_spans.scope_spans:
            scope = InstrumentationScope(scope_spans.scope.name, scope_spans.scope.version or None)
            for s in scope_spans.spans:
                trace_id = int.from_bytes(s.trace_id, "big")
                parent = (
                    SpanContext(trace_id, int.from_bytes(s.parent_span_id, "big"), False, sampled)
                    if s.parent_span_id
                    else None
                )
                code = StatusCode(s.status.code)
                yield ReadableSpan(
                    name=s.name,
                    context=SpanContext(trace_id, int.from_bytes(s.span_id, "big"), False, sampled),
                    parent=parent,
                    resource=resource,
                    attributes=_attributes(s.attributes),
                    events=[Event(e.name, _attributes(e.attributes), e.time_unix_nano) for e in s.events],
                    kind=kinds.get(s.kind, SpanKind.INTERNAL),
                    status=Status(code, s.status.message if code == StatusCode.ERROR else None),
                    start_time=s.start_time_unix_nano,
                    end_time=s.end_time_unix_nano,
                    instrumentation_scope=scope,
                )


class _Outcome:
    """The last answer or connection error of the exporter's session (the exporter only logs it)."""

    def __init__(self) -> None:
        self.status: int | None = None
        self.reason = ""
        self.body = ""
        self.error: BaseException | None = None

    def response(self, response: Any, *args: Any, **kwargs: Any) -> Any:
        self.status, self.reason, self.error = response.status_code, response.reason or "", None
        self.body = response.text[:300] if not response.ok else ""
        return response

    def describe(self, with_headers: bool) -> str:
        if self.error is not None:
            text = str(self.error)
            why = "connection refused" if "refused" in text.lower() else f"{type(self.error).__name__}"
            return f"{why} (is a collector listening there?)"
        if self.status is None:
            return "no answer within the timeout"
        body = " ".join(redact(self.body).split())
        hint = (_HINTS[403] if with_headers and self.status == 401 else _HINTS.get(self.status)) or (
            "the collector failed; try again later" if self.status >= 500 else ""
        )
        return (
            f"HTTP {self.status} {self.reason}".strip()
            + (f": {body}" if body else "")
            + (f" ({hint})" if hint else "")
        )


def _exporter(url: str, headers: dict[str, str], timeout_s: float, outcome: _Outcome) -> Any:
    try:
        import requests
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError as exc:
        raise PushError(MISSING) from exc

    class _Session(requests.Session):
        def request(self, *args: Any, **kwargs: Any) -> Any:
            try:
                return super().request(*args, **kwargs)
            except requests.RequestException as exc:
                outcome.error = exc
                raise

    session = _Session()
    session.hooks["response"].append(outcome.response)
    return OTLPSpanExporter(endpoint=url, headers=headers or None, timeout=timeout_s, session=session)


def push_traces(
    requests: Iterable[ExportTraceServiceRequest],
    endpoint: str,
    headers: dict[str, str] | None = None,
    *,
    timeout_s: float = 10.0,
) -> PushResult:
    """Send every trace to ``endpoint`` in batches of about ``BATCH_SPANS`` spans; stop at the
    first batch the endpoint does not accept, with a ``PushError`` that says how many went."""
    url = traces_url(endpoint)
    try:
        from opentelemetry.sdk.trace.export import SpanExportResult
    except ImportError as exc:
        raise PushError(MISSING) from exc

    outcome = _Outcome()
    exporter = _exporter(url, headers or {}, timeout_s, outcome)
    sent = _Sent()
    batch: list[ReadableSpan] = []
    batch_traces = 0
    quiet = logging.getLogger("opentelemetry.exporter.otlp.proto.http")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL + 1)  # its lines repeat what the PushError says, less clearly
    try:

        def flush() -> None:
            nonlocal batch, batch_traces
            if not batch:
                return
            if exporter.export(batch) is not SpanExportResult.SUCCESS:
                raise PushError(
                    f"OTLP push to {shown_url(url)} failed: {outcome.describe(bool(headers))}; "
                    f"{sent.traces} trace(s) were sent before it"
                )
            sent.add(batch_traces, len(batch))
            batch, batch_traces = [], 0

        for request in requests:
            batch += readable_spans(request)
            batch_traces += 1
            if len(batch) >= BATCH_SPANS:
                flush()
        flush()
    finally:
        quiet.setLevel(level)
        exporter.shutdown()
    return PushResult(shown_url(url), sent.traces, sent.spans, sent.requests)


@dataclass
class _Sent:
    traces: int = 0
    spans: int = 0
    requests: int = 0

    def add(self, traces: int, spans: int) -> None:
        self.traces, self.spans, self.requests = self.traces + traces, self.spans + spans, self.requests + 1


__all__ = [
    "MISSING",
    "PushError",
    "PushResult",
    "parse_headers",
    "push_traces",
    "readable_spans",
    "traces_url",
]
