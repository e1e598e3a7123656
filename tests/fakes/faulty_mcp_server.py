"""A real stdio MCP server that misbehaves on purpose, for testing the engine's MCP client.

One tool, ``probe(x)``, and a ``--mode`` that picks the failure:

- ``ok``: answers ``probe:<x>``.
- ``crash``: the process exits (status 3) in the middle of the call, without answering.
- ``hang``: the call never answers; the process stays alive.
- ``garbage``: writes non-JSON lines to stdout, then answers normally (``--garbage-then serve``,
  the default) or exits with status 4 without answering (``--garbage-then die``).
- ``huge``: answers with a 5 MiB text result.
- ``exit_on_start``: exits with status 3 before the MCP handshake.
- ``stderr_noise``: writes a few lines to stderr on each call, then answers normally.

Run it as ``python tests/fakes/faulty_mcp_server.py --mode MODE``; it needs only ``mcp``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer

MODES = ("ok", "crash", "hang", "garbage", "huge", "exit_on_start", "stderr_noise")
HUGE_RESULT_BYTES = 5 * 1024 * 1024
GARBAGE_LINES = (b"this is not JSON-RPC\n", b"{broken json\n", b"\x1b[31mred text\x1b[0m ]]]\n")
EXIT_CRASH = 3
EXIT_GARBAGE_DIE = 4


def build_server(mode: str, garbage_then: str = "serve") -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer(
        name=f"faulty-{mode}", description="A test server that fails on purpose.", log_level="WARNING"
    )
    calls = 0

    async def probe(x: str) -> str:
        nonlocal calls
        calls += 1
        if mode == "crash":
            os._exit(EXIT_CRASH)
        if mode == "hang":
            await anyio.sleep_forever()
        if mode == "garbage":
            for line in GARBAGE_LINES:
                os.write(1, line)
            if garbage_then == "die":
                os._exit(EXIT_GARBAGE_DIE)
        if mode == "huge":
            return "x" * HUGE_RESULT_BYTES
        if mode == "stderr_noise":
            for n in range(3):
                print(f"faulty server noise {n} on call {calls} (x={x!r})", file=sys.stderr, flush=True)
        return f"probe:{x}"

    server.add_tool(
        probe,
        description="Echo x back as 'probe:<x>' (or fail the way --mode says).",
        structured_output=False,
    )
    return server


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--mode", choices=MODES, default="ok")
    parser.add_argument("--garbage-then", choices=("serve", "die"), default="serve")
    args = parser.parse_args(argv)
    if args.mode == "exit_on_start":
        print(
            "faulty server: exiting before the handshake (--mode exit_on_start)", file=sys.stderr, flush=True
        )
        sys.exit(EXIT_CRASH)
    build_server(args.mode, args.garbage_then).run("stdio")


if __name__ == "__main__":
    main()
