"""Snapshot tests (pytest-textual-snapshot): every screen of the fixed fixture store at 100x30
and 160x50, compared as SVG screenshots, so colours and styles count as well as text.

Run ``pytest tests/app/test_snapshots.py --snapshot-update`` to rewrite them after an intended
change, then review the SVGs. The fixture pins every timestamp and the app gets a fixed clock.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from proctor.app.screens.compare import CompareScreen
from proctor.app.screens.pager import PagerScreen
from proctor.app.screens.trial import TrialScreen
from proctor.app.screens.workbench import WorkbenchScreen
from proctor.app.tui import ProctorApp
from proctor.widgets.transcript_view import TranscriptView
from proctor.widgets.trial_matrix import TrialMatrix
from tests.app.fixture_store import Fixture
from tests.app.helpers import FIXED_NOW, screen_text, wait_until

Steps = Callable[[ProctorApp, Pilot[Any]], Awaitable[None]]


async def dashboard(app: ProctorApp, pilot: Pilot[Any]) -> None:
    await wait_until(
        pilot,
        lambda: "s1-intro" in screen_text(app) and "tool_io 150" in screen_text(app),
        what="dashboard with details and the tool-I/O backfill",
    )


def trial(row: int, col: int) -> Steps:
    async def steps(app: ProctorApp, pilot: Pilot[Any]) -> None:
        app.screen.query_one(TrialMatrix).move_to(row, col)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TrialScreen) and app.screen.transcript.loaded)

    return steps


async def compare(app: ProctorApp, pilot: Pilot[Any]) -> None:
    await pilot.press("c")
    await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen))
    screen = app.screen
    assert isinstance(screen, CompareScreen)
    await wait_until(
        pilot, lambda: len(screen.transcripts) == 2 and all(t.loaded for t in screen.transcripts.values())
    )


def keys_then(*pressed: str, shows: str) -> Steps:
    async def steps(app: ProctorApp, pilot: Pilot[Any]) -> None:
        await pilot.press(*pressed)
        await wait_until(pilot, lambda: shows in screen_text(app), what=repr(shows))

    return steps


def in_trial(row: int, col: int, *pressed: str) -> Steps:
    async def steps(app: ProctorApp, pilot: Pilot[Any]) -> None:
        await trial(row, col)(app, pilot)
        await pilot.press(*pressed)
        await pilot.pause()

    return steps


def on_entry(row: int, col: int, kind: str, key: str, screen: type[Any]) -> Steps:
    """Open a trial, select its first transcript entry of ``kind`` and press ``key``."""

    async def steps(app: ProctorApp, pilot: Pilot[Any]) -> None:
        await trial(row, col)(app, pilot)
        view = app.screen.query_one(TranscriptView)
        view.select_entry(next(i for i, e in enumerate(view.entries) if e.kind == kind))
        await pilot.press(key)
        await wait_until(pilot, lambda: isinstance(app.screen, screen), what=screen.__name__)

    return steps


def keys(*pressed: str) -> Steps:
    async def steps(app: ProctorApp, pilot: Pilot[Any]) -> None:
        await pilot.press(*pressed)

    return steps


SCREENS: list[tuple[str, Steps]] = [
    ("dashboard", dashboard),
    ("trial_passed", trial(0, 1)),
    ("trial_failed", trial(1, 0)),
    ("trial_checks", in_trial(0, 1, "v")),
    ("compare", compare),
    ("judge", keys("2")),
    ("anchors", keys("3")),
    ("tools", keys_then("4", shows="server/tool")),
    ("help", keys("question_mark")),
    ("pager", on_entry(0, 0, "tool_result", "p", PagerScreen)),
    ("citation", in_trial(0, 1, "right_square_bracket", "o")),
    ("workbench", on_entry(0, 1, "tool_call", "w", WorkbenchScreen)),
    ("filter_prompt", keys("f")),
    ("lock_confirm", keys("3", "L")),
]
SIZES = [(100, 30), (160, 50)]


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize(("name", "steps"), SCREENS, ids=[n for n, _ in SCREENS])
def test_screen_matches_snapshot(
    fx: Fixture, name: str, steps: Steps, size: tuple[int, int], snap_compare: Any
) -> None:
    app = ProctorApp(fx.db, clock=lambda: FIXED_NOW)

    async def settle(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: app.state.details_loaded)
        await dashboard(app, pilot)  # every screen starts from a settled dashboard (backfill done)
        await steps(app, pilot)
        await wait_until(pilot, lambda: app.settled, what="flushed")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=settle), (
        f"{name} at {size[0]}x{size[1]} differs from its snapshot: open snapshot_report.html, and if the "
        "change is intended run pytest with --snapshot-update and review the SVG"
    )


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_dashboard_of_five_arms_matches_snapshot(
    wide: Path, size: tuple[int, int], snap_compare: Any
) -> None:
    """The demo's shape: compact cells with every arm and its Δ at 100 columns, full ones at 160."""
    app = ProctorApp(wide, clock=lambda: FIXED_NOW)

    async def settle(pilot: Pilot[Any]) -> None:
        await wait_until(
            pilot,
            lambda: (
                app.state.details_loaded
                and app.state.usage.backfill_done
                and "worker-pool" in screen_text(app)
                and "tool_io …" not in screen_text(app)
            ),
            what="dashboard with details and the tool-I/O backfill shown",
        )
        await pilot.pause(0.25)
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=settle)
