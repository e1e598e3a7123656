"""A stdio MCP server whose tools answer with non-text content: an image and a resource link, and
structuredContent with no text block at all."""

from __future__ import annotations

import base64
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ContentBlock, ImageContent, ResourceLink


def main() -> None:
    server: MCPServer[Any] = MCPServer(name="content", log_level="WARNING")

    async def picture() -> list[ContentBlock]:
        """A picture and a link to the file it came from."""
        data = base64.b64encode(b"\x89PNG" + b"\x00" * 296).decode()
        return [
            ImageContent(type="image", data=data, mime_type="image/png"),
            ResourceLink(
                type="resource_link",
                uri="file:///repo/README.md",
                name="README.md",
                mime_type="text/markdown",
            ),
        ]

    async def stats() -> CallToolResult:
        """Counts, as structured content only."""
        return CallToolResult(content=[], structured_content={"files": 3, "lines": 120})

    server.add_tool(picture, structured_output=False)
    server.add_tool(stats, structured_output=False)
    server.run("stdio")


if __name__ == "__main__":
    main()
