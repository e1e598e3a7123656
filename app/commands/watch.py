"""``proctor watch DB``: the console on a live or finished run.

Only what the first screen needs is imported before it paints; the engine that serves the
run's operator commands (and its MCP SDK, about half a second of imports) loads in a thread.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
from pathlib import Path

from proctor.store.read.reader import StoreReader


async def _serve(db: Path) -> None:
    session = await asyncio.to_thread(importlib.import_module, "proctor.engine.runs.session")
    await session.serve_run(db)


def watch_command(args: argparse.Namespace) -> int:
    from proctor.app.tui import run_console

    with StoreReader(args.db):
        pass
    return run_console(args.db, engine=lambda: _serve(args.db))
