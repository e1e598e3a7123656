"""A legacy HTTP+SSE MCP server made with the mcp SDK's own SSE transport (``mcp.server.sse``).

Run as ``python sse_mcp_server.py PORT``: GET /sse opens the event stream, POST /messages/
carries requests; a POST to /sse (streamable HTTP) is answered 405, as real SSE-only servers do.
"""

from __future__ import annotations

import sys
from typing import Any

from mcp.server.mcpserver import MCPServer

server: MCPServer[Any] = MCPServer(name="sse-weather", log_level="WARNING")


def forecast(city: str) -> str:
    """Tomorrow's forecast for ``city`` (fixed, so tests can check it)."""
    return f"{city}: sunny, 21 C"


def search(query: str) -> str:
    """Forecast notes that mention a word of ``query`` (what an agent searching would call)."""
    notes = ["Oslo: sunny, 21 C tomorrow", "Bergen: rain tomorrow"]
    words = {w.strip("?.,").lower() for w in query.split()}
    return "\n".join(n for n in notes if words & {w.strip(":,").lower() for w in n.split()}) or "no match"


server.add_tool(forecast, description="Tomorrow's forecast for a city.", structured_output=False)
server.add_tool(search, description="Search the forecast notes.", structured_output=False)

if __name__ == "__main__":
    server.run("sse", host="127.0.0.1", port=int(sys.argv[1]))
