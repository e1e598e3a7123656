"""Pilot helpers: wait for a condition (never a fixed sleep) and read the screen as text."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable
from typing import Any

from rich.console import Console
from textual.app import App
from textual.pilot import Pilot

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
