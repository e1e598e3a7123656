"""@modelcontextprotocol/server-everything (npm), the protocol's test server, answers its suite's
gold calls as observed, through proctor's connection: text, structuredContent, progress
notifications, and a refused call.

Observed with ``python -m tests.integration.third_party.observe everything``
(server-everything 2026.8.31, which calls itself mcp-servers/everything 2.0.0;
tests/reference_servers/package-lock.json), 2026-11-27.
"""

from __future__ import annotations

import pytest

from tests.integration.third_party.servers import Expect, Played, assert_scenario, played_suite

pytestmark = pytest.mark.slow

NEW_YORK = {"temperature": 33, "conditions": "Cloudy", "humidity": 82}
EXPECTED = {
    "echo": [Expect("echo", "Echo: count the washers")],
    "sum-and-weather": [
        Expect("get-sum", "The sum of 17 and 25 is 42."),
        Expect(
            "get-structured-content",
            '{"temperature":33,"conditions":"Cloudy","humidity":82}',
            structured=NEW_YORK,
        ),
    ],
    "progress": [
        Expect(
            "trigger-long-running-operation",
            "Long running operation completed. Duration: 0.2 seconds, Steps: 2.",
            progress=2,
        ),
        Expect("get-annotated-message", "Error: Operation failed"),
    ],
    "missing-argument": [
        # The SDK's input validation answers -32602 inside the result: a tool error, not a JSON-RPC error.
        Expect(
            "echo",
            "MCP error -32602: Input validation error: Invalid arguments for tool echo: "
            "Invalid input: expected string, received undefined at message",
            is_error=True,
        )
    ],
}


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Played:
    return played_suite("everything", tmp_path_factory)


def test_everything_server_introduces_itself_and_lists_its_tools(played: Played) -> None:
    server = played.connected["everything"]
    assert (server.name, server.version, server.protocol_version) == (
        "mcp-servers/everything",
        "2.0.0",
        "2025-11-25",
    )
    assert played.tools == {
        "everything": [
            "echo",
            "get-annotated-message",
            "get-env",
            "get-resource-links",
            "get-resource-reference",
            # Offered only to a client that declares roots, sampling or elicitation, as proctor's does.
            "get-roots-list",
            "get-structured-content",
            "get-sum",
            "get-tiny-image",
            "gzip-file-as-resource",
            "simulate-research-query",
            "toggle-simulated-logging",
            "toggle-subscriber-updates",
            "trigger-elicitation-request",
            "trigger-long-running-operation",
            "trigger-sampling-request",
            "trigger-url-elicitation",
        ]
    }


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_everything_gold_calls_answer_as_observed(played: Played, scenario: str) -> None:
    assert_scenario(played, scenario, EXPECTED)
