"""A stdio MCP server (mcp SDK) whose answers come from a JSON file, so a test can change them.

``DRIFT_DATA`` names the file: ``{"KEY": "answer", ...}``; ``lookup(key)`` answers its value or
fails (``ToolError``) for a key the file does not have; ``pause(seconds)`` waits for a second
``pause`` call to be in flight with it (a step's calls played together), then both answer
``slept``; alone for ``seconds``, it answers ``alone``. While a file ``hold`` exists beside the
data file, ``pause`` never answers (a replay is cut during it). Run as ``python drift_server.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server: MCPServer[Any] = MCPServer(name="drift", log_level="WARNING")


@server.tool(structured_output=False)
def lookup(key: str) -> str:
    """The value stored under ``key``."""
    data = json.loads(Path(os.environ["DRIFT_DATA"]).read_text())
    if key not in data:
        raise ToolError(f"no such key: {key}")
    return str(data[key])


_waiting: list[asyncio.Event] = []


@server.tool(structured_output=False)
async def pause(seconds: float) -> str:
    """Meet another pause call, then answer: whether two calls overlapped is a condition, not a time."""
    if Path(os.environ["DRIFT_DATA"]).with_name("hold").exists():
        await asyncio.Event().wait()
    if _waiting:
        _waiting.pop().set()
        return "slept"
    met = asyncio.Event()
    _waiting.append(met)
    try:
        await asyncio.wait_for(met.wait(), seconds)
    except TimeoutError:
        _waiting.remove(met)
        return "alone"
    return "slept"


if __name__ == "__main__":
    server.run("stdio")
