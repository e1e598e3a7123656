"""A stdio MCP server whose one tool reports the names of its environment variables."""

from __future__ import annotations

import os
from typing import Any

from mcp.server.mcpserver import MCPServer

server: MCPServer[Any] = MCPServer(name="env-echo", log_level="WARNING")


def env_names() -> str:
    """The sorted names of this process's environment variables, one per line."""
    return "\n".join(sorted(os.environ))


server.add_tool(env_names, description="List environment variable names.", structured_output=False)

if __name__ == "__main__":
    server.run("stdio")
