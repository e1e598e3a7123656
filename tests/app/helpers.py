"""Pilot helpers: wait for a condition (never a fixed sleep) and read the screen as text."""

from __future__ import annotations

import asyncio
import io
import json
import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from rich.console import Console
from textual.app import App
from textual.pilot import Pilot

from proctor.app.screens.trial import TrialScreen
from proctor.app.tui import ProctorApp
from proctor.widgets.trial_matrix import TrialMatrix

FIXED_NOW = 1_700_000_100.0


async def wait_until(
    pilot: Pilot[Any], predicate: Callable[[], bool], limit_s: float = 10.0, what: str = ""
) -> None:
    """Let the app run until ``predicate`` holds; fail after ``limit_s`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit_s
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        await pilot.pause(0.02)


def render_screen(app: App[Any], *, styles: bool = False) -> str:
    """What the compositor sends to the terminal for the current screen (with ANSI styles if asked)."""
    width, height = app.size
    console = Console(
        width=width,
        height=height,
        file=io.StringIO(),
        record=True,
        force_terminal=True,
        color_system="truecolor" if styles else None,
        legacy_windows=False,
    )
    update = app.screen._compositor.render_update(
        full=True, screen_stack=app._background_screens, simplify=True
    )
    console.print(update)
    if styles:
        return console.file.getvalue()  # type: ignore[attr-defined,no-any-return]
    return console.export_text(styles=False)


def screen_text(app: App[Any]) -> str:
    return render_screen(app)


# -- console fixtures shared by the screen tests ---------------------------------------------------


@asynccontextmanager
async def console(
    db: Path, size: tuple[int, int] = (120, 40), *, notifications: bool = False, **kw: Any
) -> AsyncIterator[tuple[ProctorApp, Pilot[Any]]]:
    app = ProctorApp(db, clock=lambda: FIXED_NOW, **kw)
    async with app.run_test(size=size, notifications=notifications) as pilot:
        await wait_until(pilot, lambda: app.state.details_loaded, what="store loaded")
        await pilot.pause()
        yield app, pilot


def commands(db: Path) -> list[tuple[str, dict[str, Any]]]:
    conn = sqlite3.connect(db)
    try:
        return [(c, json.loads(a)) for c, a in conn.execute("SELECT command, args FROM commands ORDER BY id")]
    finally:
        conn.close()


async def open_trial(app: ProctorApp, pilot: Pilot[Any], row: int, col: int) -> TrialScreen:
    app.screen.query_one(TrialMatrix).move_to(row, col)
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(app.screen, TrialScreen) and app.screen.transcript.loaded)
    await pilot.pause()
    assert isinstance(app.screen, TrialScreen)
    return app.screen
