"""mcp-server-fetch (PyPI) without the internet: every fetch fails, and proctor records the
failure as the tool's error (``is_error``, ``tool_error``), not as a crash or a timeout.

Observed with ``python -m tests.integration.third_party.observe fetch`` (mcp-server-fetch
2026.10.24 on mcp 2.3.0, tests/reference_servers/requirements-official.txt), 2026-11-27. The
URLs are ones that fail on any machine: ``.invalid`` never resolves (RFC 2606), and the server
refuses loopback addresses unless started with ``--allow-private-ips``.
"""

from __future__ import annotations

import pytest

from tests.integration.third_party.servers import Expect, Played, assert_scenario, played_suite

pytestmark = pytest.mark.slow

PYDANTIC = "    For further information visit https://errors.pydantic.dev/2.14/v/"
EXPECTED = {
    "offline": [
        Expect(
            "fetch",
            "Error executing tool fetch: Failed to fetch robots.txt https://warehouse.invalid/robots.txt "
            "due to a connection issue",
            is_error=True,
        )
    ],
    "private-address": [
        Expect(
            "fetch",
            "Error executing tool fetch: Refused to fetch http://127.0.0.1:9/robots.txt: 127.0.0.1 resolves to "
            "127.0.0.1, which is not a public address. Start the server with --allow-private-ips to allow "
            "private, loopback and link-local addresses.",
            is_error=True,
        )
    ],
    "bad-arguments": [
        Expect(
            "fetch",
            "Error executing tool fetch: 1 validation error for fetchArguments\nmax_length\n"
            "  Input should be greater than or equal to 1 [type=greater_than_equal, input_value=0, "
            f"input_type=int]\n{PYDANTIC}greater_than_equal",
            is_error=True,
        ),
        Expect(
            "fetch",
            "Error executing tool fetch: 1 validation error for fetchArguments\nurl\n"
            "  Input should be a valid URL, relative URL without a base [type=url_parsing, "
            f"input_value='not a url', input_type=str]\n{PYDANTIC}url_parsing",
            is_error=True,
        ),
    ],
}


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Played:
    return played_suite("fetch", tmp_path_factory)


def test_fetch_server_introduces_itself_and_lists_one_tool(played: Played) -> None:
    server = played.connected["fetch"]
    assert (server.name, server.version, server.protocol_version) == ("mcp-fetch", "2026.10.24", "2026-07-28")
    assert played.tools == {"fetch": ["fetch"]}


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_fetch_gold_calls_answer_as_observed(played: Played, scenario: str) -> None:
    assert_scenario(played, scenario, EXPECTED)


def test_an_offline_fetch_is_a_tool_error_and_the_server_lives_on(played: Played) -> None:
    outcomes = [c.outcome for calls in played.calls.values() for c in calls]
    assert {(o.is_error, o.error_type) for o in outcomes} == {(True, "tool_error")}
    assert all(o.latency_s < 10 for o in outcomes)  # failed at once, not after a timeout
