"""Imported trajectories as events: steps kept, tokens marked estimated, judgments sourced."""

from __future__ import annotations

from pathlib import Path

from proctor.engine.runs.imported_runs import trajectory_events, write_imported_run
from proctor.engine.scoring import match_tool_calls, partition
from proctor.scenarios.importers.common import (
    ImportedCall,
    ImportedJudgment,
    ImportedResult,
    ImportedTrajectory,
    ImportedTurn,
)
from proctor.scenarios.importers.suite_files import validated
from proctor.scenarios.schema import GoldCall
from proctor.store.events import TrialFinished, TrialStarted
from proctor.store.read.reader import StoreReader


def _trajectory(model: str = "imported:m", epoch: int = 0) -> ImportedTrajectory:
    a = ImportedCall("a", "w", "get_weather", {"city": "Oslo"})
    b = ImportedCall("b", "w", "get_weather", {"city": "Rome"})
    c = ImportedCall("c", "adv", "advise", {"rain": True})
    turns = (
        ImportedTurn("Checking both cities.", (a, b), (ImportedResult("a", "w", "get_weather", "rain"), ImportedResult("b", "w", "get_weather", "sun"))),
        ImportedTurn("", (c,), (ImportedResult("c", "adv", "advise", "failed", is_error=True),)),
        ImportedTurn("Take an umbrella in Oslo."),
    )  # fmt: skip
    judgments = (
        ImportedJudgment("human", "src:human", {"score": 1.0, "passed": True, "rationale": "ok"}),
        ImportedJudgment("judge-x", "src:judge", None, error="unparseable"),
    )
    return ImportedTrajectory(
        "s1", "mcp", model, epoch, turns, "Take an umbrella in Oslo.", judgments, "f: entry 0"
    )


def test_events_keep_parallel_steps_answer_and_estimated_tokens() -> None:
    events = trajectory_events(_trajectory())
    assert isinstance(events[0], TrialStarted) and isinstance(events[-1], TrialFinished)
    t = partition(events)
    assert [[c.call_id for c in step] for step in t.call_steps()] == [["a", "b"], ["c"]]
    assert [c.succeeded for c in t.tool_calls] == [True, True, False]
    assert t.final_answer == "Take an umbrella in Oslo."
    assert t.answer_text == "Checking both cities.\n\nTake an umbrella in Oslo."
    assert "rain" not in t.answer_text and "rain" in t.audit_text
    assert t.tokens is not None and t.tokens > 0 and t.tokens_estimated
    gold = [
        [
            GoldCall(tool="get_weather", arguments={"city": "Rome"}),
            GoldCall(tool="get_weather", arguments={"city": "Oslo"}),
        ],
        [GoldCall(tool="advise", arguments={"rain": True})],
    ]
    match = match_tool_calls(gold, t.call_steps())  # advise erred: it did not do the gold call's work
    assert (match.finished, match.failed_calls) == (False, ('advise({"rain": true})',))
    refused = [gold[0], [GoldCall(tool="advise", arguments={"rain": True}, expect_error=True)]]
    match = match_tool_calls(refused, t.call_steps())
    assert (match.finished, match.efficiently_finished) == (True, True)


async def test_database_holds_finished_trials_with_sourced_judgments(tmp_path: Path) -> None:
    suite = {"name": "t", "arms": {"baseline": {"baseline": True}}}
    imported = validated(
        "test",
        [tmp_path / "src.json"],
        suite,
        [("src", {"id": "s1", "prompt": "Umbrella?"})],
        trajectories=[_trajectory(), _trajectory(epoch=1), _trajectory(model="imported:other")],
    )
    db = tmp_path / "imported.db"
    assert await write_imported_run(db, imported, tmp_path) == 3
    with StoreReader(db) as reader:
        run = reader.run()
        trials = reader.trials()
        judgments = reader.judgments()
    assert run is not None and run.status == "finished"
    assert run.config["models"] == ["imported:m", "imported:other"] and run.config["epochs"] == 2
    assert "estimated" in run.config["imported"]["tokens"]
    assert sorted((t.model, t.epoch, t.status, t.tool_calls) for t in trials) == [
        ("imported:m", 0, "finished", 3),
        ("imported:m", 1, "finished", 3),
        ("imported:other", 0, "finished", 3),
    ]
    assert all(
        t.tokens_estimated and t.cost_usd == 0.0 and t.final_answer == "Take an umbrella in Oslo."
        for t in trials
    )
    assert len(judgments) == 6
    human = [j for j in judgments if j.judge == "human"]
    assert {j.source for j in human} == {"src:human"} and all(
        j.verdict and j.verdict["passed"] for j in human
    )
    errors = [j for j in judgments if j.judge == "judge-x"]
    assert all(j.verdict is None and j.error == "unparseable" and j.source == "src:judge" for j in errors)
