"""Pilot tests of the compare, judge and anchors views."""

from __future__ import annotations

from pathlib import Path

from proctor.app.screens.anchors import AnchorsScreen
from proctor.app.screens.compare import CompareScreen
from proctor.app.screens.dashboard import DashboardScreen
from proctor.app.screens.dialogs import ConfirmScreen
from proctor.app.screens.judge import JudgeScreen
from proctor.app.screens.trial import TrialScreen
from proctor.scenarios.demo import SUITE_DIR
from proctor.store.events import Judged, OperatorCommand
from proctor.store.write.writer import StoreWriter
from proctor.widgets.lines_view import LinesView
from tests.app.fixture_store import MODEL, RUN, Fixture
from tests.app.helpers import commands, console, screen_text, wait_until

# -- compare ---------------------------------------------------------------------------------


async def test_compare_view_defaults_to_baseline_and_switches_sides(fx: Fixture) -> None:
    async with console(fx.db) as (app, pilot):
        await pilot.press("l", "c")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen))
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        assert screen.sides == {"left": ("baseline", MODEL), "right": ("mcp-good", MODEL)}
        await wait_until(pilot, lambda: [r.mark for r in screen.rows] == ["result"], what="aligned calls")
        text = screen_text(app)
        assert "#1 baseline" in text and "#2 mcp-good" in text and "fairness 0.600" in text
        assert "result ≠     1 grep" in text and "results differ (- left, + right)" in text
        await pilot.press("A")
        assert screen.sides["right"] == ("baseline", MODEL)
        await wait_until(pilot, lambda: "same result · 5,002 lines" in screen_text(app))
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
        assert "σ 0.212" in screen_text(app)  # two passes 0.30 apart: the sample SD, 0.30 / √2
        await pilot.press("space", "j", "space", "plus")
        assert screen.marked == {1, 2} and screen.passes == 3
        await pilot.press("minus", "plus", "r")
        await wait_until(pilot, lambda: bool(commands(fx.db)))
        assert commands(fx.db) == [("rejudge", {"trial_ids": [1, 2], "passes": 3})]
        assert screen.marked == set()
        writer = await StoreWriter.open(fx.db, flush_interval_s=0.001)
        verdict = {"score": 0.9, "criteria": [{"name": "correctness", "score": 0.9, "rationale": "third"}]}
        writer.emit(RUN, Judged(pass_no=3, judge="openai:gpt-4o-mini", verdict=verdict), trial_id=2)
        await writer.close()
        await wait_until(pilot, lambda: "p3=0.90" in screen_text(app), what="new pass")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TrialScreen))
        assert isinstance(app.screen, TrialScreen) and app.screen.trial_id == 2


# -- anchors ---------------------------------------------------------------------------------


async def test_judge_view_says_at_the_top_which_passes_failed_and_why(fx: Fixture) -> None:
    refused = "judge call failed: anthropic HTTP 400 (invalid_request_error): `temperature` is deprecated"
    async with console(fx.db) as (app, pilot):
        await pilot.press("2")
        await wait_until(pilot, lambda: isinstance(app.screen, JudgeScreen))
        screen = app.screen
        assert isinstance(screen, JudgeScreen)
        writer = await StoreWriter.open(fx.db, flush_interval_s=0.001)
        for pass_no in (1, 2):  # a second judge beside the fixture's, every pass refused
            writer.emit(
                RUN,
                Judged(pass_no=pass_no, judge="anthropic:claude-opus-4-7", verdict=None, error=refused),
                trial_id=1,
            )
        await writer.close()
        detail = screen.query_one("#judge-detail", LinesView)
        await wait_until(
            pilot,
            lambda: "judge failed on 2 of 4 passes" in " ".join(x.plain for x in detail.lines),
            what="the failure line",
        )
        assert "`temperature` is deprecated" in " ".join(x.plain for x in detail.lines)


async def test_anchors_lock_after_confirmation_and_verify_result_from_events(fx: Fixture) -> None:
    async with console(fx.db) as (app, pilot):
        await pilot.press("3")
        await wait_until(pilot, lambda: isinstance(app.screen, AnchorsScreen))
        assert "⚓ s3-anchor" in screen_text(app) and "unlocked" in screen_text(app)
        # This run records no suite to lock from: the dialog says so and writes nothing.
        await pilot.press("L")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "cannot lock the anchors, so nothing will be written" in screen_text(app)
        assert "the run records no suite folder" in screen_text(app)
        await pilot.press("y")
        await wait_until(pilot, lambda: isinstance(app.screen, AnchorsScreen))
        await pilot.press("V")
        await wait_until(pilot, lambda: len(commands(fx.db)) == 1)
        assert commands(fx.db) == [("verify_anchors", {})]
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


async def test_lock_says_what_it_will_write_where_before_writing_it(demo: Path) -> None:
    async with console(demo, size=(160, 50)) as (app, pilot):
        await pilot.press("3")
        await wait_until(pilot, lambda: isinstance(app.screen, AnchorsScreen))
        await pilot.press("L")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        lines = [t.plain for t in app.screen.query_one("#confirm-body", LinesView).lines]
        anchors = SUITE_DIR / "anchors"
        assert lines[0] == f"writes 13 files under {anchors}/:"
        assert "  held-out.lock  (the lock: the SHA-256 of every file below)" in lines
        assert "  cli-enqueue-delay/  rubric.json, gold.json, 4 transcript(s) in transcripts/" in lines
        assert any(
            line.startswith("suite.yaml is not changed: the suite finds anchors/held-out.lock")
            for line in lines
        )
        assert "it hashes:" in lines
        assert commands(demo) == []  # nothing is asked of the engine before the answer
        await pilot.press("y")
        await wait_until(pilot, lambda: len(commands(demo)) == 1)
        assert commands(demo)[0][0] == "lock_anchors"
