"""A tool call over HTTP that fails at the HTTP level names the request, the URL and the status."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from proctor.engine.tools.mcp_connection import McpConnection
from proctor.scenarios.schema import HttpServer
from proctor.scenarios.workspace import free_port

pytestmark = pytest.mark.slow
SERVER = Path(__file__).resolve().parents[2] / "fakes" / "failing_http_mcp_server.py"


def _start(port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, str(SERVER), str(port)], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, "the HTTP server did not start"
            time.sleep(0.05)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


@pytest.fixture
def gateway() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = free_port()
    proc = _start(port)
    try:
        yield f"http://127.0.0.1:{port}/mcp", proc
    finally:
        _stop(proc)


async def test_an_http_error_status_on_a_call_names_the_url_and_status(
    tmp_path: Path, gateway: tuple[str, subprocess.Popen[bytes]]
) -> None:
    url, _ = gateway
    connection = McpConnection("gw", HttpServer(url=url), tmp_path)
    await connection.start()
    try:
        ok = await connection.call("echo", {"text": "hi"}, 10)
        failed = await connection.call("through_gateway", {"text": "hi"}, 10)
        again = await connection.call("echo", {"text": "again"}, 10)
    finally:
        await connection.aclose()
    assert not ok.is_error and ok.content == "hi"
    assert failed.is_error and f"POST {url} answered HTTP 502 Bad Gateway" in failed.content
    # the gateway's failure is that call's: the next call succeeds and is not blamed for it
    assert not again.is_error and again.content == "again"


async def test_a_server_gone_after_start_is_named_by_its_url(
    tmp_path: Path, gateway: tuple[str, subprocess.Popen[bytes]]
) -> None:
    url, proc = gateway
    connection = McpConnection("gw", HttpServer(url=url), tmp_path)
    await connection.start()
    try:
        _stop(proc)
        gone = await connection.call("echo", {"text": "hi"}, 10)
    finally:
        await connection.aclose()
    assert gone.is_error
    assert url in gone.content, gone.content
