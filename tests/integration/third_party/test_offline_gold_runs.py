"""``proctor run SUITE --models offline:gold`` on each third-party suite, end to end into a real
SQLite database: the recorded tool calls are the gold calls, in order, and the recorded results
are what each server was observed to answer (the same expectations as its own test module).

The run goes through everything a user's run does: the suite loader, the workspace (the pinned
project for filesystem and git), the server pool, the agent loop, the writer, the scorer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest
import yaml

from proctor.scenarios.loader import load_suite
from proctor.scenarios.schema import Scenario
from proctor.scenarios.workspace import Workspace
from proctor.store.events import McpNotice, ToolCall, ToolResult
from proctor.store.read.reader import StoreReader
from proctor.store.scores import ScoreName
from tests.integration.third_party import (
    test_calculator,
    test_everything,
    test_fetch,
    test_filesystem,
    test_git,
    test_memory,
    test_sequential_thinking,
    test_sqlite,
    test_time,
)
from tests.integration.third_party.changed_copy import changed_suite
from tests.integration.third_party.gold_runs import GOLD, Recording, run_gold
from tests.integration.third_party.servers import (
    SERVERS,
    SUITES,
    Answer,
    Expect,
    assert_answers,
)

pytestmark = pytest.mark.slow

EXPECTED: dict[str, Mapping[str, Sequence[Expect]]] = {
    "calculator": test_calculator.EXPECTED,
    "everything": test_everything.EXPECTED,
    "fetch": test_fetch.EXPECTED,
    "filesystem": test_filesystem.EXPECTED,
    "git": test_git.EXPECTED,
    "memory": test_memory.EXPECTED,
    "sequential-thinking": test_sequential_thinking.EXPECTED,
    "sqlite": test_sqlite.EXPECTED,
    "time": test_time.EXPECTED,
}


def _recorded(reader: StoreReader, trial_id: int) -> list[Answer]:
    """The trial's tool calls in the order the agent made them, each with its recorded result."""
    events = [e.event for e in reader.trial_events(trial_id)]
    results = {e.call_id: e for e in events if isinstance(e, ToolResult)}
    notices = [e for e in events if isinstance(e, McpNotice)]
    answers = []
    for call in (e for e in events if isinstance(e, ToolCall)):
        result = results[call.call_id]
        answers.append(
            Answer(
                call.tool,
                call.arguments,
                result.content,
                result.is_error,
                result.structured,
                tuple(n.method for n in notices if n.call_id == call.call_id),
            )
        )
    return answers


@pytest.mark.parametrize("suite", sorted(SERVERS))
def test_offline_gold_records_each_gold_call_and_the_result_the_server_gave(
    suite: str, recordings: Callable[[str], Recording]
) -> None:
    recording = recordings(suite)
    loaded = load_suite(SUITES / suite)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PROCTOR_CACHE", str(recording.cache))
        checkout = Workspace.prepare(loaded).repo_for(None)  # the run's pinned project
    _assert_run(recording.db, suite, loaded.scenarios, checkout.path if checkout else None)


def test_a_recording_served_back_answers_the_gold_calls_as_the_server_did(
    recordings: Callable[[str], Recording], tmp_path: Path
) -> None:
    # mcp-server-sqlite needs mcp 1.x in a venv of its own and a fresh database per trial; served
    # back from the recording (a replay: arm), its answers need neither.
    recorded = recordings("sqlite")
    with StoreReader(recorded.db) as reader:
        run = reader.run()
    assert run is not None
    replay = {"db": str(recorded.db), "run": run.id, "arm": "sqlite"}
    served = changed_suite("sqlite", tmp_path / "served", arms={"recorded": {"replay": replay}})
    again = Recording(tmp_path / "served.db", tmp_path / "cache")
    run_gold(served, again, "--arms", "recorded")
    _assert_run(again.db, "sqlite", load_suite(served).scenarios, None)


