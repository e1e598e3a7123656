"""Vendor-neutral rules for turning a failed model call into a retry decision and a safe message.

Both SDKs raise the same kinds of failure (HTTP status, error event in the stream, transport
error); only their classes differ, so each provider unpacks its exception and these functions
decide. Every message passes through ``redact``: a server may echo the key (or part of it)
in an error body, and these messages end up in SQLite.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import httpx2

from proctor.engine.providers.retry import Failure, parse_retry_after
from proctor.store import redaction as known_secrets

MAX_DETAIL_CHARS = 300


_RETRYABLE_STATUS = {
    408: "timeout",
    429: "rate_limited",
    500: "server_error",
    502: "server_error",
    503: "server_error",
    504: "server_error",
    529: "overloaded",
}
_FINAL_STATUS = {
    400: "bad_request",
    401: "auth",
    403: "permission",
    404: "not_found",
    413: "request_too_large",
    422: "bad_request",
}
_QUOTA_CODES = {"contract_spend_limit_reached", "enforced_spend_limit_reached", "insufficient_quota"}
_TRANSIENT_STREAM_TYPES = {
    "overloaded_error",
    "api_error",
    "rate_limit_error",
    "server_error",
    "timeout_error",
}


class IncompleteStreamError(Exception):
    """The response stream ended before its terminal event: the answer may be cut short.

    ``state`` is what had streamed: generated, so billed, and counted as such.
    """

    def __init__(self, message: str, state: object = None) -> None:
        super().__init__(message)
        self.state = state


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` without the given secrets, registered ones, anything key-shaped; capped in length."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[redacted: api key]")
    text = known_secrets.redact(text)
    if len(text) > MAX_DETAIL_CHARS:
        text = text[:MAX_DETAIL_CHARS] + "…"
    return text


def failure_for_status(
    source: str,
    status: int,
    *,
    wire_type: str | None,
    wire_code: str | None,
    detail: str,
    headers: Mapping[str, str] | None,
    secrets: Iterable[str],
) -> Failure:
    """An HTTP error response: retry 408/429/5xx-transient/529, never 4xx client errors or quotas."""
    label = wire_type or wire_code or "error"
    message = redact(f"{source} HTTP {status} ({label}): {detail}", secrets)
    if status == 429 and (wire_code in _QUOTA_CODES or wire_type in _QUOTA_CODES):
        return Failure("quota", False, message)
    if status in _RETRYABLE_STATUS:
        return Failure(_RETRYABLE_STATUS[status], True, message, parse_retry_after(headers))
    if status in _FINAL_STATUS:
        return Failure(_FINAL_STATUS[status], False, message)
    if status >= 500:
        return Failure("server_error", False, message)
    return Failure("client_error", False, message)


def failure_for_stream_error(
    source: str, *, wire_type: str | None, detail: str, secrets: Iterable[str]
) -> Failure:
    """An error event inside a 200 stream: transient kinds are retried, the rest are final."""
    label = wire_type or "error"
    message = redact(f"{source} error event mid-stream ({label}): {detail}", secrets)
    return Failure("stream_error", label in _TRANSIENT_STREAM_TYPES, message)


_API_PATHS = ("/chat/completions", "/messages", "/responses", "/completions")


def endpoint_of(exc: BaseException) -> str:
    """The base URL a failed request went to (``http://127.0.0.1:8000/v1``), or "" if unknown:
    a connection failure is fixed at that address, so the message names it. No query, no
    credentials, no API path."""
    request = getattr(exc, "request", None)
    if request is None:
        return ""
    try:
        url = request.url
    except RuntimeError:  # httpx2 raises when an exception was made without a request
        return ""
    host = getattr(url, "host", "")
    if not isinstance(host, str) or not host:
        return ""
    port = getattr(url, "port", None)
    path = str(getattr(url, "path", "") or "")
    for suffix in _API_PATHS:
        if path.endswith(suffix):
            path = path[: -len(suffix)]
            break
    netloc = f"[{host}]" if ":" in host else host
    return f"{url.scheme}://{netloc}{f':{port}' if port else ''}{path.rstrip('/')}"


def connection_failure(source: str, exc: BaseException, kind: str = "") -> Failure:
    """A connection failure, naming the endpoint it could not reach when the request says."""
    where = endpoint_of(exc)
    detail = f" ({kind})" if kind else ""
    return Failure(
        "connection", True, f"{source}: connection failed{' to ' + where if where else ''}{detail}"
    )


def failure_for_transport(source: str, exc: BaseException) -> Failure | None:
    """Timeouts and connection failures (the SDK's or raw ``httpx2`` ones raised mid-stream)."""
    if isinstance(exc, httpx2.TimeoutException):
        return Failure("timeout", True, f"{source}: request timed out ({type(exc).__name__})")
    if isinstance(exc, httpx2.TransportError):
        return connection_failure(source, exc, type(exc).__name__)
    if isinstance(exc, IncompleteStreamError):
        return Failure("stream_error", True, f"{source}: {exc}")
    return None


def wire_error_fields(body: object) -> tuple[str | None, str | None, str | None]:
    """``(type, code, message)`` from an error body shaped ``{"error": {...}}`` or ``{...}``."""
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping):
            return (
                _str_or_none(inner.get("type")),
                _str_or_none(inner.get("code")),
                _str_or_none(inner.get("message")),
            )
        if isinstance(inner, str):
            return None, None, inner
    if isinstance(body, str):
        return None, None, body
    return None, None, None


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None
