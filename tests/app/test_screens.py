"""Pilot tests of every screen and key, against the fixed fixture store."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from proctor.app.screens.anchors import AnchorsScreen
from proctor.app.screens.compare import CompareScreen
from proctor.app.screens.dashboard import DashboardScreen
from proctor.app.screens.dialogs import CitationScreen, ConfirmScreen, HelpScreen, PagerScreen, PromptScreen
from proctor.app.screens.judge import JudgeScreen
from proctor.app.screens.trial import TrialScreen
from proctor.app.tui import ProctorApp
from proctor.store.events import FinalAnswer, Judged, OperatorCommand, ToolCall, TrialStarted
from proctor.store.writer import StoreWriter
from proctor.widgets.lines_view import LinesView
from proctor.widgets.transcript_view import TranscriptView
from proctor.widgets.trial_matrix import TrialMatrix
from tests.app.fixture_store import BIG_LINES, MODEL, RUN, Fixture
from tests.app.helpers import FIXED_NOW, screen_text, wait_until


@asynccontextmanager
async def console(db: Path, **kw: Any) -> AsyncIterator[tuple[ProctorApp, Pilot[Any]]]:
    app = ProctorApp(db, clock=lambda: FIXED_NOW, **kw)
    async with app.run_test(size=(120, 40)) as pilot:
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


# -- dashboard -------------------------------------------------------------------------------


async def test_dashboard_shows_matrix_progress_cost_variance_grounding_and_sparklines(fx: Fixture) -> None:
    async with console(fx.db) as (app, _):
        text = screen_text(app)
        assert "4/6 done" in text and "✓passed 2" in text and "✗failed 1" in text and "!error 1" in text
        assert "✓ passed  0.60" in text and "▶ running" in text and "· queued" in text
        assert "offline model: tokens estimated" in text
        assert "judge σ by layer" in text and "criterion" in text
        assert "baseline            100%" in text and "mcp-good             33%" in text
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


# -- trial view ------------------------------------------------------------------------------


async def test_trial_view_shows_transcript_scores_citations_and_judgments(fx: Fixture) -> None:
    async with console(fx.db) as (app, pilot):
        screen = await open_trial(app, pilot, 0, 1)
        text = screen_text(app)
        assert "assistant · turn 1" in text and "▸ call mcp-good/grep #c2" in text
        transcript = " ".join(line.plain.strip() for line in screen.query_one(TranscriptView).lines)
        assert "tinyq/job.py:999 ✗H" in transcript and "tinyq/missing.py:3 ?U" in transcript
        assert "tinyq/job.py:4 ✓G" in text
        assert "fairness       0.700" in text and "adoption       0.800" in text
        assert "✗  tinyq/job.py:999  hallucinated" in text
        assert "pass 2 offline:lexical: 0.800" in text
        assert "● following the tail" in text


async def test_tool_output_expands_collapses_and_pages_through_the_whole_output(fx: Fixture) -> None:
    async with console(fx.db) as (app, pilot):
        screen = await open_trial(app, pilot, 0, 0)
        view = screen.query_one(TranscriptView)
        index = next(i for i, e in enumerate(view.entries) if e.kind == "tool_result")
        view.select_entry(index)
        collapsed = len(view.lines)
        await pilot.press("enter")
        assert len(view.lines) > collapsed + 150
        assert any("more lines (p: page)" in line.plain for line in view.lines)
        await pilot.press("space")
        assert len(view.lines) == collapsed
        await pilot.press("e")
        assert len(view.lines) > collapsed
        await pilot.press("e")
        assert len(view.lines) == collapsed
        await pilot.press("p")
        await wait_until(pilot, lambda: isinstance(app.screen, PagerScreen))
        pager = app.screen
        assert isinstance(pager, PagerScreen) and pager.pages == (BIG_LINES + 3) // 400 + 1
        assert "filler line 398" not in screen_text(app)
        await pilot.press("right_square_bracket")
        assert pager.page == 1 and "filler line 398" in screen_text(app)
        await pilot.press("left_square_bracket", "left_square_bracket")
        assert pager.page == 0
        await pilot.press("escape")
        assert app.screen is screen


async def test_search_expands_matching_entries_and_n_cycles_matches(fx: Fixture) -> None:
    async with console(fx.db) as (app, pilot):
        screen = await open_trial(app, pilot, 0, 0)
        view = screen.query_one(TranscriptView)
        await pilot.press("slash")
        await pilot.press(*"filler line 150", "enter")
        result = next(i for i, e in enumerate(view.entries) if e.kind == "tool_result")
        assert view.cursor_entry == result and view.entries[result].uid in view.expanded
        assert any("filler line 150" in line.plain for line in view.lines)
        await pilot.press("slash", *"job", "enter")
        first = view.cursor_entry
        await pilot.press("n")
        assert view.cursor_entry != first
        await pilot.press("N")
        assert view.cursor_entry == first


async def test_citation_key_opens_the_cited_lines_at_the_pinned_commit(fx: Fixture) -> None:
    async with console(fx.db) as (app, pilot):
        screen = await open_trial(app, pilot, 0, 1)
        await pilot.press("o")
        await wait_until(pilot, lambda: isinstance(app.screen, CitationScreen))
        await wait_until(pilot, lambda: "▶4 │" in screen_text(app), what="cited lines")
        text = screen_text(app)
        assert "grounded" in text and "def step_1" in text and fx.commit[:12] in text
        await pilot.press("escape", "right_square_bracket", "o")
        await wait_until(pilot, lambda: "past the end of the file" in screen_text(app), what="past EOF")
        await pilot.press("escape", "right_square_bracket", "o")
        await wait_until(pilot, lambda: "not a file at this commit" in screen_text(app), what="unresolved")
        await pilot.press("escape", "left_square_bracket")
        assert app.screen is screen and screen.query_one("#citations", LinesView).cursor_line == 1


async def test_failed_trial_highlights_failure_mode_and_first_failing_call(fx: Fixture) -> None:
    async with console(fx.db) as (app, pilot):
        screen = await open_trial(app, pilot, 1, 0)
        text = screen_text(app)
        assert "failure mode: tool_misuse" in text and "◀ first failing call" in text
        await pilot.press("F")
        view = screen.query_one(TranscriptView)
        entry = view.entries[view.cursor_entry]
        assert entry.call_id == "c3" and entry.failing


async def test_tail_mode_follows_pauses_when_scrolled_up_and_counts_new_events(fx: Fixture) -> None:
    async with console(fx.db) as (app, pilot):
        screen = await open_trial(app, pilot, 2, 0)
        view = screen.query_one(TranscriptView)
        writer = await StoreWriter.open(fx.db, flush_interval_s=0.001)
        try:
            for i in range(40):
                writer.emit(
                    RUN,
                    ToolCall(call_id=f"n{i}", server="s", tool="t", arguments={"i": i}),
                    trial_id=5,
                    attempt=1,
                )
            await writer.flush()
            await wait_until(
                pilot, lambda: view.max_scroll_y > 0 and len(view.lines) > 80, what="live entries"
            )
            assert view.following and view.scroll_y == view.max_scroll_y > 0
            await pilot.press("g")
            assert not view.following
            for i in range(3):
                writer.emit(
                    RUN, ToolCall(call_id=f"m{i}", server="s", tool="t", arguments={}), trial_id=5, attempt=1
                )
            await writer.flush()
            await wait_until(pilot, lambda: view.unseen == 3, what="unseen count")
            assert view.scroll_y == 0
            await wait_until(pilot, lambda: "paused · 3 new events" in screen_text(app), what="tail status")
            await pilot.press("t")
            assert view.following and view.unseen == 0 and view.scroll_y == view.max_scroll_y
            await wait_until(
                pilot, lambda: "● following the tail" in screen_text(app), what="following again"
            )
        finally:
            await writer.close()


async def test_rerun_from_trial_view_enqueues_and_shows_the_new_attempt_live(fx: Fixture) -> None:
    async with console(fx.db) as (app, pilot):
        screen = await open_trial(app, pilot, 1, 0)
        await pilot.press("R")
        await wait_until(pilot, lambda: bool(commands(fx.db)))
        assert commands(fx.db) == [("rerun_trial", {"trial_id": 3})]
        writer = await StoreWriter.open(fx.db, flush_interval_s=0.001)
        try:
            started = TrialStarted(
                scenario="s2-search", arm="baseline", model=MODEL, epoch=0, seed=3, attempt=2
            )
            writer.emit(RUN, started, trial_id=3, attempt=2)
            writer.emit(RUN, FinalAnswer(text="second attempt answer"), trial_id=3, attempt=2)
        finally:
            await writer.close()
        await wait_until(
            pilot, lambda: screen.transcript.attempt == 2 and len(screen.transcript.entries) == 2
        )
        await wait_until(pilot, lambda: "second attempt answer" in screen_text(app))
        assert "attempt 2" in screen_text(app) and "I could not find it" not in screen_text(app)


# -- compare ---------------------------------------------------------------------------------


async def test_compare_view_defaults_to_baseline_and_switches_sides(fx: Fixture) -> None:
    async with console(fx.db) as (app, pilot):
        await pilot.press("l", "c")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen))
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        assert screen.sides == {"left": ("baseline", MODEL), "right": ("mcp-good", MODEL)}
        await wait_until(pilot, lambda: "step 1 = results differ" in screen_text(app), what="aligned steps")
        text = screen_text(app)
        assert "#1 baseline" in text and "#2 mcp-good" in text and "fairness     0.600" in text
        await pilot.press("A")
        assert screen.sides["right"] == ("baseline", MODEL)
        await wait_until(pilot, lambda: "results identical" in screen_text(app))
        await pilot.press("a")
        assert screen.sides["left"] == ("mcp-good", MODEL)
        await pilot.press("w")
        assert screen.sides == {"left": ("baseline", MODEL), "right": ("mcp-good", MODEL)}
        await pilot.press("m", "M")
        assert screen.sides["left"][1] == MODEL and screen.sides["right"][1] == MODEL
        await pilot.press("escape")
        assert isinstance(app.screen, DashboardScreen)


# -- judge -----------------------------------------------------------------------------------


async def test_judge_view_marks_rejudges_and_shows_new_passes_live(fx: Fixture) -> None:
    async with console(fx.db) as (app, pilot):
        await pilot.press("2")
        await wait_until(pilot, lambda: isinstance(app.screen, JudgeScreen))
        screen = app.screen
        assert isinstance(screen, JudgeScreen)
        detail = screen.query_one("#judge-detail", LinesView)
        await wait_until(
            pilot,
            lambda: (
                "cites the job class [@click=app.quit]x[/]" in " ".join(x.plain.strip() for x in detail.lines)
            ),
        )
        assert "σ 0.150" in screen_text(app)
        await pilot.press("space", "j", "space", "plus")
        assert screen.marked == {1, 2} and screen.passes == 3
        await pilot.press("minus", "plus", "r")
        await wait_until(pilot, lambda: bool(commands(fx.db)))
        assert commands(fx.db) == [("rejudge", {"trial_ids": [1, 2], "passes": 3})]
        assert screen.marked == set()
        writer = await StoreWriter.open(fx.db, flush_interval_s=0.001)
        verdict = {"score": 0.9, "criteria": [{"name": "correctness", "score": 0.9, "rationale": "third"}]}
        writer.emit(RUN, Judged(pass_no=3, judge="offline:lexical", verdict=verdict), trial_id=2)
        await writer.close()
        await wait_until(pilot, lambda: "p3=0.90" in screen_text(app), what="new pass")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TrialScreen))
        assert isinstance(app.screen, TrialScreen) and app.screen.trial_id == 2


# -- anchors ---------------------------------------------------------------------------------


async def test_anchors_lock_after_confirmation_and_verify_result_from_events(fx: Fixture) -> None:
    async with console(fx.db) as (app, pilot):
        await pilot.press("3")
        await wait_until(pilot, lambda: isinstance(app.screen, AnchorsScreen))
        assert "⚓ s3-anchor" in screen_text(app) and "unlocked" in screen_text(app)
        await pilot.press("L")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "transcript of trial #5" in screen_text(app) and "transcript of trial #6" in screen_text(app)
        await pilot.press("n")
        await pilot.press("L")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y", "V")
        await wait_until(pilot, lambda: len(commands(fx.db)) == 2)
        assert commands(fx.db) == [("lock_anchors", {"run_id": RUN}), ("verify_anchors", {})]
        writer = await StoreWriter.open(fx.db, flush_interval_s=0.001)
        await writer.execute(
            "INSERT INTO anchors (scenario, lock_file, sha256, locked_at) VALUES ('s3-anchor', 'anchors.lock', 'ab12cd', 1700000000)"
        )
        writer.emit(
            RUN, OperatorCommand(command="lock_anchors", args={}, status="done", message="1 anchor locked")
        )
        msg = "Spearman ρ 0.41 < 0.85 \x1b]0;x\x07[@click=app.quit]q[/]"
        writer.emit(RUN, OperatorCommand(command="verify_anchors", args={}, status="failed", message=msg))
        await writer.close()
        await wait_until(pilot, lambda: "verify_anchors: failed" in screen_text(app), what="verify outcome")
        text = screen_text(app)
        assert "locked sha256 ab12cd" in text and "lock_anchors: done  1 anchor locked" in text
        assert "Spearman ρ 0.41 < 0.85 [@click=app.quit]q[/]" in text


# -- keyboard everywhere ---------------------------------------------------------------------


async def test_help_lists_the_keys_of_the_current_screen(fx: Fixture) -> None:
    async with console(fx.db) as (app, pilot):
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        text = screen_text(app)
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


async def test_quit_cancels_the_engine_worker_and_returns_zero(fx: Fixture) -> None:
    import asyncio

    seen: list[str] = []
    started = asyncio.Event()

    async def engine() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    async with console(fx.db, engine=engine) as (app, pilot):
        await asyncio.wait_for(started.wait(), 5)
        await pilot.press("q")
        await wait_until(pilot, lambda: not app.is_running or seen == ["cancelled"])
    assert seen == ["cancelled"] and app.return_code == 0


async def test_engine_failure_is_reported_without_markup_and_keeps_the_console(fx: Fixture) -> None:
    async def engine() -> None:
        raise RuntimeError("[@click=app.quit]boom[/] x [/] y")

    async with console(fx.db, engine=engine) as (app, pilot):
        await wait_until(pilot, lambda: app.engine_error is not None)
        await pilot.pause()
        assert app.is_running and "[@click=app.quit]boom[/] x [/] y" in (app.engine_error or "")
        await pilot.press("q")
    assert app.return_code == 1
