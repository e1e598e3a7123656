"""Pilot tests of the run dashboard: matrix, keys, filters, re-run."""

from __future__ import annotations

from pathlib import Path

from proctor.app.screens.compare import CompareScreen
from proctor.app.screens.dashboard import DashboardScreen
from proctor.app.screens.dialogs import PromptScreen
from proctor.app.screens.trial import TrialScreen
from proctor.app.tui import ProctorApp
from proctor.store.lock import EngineLock
from proctor.widgets.trial_matrix import TrialMatrix
from tests.app.fixture_store import MODEL, Fixture
from tests.app.helpers import commands, console, screen_text, wait_until

# -- dashboard -------------------------------------------------------------------------------


async def test_dashboard_shows_matrix_progress_cost_variance_grounding_and_sparklines(fx: Fixture) -> None:
    async with console(fx.db) as (app, _):
        text = screen_text(app)
        assert "4/6 done" in text and "✓passed 2" in text and "✗failed 1" in text and "!error 1" in text
        assert "✓ passed  0.60" in text and "▶ running" in text and "· queued" in text
        assert "offline model: tokens estimated" in text
        assert "judge σ (sample SD) · floor 0.05" in text and "criterion" in text
        assert "baseline          100%" in text and "mcp-good           33%" in text
        assert "trials done 4" in text and "events/s" in text


async def test_matrix_moves_with_vim_and_arrow_keys_and_enter_opens_the_trial(fx: Fixture) -> None:
    async with console(fx.db) as (app, pilot):
        matrix = app.screen.query_one(TrialMatrix)
        await pilot.press("j", "l")
        assert matrix.cursor == (1, 1) and matrix.selected_trial() == 4
        await pilot.press("k", "h", "down", "right", "up", "left")
        assert matrix.cursor == (0, 0)
        await pilot.press("G")
        assert matrix.cursor == (2, 0)
        await pilot.press("g")
        assert matrix.cursor == (0, 0)
        assert "#1 s1-intro / baseline" in screen_text(app)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TrialScreen))
        assert isinstance(app.screen, TrialScreen) and app.screen.trial_id == 1
        await pilot.press("escape")
        assert isinstance(app.screen, DashboardScreen)


async def test_filters_by_status_arm_model_and_scenario_and_clear(fx: Fixture) -> None:
    async with console(fx.db) as (app, pilot):
        screen = app.screen
        assert isinstance(screen, DashboardScreen)
        matrix = screen.query_one(TrialMatrix)
        await pilot.press("s")
        assert screen.filters.status == "queued"
        assert [c.trial_id for c in matrix.model.cells.values()] == [6]
        await pilot.press("s", "s", "s", "s")
        assert screen.filters.status == "failed" and [c.trial_id for c in matrix.model.cells.values()] == [3]
        assert "filters: status=failed" in screen_text(app)
        await pilot.press("x", "a")
        assert screen.filters.arm == "baseline" and matrix.model.columns == [("baseline", MODEL)]
        await pilot.press("m")
        assert screen.filters.model == MODEL
        await pilot.press("x", "f")
        await wait_until(pilot, lambda: isinstance(app.screen, PromptScreen))
        await pilot.press(*"s2", "enter")
        await wait_until(pilot, lambda: app.screen is screen)
        assert matrix.model.rows == [("s2-search", 0)]
        await pilot.press("x")
        assert len(matrix.model.rows) == 3


async def test_rerun_from_dashboard_enqueues_and_opens_the_trial_only_for_failures(fx: Fixture) -> None:
    async with console(fx.db) as (app, pilot):
        await pilot.press("R")
        await pilot.pause()
        assert commands(fx.db) == [] and isinstance(app.screen, DashboardScreen)
        await pilot.press("j", "R")
        await wait_until(pilot, lambda: bool(commands(fx.db)), what="command row")
        assert commands(fx.db) == [("rerun_trial", {"trial_id": 3})]
        assert isinstance(app.screen, TrialScreen) and app.screen.trial_id == 3


async def test_a_running_run_that_no_process_holds_says_engine_stopped(fx: Fixture) -> None:
    lock = EngineLock.try_acquire(fx.db)  # a live engine holds the run
    assert lock is not None
    try:
        async with console(fx.db) as (app, pilot):
            # The title is drawn after the lock check, so a drawn title has seen the live engine.
            await wait_until(pilot, lambda: " · suite " in screen_text(app), what="run title")
            assert "engine stopped" not in screen_text(app)
            lock.release()  # the engine died
            await wait_until(pilot, lambda: "engine stopped" in screen_text(app), what="engine stopped")
    finally:
        lock.release()


# -- why, on the demo --------------------------------------------------------------------------


def _selected_line(app: ProctorApp) -> str:
    return str(getattr(app.screen.query_one("#selected").render(), "plain", ""))


async def test_the_line_under_the_matrix_says_which_rule_failed_the_selected_trial(demo: Path) -> None:
    async with console(demo, size=(100, 30)) as (app, pilot):
        await pilot.press(*"jjjjjjj", *"lll")  # sqlite-claim / codeintel_stale, the trial #24
        await pilot.pause()
        head, why = _selected_line(app).splitlines()
        assert head.startswith("#24 sqlite-claim / codeintel_stale / offline:default")
        assert why == (
            "  ✗ failed on grounding: 7 of 27 citations grounded (26%) < scoring.pass_requires_grounding 80%"
        )
        assert why.strip() in screen_text(app)  # whole at 100 columns
        await pilot.press("h", "h", "h")  # the baseline: failed on its claims
        await pilot.pause()
        assert _selected_line(app).splitlines()[1] == "  ✗ failed on judged claims coverage 0.00 < 0.75"
        await pilot.press("l")
        await pilot.pause()
        assert _selected_line(app).splitlines()[1] == "  ✓ passed: judged claims coverage 1.00 >= 0.75"


async def test_after_a_filter_the_line_names_the_selection_and_compare_opens_it(demo: Path) -> None:
    async with console(demo, size=(100, 30)) as (app, pilot):
        matrix = app.screen.query_one(TrialMatrix)
        await pilot.press(*"jjjjjjj", *"lll", "f")
        await wait_until(pilot, lambda: isinstance(app.screen, PromptScreen))
        await pilot.press(*"dead", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, DashboardScreen))
        await pilot.pause()
        for step in ("filtered", "cleared"):
            selected = matrix.selected_trial()
            assert selected is not None
            trial = app.state.trials[selected]
            assert _selected_line(app).startswith(f"#{selected} {trial.scenario} / {trial.arm} /"), step
            if step == "filtered":
                assert trial.scenario == "dead-letter"
                await pilot.press("x")
                await pilot.pause()
        await pilot.press("c")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen))
        assert isinstance(app.screen, CompareScreen)
        assert app.screen.scenario == trial.scenario
        assert trial.arm in {arm for arm, _ in app.screen.sides.values()}  # c compares what the line names
