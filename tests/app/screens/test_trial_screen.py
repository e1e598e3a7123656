"""Pilot tests of the trial view: transcript, tool I/O, pager, search, citations, tail mode, re-run."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text

from proctor.app.screens.dialogs import CitationScreen
from proctor.app.screens.pager import PagerScreen
from proctor.app.screens.trial import TrialScreen
from proctor.app.views.feed import TailBatch
from proctor.store.events import FinalAnswer, Scored, ToolCall, TrialStarted
from proctor.store.write.writer import StoreWriter
from proctor.widgets import transcript_view
from proctor.widgets.lines_view import LinesView
from proctor.widgets.transcript_model import TranscriptEntry
from proctor.widgets.transcript_view import TranscriptView
from tests.app.events_factory import stored
from tests.app.fixture_store import BIG_LINES, MODEL, RUN, Fixture
from tests.app.helpers import commands, console, open_trial, screen_text, wait_until

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
        assert "✗  hallucinated tinyq/job.py:999" in text
        assert "✓  grounded     tinyq/job.py:4" in text  # the status whole, first: the side is narrow
        assert "pass 2 openai:gpt-4o-mini: 0.800" in text
        assert "■ finished trial: nothing more will arrive" in text, "a finished trial opens at the top"


async def test_a_reshaped_score_is_named_unreadable_not_a_blank_panel(fx: Fixture) -> None:
    """Grounding details of the wrong shape (another version, a hand edit) say which field failed."""
    with sqlite3.connect(fx.db) as conn:
        conn.execute(
            "UPDATE scores SET details = ? WHERE name = 'grounding'", ('{"citations": [{"raw": 1}]}',)
        )
    async with console(fx.db) as (app, pilot):
        await open_trial(app, pilot, 0, 1)
        text = screen_text(app)
        assert "grounding      unreadable: trial" in text and "citations.0.raw" in text
        assert "grounding unreadable: trial" in text and "fairness       0.700" in text


async def test_opening_a_long_transcript_lays_each_entry_out_once(
    fx: Fixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scrollbar's gutter is reserved: a transcript taller than the view does not make a
    scrollbar appear after the first layout and every entry be laid out again, narrower."""
    widths: dict[int, set[int]] = {}
    real = transcript_view.layout_entry

    def counted(entry: TranscriptEntry, console: Any, width: int, **kw: Any) -> list[Text]:
        widths.setdefault(entry.uid, set()).add(width)
        return real(entry, console, width, **kw)

    monkeypatch.setattr(transcript_view, "layout_entry", counted)
    async with console(fx.db, size=(100, 12)) as (app, pilot):
        screen = await open_trial(app, pilot, 0, 0)
        view = screen.query_one(TranscriptView)
        assert len(view.lines) > view.size.height, "the transcript needs a scrollbar"
        await pilot.press("slash")  # the search box takes a line: the view is resized
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert widths and all(len(w) == 1 for w in widths.values()), widths


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
        await pilot.press(*"line 150", "enter")
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


async def test_the_pager_searches_every_page_and_goes_to_lines(fx: Fixture) -> None:
    async with console(fx.db) as (app, pilot):
        await open_trial(app, pilot, 0, 0)
        screen = app.screen
        assert isinstance(screen, TrialScreen)
        index = next(i for i, e in enumerate(screen.transcript.entries) if e.kind == "tool_result")
        screen.view.select_entry(index)
        await pilot.press("p")
        await wait_until(pilot, lambda: isinstance(app.screen, PagerScreen))
        pager = app.screen
        assert isinstance(pager, PagerScreen)
        await pilot.press("slash", *"FILLER LINE 4321", "enter")
        assert pager.matches == [4321 + 2] and pager.page == (4321 + 2) // 400  # after 2 header lines
        assert "1/1" in screen_text(app) and "filler line 4321" in screen_text(app)
        await pilot.press("slash", *"filler line 12", "enter")
        first = pager.match_index
        await pilot.press("n")
        assert pager.match_index == (first + 1) % len(pager.matches)
        await pilot.press("N", "N")
        assert pager.match_index == (first - 1) % len(pager.matches)
        await pilot.press("colon", *"777", "enter")
        assert pager.page == 1 and "filler line 775" in screen_text(app)
        await pilot.press("end")
        assert pager.page == pager.pages - 1
        await pilot.press("home")
        assert pager.page == 0
        await pilot.press("slash", "x", "escape")
        assert app.screen is pager, "escape closes the search box, not the pager"
        await pilot.press("escape")
        assert app.screen is screen


