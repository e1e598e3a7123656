"""A scripted HTTP/1.1 server on 127.0.0.1 for wire-level tests of the real SDKs.

It runs its own event loop in a background thread, so the code under test does real HTTP
from the test's loop. Each request takes the next scripted reply (JSON, an SSE stream,
a hang, a dropped connection) and is recorded: method, path, headers, body.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
    529: "Overloaded",
}


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass(frozen=True)
class JsonReply:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SseReply:
    """An event stream; ``hang_after`` keeps the connection open after the last frame."""

    frames: list[str]
    delay_s: float = 0.0
    hang_after: bool = False


@dataclass(frozen=True)
class HangReply:
    """Read the request, never answer (until the fake stops)."""


@dataclass(frozen=True)
class DropReply:
    """Read the request, close the connection without a response."""


Reply = JsonReply | SseReply | HangReply | DropReply


class HttpFake:
    """Start with ``with HttpFake(...) as fake:``; script with ``enqueue``; inspect ``requests``."""

    def __init__(
        self,
        *,
        expected_path: str | None = None,
        default: Reply | None = None,
        refuse: Callable[[dict[str, Any]], JsonReply | None] | None = None,
    ) -> None:
        self._expected_path = expected_path
        self._default = default
        self._refuse = refuse
        self._script: deque[Reply] = deque()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._port = 0
        self._startup_error: BaseException | None = None

    @property
    def port(self) -> int:
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="http-fake", daemon=True)
        self._thread.start()
        if not self._ready.wait(5.0):
            raise RuntimeError("fake server did not start")
        if self._startup_error is not None:
            raise RuntimeError("fake server failed to start") from self._startup_error

    def stop(self) -> None:
        if self._loop is not None and self._stopping is not None:
            self._loop.call_soon_threadsafe(self._stopping.set)
        if self._thread is not None:
            self._thread.join(5.0)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:
            self._startup_error = exc
            self._ready.set()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        handlers: set[asyncio.Task[None]] = set()

        async def on_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            if task is not None:
                handlers.add(task)
            try:
                await self._serve(reader, writer)
            except (ConnectionError, asyncio.IncompleteReadError):
                pass
            finally:
                writer.close()
                if task is not None:
                    handlers.discard(task)

        server = await asyncio.start_server(on_connection, "127.0.0.1", 0)
        self._port = server.sockets[0].getsockname()[1]
        self._ready.set()
        await self._stopping.wait()
        server.close()
        for task in list(handlers):
            task.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            request = await _read_request(reader)
            if request is None:
                return
            refusal = self._refusal(request)
            with self._lock:
                self._requests.append(request)
                if refusal is not None:  # refused before any generation: the script waits
                    reply: Reply | None = refusal
                else:
                    reply = self._script.popleft() if self._script else self._default
            if self._expected_path is not None and request.path.split("?")[0] != self._expected_path:
                reply = JsonReply(404, {"error": {"type": "not_found_error", "message": request.path}})
            if reply is None:
                reply = JsonReply(500, {"error": {"type": "api_error", "message": "fake script exhausted"}})
            if not await self._send(reply, writer):
                return

    def _refusal(self, request: RecordedRequest) -> JsonReply | None:
        """The API's 400 for a request it refuses (``refuse``: tests/fakes/api_rules.py)."""
        if self._refuse is None or request.method != "POST" or not request.body:
            return None
        try:
            body = request.json()
        except ValueError:
            return None
        return self._refuse(body) if isinstance(body, dict) else None

    async def _send(self, reply: Reply, writer: asyncio.StreamWriter) -> bool:
        """Write ``reply``; returns whether the connection may serve another request."""
        assert self._stopping is not None
        if isinstance(reply, HangReply):
            await self._stopping.wait()
            return False
        if isinstance(reply, DropReply):
            return False
        if isinstance(reply, JsonReply):
            payload = json.dumps(reply.body).encode()
            headers = {
                "content-type": "application/json",
                "content-length": str(len(payload)),
                **reply.headers,
            }
            writer.write(_head(reply.status, headers) + payload)
            await writer.drain()
            return True
        writer.write(_head(200, {"content-type": "text/event-stream", "connection": "close"}))
        await writer.drain()
        for frame in reply.frames:
            if reply.delay_s:
                await asyncio.sleep(reply.delay_s)
            writer.write(frame.encode())
            await writer.drain()
        if reply.hang_after:
            await self._stopping.wait()
        return False


def _head(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def _read_request(reader: asyncio.StreamReader) -> RecordedRequest | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    request_line, *header_lines = head.decode("latin-1").split("\r\n")
    method, path, _ = request_line.split(" ", 2)
    headers: dict[str, str] = {}
    for line in header_lines:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = await _read_chunked(reader)
    else:
        body = await reader.readexactly(int(headers.get("content-length", "0")))
    return RecordedRequest(method, path, headers, body)


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    body = b""
    while True:
        size = int((await reader.readuntil(b"\r\n")).strip().split(b";")[0], 16)
        if size == 0:
            await reader.readuntil(b"\r\n")
            return body
        body += await reader.readexactly(size)
        await reader.readexactly(2)
