"""A server's stderr tail keeps the line that says why it died (node prints it before its stack)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from proctor.engine.tools.mcp_connection import McpConnection
from proctor.engine.tools.mcp_launch import ServerStartError
from proctor.engine.tools.stderr_tail import stderr_tail
from proctor.scenarios.schema import StdioServer

NODE = shutil.which("node")
FILESYSTEM = (
    Path(__file__).resolve().parents[2] / "reference_servers" / "node_modules" / "@modelcontextprotocol"
)


async def _start_error(tmp_path: Path, cfg: StdioServer) -> str:
    conn = McpConnection("srv", cfg, tmp_path / "logs")
    with pytest.raises(ServerStartError) as info:
        await conn.start()
    await conn.aclose()
    return str(info.value)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
async def test_node_cannot_find_module_is_kept_in_the_start_error(tmp_path: Path) -> None:
    message = await _start_error(tmp_path, StdioServer(command="node", args=["/nonexistent.js"]))
    assert "Error: Cannot find module '/nonexistent.js'" in message
    assert "MODULE_NOT_FOUND" in message  # the last lines are still there


@pytest.mark.skipif(NODE is None or not FILESYSTEM.is_dir(), reason="server-filesystem is not installed")
async def test_a_misspelled_server_filesystem_path_says_which_module_is_missing(tmp_path: Path) -> None:
    typo = FILESYSTEM / "server-filesytem" / "dist" / "index.js"
    message = await _start_error(tmp_path, StdioServer(command="node", args=[str(typo), str(tmp_path)]))
    assert f"Cannot find module '{typo}'" in message


def test_a_python_traceback_ends_on_its_reason_and_is_not_padded(tmp_path: Path) -> None:
    log = tmp_path / "s.log"
    log.write_text("INFO starting\nTraceback (most recent call last):\n  File \"s.py\", line 1\n"
                   "    import nope\nModuleNotFoundError: No module named 'nope'\n")  # fmt: skip
    assert stderr_tail(log)[-1] == "ModuleNotFoundError: No module named 'nope'"
    assert "…" not in stderr_tail(log)


def test_an_error_line_far_above_the_last_lines_is_kept_once(tmp_path: Path) -> None:
    log = tmp_path / "s.log"
    log.write_text(
        "Error: Cannot find module '/x/y'\n" + "".join(f"    at frame{i}\n" for i in range(20)) + "}\n"
    )
    tail = stderr_tail(log)
    assert tail[0] == "Error: Cannot find module '/x/y'" and tail[1] == "…" and tail[-1] == "}"
    assert len(tail) == 7


UV_STDERR = Path(__file__).parent / "fixtures" / "uv" / "basic_memory_py311.stderr"


async def test_uvs_reason_and_cause_are_kept_above_its_derivation(tmp_path: Path) -> None:
    # uv 0.13.9's own words for `uvx --python 3.11 basic-memory mcp` (recorded by
    # fixtures/uv/make_stderr.sh): the reason comes first, then twelve lines ending "unsatisfiable".
    # The start error replays that stderr through a server process, as a server log holds it.
    cfg = StdioServer(command="sh", args=["-c", f"cat '{UV_STDERR}' >&2; exit 1"])
    message = await _start_error(tmp_path, cfg)
    assert "error: No solution found when resolving tool dependencies" in message
    assert "does not satisfy Python>=3.12" in message
    assert "your requirements are unsatisfiable" in message  # the last lines stay too
    tail = stderr_tail(UV_STDERR)
    assert tail[0].startswith("error: No solution found") and tail[1].lstrip().startswith("cause: Because")
    assert tail[2] == "…" and len(tail) == 8