def _assert_run(db: Path, suite: str, scenarios: Sequence[Scenario], repo: Path | None) -> None:
    """Each trial finished, made its scenario's gold calls in order, and got the observed answers."""
    with StoreReader(db) as reader:
        trials = {t.scenario: t for t in reader.trials()}
        assert sorted(trials) == sorted(EXPECTED[suite])
        for scenario in scenarios:
            trial = trials[scenario.id]
            assert (trial.status, trial.model, trial.error) == ("finished", GOLD, ""), scenario.id
            got = _recorded(reader, trial.id)
            assert [(a.tool, dict(a.arguments)) for a in got] == [
                (g.tool, g.arguments) for step in scenario.gold_tool_calls for g in step
            ], scenario.id
            assert_answers(got, EXPECTED[suite][scenario.id], repo, scenario.id)
            # The agent answers with what the tools returned (each result quoted, up to 4000 chars).
            assert trial.final_answer is not None
            assert all(a.text[:200] in trial.final_answer for a in got), scenario.id
            # Playing the gold calls finishes them, refusals included (``expect_error`` on each
            # gold call the server is observed to refuse).
            tfs = {s.name: s.value for s in reader.scores(trial.id)}[ScoreName.TFS]
            assert tfs == 1.0, (scenario.id, [s.details for s in reader.scores(trial.id)])
            assert [a.is_error for a in got] == [
                g.expect_error for step in scenario.gold_tool_calls for g in step
            ], scenario.id


# Results each suite's servers answer with isError false whose text is an error (observed as in
# each suite's test module): mcp-server-sqlite refuses a write and a missing table in text, and
# server-everything's annotated message of type error reads "Error: Operation failed".
DISGUISED = {
    ("sqlite", "refused-in-text"): [
        'sqlite/read_query({"query": "DELETE FROM parts"}): the text begins '
        '"Error: Only SELECT queries are allowed for read_query"',
        'sqlite/read_query({"query": "SELECT * FROM nowhere"}): the text begins '
        '"Database error: no such table: nowhere"',
    ],
    ("everything", "progress"): [
        'everything/get-annotated-message({"includeImage": false, "messageType": "error"}): the text begins '
        '"Error: Operation failed"'
    ],
}


@pytest.mark.parametrize("suite", sorted(SERVERS))
def test_results_that_read_like_errors_the_server_did_not_flag_are_listed_with_the_match(
    suite: str, recordings: Callable[[str], Recording]
) -> None:
    with StoreReader(recordings(suite).db) as reader:
        trials = {t.id: t.scenario for t in reader.trials()}
        found = {
            (suite, trials[s.trial_id]): s.details.get("disguised_errors", [])
            for s in reader.scores()
            if s.name == ScoreName.TFS
        }
    assert {k: v for k, v in found.items() if v} == {k: v for k, v in DISGUISED.items() if k[0] == suite}


def test_a_gold_call_that_expects_a_result_fails_on_the_servers_error_in_text(
    recordings: Callable[[str], Recording], tmp_path: Path
) -> None:
    """Without ``expect`` the refused write passes (TFS 1.0 above); with one, it is no match."""
    recordings("sqlite")  # installed and runnable
    suite = changed_suite("sqlite", tmp_path / "expect", scenarios=["refused-in-text"])
    path = suite / "scenarios" / "refused-in-text.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["gold_tool_calls"][0][0]["expect"] = {"not_contains": "Error", "contains": "affected_rows"}
    doc["gold_tool_calls"][2][0]["expect"] = {"contains": "Insight added"}
    path.write_text(yaml.safe_dump(doc))
    recording = Recording(tmp_path / "expect.db", tmp_path / "cache")
    run_gold(suite, recording)
    with StoreReader(recording.db) as reader:
        (trial,) = reader.trials()
        scores = {s.name: s for s in reader.scores(trial.id)}
    assert trial.passed is False and scores[ScoreName.TFS].value == 0.0
    assert scores[ScoreName.TFS].details["unmet_expectations"] == [
        'read_query({"query": "DELETE FROM parts"}): the result does not contain "affected_rows"; '
        'contains "Error"'
    ]
    assert "their results holding what they expect" in scores[ScoreName.PASSED].details["rule"]
