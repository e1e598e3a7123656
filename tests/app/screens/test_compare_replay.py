"""The compare view on a replay run: each replayed trial beside its recording, call by call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from proctor.app.screens.compare import CompareScreen
from proctor.app.tui import ProctorApp
from proctor.app.views.compare_text import MARK_WIDTH
from proctor.store.events import ToolCall, ToolResult, TrialFinished, TrialStarted, Usage
from proctor.store.write.writer import StoreWriter, TrialRow
from proctor.widgets.lines_view import LinesView
from tests.app.helpers import FIXED_NOW, screen_text, wait_until

MODEL = "offline:default"
RECORDED = [("ls", {}, "a.py\nb.py"), ("read", {"path": "a.py"}, "one\ntwo"), ("grep", {"p": "x"}, "a.py:1")]
REPLAYED = [("ls", {}, "a.py\nb.py"), ("read", {"path": "a.py"}, "one\nTWO")]  # grep: built-in, not replayed


async def _write(
    path: Path, run: str, config: dict[str, Any], calls: list[tuple[str, dict[str, Any], str]], pad: int
) -> None:
    w = await StoreWriter.open(path, flush_interval_s=0.001)
    await w.create_run(run, "suite", config)
    # ``pad`` trials first, so the two databases' trial ids differ (the recording is found by key)
    rows = [TrialRow(f"other{k}", "mcp", MODEL, 0, 1) for k in range(pad)] + [
        TrialRow("s1", "mcp", MODEL, 0, 1)
    ]
    await w.add_trials(run, rows)
    tid = pad + 1

    def emit(event: Any) -> None:
        w.emit(run, event, trial_id=tid, attempt=1)

    emit(TrialStarted(scenario="s1", arm="mcp", model=MODEL, epoch=0, seed=1, attempt=1))
    for k, (tool, args, result) in enumerate(calls):
        emit(ToolCall(call_id=f"c{k}", server="fs", tool=tool, arguments=args))
        emit(ToolResult(call_id=f"c{k}", server="fs", tool=tool, content=result, is_error=False, latency_s=0))
    emit(
        TrialFinished(
            status="finished",
            stop="replayed",
            final_answer="",
            tool_calls=len(calls),
            usage=Usage(),
            cost_usd=0.0,
            wall_s=1.0,
        )
    )
    await w.close()


async def test_a_replayed_trial_is_compared_with_its_recording(tmp_path: Path) -> None:
    recorded, replayed = tmp_path / "recorded.db", tmp_path / "replayed.db"
    await _write(recorded, "rec", {}, RECORDED, pad=0)
    config = {
        "replay": {
            "source_db": str(recorded),
            "source_db_relative": "recorded.db",
            "source_run": "rec",
            "ignore": [],
        }
    }
    await _write(replayed, "rep", config, REPLAYED, pad=2)
    app = ProctorApp(replayed, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.state.details_loaded, what="store loaded")
        app.open_compare(3)
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen))
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await wait_until(pilot, lambda: len(screen.rows) == 3, what="recording and replay aligned")
        await pilot.pause()
        rows = [
            line.plain[:MARK_WIDTH].strip() for line in screen.query_one("#compare-rows", LinesView).lines
        ]
        assert rows[:3] == ["same", "result ≠", "only left"]
        text = screen_text(app)
        assert "recorded (left) vs replayed (right)" in text
        assert "recorded #1 mcp / offline:default" in text and "recorded.db" in text
        assert "#3 mcp / offline:default" in text
        await pilot.press("a")  # the recorded side follows the replayed one; it is not cycled itself
        await pilot.pause()
        assert screen.sides["left"] == ("mcp", MODEL)


async def test_a_missing_recording_is_said_and_the_view_still_opens(tmp_path: Path) -> None:
    replayed = tmp_path / "replayed.db"
    config = {
        "replay": {"source_db": str(tmp_path / "gone.db"), "source_db_relative": "gone.db", "source_run": "x"}
    }
    await _write(replayed, "rep", config, REPLAYED, pad=0)
    app = ProctorApp(replayed, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.state.details_loaded, what="store loaded")
        app.open_compare(1)
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen))
        notices = lambda: " ".join(str(n.message) for n in app._notifications)  # noqa: E731
        await wait_until(pilot, lambda: "gone.db, is gone; put it back" in notices(), what="the notice")
        assert "(no such trial)" in screen_text(app)  # the view opens, without a recording