async def test_an_errored_trial_says_why_in_its_header(fx: Fixture) -> None:
    """The cause is in the header, where the eye lands first, and its markup stays text."""
    async with console(fx.db) as (app, pilot):
        screen = await open_trial(app, pilot, 1, 1)
        assert screen.trial_id == fx.errored
        assert "\n! error: agent crashed x [/] y" in _title(screen)
        assert "error: agent crashed x [/] y" in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        assert "error:" not in _title(await open_trial(app, pilot, 0, 1))


def _title(screen: TrialScreen) -> str:
    return str(getattr(screen.query_one("#trial-title").render(), "plain", ""))


async def test_a_score_without_value_gives_its_whole_reason_in_the_narrow_side(fx: Fixture) -> None:
    reason = "the arm does not offer the gold calls' tools"
    async with console(fx.db, size=(100, 30)) as (app, pilot):
        screen = await open_trial(app, pilot, 1, 0)
        tfs = Scored(name="tfs", value=None, details={"na": reason})
        app.state.apply_batch(TailBatch(events=[stored(tfs, trial_id=screen.trial_id, event_id=10**6)]))
        app.flush()
        await pilot.pause()
        side = [line.split("│", 1)[1] for line in screen_text(app).splitlines() if "│" in line]
        shown = " ".join(" ".join(side).split())
        assert "tfs n/a the arm does not offer the gold calls' tools" in shown and "…" not in shown


async def test_a_scored_trial_without_judgments_says_none_and_where_the_reason_is(fx: Fixture) -> None:
    # A judge with nothing to grade (the offline one on a gold-only scenario) leaves no verdict:
    # once llm_quality is scored, "none yet" would promise judgments that will never come.
    with sqlite3.connect(fx.db) as conn:
        judged = "SELECT id FROM events WHERE kind = 'judgment'"
        conn.execute(f"DELETE FROM event_facts WHERE event_id IN ({judged})")
        conn.execute(f"DELETE FROM events WHERE id IN ({judged})")
        conn.execute("DELETE FROM judgments")
    async with console(fx.db) as (app, pilot):
        await open_trial(app, pilot, 0, 1)
        await wait_until(pilot, lambda: "fairness       0.700" in screen_text(app), what="the trial's scores")
        text = screen_text(app)
        assert "none (see llm_quality)" in text and "pass 2 openai" not in text


async def test_a_failed_trials_header_names_the_rule_that_failed_it_with_its_numbers(demo: Path) -> None:
    """Trial #24 of the demo: claims 1.000 beside a fail; the header says it failed on its citations."""
    async with console(demo, size=(100, 30)) as (app, pilot):
        screen = await open_trial(app, pilot, 7, 3)
        head, why = _title(screen).splitlines()
        assert head.startswith("trial #24 sqlite-claim / codeintel_stale")
        assert why == (
            "✗ failed on grounding: 7 of 27 citations grounded (26%) < scoring.pass_requires_grounding 80%"
        )
        assert why in screen_text(app)


@pytest.mark.parametrize("size", [(100, 30), (160, 50)])
async def test_citation_panel_shows_each_line_number_and_why_a_citation_is_hallucinated(
    fx: Fixture, size: tuple[int, int]
) -> None:
    async with console(fx.db, size=size) as (app, pilot):
        screen = await open_trial(app, pilot, 0, 1)
        view = screen.query_one("#citations", LinesView)
        await wait_until(pilot, lambda: any("job.py:999" in line.plain for line in view.lines), what="rows")
        rows = [line.plain for line in view.lines]
        assert rows[0].endswith("tinyq/job.py:4") and "hallucinated tinyq/job.py:999" in rows[1]
        assert (
            rows[2].strip() == "999│ (past the end of the file)"
            and rows[3].strip() == "why: past end of file"
        )
        assert rows[4].endswith("tinyq/missing.py:3")
        side = screen.query_one("#trial-side").size.width
        assert side >= (60 if size[0] == 160 else 36), side  # 40 % of the terminal (it was at most 48)
        await pilot.press("right_square_bracket", "right_square_bracket")
        assert view.cursor_line == 4  # ] moves from citation to citation, over their detail rows
        await pilot.press("o")
        await wait_until(pilot, lambda: "not a file at this commit" in screen_text(app), what="the third one")
