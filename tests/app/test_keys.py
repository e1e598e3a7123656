"""Keyboard everywhere: help, command palette, quit with a running engine."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from textual import events

from proctor.app.screens.dashboard import DashboardScreen
from proctor.app.screens.dialogs import ConfirmScreen, HelpScreen
from proctor.app.screens.trial import TrialScreen
from proctor.app.tui import leaving_note
from proctor.app.views.feed import TailBatch
from proctor.widgets.lines_view import LinesView
from tests.app.fixture_store import Fixture
from tests.app.helpers import console, screen_text, wait_until

# -- keyboard everywhere ---------------------------------------------------------------------


async def test_help_lists_the_keys_of_the_current_screen(fx: Fixture) -> None:
    async with console(fx.db) as (app, pilot):
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        text = "\n".join(line.plain for line in app.screen.query_one(LinesView).lines)  # the whole page
        for description in (
            "Compare",
            "Status filter",
            "Scenario filter",
            "Re-run trial",
            "Judge",
            "Anchors",
            "Quit",
        ):
            assert description in text
        await pilot.press("escape")
        assert isinstance(app.screen, DashboardScreen)


async def test_command_palette_offers_every_bound_action(fx: Fixture) -> None:
    async with console(fx.db) as (app, pilot):
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert {"Compare", "Status filter", "Arm filter", "Model filter", "Scenario filter", "Clear filters",
                "Re-run trial", "Judge", "Anchors", "Help", "Open trial"} <= titles  # fmt: skip
        await pilot.press("ctrl+p")
        await pilot.press(*"Status filter")
        await wait_until(pilot, lambda: "Status filter" in screen_text(app))
        await pilot.press("enter")
        screen = app.screen_stack[0]
        assert isinstance(screen, DashboardScreen)
        await wait_until(pilot, lambda: screen.filters.status == "queued", what="palette ran the action")


class _Engine:
    """An engine that runs until cancelled, and says whether it started and was cancelled."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.seen: list[str] = []

    async def __call__(self) -> None:
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.seen.append("cancelled")
            raise


async def test_quit_cancels_the_engine_worker_and_returns_zero(fx: Fixture) -> None:
    engine = _Engine()
    seen, started = engine.seen, engine.started
    async with console(fx.db, engine=engine) as (app, pilot):
        await asyncio.wait_for(started.wait(), 5)
        await pilot.press("q")
        await wait_until(pilot, lambda: not app.is_running or seen == ["cancelled"])
    assert seen == ["cancelled"] and app.return_code == 0


async def test_q_on_a_live_run_asks_first_and_leaving_exits_130(fx: Fixture) -> None:
    engine = _Engine()
    seen, started = engine.seen, engine.started
    async with console(fx.db, engine=engine, live=True) as (app, pilot):
        await asyncio.wait_for(started.wait(), 5)
        await pilot.press("q")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the stop question")
        assert "stop the run?" in screen_text(app) and "--resume" in screen_text(app)
        await pilot.press("n")
        await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmScreen), what="back to the run")
        assert app.is_running and seen == []
        await pilot.press("q", "y")
        await wait_until(pilot, lambda: not app.is_running or seen == ["cancelled"])
    assert seen == ["cancelled"] and app.return_code == 130


async def test_ctrl_c_quits_as_q_does_and_asks_the_same_question_on_a_live_run(fx: Fixture) -> None:
    async with console(fx.db) as (app, pilot):
        await pilot.press("3", "ctrl+c")  # from any screen
        await wait_until(pilot, lambda: not app.is_running, what="the console to quit")
    assert app.return_code == 0
    engine = _Engine()
    seen, started = engine.seen, engine.started
    async with console(fx.db, engine=engine, live=True) as (app, pilot):
        await asyncio.wait_for(started.wait(), 5)
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the stop question")
        assert "stop the run?" in screen_text(app) and "q or ctrl+c again: stop" in screen_text(app)
        await pilot.press("n")
        await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmScreen), what="back to the run")
        assert app.is_running and seen == []
        await pilot.press("ctrl+c", "ctrl+c")  # asked again while the question is open: stop
        await wait_until(pilot, lambda: not app.is_running or seen == ["cancelled"])
    assert seen == ["cancelled"] and app.return_code == 130


async def test_engine_failure_is_reported_without_markup_and_keeps_the_console(fx: Fixture) -> None:
    async def engine() -> None:
        raise RuntimeError("[@click=app.quit]boom[/] x [/] y")

    async with console(fx.db, engine=engine) as (app, pilot):
        await wait_until(pilot, lambda: app.engine_error is not None)
        await pilot.pause()
        assert app.is_running and "[@click=app.quit]boom[/] x [/] y" in (app.engine_error or "")
        await pilot.press("q")
    assert app.return_code == 1


async def test_a_key_typed_right_after_enter_lands_on_the_trial_it_opened(fx: Fixture) -> None:
    async with console(fx.db) as (app, pilot):
        # Both keys queued before either is handled, as when typing fast in a real terminal.
        app.post_message(events.Key("enter", "\r"))
        app.post_message(events.Key("question_mark", "?"))
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="help")
        assert isinstance(app.screen_stack[-2], TrialScreen), "help opened above the trial, not under it"
        await pilot.press("escape")
        assert isinstance(app.screen, TrialScreen)


async def test_keys_typed_ahead_on_the_matrix_are_handled_in_order(fx: Fixture) -> None:
    async with console(fx.db) as (app, pilot):
        app.post_message(events.Key("G", "G"))
        app.post_message(events.Key("enter", "\r"))
        await wait_until(pilot, lambda: isinstance(app.screen, TrialScreen), what="a trial view")
        assert isinstance(app.screen, TrialScreen) and app.screen.trial_id == 5, "G moved first, then enter"


async def test_the_stop_question_counts_done_trials_as_the_header_does_while_trials_finish(
    fx: Fixture,
) -> None:
    engine = _Engine()
    async with console(fx.db, engine=engine, live=True) as (app, pilot):
        await asyncio.wait_for(engine.started.wait(), 5)
        await pilot.press("q")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the stop question")
        assert "4/6 done;" in screen_text(app) and "4/6 done (67%)" in screen_text(app)
        running = app.state.trials[5]
        finished = replace(running, status="finished", passed=True, finished_at=running.started_at)
        app.state.apply_batch(TailBatch(trials=[finished]))
        app.flush()
        await wait_until(pilot, lambda: "5/6 done;" in screen_text(app), what="the dialog's count moving on")
        assert "5/6 done (83%)" in screen_text(app)
        await pilot.press("n")


def test_leaving_a_run_says_how_to_report_it_with_the_path_quoted() -> None:
    note = leaving_note(Path("runs/my demo.db"), has_run=True)
    assert note is not None and "proctor report 'runs/my demo.db' --format md" in note
    assert leaving_note(Path("runs/demo.db"), has_run=False) is None
