"""Processes proctor starts for MCP servers: the environment a child gets, and the command that
serves an HTTP server's URL (started, waited for, and reaped with its whole process group)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import sys
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TextIO

import httpx2

from proctor.engine.tools.server_env import child_env
from proctor.engine.tools.supervise import supervised
from proctor.scenarios.schema import StdioServer


class ServerStartError(Exception):
    """The server could not be started or did not complete the MCP handshake."""


@asynccontextmanager
async def launched(
    cfg: StdioServer,
    url: str,
    log: TextIO,
    log_path: Path,
    log_bytes: int,
    start_timeout_s: float,
    secrets: Mapping[str, str] | None = None,
) -> AsyncIterator[None]:
    """Start the process that serves an HTTP server's URL; wait for its port; reap it on exit.

    ``secrets`` ({value: name}, e.g. from the server's ``headers:``) reach the log's redactor
    through the supervisor's stdin, never the server's environment."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        *supervised(cfg.command, cfg.args, log_path, log_bytes, stdout_to_log=True, secrets_on_stdin=True),
        env=child_env(cfg.env, cfg.env_passthrough),
        cwd=cfg.cwd,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.DEVNULL,  # the server's stdout reaches the log through the supervisor
        stderr=log,
        start_new_session=True,
    )
    try:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(dict(secrets or {})).encode())
        with contextlib.suppress(ConnectionError):
            await proc.stdin.drain()
        proc.stdin.close()
        host, port = _host_port(url)
        deadline = time.monotonic() + start_timeout_s
        while not await asyncio.to_thread(_port_open, host, port):
            if proc.returncode is not None:
                raise ServerStartError(
                    f"launch command exited with status {proc.returncode} before serving {url}"
                )
            if time.monotonic() > deadline:
                raise ServerStartError(f"nothing listened on {url} within {start_timeout_s:.0f}s")
            await asyncio.sleep(0.05)
        yield
    finally:
        await _reap(proc)


async def _reap(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is not None:  # the supervisor is gone (killed?): its group may not be
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        return
    for sig, wait in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 3.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            async with asyncio.timeout(wait):
                await asyncio.shield(proc.wait())
            return
        except TimeoutError:
            continue


def _host_port(url: str) -> tuple[str, int]:
    parsed = httpx2.URL(url)
    return parsed.host, parsed.port or (443 if parsed.scheme == "https" else 80)


def _port_open(host: str, port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.2):
        return True
    return False


__all__ = ["ServerStartError", "launched"]
