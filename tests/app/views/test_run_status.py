"""The dashboard's top lines: startup says what is happening, a rate only when it means something."""

from __future__ import annotations

from dataclasses import replace

from proctor.app.views.feed import Snapshot, TailBatch
from proctor.app.views.run_status import meaningful_rate, progress_text, starting_text
from proctor.app.views.state import ConsoleState, Filters
from proctor.store.events import ServersStarting
from proctor.store.read.reader import RunRecord, TrialRecord
from tests.app.events_factory import stored, trial

RUNNING = RunRecord("r1", "demo", {}, 0.0, 0.0, None, "running")


def state_with(run: RunRecord | None, trials: list[TrialRecord], now: float = 1000.0) -> ConsoleState:
    state = ConsoleState(clock=lambda: now)
    state.apply_snapshot(Snapshot(run, trials, start_id=0))
    return state


def finished(tid: int, start: float, end: float) -> TrialRecord:
    return trial(tid, status="finished", passed=False, started_at=start, finished_at=end, attempt=1)


def test_before_the_run_exists_the_console_says_the_engine_is_starting() -> None:
    state = state_with(None, [])
    assert starting_text(state, 4.2) is not None
    assert progress_text(state, Filters(), 4.2).plain == (
        "starting the engine: loading the suite and its libraries · 4 s"
    )
    assert "0/0 done" not in progress_text(state, Filters(), 4.2).plain
    assert progress_text(state, Filters(), None).plain == "no run recorded yet in this database"


def test_while_servers_start_the_console_counts_them() -> None:
    state = state_with(RUNNING, [trial(1), trial(2, arm="codeintel")])
    state.apply_batch(
        TailBatch(
            events=[
                stored(
                    ServersStarting(total=5, ready=2, waiting=["tickets", "handbook", "weather"]),
                    trial_id=None,
                )
            ]
        )
    )
    assert progress_text(state, Filters(), None).plain == (
        "starting servers: 2 of 5 ready · waiting for tickets, handbook, weather"
    )
    state.apply_batch(TailBatch(events=[stored(ServersStarting(total=5, ready=4, failed=1), trial_id=None)]))
    assert progress_text(state, Filters(), None).plain == "servers started; the first trials are starting"
    state.apply_batch(TailBatch(trials=[trial(1, status="running", started_at=999.0, attempt=1)]))
    assert progress_text(state, Filters(), None).plain.startswith("0/2 done")


def test_an_import_finished_in_one_instant_shows_no_rate() -> None:
    imported = replace(RUNNING, status="finished")
    state = state_with(imported, [finished(i, 500.0, 500.001) for i in range(1, 41)])
    assert meaningful_rate(state) is None
    assert "trials/min" not in progress_text(state, Filters(), None).plain


def test_one_rerun_on_a_finished_run_shows_no_rate() -> None:
    state = state_with(replace(RUNNING, status="finished"), [finished(1, 900.0, 960.0)])
    assert meaningful_rate(state) is None


def test_a_running_run_with_too_few_trials_or_seconds_shows_no_rate() -> None:
    assert meaningful_rate(state_with(RUNNING, [finished(1, 900.0, 950.0), trial(2)])) is None
    quick = [finished(i, 998.0, 999.0) for i in range(1, 6)] + [trial(6)]
    assert meaningful_rate(state_with(RUNNING, quick)) is None


def test_a_steady_run_shows_its_rate_and_what_is_left() -> None:
    trials = [finished(i, 940.0, 940.0 + i * 10) for i in range(1, 7)] + [trial(7), trial(8), trial(9)]
    state = state_with(RUNNING, trials)
    assert meaningful_rate(state) == 6.0
    assert "6.0 trials/min · ~30 s left" in progress_text(state, Filters(), None).plain
