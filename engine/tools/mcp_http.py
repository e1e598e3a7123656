"""The HTTP side of an MCP connection: streamable HTTP or legacy SSE, and failures a user can act on.

The mcp SDK turns an HTTP error status into a JSON-RPC error ("Server returned an error
response") and drops the URL and status. proctor records the last failed response of its own
HTTP client, so a failed start names the request, the URL and the status, and a 405 on POST,
which is what an SSE-only server answers to streamable HTTP, says how to configure it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from proctor.engine.http_limits import CappedTransport
from proctor.scenarios.schema import HttpServer

# The SSE stream stays open between events; this long without one is a dead server, not a slow one.
SSE_READ_TIMEOUT_S = 300.0


class HttpFailures:
    """The last HTTP error response proctor's client saw (method, URL, status)."""

    def __init__(self) -> None:
        self.last: tuple[str, str, int, str] | None = None

    async def on_response(self, response: httpx2.Response) -> None:
        if response.status_code >= 400:
            request = response.request
            self.last = (request.method, str(request.url), response.status_code, response.reason_phrase)

    def client(self, **kwargs: Any) -> httpx2.AsyncClient:
        # Capped: a JSON reply at 64 MiB, each event-stream line at 4 MiB (an SSE stream lives as long
        # as the session, so its total is not capped).
        transport = CappedTransport(cap_event_streams=False)
        return httpx2.AsyncClient(event_hooks={"response": [self.on_response]}, transport=transport, **kwargs)

    def describe(self, cfg: HttpServer, exc: BaseException, *, since: object = None) -> str:
        """Why the connection failed, in terms of the HTTP exchange, or "" if it was not HTTP.

        ``since`` is ``last`` as it was when the failed request began: a failure recorded before
        it belongs to another request and is not blamed.
        """
        if self.last is None or self.last is since:
            if _find(exc, httpx2.ConnectError) is not None:
                return f"cannot connect to {cfg.url} (nothing answers there; is the server running?)"
            if _find(exc, httpx2.TimeoutException) is not None:
                return f"{cfg.url} did not answer within {cfg.timeout_s:g}s"
            return ""
        method, url, status, reason = self.last
        text = f"{method} {url} answered HTTP {status} {reason}".rstrip()
        if status == 405 and method == "POST" and cfg.type != "sse":
            text += (
                "; the server looks like a legacy SSE server (it does not take streamable HTTP POSTs): "
                'set "type": "sse" on this server and give its SSE endpoint as url (often …/sse)'
            )
        elif status in (401, 403):
            text += "; check the server's headers (Authorization, API key)"
        elif status == 404:
            text += "; check the url's path (streamable HTTP is often …/mcp, SSE …/sse)"
        return text


@asynccontextmanager
async def http_transport(cfg: HttpServer, failures: HttpFailures) -> AsyncIterator[Any]:
    """The transport a ``Client`` runs over: SSE for ``type: sse``, streamable HTTP otherwise."""
    if cfg.type == "sse":

        def factory(
            headers: dict[str, str] | None = None,
            timeout: httpx2.Timeout | None = None,
            auth: httpx2.Auth | None = None,
        ) -> httpx2.AsyncClient:
            return failures.client(headers=headers, timeout=timeout, auth=auth)

        async with sse_client(
            cfg.url,
            headers=cfg.headers,
            timeout=cfg.timeout_s,
            sse_read_timeout=SSE_READ_TIMEOUT_S,
            httpx_client_factory=factory,
        ) as streams:
            yield streams
        return
    async with (
        failures.client(headers=cfg.headers, timeout=cfg.timeout_s) as http,
        streamable_http_client(cfg.url, http_client=http) as streams,
    ):
        yield streams


def _find(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    if isinstance(exc, kind):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            if (found := _find(inner, kind)) is not None:
                return found
    cause = exc.__cause__ or exc.__context__
    return _find(cause, kind) if cause is not None and cause is not exc else None


__all__ = ["HttpFailures", "http_transport"]
