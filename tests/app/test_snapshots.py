"""Snapshot-like tests: the main screens of the fixed fixture store, compared as exported text.

Run with PROCTOR_UPDATE_SNAPSHOTS=1 to rewrite the expected files after an intended change.
The fixture pins every timestamp and the app gets a fixed clock, so nothing here moves.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from proctor.app.screens.compare import CompareScreen
from proctor.app.screens.trial import TrialScreen
from proctor.app.tui import ProctorApp
from proctor.widgets.trial_matrix import TrialMatrix
from tests.app.fixture_store import Fixture
from tests.app.helpers import FIXED_NOW, screen_text, wait_until

SNAPSHOTS = Path(__file__).parent / "snapshots"
Steps = Callable[[ProctorApp, Pilot[Any]], Awaitable[None]]


async def dashboard(app: ProctorApp, pilot: Pilot[Any]) -> None:
    await wait_until(
        pilot,
        lambda: all(
            x in screen_text(app) for x in ("✓ passed  0.60", "mcp-good             33%", "tool_io 150")
        ),
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


def keys(*pressed: str) -> Steps:
    async def steps(app: ProctorApp, pilot: Pilot[Any]) -> None:
        await pilot.press(*pressed)

    return steps


@pytest.mark.parametrize(
    ("name", "steps"),
    [
        ("dashboard", dashboard),
        ("trial_passed", trial(0, 1)),
        ("trial_failed", trial(1, 0)),
        ("compare", compare),
        ("judge", keys("2")),
        ("anchors", keys("3")),
        ("help", keys("question_mark")),
    ],
)
async def test_screen_matches_snapshot(fx: Fixture, name: str, steps: Steps) -> None:
    app = ProctorApp(fx.db, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.state.details_loaded)
        await pilot.pause()
        await steps(app, pilot)
        await pilot.pause(0.25)  # let the 10 Hz flush settle; the comparison below is the assertion
        await pilot.pause()
        text = "\n".join(line.rstrip() for line in screen_text(app).splitlines()) + "\n"
    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("PROCTOR_UPDATE_SNAPSHOTS") == "1":
        path.write_text(text)
    assert path.exists(), f"no snapshot {path.name}: run with PROCTOR_UPDATE_SNAPSHOTS=1 and review it"
    expected = path.read_text()
    diff = "\n".join(
        difflib.unified_diff(expected.splitlines(), text.splitlines(), "expected", "actual", lineterm="")
    )
    assert text == expected, diff
