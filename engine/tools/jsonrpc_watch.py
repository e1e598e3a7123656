"""Watch one MCP transport's JSON-RPC traffic for what the SDK does not tell its caller.

The SDK drops a reply whose id matches no request (the caller then waits out its whole
timeout), and it reports a closed connection with the same code, -32000, that the JSON-RPC spec
gives servers for their own errors. Sitting between the transport and the client, this sees
which requests went out, which replies came back and whether the stream ended, so a reply to
nothing is a protocol fault at once and an error reply is never mistaken for a crash.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Self

import anyio
from mcp.client._transport import ReadStream, Transport, TransportStreams, WriteStream
from mcp.shared.message import SessionMessage
from mcp_types.jsonrpc import JSONRPCError, JSONRPCRequest, JSONRPCResponse

_ENDED = (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError)


class TrafficWatch:
    """What one connection has sent and received; ``closed`` once its stream has ended."""

    def __init__(self, on_unmatched: Callable[[str], None]) -> None:
        self.closed = False
        self._pending: set[str] = set()  # ids sent and not answered; "7" and 7 are one id, as in the SDK
        self._on_unmatched = on_unmatched

    def sent(self, item: SessionMessage) -> None:
        if isinstance(item.message, JSONRPCRequest):
            self._pending.add(str(item.message.id))

    def received(self, item: SessionMessage | Exception) -> None:
        if isinstance(item, Exception):
            return
        message = item.message
        if isinstance(message, JSONRPCResponse | JSONRPCError):
            key = str(message.id)
            if message.id is not None and key in self._pending:
                self._pending.discard(key)
            else:
                kind = "an error reply" if isinstance(message, JSONRPCError) else "a reply"
                self._on_unmatched(f"{kind} with id {message.id!r}, which matches no request sent")


class _WatchedRead:
    def __init__(self, inner: ReadStream[SessionMessage | Exception], watch: TrafficWatch) -> None:
        self._inner = inner
        self._watch = watch

    @property
    def last_context(self) -> object:
        """The SDK reads the sender's context from the stream it iterates, when there is one."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            item = await self._inner.receive()
        except _ENDED:
            self._watch.closed = True
            raise
        self._watch.received(item)
        return item

    async def aclose(self) -> None:
        self._watch.closed = True
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


class _WatchedWrite:
    def __init__(self, inner: WriteStream[SessionMessage], watch: TrafficWatch) -> None:
        self._inner = inner
        self._watch = watch

    async def send(self, item: SessionMessage, /) -> None:
        self._watch.sent(item)  # before the write: a fast reply may arrive before send returns
        try:
            await self._inner.send(item)
        except _ENDED:
            self._watch.closed = True
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


@asynccontextmanager
async def watched(transport: Transport, watch: TrafficWatch) -> AsyncIterator[TransportStreams]:
    """``transport`` with its streams under ``watch``."""
    async with transport as (read, write):
        yield _WatchedRead(read, watch), _WatchedWrite(write, watch)


__all__ = ["TrafficWatch", "watched"]
