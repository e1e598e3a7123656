"""A hand-written stdio MCP server (no SDK) that puts credentials in every field a server controls.

It speaks JSON-RPC by hand, so it can send what an SDK server never would: every token shape,
bare and touching other characters (after a colour code, after ``_`` inside a longer name, inside
JSON escapes), in its server info and instructions, a tool's name, description and schema, tool
results (text and structured), an error result, a JSON-RPC error reply, a log notification, an
invalid JSON-RPC line, stderr, and a result long enough that the store's cap cuts through a token.
The values of ``$LEAKY_API_TOKEN`` and ``$LEAKY_PLAIN`` (a suite's ``env:``; the second is also a
header value of another server in the suite, its name not secret-looking) are echoed as well.

Tools (the offline agent picks them by their descriptions' words):
- ``credentials``: every shape in every form, as text and structured content; logs them.
- ``ledger``: ``--cut`` characters of filler, then a token across the store's cut.
- ``audit``: an error result (``isError``) quoting the tokens.
- ``reject``: a JSON-RPC error reply (-32602) whose message and data quote them.
- ``garble``: an invalid JSON-RPC line holding them, then its real answer.
- ``vault_<token>``: a tool whose name is a token.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

GITHUB = "ghp_" + "L3akY9q" * 6
SHAPES = (
    GITHUB,
    "github_pat_11LEAKY000" + "y" * 60,
    "sk-ant-api03-" + "L" * 40,
    "sk-proj-" + "k" * 40,
    "AKIAL3AKYL3AKYL3AKY0",
    "xoxb-9876543210-leakyleakyle",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJsZWFreWxlYWt5In0.L3akyL3akyL3akyL3akyL3akyL3aky",
    "AIza" + "L3akyL3aky" * 3 + "L3aky",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowL3akyPrivateBody\n-----END RSA PRIVATE KEY-----",
)


def secrets() -> list[str]:
    """Every planted value: the shapes and the suite's env values."""
    return [*SHAPES, os.environ.get("LEAKY_API_TOKEN", ""), os.environ.get("LEAKY_PLAIN", "")]


def leaky_text() -> str:
    """Each secret bare, after a colour code, after ``_`` in a name, and after a JSON escape."""
    lines = []
    for value in secrets():
        lines += [value, f"\x1b[31m{value}\x1b[0m", f"MY_{value}", f"\\n{value}"]
    return "\n".join(lines)


def _send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _tools() -> list[dict[str, Any]]:
    schema = {"type": "object", "properties": {"query": {"type": "string", "description": f"e.g. {GITHUB}"}}}

    def tool(name: str, description: str) -> dict[str, Any]:
        return {"name": name, "description": description, "inputSchema": schema}

    return [
        tool("credentials", f"Look up the credentials configured for a service. Example: {GITHUB}"),
        tool("ledger", "Read the billing ledger of a service."),
        tool("audit", "Audit the permissions of a service account."),
        tool("reject", "Rotate the signing keys of a service."),
        tool("garble", "Summarize the deployment history of a service."),
        tool(f"vault_{GITHUB}", "Open the vault of a service."),
    ]


def _text(text: str, *, error: bool = False, structured: dict[str, Any] | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": error}
    if structured is not None:
        result["structuredContent"] = structured
    return result


def _call(rid: Any, name: str, cut: int) -> None:
    leak = leaky_text()
    if name == "credentials":
        print(f"stderr: {leak}", file=sys.stderr, flush=True)
        _send({"jsonrpc": "2.0", "method": "notifications/message",
               "params": {"level": "warning", "logger": f"log_{GITHUB}", "data": leak}})  # fmt: skip
        _send(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "result": _text(f"credentials:\n{leak}", structured={"found": secrets()}),
            }
        )
    elif name == "ledger":
        filler = "ledger entry " * (cut // 13 + 1)
        _send({"jsonrpc": "2.0", "id": rid, "result": _text(filler[: cut - 20] + GITHUB + " end of ledger")})
    elif name == "audit":
        _send({"jsonrpc": "2.0", "id": rid, "result": _text(f"permission denied for {leak}", error=True)})
    elif name == "reject":
        _send(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "error": {"code": -32602, "message": f"bad key {leak}", "data": secrets()},
            }
        )
    elif name == "garble":
        # The SDK logs each line it cannot parse, quoting its head and tail: short lines whole.
        for line in (GITHUB, f"MY_{SHAPES[3]}", f"not json-rpc: {leak}".replace("\n", " ")):
            sys.stdout.write(line + "\n")
        sys.stdout.flush()
        _send({"jsonrpc": "2.0", "id": rid, "result": _text(f"history: {leak}")})
    else:
        _send({"jsonrpc": "2.0", "id": rid, "result": _text(f"vault opened: {leak}")})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cut", type=int, default=1000, help="the suite's tool_result_store_chars")
    args = parser.parse_args()
    print(f"starting with {leaky_text()}", file=sys.stderr, flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        method, rid = request.get("method"), request.get("id")
        if method == "initialize":
            _send({"jsonrpc": "2.0", "id": rid, "result": {
                "protocolVersion": request["params"]["protocolVersion"],
                "capabilities": {"tools": {}, "logging": {}},
                "serverInfo": {"name": f"leaky {GITHUB}", "version": GITHUB},
                "instructions": f"use {leaky_text()}"}})  # fmt: skip
        elif method == "tools/list":
            _send({"jsonrpc": "2.0", "id": rid, "result": {"tools": _tools()}})
        elif method == "tools/call":
            _call(rid, request["params"]["name"], args.cut)
        elif rid is not None:
            _send({"jsonrpc": "2.0", "id": rid, "result": {}})


if __name__ == "__main__":
    main()
