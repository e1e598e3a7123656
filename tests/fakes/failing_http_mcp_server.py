"""A streamable HTTP MCP server (the mcp SDK's own) whose gateway fails some tool calls with HTTP 502.

Run as ``python failing_http_mcp_server.py PORT``. ``tools/call`` of ``echo`` is served normally;
of ``through_gateway`` the request never reaches the server: a middleware in front answers
``502 Bad Gateway``, as a reverse proxy does when the server behind it is gone.
"""

from __future__ import annotations

import sys
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.types import ASGIApp, Receive, Scope, Send

server: MCPServer[Any] = MCPServer(name="gatewayed", log_level="WARNING")


def echo(text: str) -> str:
    """Echo ``text`` back."""
    return text


def through_gateway(text: str) -> str:
    """Never reached: the gateway answers first."""
    return text


server.add_tool(echo, description="Echo text.", structured_output=False)
server.add_tool(through_gateway, description="A call the gateway fails.", structured_output=False)


class FailingGateway:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        more = True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        if b'"tools/call"' in body and b'"through_gateway"' in body:
            await send(
                {"type": "http.response.start", "status": 502, "headers": [(b"content-type", b"text/plain")]}
            )
            await send({"type": "http.response.body", "body": b"upstream unavailable"})
            return
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


if __name__ == "__main__":
    app = FailingGateway(server.streamable_http_app())
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
