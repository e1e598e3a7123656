"""A minimal stdio MCP server for the engine benchmarks: answers a definition lookup instantly.

It isolates the engine's own overhead (agent loop, MCP client, store) from the cost of a real
server's work; the demo's codeintel server is measured separately by the benchmark.

By default it speaks MCP's JSON-RPC over stdio by hand with the standard library only (both the
``server/discover`` handshake of protocol 2026-07-28 that the ``mcp`` 2.x client uses, and the
legacy ``initialize`` one): an ``MCPServer`` spends ~1–2 ms of CPU per call and ~0.5 s starting,
which on a 2-core machine would measure the SDK's server rather than proctor. ``--sdk`` serves the
same tool with the SDK's ``MCPServer`` instead (the benchmarks report that figure as well).
"""

from __future__ import annotations

import json
import sys
from typing import Any

NAME = "bench"
PROTOCOL = "2026-07-28"
DESCRIPTION = "Find where a function or class is defined: path:start-end, then its numbered source lines."
INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"symbol": {"title": "Symbol", "type": "string"}},
    "required": ["symbol"],
    "title": "find_definitionArguments",
}
_META = {"io.modelcontextprotocol/serverInfo": {"name": NAME, "version": ""}}


def find_definition(symbol: str) -> str:
    """Find where a function or class is defined: path:start-end, then its numbered source lines."""
    return f"pkg/mod.py:10-12: function pkg.mod.{symbol}\n  10 | def {symbol}(x):\n  11 |     return x + 1\n  12 |"


def _call(params: dict[str, Any]) -> dict[str, Any]:
    args = params.get("arguments") or {}
    if params.get("name") != "find_definition":
        text, error = f"Unknown tool: {params.get('name')}", True
    elif not isinstance(args.get("symbol"), str):
        text, error = "Error executing tool find_definition: 'symbol' must be a string", True
    else:
        text, error = find_definition(args["symbol"]), False
    return {"content": [{"type": "text", "text": text}], "isError": error, "resultType": "complete"}


def _answer(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """The result for ``method``, or None when this server does not have it."""
    if method == "tools/call":
        return _call(params)
    if method == "tools/list":
        tool = {"name": "find_definition", "description": DESCRIPTION, "inputSchema": INPUT_SCHEMA}
        return {"tools": [tool], "cacheScope": "private", "ttlMs": 0, "resultType": "complete"}
    if method == "server/discover":
        return {
            "supportedVersions": [PROTOCOL],
            "capabilities": {"tools": {"listChanged": False}},
            "cacheScope": "private",
            "ttlMs": 0,
            "resultType": "complete",
        }
    if method == "initialize":  # a legacy client
        return {
            "protocolVersion": params.get("protocolVersion", PROTOCOL),
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": NAME, "version": ""},
        }
    if method in ("ping", "logging/setLevel"):
        return {}
    return None


def serve_raw() -> None:
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict) or "id" not in message or "method" not in message:
            continue  # notifications and responses need no answer
        result = _answer(message["method"], message.get("params") or {})
        if result is None:
            reply: dict[str, Any] = {
                "jsonrpc": "2.0",
                "id": message["id"],
                "error": {"code": -32601, "message": f"Method not found: {message['method']}"},
            }
        else:
            result["_meta"] = _META
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        out.write(json.dumps(reply, separators=(",", ":")).encode() + b"\n")
        out.flush()


def serve_sdk() -> None:
    from mcp.server.mcpserver import MCPServer

    server: MCPServer[Any] = MCPServer(name=NAME, log_level="WARNING")
    server.add_tool(find_definition, description=DESCRIPTION, structured_output=False)
    server.run("stdio")


if __name__ == "__main__":
    if "--sdk" in sys.argv[1:]:
        serve_sdk()
    else:
        serve_raw()
