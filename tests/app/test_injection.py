"""Untrusted text shows literally and changes nothing: markup, escape sequences, bidi controls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from proctor.app.screens.compare import CompareScreen
from proctor.app.screens.pager import PagerScreen
from proctor.app.screens.trial import TrialScreen
from proctor.app.tui import ProctorApp
from proctor.store.events import ToolResult, TrialFinished, TrialStarted, Usage
from proctor.store.write.writer import StoreWriter, TrialRow
from proctor.widgets.transcript_view import TranscriptView
from proctor.widgets.trial_matrix import TrialMatrix
from tests.app.fixture_store import CLICK, CLOSE, Fixture
from tests.app.helpers import FIXED_NOW, render_screen, screen_text, wait_until

HOSTILE_SCENARIO = "[@click=app.quit]scen[/]"
HOSTILE_ARM = "arm [/] x"
HOSTILE_MODEL = "\x1b]0;retitled\x07model\u202e"


def assert_terminal_safe(app: ProctorApp) -> None:
    raw = render_screen(app, styles=True)
    assert "\x1b]" not in raw and "\x07" not in raw, "no OSC reaches the terminal"
    assert "\x1b[2J" not in raw and "\u202e" not in raw
    assert "pwned-title" not in raw and "retitled" not in raw


async def start(app: ProctorApp, pilot: Pilot[Any]) -> None:
    await wait_until(pilot, lambda: app.state.details_loaded, what="store loaded")
    await pilot.pause()


async def test_tool_output_answer_and_scores_with_markup_show_literally(fx: Fixture) -> None:
    app = ProctorApp(fx.db, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(120, 40)) as pilot:
        await start(app, pilot)
        app.screen.query_one(TrialMatrix).move_to(1, 0)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TrialScreen) and app.screen.transcript.loaded)
        await pilot.pause()
        text = screen_text(app)
        assert f"{CLICK} | {CLOSE} | title-gone | red | evil" in text
        assert f"grep failed {CLICK}" in text
        assert_terminal_safe(app)
        line_no, line = next((i, x) for i, x in enumerate(text.splitlines()) if f"│ {CLICK}" in x)
        await pilot.click(offset=(line.index(CLICK) + 3, line_no))
        await pilot.pause()
        assert app.is_running and isinstance(app.screen, TrialScreen), "the click markup is not an action"
        assert app.title == "proctor"
        view = app.screen.query_one(TranscriptView)
        view.select_entry(next(i for i, e in enumerate(view.entries) if e.kind == "tool_result"))
        await pilot.press("p")
        await wait_until(pilot, lambda: isinstance(app.screen, PagerScreen))
        assert f"{CLICK} | {CLOSE}" in screen_text(app)
        assert_terminal_safe(app)


async def test_compare_diff_of_hostile_results_is_literal(fx: Fixture) -> None:
    app = ProctorApp(fx.db, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(120, 40)) as pilot:
        await start(app, pilot)
        await pilot.press("j", "c")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen))
        await wait_until(pilot, lambda: f"-{CLICK}" in screen_text(app) or f"{CLICK} |" in screen_text(app))
        assert app.is_running
        assert_terminal_safe(app)


async def test_hostile_names_in_the_matrix_titles_and_cells(tmp_path: Path) -> None:
    db = tmp_path / "hostile.db"
    w = await StoreWriter.open(db, flush_interval_s=0.001)
    await w.create_run("[b]run[/b]", "x [/] y", {"held_out": [HOSTILE_SCENARIO]})
    await w.add_trials("[b]run[/b]", [TrialRow(HOSTILE_SCENARIO, HOSTILE_ARM, HOSTILE_MODEL, 0, 1)])
    w.emit(
        "r",
        TrialStarted(
            scenario=HOSTILE_SCENARIO, arm=HOSTILE_ARM, model=HOSTILE_MODEL, epoch=0, seed=1, attempt=1
        ),
        trial_id=1,
        attempt=1,
    )
    w.emit(
        "r",
        ToolResult(
            call_id="c",
            server=HOSTILE_ARM,
            tool="[red]t[/]",
            content="\x1b[2J" + CLOSE,
            is_error=False,
            latency_s=0,
        ),
        trial_id=1,
        attempt=1,
    )
    w.emit(
        "r",
        TrialFinished(
            status="error",
            stop="error",
            final_answer="",
            tool_calls=0,
            usage=Usage(),
            cost_usd=0,
            wall_s=0,
            error=f"err {CLICK}",
        ),
        trial_id=1,
        attempt=1,
    )
    await w.close()
    app = ProctorApp(db, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(120, 40)) as pilot:
        await start(app, pilot)
        text = screen_text(app)
        assert "[b]run[/b]" in text and "suite x [/] y" in text
        assert "⚓[@click=app.quit]scen[/]" in text and HOSTILE_ARM in text
        assert f"err {CLICK}" in text
        assert_terminal_safe(app)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TrialScreen) and app.screen.transcript.loaded)
        await pilot.pause()
        text = screen_text(app)
        assert "result arm [/] x/[red]t[/]" in text and CLOSE in text
        assert_terminal_safe(app)
        await pilot.press("3")
        await pilot.pause()
        assert "[@click=app.quit]scen[/]" in screen_text(app) and app.is_running
