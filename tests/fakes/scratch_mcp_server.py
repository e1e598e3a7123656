"""A stateful stdio MCP server: ``bump()`` counts calls in a file under the folder it is given.

Run as ``python tests/fakes/scratch_mcp_server.py DIR``. Shared state across trials shows up
as a count above 1 in a fresh trial; the answer also says which folder it used.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer


def main() -> None:
    folder = Path(sys.argv[1])
    server: MCPServer[Any] = MCPServer(name="scratch", log_level="WARNING")

    async def bump() -> str:
        """Count one more call."""
        counter = folder / "count.txt"
        count = int(counter.read_text()) + 1 if counter.exists() else 1
        counter.write_text(str(count))
        return f"{count} {folder}"

    server.add_tool(bump, structured_output=False)
    server.run("stdio")


if __name__ == "__main__":
    main()
