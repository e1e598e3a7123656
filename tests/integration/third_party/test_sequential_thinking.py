"""@modelcontextprotocol/server-sequential-thinking (npm) answers its suite's gold calls as
observed, through proctor's connection; it keeps its thought history per process, so the suite
starts it per trial.

Observed with ``python -m tests.integration.third_party.observe sequential-thinking``
(server-sequential-thinking 2026.8.31, tests/reference_servers/package-lock.json), 2026-11-27.
"""

from __future__ import annotations

import pytest

from tests.integration.third_party.servers import Expect, Played, assert_scenario, json_text, played_suite

pytestmark = pytest.mark.slow


def _thought(number: int, total: int, more: bool, history: int, branches: tuple[str, ...] = ()) -> Expect:
    state = {
        "thoughtNumber": number,
        "totalThoughts": total,
        "nextThoughtNeeded": more,
        "branches": list(branches),
        "thoughtHistoryLength": history,
    }
    return Expect("sequentialthinking", json_text(state), structured=state)


EXPECTED = {
    "two-thoughts": [_thought(1, 2, True, 1), _thought(2, 2, False, 2)],
    # History 1, 2, 3: a fresh server per trial (two-thoughts' thoughts are not counted).
    "revise-and-branch": [
        _thought(1, 3, True, 1),
        _thought(2, 3, True, 2),
        _thought(3, 3, False, 3, ("cheap",)),
    ],
    "invalid-thought": [
        Expect(
            "sequentialthinking",
            "MCP error -32602: Input validation error: Invalid arguments for tool sequentialthinking: "
            'Expected boolean or "true"/"false" string, received "maybe" at nextThoughtNeeded\n'
            "Too small: expected number to be >=1 at thoughtNumber",
            is_error=True,
        )
    ],
}


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Played:
    return played_suite("sequential-thinking", tmp_path_factory)


def test_sequential_thinking_introduces_itself_and_lists_one_tool(played: Played) -> None:
    server = played.connected["thinking"]
    assert (server.name, server.version, server.protocol_version) == (
        "sequential-thinking-server",
        "2026.8.31",
        "2025-11-25",
    )
    assert played.tools == {"thinking": ["sequentialthinking"]}


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_sequential_thinking_gold_calls_answer_as_observed(played: Played, scenario: str) -> None:
    assert_scenario(played, scenario, EXPECTED)
