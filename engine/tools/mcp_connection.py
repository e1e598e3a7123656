"""One live client session to one MCP server, over stdio, streamable HTTP or legacy SSE.

The ``mcp`` client is an anyio context: it must be entered and left by the same task. Each
connection therefore has an owner task that opens the client, waits until asked to stop, and
closes it; trials call tools concurrently through the open session. A server that dies is
restarted on the next call (a bounded number of times), and every child process is reaped on
close, on error and on cancellation.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import os
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

import mcp.types as mtypes
from mcp import Client, MCPError
from mcp_types.jsonrpc import CONNECTION_CLOSED, REQUEST_TIMEOUT

from proctor.engine.tools.jsonrpc_watch import TrafficWatch, watched
from proctor.engine.tools.mcp_content import record_content
from proctor.engine.tools.mcp_http import HttpFailures, http_transport
from proctor.engine.tools.mcp_launch import ServerStartError, launched
from proctor.engine.tools.mcp_notices import NoticeBoard
from proctor.engine.tools.server_env import child_env, env_note
from proctor.engine.tools.server_secrets import server_secrets
from proctor.engine.tools.stderr_tail import stderr_tail
from proctor.engine.tools.stdio_lines import stdio_lines
from proctor.engine.tools.supervise import DEFAULT_LOG_BYTES, kill_group, supervised
from proctor.engine.tools.surface import from_mcp_tool
from proctor.engine.tools.tool_filter import is_offered
from proctor.engine.tools.toolbox import ToolCallOutcome, ToolSpec
from proctor.engine.version import proctor_version
from proctor.scenarios.schema import HttpServer, ServerConfig, StdioServer
from proctor.store.error_text import error_text
from proctor.store.events import ServerConnected
from proctor.store.redaction import redact, register_secrets, registered_secrets
from proctor.store.run_files import absolute

MAX_RESTARTS = 3
START_TIMEOUT_S = 30.0
PROTOCOL_GRACE_S = 1.0
_MAX_NAME_CHARS = 100
# What the SDK's streamable HTTP client synthesizes (with -32000) when a reply can never arrive.
_HTTP_ABANDONED = "SSE stream ended without a response"


class ProtocolFault(Exception):
    """The server broke the protocol (invalid JSON-RPC) instead of answering."""


class McpConnection:
    def __init__(
        self, name: str, config: ServerConfig, log_dir: Path, log_bytes: int = DEFAULT_LOG_BYTES
    ) -> None:
        self.name = name
        self.config = config
        register_secrets(server_secrets(config))
        # Absolute: the supervisor runs in the server's cwd, where a relative path means another file.
        self.log_path = absolute(log_dir) / f"{_safe_name(name)}.stderr.log"
        self.log_bytes = log_bytes
        self.scratch: Path | None = None  # a per-trial server's ${PROCTOR_TRIAL_DIR}
        log_dir.mkdir(parents=True, exist_ok=True)
        self._client: Client | None = None
        self._owner: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._fault = asyncio.Event()
        self._last_fault = ""
        self._lock = asyncio.Lock()
        self._watch = TrafficWatch(self._protocol_fault)
        self._generation = 0
        self.restarts = 0
        self.tools: list[mtypes.Tool] = []
        self._specs: tuple[list[mtypes.Tool], list[ToolSpec]] | None = None
        self.notices = NoticeBoard(name, config.roots, config.sampling)
        self.connected: ServerConnected | None = None
        self._http = HttpFailures()

    @property
    def description(self) -> str:
        return self.config.description

    async def start(self) -> None:
        async with self._lock:
            if self._client is None:
                await self._start_locked()

    async def _start_locked(self) -> None:
        ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
        self._stop = asyncio.Event()
        self._owner = asyncio.create_task(self._own(ready, self._stop), name=f"mcp-{self.name}")
        try:
            async with asyncio.timeout(START_TIMEOUT_S):
                client = await asyncio.shield(ready)
        except TimeoutError as exc:
            await self._stop_owner()
            raise ServerStartError(
                f"{self.name}: no MCP handshake within {START_TIMEOUT_S:.0f}s{self._stderr_tail()}{self._env_note()}"
            ) from exc
        except BaseException as exc:
            await self._stop_owner()
            if isinstance(exc, ServerStartError | asyncio.CancelledError):
                raise
            why = isinstance(self.config, HttpServer) and self._http.describe(self.config, exc)
            raise ServerStartError(
                f"{self.name}: could not start: {why or _describe(exc)}{self._stderr_tail()}{self._env_note()}"
            ) from exc
        try:  # it shook hands; it may still die or answer tools/list with a line the SDK drops
            async with asyncio.timeout(START_TIMEOUT_S):
                result = await client.list_tools(cache_mode="bypass")
        except Exception as exc:
            await self._stop_owner()
            why = (
                f"no answer within {START_TIMEOUT_S:.0f}s"
                if isinstance(exc, TimeoutError)
                else _describe(exc)
            )
            raise ServerStartError(
                f"{self.name}: could not list its tools: {why}{self._stderr_tail()}"
            ) from exc
        self.tools = list(result.tools)
        self.connected = _connected(self.name, client)
        self._client = client
        self._generation += 1

    async def _own(self, ready: asyncio.Future[Client], stop: asyncio.Event) -> None:
        self._watch = TrafficWatch(self._protocol_fault)
        with open(self.log_path, "a", encoding="utf-8", errors="replace") as log:
            try:
                async with AsyncExitStack() as stack:
                    client = await stack.enter_async_context(self._client_for(log))
                    if not ready.done():
                        ready.set_result(client)
                    await stop.wait()
            except BaseException as exc:
                if not ready.done():
                    ready.set_exception(exc if isinstance(exc, Exception) else ServerStartError(repr(exc)))
                    ready.exception()  # marked seen: a start given up on (timeout) never awaits it
                if isinstance(exc, asyncio.CancelledError):
                    raise
            finally:
                self._client = None

    @asynccontextmanager
    async def _client_for(self, log: TextIO) -> AsyncIterator[Client]:
        cfg = self.config
        if isinstance(cfg, StdioServer):
            # The child gets what servers need of our environment (never a secret) plus cfg.env.
            # The supervisor between them reaps the server's whole process group, even after kill -9.
            group = self.log_path.with_name(f".{self.log_path.name}.{uuid.uuid4().hex[:12]}.pid")
            secrets = _secrets_file(registered_secrets())  # headers: values too, never in any env
            # Our own line reader, not the SDK's stdio_client: its reader is quadratic in a line's length.
            lines = stdio_lines(
                sys.executable,
                supervised(
                    cfg.command, cfg.args, self.log_path, self.log_bytes, pid_file=group, secrets_file=secrets
                ),
                child_env(cfg.env, cfg.env_passthrough),
                cfg.cwd,
                log,
            )
            transport = watched(lines, self._watch)
            try:
                async with Client(transport, **self._client_hooks()) as client:
                    yield client
            finally:
                kill_group(group)  # a supervisor killed by -9 left its server's group behind
                if secrets is not None:
                    secrets.unlink(missing_ok=True)  # the supervisor removes it; unless it never started
            return
        assert isinstance(cfg, HttpServer)
        async with AsyncExitStack() as stack:
            if cfg.launch is not None:
                await stack.enter_async_context(
                    launched(
                        cfg.launch,
                        cfg.url,
                        log,
                        self.log_path,
                        self.log_bytes,
                        START_TIMEOUT_S,
                        registered_secrets(),  # headers: values too, never in the server's env
                    )
                )
            self._http = HttpFailures()
            client = await stack.enter_async_context(
                Client(watched(http_transport(cfg, self._http), self._watch), **self._client_hooks())
            )
            yield client

    def _client_hooks(self) -> dict[str, Any]:
        """What the client declares and answers: who it is (proctor and its version, not the
        SDK's "mcp 0.1.0"), roots, logs at info and above, and a recorded refusal of sampling and
        elicitation."""
        board = self.notices
        return {
            "client_info": mtypes.Implementation(name="proctor", version=proctor_version()),
            "message_handler": self._on_message,
            "list_roots_callback": board.on_list_roots,
            "logging_callback": board.on_log,
            "log_level": "info",
            "sampling_callback": board.on_sampling,
            "elicitation_callback": board.on_elicitation,
        }

    def specs(self) -> list[ToolSpec]:
        """The listed tools as the model sees them; built once per listing (every trial on a shared
        server asks), so they are shared: nobody may change a spec's schema in place."""
        tools = self.tools
        if self._specs is None or self._specs[0] is not tools:
            built = [
                ToolSpec(
                    name=t.name,
                    description=t.description or "",
                    input_schema=dict(t.input_schema),
                    server=self.name,
                    server_description=self.description,
                    title=definition.title,
                    output_schema=definition.output_schema,
                    annotations=definition.annotations,
                )
                for t in tools
                if is_offered(self.config, t.name)  # the config's include_tools/exclude_tools
                for definition in (from_mcp_tool(self.name, t),)
            ]
            self._specs = (tools, built)
        return list(self._specs[1])

    async def call(
        self, tool: str, arguments: dict[str, Any], timeout_s: float, *, keep_raw: bool = False
    ) -> ToolCallOutcome:
        """``keep_raw`` also returns the JSON-RPC result as sent (for calls made by hand)."""
        with self.notices.call() as (inbox, on_progress):
            outcome = await self._call(tool, arguments, timeout_s, on_progress, keep_raw)
            # The SDK hands each notification to a task of its own but wakes the caller at once
            # on the response: one turn of the loop lets those read before it reach this inbox.
            await asyncio.sleep(0)
        notices = inbox.result(self.name)
        return dataclasses.replace(outcome, notices=notices) if notices else outcome

    async def _call(
        self, tool: str, arguments: dict[str, Any], timeout_s: float, on_progress: Any, keep_raw: bool
    ) -> ToolCallOutcome:
        start = time.perf_counter()
        client = self._client
        if client is None:
            try:
                await self._restart()
            except ServerStartError as exc:
                return self._outcome(tool, str(exc), start, "server_unavailable")
            client = self._client
            if client is None:
                return self._outcome(tool, f"{self.name}: server is not running", start, "server_unavailable")
        generation = self._generation
        watch = self._watch
        fault = self._fault
        http_before = self._http.last
        try:
            result = await self._call_or_fault(client, tool, arguments, timeout_s, fault, on_progress)
        except ProtocolFault as exc:
            return self._outcome(
                tool, f"{self.name}.{tool}: {exc}{self._stderr_tail()}", start, "protocol_error"
            )
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT and time.perf_counter() - start >= timeout_s:
                return self._outcome(
                    tool, f"{self.name}.{tool}: no answer within {timeout_s:g}s", start, "timeout"
                )
            if self._connection_lost(exc, watch):
                await self._mark_dead(generation)
                where = self._http_detail(exc, http_before) or self._http_where()
                msg = f"{self.name}.{tool}: {exc.message}{where}{self._stderr_tail()}"
                return self._outcome(tool, msg, start, "server_crashed")
            # The server answered with a JSON-RPC error: the tool's failure, and the server lives on.
            msg = f"{self.name}.{tool}: error {exc.code}: {exc.message}{self._http_detail(exc, http_before)}"
            return self._outcome(tool, msg, start, "tool_error")
        except TimeoutError:
            return self._outcome(
                tool, f"{self.name}.{tool}: no answer within {timeout_s:g}s", start, "timeout"
            )
        except Exception as exc:
            await self._mark_dead(generation)
            why = self._http_detail(exc, http_before) or f": {_describe(exc)}"
            msg = f"{self.name}.{tool}: connection failed{why}{self._stderr_tail()}"
            return self._outcome(tool, msg, start, "server_crashed")
        if self._owner is not None and self._owner.done():
            await self._mark_dead(generation)
        recorded = record_content(result)
        return ToolCallOutcome(
            server=self.name,
            tool=tool,
            content=recorded.text,
            is_error=bool(result.is_error),
            latency_s=time.perf_counter() - start,
            error_type="tool_error" if result.is_error else "",
            structured=result.structured_content if isinstance(result.structured_content, dict) else None,
            blocks=recorded.blocks,
            blobs=recorded.blobs,
            raw=result.model_dump(mode="json", by_alias=True, exclude_none=True) if keep_raw else None,
        )

    async def _call_or_fault(
        self,
        client: Client,
        tool: str,
        arguments: dict[str, Any],
        timeout_s: float,
        fault: asyncio.Event,
        on_progress: Any,
    ) -> mtypes.CallToolResult:
        """The call's result, unless the server sent invalid JSON-RPC and then no answer.

        Without this a server that answers with garbage looks like one that is slow: the call
        would wait for the whole timeout and be reported as a timeout.
        """
        call = asyncio.ensure_future(
            client.call_tool(tool, arguments, read_timeout_seconds=timeout_s, progress_callback=on_progress)
        )
        faulted = asyncio.ensure_future(fault.wait())
        try:
            await asyncio.wait({call, faulted}, return_when=asyncio.FIRST_COMPLETED)
            if not call.done():
                try:
                    async with asyncio.timeout(PROTOCOL_GRACE_S):
                        return await asyncio.shield(call)
                except TimeoutError:
                    raise ProtocolFault(
                        f"the server sent invalid JSON-RPC and no answer: {self._last_fault}"
                    ) from None
            return call.result()
        finally:
            faulted.cancel()
            if not call.done():
                call.cancel()
                with contextlib.suppress(BaseException):
                    await call

    def _connection_lost(self, exc: MCPError, watch: TrafficWatch) -> bool:
        """Whether an error came from the connection ending rather than from the server's reply;
        -32000 is both the SDK's "connection closed" and the spec's generic server error."""
        if watch.closed or (self._owner is not None and self._owner.done()):
            return True
        return (
            isinstance(self.config, HttpServer)
            and exc.code == CONNECTION_CLOSED
            and exc.message == _HTTP_ABANDONED
        )

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            self._protocol_fault(_describe(message))

    def _protocol_fault(self, description: str) -> None:
        """Invalid traffic: calls in flight get ``PROTOCOL_GRACE_S`` to be answered, then fail."""
        self._last_fault = redact(description)[:300]  # redacted before the cut
        fault, self._fault = self._fault, asyncio.Event()
        fault.set()

    def _outcome(self, tool: str, message: str, start: float, kind: str) -> ToolCallOutcome:
        return ToolCallOutcome(self.name, tool, message, True, time.perf_counter() - start, kind)

    async def _mark_dead(self, generation: int) -> None:
        async with self._lock:
            if self._generation == generation and self._client is not None:
                await self._stop_owner()

    async def _restart(self) -> None:
        async with self._lock:
            if self._client is not None:
                return
            if self.restarts >= MAX_RESTARTS:
                raise ServerStartError(
                    f"{self.name}: gave up after {MAX_RESTARTS} restarts{self._stderr_tail()}"
                )
            self.restarts += 1
            await self._start_locked()

    async def _stop_owner(self) -> None:
        self._stop.set()
        owner = self._owner
        if owner is not None and not owner.done():
            try:
                async with asyncio.timeout(10):
                    await asyncio.shield(owner)
            except TimeoutError:
                owner.cancel()
                with contextlib.suppress(BaseException):
                    await owner
            except BaseException:
                pass
        self._client = None

    async def aclose(self) -> None:
        async with self._lock:
            await self._stop_owner()

    def _http_detail(self, exc: BaseException, before: object) -> str:
        """The HTTP exchange behind a failed call (method, URL, status), when there was a new one.

        The SDK reports an HTTP error status as a bare JSON-RPC error; ``before`` is the failure
        recorded when the call began, so another call's earlier failure is never blamed.
        """
        if not isinstance(self.config, HttpServer):
            return ""
        why = self._http.describe(self.config, exc, since=before)
        return f": {why}" if why else ""

    def _http_where(self) -> str:
        return f" (the connection to {self.config.url} ended)" if isinstance(self.config, HttpServer) else ""

    def _env_note(self) -> str:
        """For a process proctor started: the variables of its environment the server did not get."""
        cfg = self.config
        launch = cfg if isinstance(cfg, StdioServer) else cfg.launch
        return env_note(launch.env, launch.env_passthrough) if launch is not None else ""

    def _stderr_tail(self) -> str:
        tail = stderr_tail(self.log_path)
        return ("\n[server stderr]\n" + "\n".join(tail)) if tail else ""


def _secrets_file(secrets: Mapping[str, str]) -> Path | None:
    """A private file (0600, outside the run's folders) that hands ``secrets`` to a supervisor."""
    if not secrets:
        return None
    fd, name = tempfile.mkstemp(prefix="proctor-secrets-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(dict(secrets), f)
    return Path(name)


def _connected(server: str, client: Client) -> ServerConnected:
    info = client.server_info
    caps = client.server_capabilities
    return ServerConnected(
        server=server,
        name=info.name if info else "",
        version=info.version if info else "",
        protocol_version=client.protocol_version,
        capabilities=caps.model_dump(mode="json", exclude_none=True, by_alias=True),
        instructions=client.instructions or "",
    )


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions)
    return error_text(exc)  # redacted before any cut (a validation error's own cut included)


def _safe_name(name: str) -> str:
    """A file name for a server's log: redacted, ASCII letters, digits and ``-_.`` only, short
    enough for any file system, never ``.`` or ``..``; a long name keeps a hash to stay distinct."""
    safe = "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "_" for c in redact(name)).strip(".")
    if len(safe) > _MAX_NAME_CHARS:
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        safe = f"{safe[: _MAX_NAME_CHARS - 13]}-{digest}"
    return safe or "server"
