"""A stdio MCP server whose tools answer with every content type the protocol has, and that
talks while it works: progress, log messages, and (``flood``) more notices than proctor keeps."""

from __future__ import annotations

import base64
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

PNG = b"\x89PNG" + b"\x00" * 296
WAV = b"RIFF\x24\x00\x00\x00WAVE"
BLOB = bytes(range(16))


def main() -> None:
    server: MCPServer[Any] = MCPServer(
        name="content", instructions="Answers in every content type.", log_level="WARNING"
    )

    async def picture() -> list[ContentBlock]:
        """A picture and a link to the file it came from."""
        return [
            ImageContent(type="image", data=base64.b64encode(PNG).decode(), mime_type="image/png"),
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

    async def everything() -> list[ContentBlock]:
        """One block of each type, the same image twice, and an image that is not base64."""
        png = base64.b64encode(PNG).decode()
        return [
            TextContent(type="text", text="every block"),
            ImageContent(type="image", data=png, mime_type="image/png"),
            ImageContent(type="image", data=png, mime_type="image/png"),
            AudioContent(type="audio", data=base64.b64encode(WAV).decode(), mime_type="audio/wav"),
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(uri="file:///repo/a.txt", text="alpha", mime_type="text/plain"),
            ),
            EmbeddedResource(
                type="resource",
                resource=BlobResourceContents(
                    uri="file:///repo/b.bin",
                    blob=base64.b64encode(BLOB).decode(),
                    mime_type="application/x-bin",
                ),
            ),
            ImageContent(type="image", data="not base64!", mime_type="image/png"),
        ]

    async def chatty(ctx: Context) -> str:
        """Three progress steps and an info log line, then the answer."""
        for step in (1, 2, 3):
            await ctx.report_progress(step, 3, f"step {step}")
        await ctx.info("halfway there")
        return "done"

    async def flood(ctx: Context, n: int) -> str:
        """n progress notifications: more than any transcript should hold."""
        for step in range(n):
            await ctx.report_progress(step, n)
        return f"sent {n}"

    for tool in (picture, stats, everything, chatty, flood):
        server.add_tool(tool, structured_output=False)
    server.run("stdio")


if __name__ == "__main__":
    main()
