"""A cap on what one HTTP response may bring in, for every client proctor talks HTTP with.

The provider SDKs and the MCP streamable HTTP client read a reply's body whole (or an SSE line
whole) before anything looks at it: a model endpoint or MCP server that streams an endless body
took 1.9 GB for one reply. This transport counts the bytes as they arrive and stops the
response at the cap. It asks for an uncompressed body and refuses a compressed one, since a
small compressed body can expand past any cap after the count.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2

MAX_RESPONSE_BYTES = (
    64 * 1024 * 1024
)  # a long streamed completion is a few MB; a tool result is capped far below
# An event stream's line is one small event; the SDKs rescan a growing line per chunk (quadratic),
# so an endless line must be cut long before the body cap.
MAX_EVENT_LINE_BYTES = 4 * 1024 * 1024


class ResponseTooLarge(httpx2.DecodingError):
    """A response body went past the cap (or came compressed); the reply cannot be used."""


class _CappedStream(httpx2.AsyncByteStream):
    def __init__(
        self, inner: httpx2.AsyncByteStream, limit: int | None, line_limit: int | None, url: str
    ) -> None:
        self._inner = inner
        self._limit = limit
        self._line_limit = line_limit
        self._url = url

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        line = 0  # bytes since the last line break
        async for chunk in self._inner:
            seen += len(chunk)
            if self._limit is not None and seen > self._limit:
                self._refuse(f"the response body passed {_mib(self._limit)}")
            if self._line_limit is not None:
                last = max(chunk.rfind(b"\n"), chunk.rfind(b"\r"))
                line = len(chunk) - last - 1 if last >= 0 else line + len(chunk)
                if line > self._line_limit:
                    self._refuse(f"one line of the response passed {_mib(self._line_limit)}")
            yield chunk

    def _refuse(self, what: str) -> None:
        raise ResponseTooLarge(
            f"{self._url}: {what} and was cut off; "
            "the endpoint is not sending a usable reply (check the server, or its base URL)"
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


class CappedTransport(httpx2.AsyncBaseTransport):
    """``httpx2``'s own transport with every response body capped at ``limit`` bytes, and each line
    of an event stream at ``line_limit`` (of every body with ``lines_everywhere``: the provider
    SDKs scan even a JSON reply to a streamed request as lines). Without ``cap_event_streams`` an
    event stream's total is not capped, only its lines: an MCP session's stream lives as long as
    the session."""

    def __init__(
        self,
        limit: int = MAX_RESPONSE_BYTES,
        line_limit: int = MAX_EVENT_LINE_BYTES,
        *,
        lines_everywhere: bool = False,
        cap_event_streams: bool = True,
        inner: httpx2.AsyncBaseTransport | None = None,
    ) -> None:
        self._limit = limit
        self._line_limit = line_limit
        self._lines_everywhere = lines_everywhere
        self._cap_event_streams = cap_event_streams
        self._inner = inner or httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request.headers["Accept-Encoding"] = "identity"
        response = await self._inner.handle_async_request(request)
        port = f":{request.url.port}" if request.url.port else ""
        url = f"{request.url.scheme}://{request.url.host}{port}{request.url.path}"  # no query: it may hold a key
        encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            await response.aclose()
            raise ResponseTooLarge(
                f"{url}: the response came compressed ({encoding}) although none was asked for"
            )
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        events = response.headers.get("Content-Type", "").startswith("text/event-stream")
        limit = self._limit if self._cap_event_streams or not events else None
        line_limit = self._line_limit if events or self._lines_everywhere else None
        response.stream = _CappedStream(response.stream, limit, line_limit, url)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def _mib(n: int) -> str:
    return f"{n / (1024 * 1024):g} MiB"


def too_large(exc: BaseException) -> ResponseTooLarge | None:
    """The cap's error behind ``exc``, however the SDK wrapped it (``APIConnectionError`` and the like)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ResponseTooLarge):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


__all__ = ["MAX_EVENT_LINE_BYTES", "MAX_RESPONSE_BYTES", "CappedTransport", "ResponseTooLarge", "too_large"]
