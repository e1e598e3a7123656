"""A minimal stdio MCP server for the engine benchmark: answers a definition lookup instantly.

It isolates the engine's own overhead (agent loop, MCP client, store) from the cost of a real
server's work; the demo's codeintel server is measured separately by the benchmark.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer

server: MCPServer[Any] = MCPServer(name="bench", log_level="WARNING")


def find_definition(symbol: str) -> str:
    """Find where a function or class is defined: path:start-end, then its numbered source lines."""
    return f"pkg/mod.py:10-12: function pkg.mod.{symbol}\n  10 | def {symbol}(x):\n  11 |     return x + 1\n  12 |"


server.add_tool(find_definition, description=find_definition.__doc__ or "", structured_output=False)

if __name__ == "__main__":
    server.run("stdio")
