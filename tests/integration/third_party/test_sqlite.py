"""mcp-server-sqlite (PyPI; crashes on mcp 2.x, so it runs on mcp<2 in a venv of its own)
answers its suite's gold calls as observed, through proctor's connection, a fresh database per
trial.

Observed with ``python -m tests.integration.third_party.observe sqlite`` (mcp-server-sqlite
2025.4.25 on mcp 1.30.0, tests/reference_servers/requirements-mcp1.txt), 2026-11-27. On mcp
2.3.0 the same package dies at import: ``'Server' object has no attribute 'list_resources'``.
The server reports a refused query and a database error as ordinary text, not as a tool error:
proctor records them as it got them (``is_error`` false).
"""

from __future__ import annotations

import pytest

from tests.integration.third_party.servers import Expect, Played, assert_scenario, played_suite

pytestmark = pytest.mark.slow

CREATED = Expect("create_table", "Table created successfully")
EXPECTED = {
    "parts-by-price": [
        CREATED,
        Expect("write_query", "[{'affected_rows': 2}]"),
        Expect("read_query", "[{'name': 'nut', 'price': 0.1}, {'name': 'bolt', 'price': 0.25}]"),
    ],
    "schema": [
        CREATED,
        Expect("list_tables", "[{'name': 'parts'}]"),
        Expect(
            "describe_table",
            "[{'cid': 0, 'name': 'sku', 'type': 'TEXT', 'notnull': 0, 'dflt_value': None, 'pk': 1}, "
            "{'cid': 1, 'name': 'name', 'type': 'TEXT', 'notnull': 1, 'dflt_value': None, 'pk': 0}, "
            "{'cid': 2, 'name': 'price', 'type': 'REAL', 'notnull': 0, 'dflt_value': None, 'pk': 0}]",
        ),
    ],
    "refused-in-text": [
        Expect("read_query", "Error: Only SELECT queries are allowed for read_query"),
        Expect("read_query", "Database error: no such table: nowhere"),
        Expect("append_insight", "Insight added to memo"),
    ],
}


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Played:
    return played_suite("sqlite", tmp_path_factory)


def test_sqlite_server_introduces_itself_and_lists_six_tools(played: Played) -> None:
    server = played.connected["sqlite"]
    assert (server.name, server.version, server.protocol_version) == ("sqlite", "0.1.0", "2025-11-25")
    assert played.tools == {
        "sqlite": [
            "append_insight",
            "create_table",
            "describe_table",
            "list_tables",
            "read_query",
            "write_query",
        ]
    }


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_sqlite_gold_calls_answer_as_observed(played: Played, scenario: str) -> None:
    # "schema" creates the table "parts-by-price" created too: each trial has a database of its own.
    assert_scenario(played, scenario, EXPECTED)
