"""``proctor run SUITE --models offline:gold`` on each third-party suite, end to end into a real
SQLite database: the recorded tool calls are the gold calls, in order, and the recorded results
are what each server was observed to answer (the same expectations as its own test module).

The run goes through everything a user's run does: the suite loader, the workspace (the pinned
project for filesystem and git), the server pool, the agent loop, the writer, the scorer.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from proctor.app.cli import main
from proctor.scenarios.loader import load_suite
from proctor.scenarios.workspace import Workspace
from proctor.store.events import McpNotice, ToolCall, ToolResult
from proctor.store.read.reader import StoreReader
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
from tests.integration.third_party.servers import (
    SERVERS,
    SUITES,
    Answer,
    Expect,
    assert_answers,
    require_installed,
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
GOLD = "offline:gold"


def _gold_agent_missing() -> str:
    """Why ``offline:gold`` cannot be made here (empty: it can)."""
    from proctor.engine.providers.prices import PriceTable
    from proctor.engine.providers.registry import ProviderConfigError, make_provider

    try:
        make_provider(GOLD, PriceTable(), {})
    except ProviderConfigError as exc:
        return str(exc)
    return ""


def _proctor(*args: str | Path) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue() + err.getvalue()


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
    suite: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_installed(suite)
    if missing := _gold_agent_missing():
        pytest.skip(f"{GOLD} is not in this proctor yet ({missing}): the end-to-end run waits for it")
    monkeypatch.setenv("PROCTOR_CACHE", str(tmp_path / "cache"))
    db = tmp_path / "run.db"
    code, output = _proctor("run", SUITES / suite, "--models", GOLD, "--headless", "--db", db)
    assert code == 0, output
    loaded = load_suite(SUITES / suite)
    checkout = Workspace.prepare(loaded).repo_for(None)  # the run's pinned project, from the same cache
    with StoreReader(db) as reader:
        trials = {t.scenario: t for t in reader.trials()}
        assert sorted(trials) == sorted(EXPECTED[suite])
        for scenario in loaded.scenarios:
            trial = trials[scenario.id]
            assert (trial.status, trial.model, trial.error) == ("finished", GOLD, ""), scenario.id
            got = _recorded(reader, trial.id)
            assert [(a.tool, dict(a.arguments)) for a in got] == [
                (g.tool, g.arguments) for step in scenario.gold_tool_calls for g in step
            ], scenario.id
            assert_answers(
                got, EXPECTED[suite][scenario.id], checkout.path if checkout else None, scenario.id
            )
            # The agent answers with what the tools returned (each result quoted, up to 4000 chars).
            assert trial.final_answer is not None
            assert all(a.text[:200] in trial.final_answer for a in got), scenario.id
