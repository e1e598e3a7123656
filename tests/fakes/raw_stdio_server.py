"""A stdio MCP server written without the SDK, to attack proctor's process and log handling.

It speaks just enough newline-delimited JSON-RPC (initialize, tools/list, tools/call ``echo``,
ping) for a real ``mcp`` client to hold a session with it, and with flags it misbehaves:

- ``--escape``: at start, double-forks a child that calls ``setsid`` (leaves the process group).
- ``--grandchild``: at start, spawns a child in its own group that ignores SIGTERM.
- ``--ignore-term``: ignores SIGTERM and stays alive after stdin closes.
- ``--stderr-bytes N`` / ``--stdout-bytes N``: writes N bytes of chatter (stdout only when
  ``--no-protocol``: then it is a plain process, as a ``launch:`` command is, and may listen on
  ``--port``).
- ``--stderr-line TEXT``: writes TEXT as one stderr line at start.
- ``--record-initialize FILE``: writes the client's initialize request (JSON) to FILE.
- ``--on-list die``: shakes hands, then exits when asked for its tools; ``--on-list deep``: answers
  tools/list with a schema nested 200 deep, valid JSON that the SDK's parser refuses.

Every process it starts carries ``--marker`` in its command line, so a test can find all of them
in /proc. Only the standard library is used.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time

SLEEPER = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"


def _escape(marker: str) -> None:
    """The classic daemon: fork, setsid, fork again; the grandchild is nobody's child but init's."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, "-c", SLEEPER, "escaped", marker])
        os._exit(0)


def _answer(message: dict[str, object]) -> dict[str, object] | None:
    method, mid = message.get("method"), message.get("id")
    if mid is None:
        return None
    params = message.get("params") or {}
    assert isinstance(params, dict)
    if method == "initialize":
        result: object = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "0"},
        }
    elif method == "tools/list":
        schema = {"type": "object", "properties": {"text": {"type": "string"}}}
        result = {"tools": [{"name": "echo", "description": "Echo text back.", "inputSchema": schema}]}
    elif method == "tools/call":
        args = params.get("arguments") or {}
        text = args.get("text", "") if isinstance(args, dict) else ""
        result = {"content": [{"type": "text", "text": f"echo: {text}"}], "isError": False}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no such method"}}
    return {"jsonrpc": "2.0", "id": mid, "result": result}


def _chatter(fd: int, total: int) -> None:
    line = b"chatter " * 64 + b"\n"
    for _ in range(max(0, total) // len(line)):
        os.write(fd, line)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--marker", required=True)
    parser.add_argument("--escape", action="store_true")
    parser.add_argument("--grandchild", action="store_true")
    parser.add_argument("--ignore-term", action="store_true")
    parser.add_argument("--stderr-bytes", type=int, default=0)
    parser.add_argument("--stdout-bytes", type=int, default=0)
    parser.add_argument("--stderr-line", default="")
    parser.add_argument("--stdout-line", default="")
    parser.add_argument("--no-protocol", action="store_true")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--on-list", choices=["die", "deep"], default=None)
    parser.add_argument("--record-initialize", default="")
    args = parser.parse_args()
    if args.ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if args.grandchild:
        subprocess.Popen([sys.executable, "-c", SLEEPER, "grandchild", args.marker])
    if args.escape:
        _escape(args.marker)
    if args.stderr_line:
        os.write(2, args.stderr_line.encode() + b"\n")
    _chatter(2, args.stderr_bytes)
    if args.no_protocol:
        listener = socket.create_server(("127.0.0.1", args.port)) if args.port else None
        if args.stdout_line:
            os.write(1, args.stdout_line.encode() + b"\n")
        _chatter(1, args.stdout_bytes)
        if args.stdout_line:  # again at the end, so it is in the log after any rotation
            os.write(1, args.stdout_line.encode() + b"\n")
        time.sleep(600)
        assert listener is None or listener.fileno() >= 0  # held open until here
        return
    for raw in sys.stdin.buffer:
        message = json.loads(raw)
        if message.get("method") == "initialize" and args.record_initialize:
            with open(args.record_initialize, "w", encoding="utf-8") as f:
                json.dump(message, f)
        if message.get("method") == "tools/list" and args.on_list == "die":
            sys.exit(3)
        if message.get("method") == "tools/list" and args.on_list == "deep":
            deep: dict[str, object] = {"type": "string"}
            for _ in range(200):
                deep = {"type": "object", "properties": {"a": deep}}
            tool = {"name": "deep", "inputSchema": deep}
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": [tool]}}))
            sys.stdout.write("\n")
            sys.stdout.flush()
            continue
        reply = _answer(message)
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
    while args.ignore_term:  # stdin closed: a well-behaved server would exit here
        time.sleep(1)


if __name__ == "__main__":
    main()
