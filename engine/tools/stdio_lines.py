"""The stdio transport proctor hands the ``mcp`` client: the server's stdout read in linear time.

The SDK's own ``stdio_client`` re-splits its whole pending buffer on every 64 KiB chunk, so one
30 MB line costs seconds per message (quadratic) and a call can time out while its answer is
being read. Here the chunks of a line are kept in a list and joined once, when its newline
arrives, and each whole line is parsed from bytes straight into a JSON-RPC message. A line is
bounded (``MAX_LINE_BYTES``): beyond it the line is dropped and the session is told why, so a
server that never ends its line cannot fill proctor's memory.

The process is the one proctor starts (the supervisor that reaps the server's process group);
shutdown follows the spec: close stdin, wait, then SIGTERM and SIGKILL the group, every wait
bounded and shielded so a cancelled caller cannot leak a live server.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TextIO

import anyio
import anyio.abc
import mcp_types as types
from anyio.streams.memory import MemoryObjectSendStream
from mcp.client._transport import TransportStreams
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage

logger = logging.getLogger(__name__)

MAX_LINE_BYTES = 256 * 1024 * 1024
_READ_BYTES = 1024 * 1024
_EXIT_GRACE_S = 2.0
_TERM_GRACE_S = 2.0
_FLUSH_S = 0.5


class LineTooLong(ValueError):
    """A server wrote more than ``MAX_LINE_BYTES`` on stdout without a newline."""


@asynccontextmanager
async def stdio_lines(
    command: str,
    args: list[str],
    env: dict[str, str],
    cwd: str | Path | None,
    errlog: TextIO,
    max_line_bytes: int | None = None,
) -> AsyncIterator[TransportStreams]:
    """Start ``command`` in a session of its own (with the SDK's safe variables plus ``env``)
    and yield the read and write streams a ``mcp.Client`` takes as its transport."""
    limit = MAX_LINE_BYTES if max_line_bytes is None else max_line_bytes
    process = await anyio.open_process(
        [command, *args],
        env=get_default_environment() | env,
        stderr=errlog,
        cwd=cwd,
        start_new_session=True,
    )
    incoming_tx, incoming = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    outgoing, outgoing_rx = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()

    async def write_all() -> None:
        assert process.stdin is not None
        try:
            async with outgoing_rx:
                async for message in outgoing_rx:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send(data.encode() + b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await incoming_tx.aclose()  # the session sees the end instead of waiting forever
        finally:
            writer_done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(_read_all, process, incoming_tx, limit)
        tg.start_soon(write_all)
        try:
            yield incoming, outgoing
        finally:
            with anyio.CancelScope(shield=True):
                incoming.close()
                outgoing.close()
                with anyio.move_on_after(_FLUSH_S):
                    await writer_done.wait()
                await _stop(process)
                for stream in (incoming, outgoing, incoming_tx, outgoing_rx):
                    await stream.aclose()
            tg.cancel_scope.cancel()


async def _read_all(
    process: anyio.abc.Process, out: MemoryObjectSendStream[SessionMessage | Exception], max_line: int
) -> None:
    """Whole lines from the server's stdout, each parsed once; then drain what is left, so a
    server still writing at shutdown is not blocked on a full pipe and can exit."""
    stdout = process.stdout
    assert stdout is not None
    with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
        async with out:
            try:
                await _deliver_lines(stdout, out, max_line)
            finally:
                with (
                    anyio.CancelScope(shield=True),
                    contextlib.suppress(
                        anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError
                    ),
                ):
                    while True:
                        await stdout.receive(_READ_BYTES)


async def _deliver_lines(
    stdout: anyio.abc.ByteReceiveStream,
    out: MemoryObjectSendStream[SessionMessage | Exception],
    max_line: int,
) -> None:
    pieces: list[bytes] = []
    held = 0
    dropping = False  # inside a line already reported as too long
    with contextlib.suppress(anyio.EndOfStream):
        while True:
            chunk = await stdout.receive(_READ_BYTES)
            start = 0
            while (end := chunk.find(b"\n", start)) != -1:
                size = held + end - start
                if dropping:
                    dropping = False
                elif size > max_line:
                    await out.send(_too_long(max_line))
                else:
                    pieces.append(chunk[start:end])
                    line = b"".join(pieces)
                    if line.strip():
                        await out.send(_message(line))
                pieces.clear()
                held = 0
                start = end + 1
            if dropping or start == len(chunk):
                continue
            held += len(chunk) - start
            if held > max_line:
                pieces.clear()
                held = 0
                dropping = True
                await out.send(_too_long(max_line))
            else:
                pieces.append(chunk[start:])


def _message(line: bytes) -> SessionMessage | Exception:
    """One JSON-RPC message, or the reason it is not one (the session hands it to proctor)."""
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError:
        pass
    try:  # again as text: an error quotes the line as text, as the SDK's did (bad UTF-8 is replaced)
        return SessionMessage(
            types.jsonrpc_message_adapter.validate_json(line.decode(errors="replace"), by_name=False)
        )
    except ValueError as exc:
        # Logged as the SDK's reader did (the engine log's guard redacts and cuts it).
        logger.exception("Failed to parse JSONRPC message from server")
        return exc


def _too_long(limit: int) -> LineTooLong:
    logger.warning("Dropped a stdout line of more than %d bytes from an MCP server", limit)
    return LineTooLong(
        f"the server wrote a stdout line longer than {limit:,} bytes (the most proctor reads as one "
        "JSON-RPC message); the line was dropped"
    )


async def _stop(process: anyio.abc.Process) -> None:
    """Close stdin, give the server a grace period, then end its whole process group."""
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        if process.stdin is not None:
            await process.stdin.aclose()
    if not await _exited(process, _EXIT_GRACE_S):
        for sig, grace in ((signal.SIGTERM, _TERM_GRACE_S), (signal.SIGKILL, _TERM_GRACE_S)):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, sig)  # the leader's pid is the group's (start_new_session)
            if await _exited(process, grace):
                break
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        if process.stdout is not None:  # ends the reader's drain even if a survivor holds the pipe
            await process.stdout.aclose()
    if process.returncode is None:
        return  # unkillable: abandoned, as the SDK's own transport does
    # Closes the pipe transports too (a grandchild may hold their other ends), then reaps.
    with (
        anyio.move_on_after(_EXIT_GRACE_S),
        contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError),
    ):
        await process.aclose()


async def _exited(process: anyio.abc.Process, timeout_s: float) -> bool:
    """Whether the process ended within ``timeout_s``; polled, because ``wait()`` also waits for
    the pipes, which a grandchild that inherited them can hold open."""
    with anyio.move_on_after(timeout_s):
        while process.returncode is None:  # noqa: ASYNC110 - no event fires on exit without wait()
            await anyio.sleep(0.01)
    return process.returncode is not None


__all__ = ["MAX_LINE_BYTES", "LineTooLong", "stdio_lines"]
