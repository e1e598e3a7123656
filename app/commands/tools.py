"""``proctor tools diff|lock``: compare tool surfaces, and pin a suite's with SHA-256.

A side of a diff is a run database (the tools its trials were offered, as recorded), a suite
folder (its servers started now and listed live) or a lock file. Exit codes: ``diff`` 0 when the
surfaces are the same, 1 when they differ (as diff(1) and ``git diff --exit-code``), 2 on bad
input; ``lock --check`` 0 when the servers match the lock, 3 when they do not.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

from proctor.app.commands.servers import _servers
from proctor.app.exit_codes import ExitCode
from proctor.engine.reports.tool_surface import diff_json
from proctor.engine.tools.mcp_toolbox import ServerPool, ServerStartError
from proctor.engine.tools.surface import (
    Surface,
    ToolDefinition,
    canonical_json,
    from_mcp_tool,
    server_sha256,
    surface_of,
)
from proctor.engine.tools.surface_diff import diff_surfaces
from proctor.engine.tools.surface_lock import lock_path, read_lock, write_lock
from proctor.engine.tools.surface_render import diff_lines
from proctor.store.display_text import one_line, sanitize
from proctor.store.redaction import redact


class SurfaceInputError(ValueError):
    """A side of ``tools diff`` that is neither a run database, a suite nor a lock file."""


class ServersDidNotStart(RuntimeError):
    def __init__(self, failures: list[str]) -> None:
        super().__init__("; ".join(failures))
        self.failures = failures


async def live_surface(config: Path) -> Surface:
    """Start each of the suite's servers as a run would and list its tools (redacted as a run
    database would hold them, so a lock never holds a secret a description echoed)."""
    servers, skipped = _servers(config)  # a disabled server is not locked; one that needs input fails
    definitions: list[ToolDefinition] = []
    failures = [f"{name}: {why}" for name, why in skipped.items() if why.startswith("needs input")]
    with tempfile.TemporaryDirectory(prefix="proctor-tools-") as logs:
        pool = ServerPool(Path(logs))
        try:
            for name, cfg in servers.items():
                try:
                    conn = await pool.acquire(name, cfg)
                except ServerStartError as exc:
                    failures.append(f"{name}: {exc}")
                    continue
                definitions += [_redacted(from_mcp_tool(name, t)) for t in conn.tools]
        finally:
            await pool.aclose()
    if failures:
        raise ServersDidNotStart(failures)
    return surface_of(definitions)


def _redacted(d: ToolDefinition) -> ToolDefinition:
    raw = canonical_json(d.pinned()).decode()
    clean = redact(raw)
    if clean == raw:
        return d
    p = json.loads(clean)
    return ToolDefinition(
        d.server,
        p["name"],
        p["description"],
        p["inputSchema"],
        p.get("title"),
        p.get("outputSchema"),
        p.get("annotations"),
    )


def _run_surface(db: Path) -> Surface:
    from proctor.engine.reports.tool_surface import read_run_surface
    from proctor.store.read.reader import StoreReader

    with StoreReader(db) as reader:
        return read_run_surface(reader, reader.max_event_id()).surface()


def load_side(path: Path) -> Surface:
    """A diff side: a suite folder (live), a lock file, or a run database."""
    if path.is_dir() or path.name == "suite.yaml":
        return asyncio.run(live_surface(path))
    if not path.exists():
        raise SurfaceInputError(
            f"{path}: no such file or folder; give a run database, a suite folder or a tools.lock.json"
        )
    if path.suffix == ".json":
        return read_lock(path)
    return _run_surface(path)


def diff_command(args: argparse.Namespace) -> int:
    try:
        old, new = load_side(args.old), load_side(args.new)
    except ServersDidNotStart as exc:
        return _did_not_start(exc)
    diff = diff_surfaces(old, new)
    if args.format == "json":
        doc = {"old": str(args.old), "new": str(args.new)} | diff_json(diff)
        print(json.dumps(doc, indent=2, ensure_ascii=True))
    else:
        print(f"{sanitize(str(args.old))} -> {sanitize(str(args.new))}")
        for line in diff_lines(diff):
            print(line)
    return ExitCode.OK if diff.same else ExitCode.DIFFERS


def lock_command(args: argparse.Namespace) -> int:
    target = lock_path(args.suite)
    if args.check and not target.is_file():
        raise SurfaceInputError(
            f"{target}: no tool lock to check against; write one with proctor tools lock {args.suite}"
        )
    try:
        live = asyncio.run(live_surface(args.suite))
    except ServersDidNotStart as exc:
        return _did_not_start(exc)
    if args.check:
        diff = diff_surfaces(read_lock(target), live)
        if diff.same:
            print(f"{sanitize(str(target))}: holds ({_counts(live)})")
            return ExitCode.OK
        print(f"{sanitize(str(target))}: the servers' tools differ from the lock")
        for line in diff_lines(diff):
            print(line)
        return ExitCode.FAILED
    write_lock(target, live)
    print(f"wrote {sanitize(str(target))} ({_counts(live)})")
    for server, tools in live.items():
        print(f"  {one_line(server, 60)}: {len(tools)} tools, sha256 {server_sha256(tools)[:16]}")
    return ExitCode.OK


def _counts(surface: Surface) -> str:
    return f"{len(surface)} servers, {sum(len(t) for t in surface.values())} tools"


def _did_not_start(exc: ServersDidNotStart) -> int:
    for failure in exc.failures:
        print(f"proctor tools: server did not start: {sanitize(failure)}", file=sys.stderr)
    return ExitCode.FAILED


__all__ = ["SurfaceInputError", "diff_command", "live_surface", "load_side", "lock_command"]
