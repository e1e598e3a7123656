"""The key bar: the focused screen's keys on one line, kept current, never cut off silently."""

from __future__ import annotations

from textual.widgets import Input

from proctor.app.screens.trial import TrialScreen
from proctor.widgets.key_bar import MORE, KeyBar
from tests.app.fixture_store import Fixture
from tests.app.helpers import console, open_trial, screen_text, wait_until


def _bar_line(text: str) -> str:
    return text.rstrip("\n").splitlines()[-1]


async def test_the_bar_follows_focus_and_screens(fx: Fixture) -> None:
    async with console(fx.db) as (app, pilot):
        line = _bar_line(screen_text(app))
        assert "Open trial" in line and "Compare" in line and "palette" in line
        screen = await open_trial(app, pilot, 0, 1)
        bar = screen.query_one(KeyBar)
        assert "Search" in {item.description for item in bar.items}
        assert "Open trial" not in _bar_line(screen_text(app))
        await pilot.press("slash")
        await wait_until(pilot, lambda: isinstance(app.focused, Input))
        await pilot.pause()
        descriptions = {item.description for item in bar.items}
        assert "Expand/collapse" not in descriptions, "the transcript's keys leave with its focus"
        assert "Back" in descriptions
        await pilot.press("escape")
        await wait_until(pilot, lambda: "Expand/collapse" in {item.description for item in bar.items})


async def test_keys_that_do_not_fit_are_announced(fx: Fixture) -> None:
    async with console(fx.db) as (app, pilot):
        bar = app.screen.query_one(KeyBar)
        line = _bar_line(screen_text(app))
        shown = [item.description for item in bar.items if item.description in line]
        assert 0 < len(shown) < len(bar.items), "120 columns cannot hold every dashboard key"
        assert MORE in line
        assert line.rstrip().endswith("palette")
        await pilot.resize_terminal(400, 40)
        await wait_until(pilot, lambda: MORE not in _bar_line(screen_text(app)))
        line = _bar_line(screen_text(app))
        assert all(item.description in line for item in bar.items)


async def test_clicking_a_key_presses_it(fx: Fixture) -> None:
    async with console(fx.db) as (app, pilot):
        line = _bar_line(screen_text(app))
        await pilot.click(KeyBar, offset=(line.index("Open trial"), 0))
        await wait_until(pilot, lambda: isinstance(app.screen, TrialScreen), what="the trial opened")
