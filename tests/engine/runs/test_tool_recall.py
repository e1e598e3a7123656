"""call_tool: an operator's hand-made call runs on the trial's server at its commit, is recorded as
a run-level tool_recall event with the raw JSON-RPC result, and never touches the trial's scores."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from proctor.engine.runs.operator_commands import poll_operator_commands
from proctor.engine.runs.options import RunOptions
from proctor.engine.runs.session import open_run, run_suite
from proctor.scenarios.loader import load_suite
from proctor.store.events import ToolRecall
from proctor.store.operator_commands import enqueue_operator_command, list_operator_commands
from proctor.store.read.reader import StoreReader
from proctor.store.schema import configure
from tests.engine.runs.test_resume_scoring import _suite


async def test_a_tool_called_by_hand_is_recorded_apart_from_the_trial(tmp_path: Path) -> None:
    loaded = load_suite(_suite(tmp_path / "suite"))
    db = tmp_path / "run.db"
    assert await run_suite(loaded, RunOptions(db=db)) == "finished"
    with StoreReader(db) as r:
        trials = {t.arm: t for t in r.trials()}
        scores_before = r.scores()
        events_before = {t.id: len(r.trial_events(t.id)) for t in trials.values()}
    weather, baseline = trials["weather"].id, trials["baseline"].id
    ok = {"request_id": "r1", "trial_id": weather, "server": "weather", "tool": "get_forecast",
          "arguments": {"city": "Lisbon"}}  # fmt: skip
    enqueue_operator_command(db, "call_tool", ok)
    enqueue_operator_command(db, "call_tool", {**ok, "request_id": "r2", "trial_id": baseline})
    enqueue_operator_command(db, "call_tool", {**ok, "request_id": "r3", "arguments": "city=Oslo"})
    run, _ = await open_run(loaded, RunOptions(db=db, resume=True), expand_matrix=False)
    try:
        await poll_operator_commands(run)
    finally:
        await run.aclose()
    conn = sqlite3.connect(db, isolation_level=None)
    configure(conn)
    rows = list_operator_commands(conn)
    conn.close()
    assert [r.status for r in rows] == ["done", "failed", "failed"]
    assert rows[0].message.startswith(f"weather.get_forecast for trial #{weather}: ok in ")
    assert rows[1].message == (
        f"call_tool: trial #{baseline}'s arm 'baseline' has no server 'weather' (it has: none)"
    )
    assert rows[2].message == "call_tool: give server and tool (text) and arguments (a JSON object)"
    with StoreReader(db) as r:
        (recall,) = [e for e in r.events_of_kind("tool_recall")]
        assert recall.trial_id is None, "a run-level event: never in the trial's transcript"
        assert r.scores() == scores_before
        assert {t.id: len(r.trial_events(t.id)) for t in trials.values()} == events_before
    event = recall.event
    assert isinstance(event, ToolRecall)
    assert (event.request_id, event.trial_id, event.result.tool) == ("r1", weather, "get_forecast")
    assert not event.result.is_error and "Lisbon" in event.result.content
    assert event.raw is not None and event.raw["content"][0]["type"] == "text"
    assert event.raw["content"][0]["text"] == event.result.blocks[0].text
