"""Shared helpers for tests that start real MCP server processes."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from proctor.scenarios.schema import StdioServer

FAKES = Path(__file__).resolve().parent.parent / "fakes"


def faulty(mode: str, **kw: object) -> StdioServer:
    return StdioServer(
        command=sys.executable, args=[str(FAKES / "faulty_mcp_server.py"), "--mode", mode], **kw
    )  # type: ignore[arg-type]


def child_pids() -> set[int]:
    """Live (non-zombie) processes whose parent is this test process."""
    me = os.getpid()
    out = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == me and fields[0] != "Z":
            out.add(int(entry.name))
    return out
