"""``proctor replay`` on a recording written event by event, against an mcp SDK server whose
answers a test changes: routing (exposed names, the router's ``execute``, built-in tools, a
server the suite no longer has), steps played in parallel, only the current attempt, the new
run's link back, and the CLI's refusals."""

from __future__ import annotations

import asyncio
import io
import json
import sqlite3
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
import yaml

from proctor.app.cli import main
from proctor.engine.drift.runs_diff import replay_drift
from proctor.engine.replay.replayer import ReplayOptions, replay_run
from proctor.store.events import ToolCall, ToolResult, TrialFinished, TrialStarted, Usage
from proctor.store.read.reader import StoreReader
from proctor.store.schema import SchemaError
from proctor.store.write.writer import StoreWriter, TrialRow

SERVER = Path(__file__).with_name("drift_server.py")
MODEL = "offline:default"
PAUSE_S = 120
"""How long a pause waits for the other pause of its step: a deadline for a replay that played them
one after the other, never reached when they run together, however busy the machine."""


def proctor(*args: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def _suite(root: Path, data: Path) -> Path:
    (root / "scenarios").mkdir(parents=True)
    suite = {
        "name": "drifty",
        "mcpServers": {
            "drift": {"command": sys.executable, "args": [str(SERVER)], "env": {"DRIFT_DATA": str(data)}}
        },
        "arms": {"baseline": {"baseline": True}, "mcp": {"servers": ["drift"]}},
    }
    (root / "suite.yaml").write_text(yaml.safe_dump(suite))
    (root / "scenarios" / "s.yaml").write_text("id: s\nprompt: look things up\n")
    return root


Step = list[tuple[str, str, str, dict[str, Any], tuple[str, str, str, bool]]]


async def _write_recording(db: Path, suite: Path) -> None:
    """Trial 1 (arm mcp): an abandoned first attempt, then the calls below; trial 2 (baseline)."""

    def result(call_id: str, server: str, tool: str, content: str, error: bool = False) -> ToolResult:
        return ToolResult(
            call_id=call_id,
            server=server,
            tool=tool,
            content=content,
            is_error=error,
            error_type="tool_error" if error else "",
            latency_s=0.01,
        )

    steps: list[list[tuple[ToolCall, ToolResult]]] = [
        [
            (
                ToolCall(call_id="c0", server="drift", tool="lookup", arguments={"key": "a"}),
                result("c0", "drift", "lookup", "1"),
            )
        ],
        [
            (
                ToolCall(call_id="c1", server="drift", tool="pause", arguments={"seconds": PAUSE_S}),
                result("c1", "drift", "pause", "slept"),
            ),
            (
                ToolCall(call_id="c2", server="drift", tool="pause", arguments={"seconds": PAUSE_S}),
                result("c2", "drift", "pause", "slept"),
            ),
        ],
        [
            (
                ToolCall(call_id="c3", server="builtin", tool="grep", arguments={"pattern": "x"}),
                result("c3", "builtin", "grep", "x.py:1"),
            )
        ],
        [
            (
                ToolCall(
                    call_id="c4",
                    server="proctor-router",
                    tool="execute",
                    arguments={"tool": "lookup", "arguments": {"key": "b"}},
                ),
                result("c4", "drift", "lookup", "2"),
            )
        ],
        [
            (
                ToolCall(call_id="c5", server="drift", tool="drift__lookup", arguments={"key": "c"}),
                result("c5", "drift", "lookup", "no such key: c", True),
            )
        ],
        [
            (
                ToolCall(call_id="c6", server="gone", tool="lookup", arguments={"key": "d"}),
                result("c6", "gone", "lookup", "4"),
            )
        ],
    ]
    end = TrialFinished(
        status="finished",
        stop="answer",
        final_answer="ok",
        tool_calls=7,
        usage=Usage(),
        cost_usd=0.0,
        wall_s=1.0,
    )
    w = await StoreWriter.open(db)
    try:
        await w.create_run("rec", "drifty", {"suite": "drifty", "suite_dir": str(suite)})
        await w.add_trials("rec", [TrialRow("s", "mcp", MODEL, 0, 7), TrialRow("s", "baseline", MODEL, 0, 7)])
        w.emit(
            "rec",
            TrialStarted(scenario="s", arm="mcp", model=MODEL, epoch=0, seed=7, attempt=1),
            trial_id=1,
            attempt=1,
        )
        w.emit(
            "rec",
            ToolCall(call_id="old", server="drift", tool="lookup", arguments={"key": "zzz"}),
            trial_id=1,
            attempt=1,
        )
        await w.requeue([1])
        w.emit(
            "rec",
            TrialStarted(scenario="s", arm="mcp", model=MODEL, epoch=0, seed=7, attempt=2),
            trial_id=1,
            attempt=2,
        )
        for step in steps:
            for call, _ in step:
                w.emit("rec", call, trial_id=1, attempt=2)
            for _, res in step:
                w.emit("rec", res, trial_id=1, attempt=2)
        w.emit("rec", end, trial_id=1, attempt=2)
        w.emit(
            "rec",
            TrialStarted(scenario="s", arm="baseline", model=MODEL, epoch=0, seed=7, attempt=1),
            trial_id=2,
            attempt=1,
        )
        w.emit(
            "rec",
            ToolCall(call_id="b0", server="builtin", tool="grep", arguments={"pattern": "y"}),
            trial_id=2,
            attempt=1,
        )
        w.emit("rec", result("b0", "builtin", "grep", "y.py:2"), trial_id=2, attempt=1)
        w.emit("rec", end, trial_id=2, attempt=1)
    finally:
        await w.close()


@pytest.fixture
def recording(tmp_path: Path) -> tuple[Path, Path]:
    data = tmp_path / "data.json"
    data.write_text(json.dumps({"a": "1", "b": "20", "c": "3"}))  # b changed, c now exists
    db = tmp_path / "rec.db"
    asyncio.run(_write_recording(db, _suite(tmp_path / "suite", data)))
    return db, data


def test_replay_routes_every_recorded_call_and_diffs_it(recording: tuple[Path, Path], tmp_path: Path) -> None:
    db, _ = recording
    new = tmp_path / "new.db"
    code, out, err = proctor("replay", db, "--db", new)
    assert code == 0, out + err
    assert (
        "replayed 6 call(s) of 2 trial(s)" in err
        and "2 call(s) to proctor's built-in tools not replayed" in err
    )
    drift = replay_drift(new)
    assert drift is not None
    assert [(c.key[1], c.call_id, c.server, c.tool, c.diff.status) for c in drift.calls] == [
        ("mcp", "c0", "drift", "lookup", "identical"),
        ("mcp", "c1", "drift", "pause", "identical"),
        ("mcp", "c2", "drift", "pause", "identical"),
        ("mcp", "c3", "builtin", "grep", "skipped"),
        ("mcp", "c4", "drift", "lookup", "changed"),  # through the router: the tool it ran
        ("mcp", "c5", "drift", "lookup", "fixed_error"),  # an exposed name: the server's own tool
        ("mcp", "c6", "gone", "lookup", "new_error"),  # the suite has no such server any more
        ("baseline", "b0", "builtin", "grep", "skipped"),
    ]
    assert drift.drifted == 2 and drift.totals["skipped"] == 2
    assert proctor("gate", new, "--max-changed", "1")[0] == 3
    code, out, _ = proctor("gate", new, "--max-changed", "2")
    assert code == 0 and "2 call(s) drifted (1 changed, 1 new error), at most the 2 allowed" in out
    for flags, needle in (
        ((), "give --baseline ARM and --min-delta X"),
        (("--baseline", "baseline"), "give both --baseline ARM and --min-delta X"),
        (("--max-changed", "-1"), "give 0 or more"),
    ):
        code, _, err = proctor("gate", new, *flags)
        assert code == 2 and needle in err, err
    code, _, err = proctor("gate", db, "--max-changed", "0")
    assert code == 2 and "not a replay run" in err
    by_id = {c.call_id: c for c in drift.calls}
    assert by_id["c4"].diff.text_diff[1:] == ("-2", "+20")
    assert "the suite has no server 'gone'" in by_id["c6"].diff.notes[0]

    with StoreReader(new) as reader:
        run = reader.run()
        assert run is not None
        assert (
            run.config["replay"]["source_run"] == "rec"
            and run.config["replay"]["source_db_relative"] == "rec.db"
        )
        trials = {t.arm: t for t in reader.trials()}
        assert {a: (t.status, t.stop, t.tool_calls, t.seed) for a, t in trials.items()} == {
            "mcp": ("finished", "replayed", 6, 7),
            "baseline": ("finished", "replayed", 0, 7),
        }
        events = reader.trial_events(trials["mcp"].id)
    calls = [e for e in events if isinstance(e.event, ToolCall)]
    assert [e.event.tool for e in calls] == ["lookup", "pause", "pause", "execute", "drift__lookup", "lookup"]
    assert "zzz" not in json.dumps(
        [e.event.arguments for e in calls]
    )  # the abandoned attempt is not replayed
    # The two pauses of one step ran together: each met the other in the server (played one after
    # the other, the first would have answered "alone").
    results = [e.event.content for e in events if isinstance(e.event, ToolResult) and e.event.tool == "pause"]
    assert results == ["slept", "slept"]


def test_a_refusal_the_gold_call_expects_that_the_replay_answers_is_a_change_the_gate_counts(
    recording: tuple[Path, Path], tmp_path: Path
) -> None:
    # c5 ("drift__lookup" {key: c}) was refused in the recording; the server now knows c. Without
    # a gold call it is a fixed error (previous test); with one that expects the refusal, a change.
    db, _ = recording
    scenario = db.parent / "suite" / "scenarios" / "s.yaml"
    gold = [[{"tool": "lookup", "arguments": {"key": "c", "unused": None}, "expect_error": True}]]
    scenario.write_text(yaml.safe_dump({"id": "s", "prompt": "look things up", "gold_tool_calls": gold}))
    new = tmp_path / "new.db"
    code, out, err = proctor("replay", db, "--db", new)
    assert code == 0, out + err
    drift = replay_drift(new)
    assert drift is not None
    by_id = {c.call_id: c.diff for c in drift.calls}
    assert [(i, d.status) for i, d in by_id.items() if d.status != "identical"] == [
        ("c3", "skipped"),
        ("c4", "changed"),
        ("c5", "changed"),
        ("c6", "new_error"),
        ("b0", "skipped"),
    ]
    assert by_id["c5"].summary().startswith("changed: no longer refused: the scenario's gold call expects")
    assert by_id["c5"].notes[1] == "error: no such key: c"  # what the recording answered
    assert drift.totals["fixed_error"] == 0 and drift.drifted == 3
    code, out, _ = proctor("gate", new, "--max-changed", "2")
    assert code == 3 and "3 call(s) drifted (2 changed, 1 new error)" in out
    code, out, _ = proctor("report", new, "--format", "md")
    assert code == 0 and "no longer refused" in out


def test_replay_of_one_arm_and_the_refusals(recording: tuple[Path, Path], tmp_path: Path) -> None:
    db, _ = recording
    new = tmp_path / "one-arm.db"
    assert proctor("replay", db, "--db", new, "--arms", "baseline")[0] == 0
    drift = replay_drift(new)
    assert drift is not None and [c.call_id for c in drift.calls] == ["b0"]

    code, _, err = proctor("replay", db, "--db", new)
    assert code == 2 and "already holds a run" in err
    code, _, err = proctor("replay", db, "--db", db)
    assert code == 2 and "is the recording itself" in err
    code, _, err = proctor("replay", db, "--db", tmp_path / "x.db", "--arms", "nope")
    assert code == 2 and "--arms: nope not in the recording (its arms: baseline, mcp)" in err
    code, _, err = proctor("replay", tmp_path / "missing.db", "--db", tmp_path / "y.db")
    assert code == 2 and "no such run database" in err


def test_judge_refuses_a_replay_run_and_points_to_the_recording(
    recording: tuple[Path, Path], tmp_path: Path
) -> None:
    db, _ = recording
    new = tmp_path / "new.db"
    assert proctor("replay", db, "--db", new)[0] == 0
    code, out, err = proctor("judge", new)
    assert code == 2, out + err
    assert f"is a replay of run rec in {db}" in err and f"'proctor judge {db}'" in err
    assert "--max-changed N" in err and "re-judged" not in out
    with StoreReader(new) as reader:  # nothing was judged, nothing queued
        assert reader.events_of_kind("judgment") == [] and reader.events_of_kind("operator_command") == []


def test_report_and_gate_say_when_the_recording_is_gone(recording: tuple[Path, Path], tmp_path: Path) -> None:
    db, _ = recording
    new = tmp_path / "sub" / "new.db"
    assert proctor("replay", db, "--db", new)[0] == 0
    db.rename(tmp_path / "moved.db")
    code, out, _ = proctor("report", new, "--format", "json")
    assert code == 0 and "is gone" in json.loads(out)["drift"]["error"]
    code, _, err = proctor("gate", new, "--max-changed", "5")
    assert code == 2 and "is gone; put it back" in err


def test_an_interrupted_replay_keeps_what_it_made_and_the_rest_is_missing(
    recording: tuple[Path, Path], tmp_path: Path
) -> None:
    db, data = recording
    new = tmp_path / "cut.db"
    data.with_name("hold").touch()  # the pauses never answer: the cut lands during them, however slow

    async def cut_during_the_pauses() -> None:
        task = asyncio.create_task(replay_run(ReplayOptions(db, new)))
        deadline = asyncio.get_running_loop().time() + 60
        while not _has_call(new, "c1"):  # the parallel step has started
            assert asyncio.get_running_loop().time() < deadline, "the replay never reached the pauses"
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cut_during_the_pauses())
    with StoreReader(new) as reader:
        run = reader.run()
        assert run is not None and run.status == "interrupted"
    drift = replay_drift(new)
    assert drift is not None
    statuses = {c.call_id: c.diff.status for c in drift.calls}
    assert statuses["c0"] == "identical"
    assert {statuses[c] for c in ("c1", "c2", "c4", "c5", "c6")} == {"missing"}
    assert statuses["b0"] == "skipped"  # the baseline trial finished: its built-in call was skipped


def _has_call(db: Path, call_id: str) -> bool:
    if not db.exists():
        return False
    try:
        with StoreReader(db) as reader:
            return any(
                isinstance(e.event, ToolCall) and e.event.call_id == call_id
                for e in reader.events_of_kind("tool_call")
            )
    except (sqlite3.DatabaseError, SchemaError):  # the schema is not there yet
        return False
