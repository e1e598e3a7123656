"""The console's one error path: a failed screen load or live-tail poll is shown, never silent."""

from __future__ import annotations

from typing import Any

import pytest
from textual.app import App

from proctor.app.screens.tools import ToolsScreen
from tests.app.fixture_store import Fixture
from tests.app.helpers import console, wait_until


def toasts(app: App[Any]) -> str:
    """The text of the notifications on screen (markup would have eaten the brackets)."""
    return "\n".join(str(toast.render()) for toast in app.screen.query("Toast"))


async def test_a_screen_load_that_raises_is_shown_and_kept(
    fx: Fixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken_load(self: ToolsScreen) -> None:
        raise RuntimeError("database disk image is [b]malformed[/b]")

    monkeypatch.setattr(ToolsScreen, "_load", broken_load)
    async with console(fx.db, notifications=True) as (app, pilot):
        await pilot.press("4")
        await wait_until(pilot, lambda: bool(app.failures), what="the failure recorded")
        assert app.failures == [
            "the tools screen failed: RuntimeError: database disk image is [b]malformed[/b]"
        ]
        await wait_until(pilot, lambda: "[b]malformed[/b]" in toasts(app), what="the notification, as text")


async def test_a_live_tail_poll_that_raises_stops_loudly(
    fx: Fixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with console(fx.db, notifications=True) as (app, pilot):
        assert app.failures == []

        async def broken_poll() -> None:
            raise OSError("disk I/O error")

        monkeypatch.setattr(app.feed, "poll", broken_poll)
        await wait_until(pilot, lambda: bool(app.failures), what="the tail failure recorded")
        assert app.failures == ["the live tail failed: OSError: disk I/O error"]
        await wait_until(pilot, lambda: "disk I/O error" in toasts(app), what="the notification")
