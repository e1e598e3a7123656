"""A hand-written stdio "MCP server" with no SDK, that breaks the protocol on tools/call.

It answers ``initialize`` and ``tools/list`` correctly, then answers every ``tools/call`` with a
line that is not JSON-RPC (``--reply garbage``: not JSON at all; ``--reply shape``: JSON without
``jsonrpc``/``id``; ``--reply endless``: the start of an answer, 300 KB with no newline) and
never sends a real answer. ``--reply silent`` never answers ``initialize``.
``--reply error``: a well-formed JSON-RPC error reply with ``--code`` (default -32000, the spec's
generic server error); ``--reply unmatched``: a result whose id matches no request, and nothing
else. Every ``tools/call`` also appends the server's pid to ``--calls`` (one line per call), so a
test sees whether the server was restarted. It writes to the real stdout, which a server built on
the SDK cannot do by accident (the SDK guards it), so the client sees the bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

TOOL = {
    "name": "probe",
    "description": "Echo x.",
    "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}},
}


def _send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _answer_call(args: argparse.Namespace, rid: object) -> None:
    if args.calls:
        with open(args.calls, "a") as calls:
            calls.write(f"{os.getpid()}\n")
    if args.reply == "error":
        _send({"jsonrpc": "2.0", "id": rid, "error": {"code": args.code, "message": "backend unavailable"}})
    elif args.reply == "unmatched":
        _send({"jsonrpc": "2.0", "id": f"never-sent-{rid}", "result": {"content": [], "isError": False}})
    elif args.reply == "endless":
        sys.stdout.write(f'{{"jsonrpc": "2.0", "id": {rid}, "result": "' + "x" * 300_000)
        sys.stdout.flush()
    else:
        sys.stdout.write("<<this is not json-rpc>>\n" if args.reply == "garbage" else '{"answer": 42}\n')
        sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--reply", choices=("garbage", "shape", "silent", "error", "unmatched", "endless"), default="garbage"
    )
    parser.add_argument("--code", type=int, default=-32000)
    parser.add_argument("--calls", default="")
    args = parser.parse_args()
    if args.reply == "silent":  # never answers anything, not even initialize
        time.sleep(3600)
    for line in sys.stdin:
        request = json.loads(line)
        method, rid = request.get("method"), request.get("id")
        if method == "initialize":
            version = request["params"]["protocolVersion"]
            _send({"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": version, "capabilities": {"tools": {}},
                                                         "serverInfo": {"name": "broken", "version": "0"}}})  # fmt: skip
        elif method == "tools/list":
            _send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [TOOL]}})
        elif method == "tools/call":
            _answer_call(args, rid)
        elif rid is not None:
            _send({"jsonrpc": "2.0", "id": rid, "result": {}})
    time.sleep(3600)


if __name__ == "__main__":
    main()
