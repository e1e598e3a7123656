"""proctor's own stdio transport: whole lines however the pipe cuts them, and a bound on a line."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import anyio
import pytest
from mcp.shared.message import SessionMessage

from proctor.engine.tools import stdio_lines as stdio_module
from proctor.engine.tools.mcp_toolbox import McpToolbox, ServerPool
from proctor.engine.tools.stdio_lines import LineTooLong, stdio_lines
from proctor.scenarios.schema import StdioServer
from tests.engine.mcp_helpers import FAKES

pytestmark = pytest.mark.slow


def _note(i: int, text: str = "") -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "info", "data": f"{i}{text}"},
        }
    ).encode()


# Writes the pieces in the file it is given (a Python literal list of bytes) one by one, with pauses,
# so the reader meets lines split across reads, several lines in one read, and blank lines.
_WRITER = """
import ast, sys, time
for piece in ast.literal_eval(open(sys.argv[1]).read()):
    sys.stdout.buffer.write(piece)
    sys.stdout.buffer.flush()
    time.sleep(0.02)
time.sleep(30)
"""


async def _received(
    pieces: list[bytes], count: int, tmp_path: Path, limit: int | None = None
) -> list[object]:
    got: list[object] = []
    with open(tmp_path / "err.log", "w") as log:
        (tmp_path / "pieces").write_text(repr(pieces))
        args = ["-c", _WRITER, str(tmp_path / "pieces")]
        async with stdio_lines(sys.executable, args, {}, None, log, limit) as (read, _write):
            with anyio.fail_after(20):
                while len(got) < count:
                    got.append(await read.receive())
    return got


def _data(item: object) -> str:
    assert isinstance(item, SessionMessage), item
    params = item.message.model_dump()["params"]
    return str(params["data"])


async def test_lines_split_across_reads_and_packed_into_one_are_each_delivered_whole(tmp_path: Path) -> None:
    big = _note(2, "y" * 3_000_000)
    pieces = [
        _note(1)[:7],
        _note(1)[7:] + b"\n\n" + big[:100_000],
        big[100_000:] + b"\n" + _note(3) + b"\r\n",
    ]
    got = await _received(pieces, 3, tmp_path)
    assert [_data(g)[:1] for g in got] == ["1", "2", "3"]
    assert len(_data(got[1])) == 3_000_001


async def test_a_line_over_the_limit_is_dropped_with_a_clear_error_and_reading_goes_on(
    tmp_path: Path,
) -> None:
    long_line = b'{"jsonrpc": "2.0", "method": "x", "params": "' + b"z" * 5000
    pieces = [
        long_line[:3000],
        long_line[3000:],
        b'"}\n' + _note(1) + b"\n",
        b"q" * 900 + b"\n" + _note(2) + b"\n",
    ]
    got = await _received(pieces, 4, tmp_path, limit=1000)
    assert isinstance(got[0], LineTooLong) and "longer than 1,000 bytes" in str(got[0])
    assert _data(got[1]) == "1"  # the end of the dropped line was not taken for a message
    assert isinstance(got[2], ValueError) and not isinstance(got[2], LineTooLong)  # 900 q's: not JSON
    assert _data(got[3]) == "2"


async def test_a_line_with_no_end_is_a_protocol_error_naming_the_limit_not_a_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stdio_module, "MAX_LINE_BYTES", 64 * 1024)
    cfg = StdioServer(
        command=sys.executable,
        args=[str(FAKES / "broken_jsonrpc_server.py"), "--reply", "endless"],
        timeout_s=60,
    )
    pool = ServerPool(tmp_path / "logs")
    try:
        tb = await McpToolbox.open(pool, {"endless": cfg}, None)
        out = await asyncio.wait_for(tb.call("probe", {"x": "g"}), 30)
    finally:
        await pool.aclose()
    assert out.is_error and out.error_type == "protocol_error", out
    assert "longer than 65,536 bytes" in out.content
