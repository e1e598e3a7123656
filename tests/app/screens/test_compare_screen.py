"""Pilot tests of the compare view: calls aligned by call, differences navigable, diffs shown,
hostile tool text literal, at 100x30 and 160x50."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from proctor.app.screens.compare import CompareScreen
from proctor.app.tui import ProctorApp
from proctor.app.views.compare_text import GAP, MARK_WIDTH
from proctor.app.views.inline_diff import CHANGED
from proctor.store.events import FinalAnswer, ToolCall, ToolResult, TrialFinished, TrialStarted, Usage
from proctor.store.write.writer import StoreWriter, TrialRow
from proctor.widgets.lines_view import LinesView
from tests.app.helpers import FIXED_NOW, render_screen, screen_text, wait_until

RUN = "run-compare"
MODEL = "offline:default"
CLICK = "[@click=app.quit]x[/]"
OSC = "\x1b]0;pwned-title\x07"
LONG = "p" * 300

# (tool, arguments, result) per side: ls same; grep only left; read a.py same call, result differs;
# read b.py / c.py same tool, arguments differ; a hostile search only right.
LEFT = [
    ("ls", {}, "a.py\nb.py"),
    ("grep", {"pattern": "Job"}, "a.py:1:class Job"),
    ("read", {"path": "a.py"}, "line1\nline2\nline3"),
    ("read", {"path": "b.py", "long": LONG}, f"b says {CLICK}"),
]
RIGHT = [
    ("ls", {}, "a.py\nb.py"),
    ("read", {"path": "a.py"}, "line1\nLINE2\nline3"),
    ("read", {"path": "c.py"}, "c says hi"),
    (f"search{CLICK}", {"q": f"[b]{CLICK}"}, f"{OSC}found {CLICK}\x1b[2J"),
]


async def _trial(w: StoreWriter, tid: int, arm: str, calls: list[tuple[str, dict[str, Any], str]]) -> None:
    def emit(event: Any) -> None:
        w.emit(RUN, event, trial_id=tid, attempt=1)

    emit(TrialStarted(scenario="s1", arm=arm, model=MODEL, epoch=0, seed=1, attempt=1))
    for k, (tool, args, result) in enumerate(calls):
        emit(ToolCall(call_id=f"{arm}-{k}", server=arm, tool=tool, arguments=args))
        emit(
            ToolResult(
                call_id=f"{arm}-{k}", server=arm, tool=tool, content=result, is_error=False, latency_s=0
            )
        )
    emit(FinalAnswer(text=f"answer of {arm}"))
    emit(
        TrialFinished(
            status="finished",
            stop="answer",
            final_answer=f"answer of {arm}",
            tool_calls=len(calls),
            usage=Usage(input_tokens=1, output_tokens=1),
            cost_usd=0.0,
            wall_s=1.0,
        )
    )


@pytest.fixture
async def db(tmp_path: Path) -> Path:
    path = tmp_path / "compare.db"
    w = await StoreWriter.open(path, flush_interval_s=0.001)
    await w.create_run(RUN, "compare-suite", {})
    await w.add_trials(RUN, [TrialRow("s1", "baseline", MODEL, 0, 1), TrialRow("s1", "mcp", MODEL, 0, 1)])
    await _trial(w, 1, "baseline", LEFT)
    await _trial(w, 2, "mcp", RIGHT)
    await w.close()
    return path


@asynccontextmanager
async def compare(
    db: Path, size: tuple[int, int]
) -> AsyncIterator[tuple[ProctorApp, Pilot[Any], CompareScreen]]:
    app = ProctorApp(db, clock=lambda: FIXED_NOW)
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: app.state.details_loaded, what="store loaded")
        await pilot.pause()
        await pilot.press("c")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen))
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await wait_until(pilot, lambda: len(screen.rows) == 5, what="both transcripts aligned")
        await pilot.pause()
        yield app, pilot, screen


def rows_text(screen: CompareScreen) -> list[str]:
    return [line.plain for line in screen.query_one("#compare-rows", LinesView).lines]


def detail_text(screen: CompareScreen) -> str:
    return "\n".join(line.plain for line in screen.query_one("#compare-detail", LinesView).lines)


def cursor(screen: CompareScreen) -> int:
    return screen.query_one("#compare-rows", LinesView).cursor_line


@pytest.mark.parametrize("size", [(100, 30), (160, 50)])
async def test_calls_align_side_by_side_and_every_row_is_on_screen(db: Path, size: tuple[int, int]) -> None:
    async with compare(db, size) as (app, _pilot, screen):
        assert [r.mark for r in screen.rows] == ["same", "left", "result", "args", "right"]
        rows = rows_text(screen)
        assert [r[:MARK_WIDTH].strip() for r in rows] == [
            "same", "only left", "result ≠", "args ≠", "only right", "answer ≠",
        ]  # fmt: skip
        assert GAP in rows[1] and GAP in rows[4]
        assert all(len(r) == len(rows[0]) for r in rows), "every row fills the pane"
        text = screen_text(app)
        for row in rows:  # nothing cut silently: a cut cell ends in "…" and the pane has it whole
            assert row.rstrip()[:60] in text
        assert "…" in rows[3]
        summary = "4 left, 4 right → 1 same · 1 result ≠ · 1 args ≠ · 1 only left · 1 only right"
        assert summary in " ".join(x.strip() for x in text.splitlines())
        assert "row 1 of 6 · same" in text and "same result · 2 lines" in text


async def test_n_and_shift_n_jump_between_differences_and_the_detail_follows(db: Path) -> None:
    async with compare(db, (100, 30)) as (app, pilot, screen):
        await pilot.press("n")
        assert cursor(screen) == 1
        await wait_until(pilot, lambda: "right no matching call" in detail_text(screen))
        assert "left result · 1 line" in detail_text(screen)
        await pilot.press("n")
        assert cursor(screen) == 2
        await wait_until(pilot, lambda: "results differ (- left, + right)" in detail_text(screen))
        detail = detail_text(screen).splitlines()
        assert "-line2" in detail and "+LINE2" in detail and " line1" in detail
        shown = {line.plain: line for line in screen.query_one("#compare-detail", LinesView).lines}
        for plain, changed in (("-line2", "line"), ("+LINE2", "LINE")):
            marks = [plain[s.start : s.end] for s in shown[plain].spans if str(s.style) == CHANGED]
            assert marks == [changed], "the characters that differ are marked within the line"
        await pilot.press("n")
        await wait_until(pilot, lambda: "arguments differ (2)" in detail_text(screen))
        detail = detail_text(screen)
        assert '~ path: "b.py" → "c.py"' in detail and "- long:" in detail
        assert LONG in detail.replace("\n", ""), "the full argument, wrapped, not cut"
        await pilot.press("n", "n")
        assert cursor(screen) == 5
        await wait_until(pilot, lambda: "answer of baseline" in detail_text(screen))
        assert "final answers differ" in screen_text(app)
        await pilot.press("n")
        assert cursor(screen) == 5
        await pilot.press("N", "N")
        assert cursor(screen) == 3
        await pilot.press("g", "N")
        assert cursor(screen) == 0


async def test_enter_gives_the_detail_the_whole_height_and_back(db: Path) -> None:
    async with compare(db, (100, 30)) as (app, pilot, screen):
        await pilot.press("n", "n", "enter")
        assert screen.has_class("expanded")
        await wait_until(pilot, lambda: "enter: back to the rows" in screen_text(app))
        text = screen_text(app)
        assert "only left" not in text and "-line2" in text
        assert app.focused is screen.query_one("#compare-detail", LinesView)
        await pilot.press("n")  # still moves between differences
        await wait_until(pilot, lambda: "arguments differ" in screen_text(app))
        await pilot.press("enter")
        assert not screen.has_class("expanded")
        await wait_until(pilot, lambda: "only left" in screen_text(app))
        assert app.focused is screen.query_one("#compare-rows", LinesView)


async def test_hostile_tool_text_is_literal_and_never_reaches_the_terminal(db: Path) -> None:
    async with compare(db, (160, 50)) as (app, pilot, screen):
        await pilot.press("G")
        await pilot.press("k")
        await wait_until(pilot, lambda: "found" in detail_text(screen))
        text = screen_text(app)
        assert f"search{CLICK}" in text and f"found {CLICK}" in text
        raw = render_screen(app, styles=True)
        assert "\x1b]" not in raw and "\x07" not in raw and "pwned-title" not in raw and "\x1b[2J" not in raw
        y, line = next((i, x) for i, x in enumerate(text.splitlines()) if f"search{CLICK}" in x)
        await pilot.click(offset=(line.index(CLICK) + 3, y))
        await pilot.pause()
        assert app.is_running and isinstance(app.screen, CompareScreen), "the click markup is not an action"


async def test_a_call_arriving_live_extends_the_alignment(db: Path) -> None:
    async with compare(db, (120, 40)) as (_app, pilot, screen):
        w = await StoreWriter.open(db, flush_interval_s=0.001)
        late = ToolCall(call_id="late", server="mcp", tool="read", arguments={"long": LONG, "path": "b.py"})
        w.emit(RUN, late, trial_id=2, attempt=1)
        await w.close()
        await wait_until(pilot, lambda: len(screen.rows) == 6, what="realigned")
        assert [(r.pair.left, r.pair.right, r.mark) for r in screen.rows] == [
            (0, 0, "same"), (1, None, "left"), (2, 1, "result"), (None, 2, "right"), (None, 3, "right"),
            (3, 4, "result"),
        ]  # fmt: skip
        assert "(no result yet)" in rows_text(screen)[5]
