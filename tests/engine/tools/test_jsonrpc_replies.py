"""Replies a hand-written server sends that the SDK does not flag: error replies and stray ids.

The server (``tests/fakes/broken_jsonrpc_server.py``) is plain Python writing JSON-RPC by hand,
so it can send what no SDK server would.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from proctor.engine.tools.mcp_toolbox import McpToolbox, ServerPool
from proctor.scenarios.schema import StdioServer
from tests.engine.mcp_helpers import FAKES, child_pids

pytestmark = pytest.mark.slow


def _broken(reply: str, calls: Path, *extra: str, timeout_s: float = 60) -> StdioServer:
    args = [str(FAKES / "broken_jsonrpc_server.py"), "--reply", reply, "--calls", str(calls), *extra]
    return StdioServer(command=sys.executable, args=args, timeout_s=timeout_s)


@pytest.mark.parametrize("code", [-32000, -32001, -32603, -32099])
async def test_an_error_reply_is_the_tools_error_and_the_server_is_kept(tmp_path: Path, code: int) -> None:
    calls = tmp_path / "calls.txt"
    pool = ServerPool(tmp_path / "logs")
    box = await McpToolbox.open(pool, {"broken": _broken("error", calls, "--code", str(code))}, None)
    try:
        outs = [await asyncio.wait_for(box.call("probe", {"x": str(i)}), 20) for i in range(5)]
    finally:
        await box.aclose()
        await pool.aclose()
    for out in outs:
        assert out.is_error and out.error_type == "tool_error", out
        assert f"error {code}: backend unavailable" in out.content
        assert "gave up" not in out.content
    pids = calls.read_text().split()
    assert len(pids) == 5 and len(set(pids)) == 1, "the server was restarted for an error reply"
    assert child_pids() == set()


async def test_a_reply_to_no_request_is_a_protocol_error_within_the_grace_period(tmp_path: Path) -> None:
    pool = ServerPool(tmp_path / "logs")
    box = await McpToolbox.open(pool, {"broken": _broken("unmatched", tmp_path / "calls.txt")}, None)
    try:
        started = time.monotonic()
        out = await asyncio.wait_for(box.call("probe", {"x": "1"}), 30)
        elapsed = time.monotonic() - started
    finally:
        await box.aclose()
        await pool.aclose()
    assert out.is_error and out.error_type == "protocol_error", out
    assert "matches no request" in out.content and "never-sent-" in out.content
    assert elapsed < 10, f"waited {elapsed:.1f}s: the stray reply was not noticed"


async def test_a_server_that_exits_is_still_a_crash(tmp_path: Path) -> None:
    from tests.engine.mcp_helpers import faulty

    pool = ServerPool(tmp_path / "logs")
    box = await McpToolbox.open(pool, {"faulty": faulty("crash")}, None)
    try:
        out = await asyncio.wait_for(box.call("probe", {"x": "1"}), 30)
    finally:
        await box.aclose()
        await pool.aclose()
    assert out.is_error and out.error_type == "server_crashed", out
