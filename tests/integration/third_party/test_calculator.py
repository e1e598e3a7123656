"""mcp-server-calculator (PyPI, written for mcp 1.x's FastMCP) answers its suite's gold calls as
observed, through proctor's connection: a server on the old SDK in a venv of its own.

Observed with ``python -m tests.integration.third_party.observe calculator``
(mcp-server-calculator 0.2.1 on mcp 1.30.0, tests/reference_servers/requirements-mcp1.txt),
2026-11-27. FastMCP 1.x wraps a ``str`` return as structuredContent ``{"result": ...}``.
"""

from __future__ import annotations

import pytest

from tests.integration.third_party.servers import Expect, Played, assert_scenario, played_suite

pytestmark = pytest.mark.slow


def _result(text: str) -> Expect:
    return Expect("calculate", text, structured={"result": text})


EXPECTED = {
    "order-total": [_result("7.0")],
    "functions-and-precedence": [_result("1036.0"), _result("14")],
    "refused": [
        Expect("calculate", "Error executing tool calculate: division by zero", is_error=True),
        Expect("calculate", "Error executing tool calculate: Unknown identifier: __import__", is_error=True),
    ],
}


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Played:
    return played_suite("calculator", tmp_path_factory)


def test_calculator_on_mcp_1_negotiates_an_older_protocol(played: Played) -> None:
    server = played.connected["calculator"]
    # FastMCP 1.x reports the SDK's version as the server's.
    assert (server.name, server.version, server.protocol_version) == ("calculator", "1.30.0", "2025-11-25")
    assert played.tools == {"calculator": ["calculate"]}


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_calculator_gold_calls_answer_as_observed(played: Played, scenario: str) -> None:
    assert_scenario(played, scenario, EXPECTED)
