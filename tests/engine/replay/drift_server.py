"""A stdio MCP server (mcp SDK) whose answers come from a JSON file, so a test can change them.

``DRIFT_DATA`` names the file: ``{"KEY": "answer", ...}``; ``lookup(key)`` answers its value or
fails (``ToolError``) for a key the file does not have; ``pause(seconds)`` sleeps, then answers
``slept``. Run as ``python drift_server.py``.
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


@server.tool(structured_output=False)
async def pause(seconds: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return "slept"


if __name__ == "__main__":
    server.run("stdio")
