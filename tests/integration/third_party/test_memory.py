"""@modelcontextprotocol/server-memory (npm) answers its suite's gold calls as observed, through
proctor's connection, with a fresh knowledge graph per trial (``lifecycle: per_trial``).

Observed with ``python -m tests.integration.third_party.observe memory`` (server-memory
2026.8.31, which calls itself memory-server 0.6.3; tests/reference_servers/package-lock.json),
2026-11-27. Results come twice: indented JSON text, and structuredContent.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.third_party.servers import Expect, Played, assert_scenario, json_text, played_suite

pytestmark = pytest.mark.slow

ADA = {"name": "Ada", "entityType": "person", "observations": ["works in the warehouse"]}
WAREHOUSE = {"name": "Warehouse", "entityType": "place", "observations": ["stores bolts"]}
WORKS_AT = {"from": "Ada", "to": "Warehouse", "relationType": "works_at"}
ADA_ON_FRIDAYS = ADA | {"observations": ["works in the warehouse", "counts washers on Fridays"]}


def _json(tool: str, shown: Any, structured: dict[str, Any]) -> Expect:
    return Expect(tool, json_text(shown), structured=structured)


EXPECTED = {
    "who-works-where": [
        _json("create_entities", [ADA, WAREHOUSE], {"entities": [ADA, WAREHOUSE]}),
        _json("create_relations", [WORKS_AT], {"relations": [WORKS_AT]}),
        _json(
            "read_graph",
            {"entities": [ADA, WAREHOUSE], "relations": [WORKS_AT]},
            {"entities": [ADA, WAREHOUSE], "relations": [WORKS_AT]},
        ),
    ],
    "observe-and-search": [
        # A fresh graph: "who-works-where" ran first and its Ada and Warehouse are gone.
        _json("create_entities", [ADA], {"entities": [ADA]}),
        _json(
            "add_observations",
            [{"entityName": "Ada", "addedObservations": ["counts washers on Fridays"]}],
            {"results": [{"entityName": "Ada", "addedObservations": ["counts washers on Fridays"]}]},
        ),
        _json(
            "search_nodes",
            {"entities": [ADA_ON_FRIDAYS], "relations": []},
            {"entities": [ADA_ON_FRIDAYS], "relations": []},
        ),
    ],
    "unknown-entity": [Expect("add_observations", "Entity with name Nobody not found", is_error=True)],
}


# The tool descriptions as listed (tools/list), for drift tests to compare a changed copy with.
DESCRIPTIONS = {
    "add_observations": "Add new observations to existing entities in the knowledge graph",
    "create_entities": "Create multiple new entities in the knowledge graph",
    "create_relations": "Create multiple new relations between entities in the knowledge graph. "
    "Relations should be in active voice",
    "delete_entities": "Delete multiple entities and their associated relations from the knowledge graph",
    "delete_observations": "Delete specific observations from entities in the knowledge graph",
    "delete_relations": "Delete multiple relations from the knowledge graph",
    "open_nodes": "Open specific nodes in the knowledge graph by their names",
    "read_graph": "Read the entire knowledge graph",
    "search_nodes": "Search for nodes in the knowledge graph based on a query",
}


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Played:
    return played_suite("memory", tmp_path_factory)


def test_memory_server_introduces_itself_and_lists_its_tools(played: Played) -> None:
    server = played.connected["memory"]
    assert (server.name, server.version, server.protocol_version) == ("memory-server", "0.6.3", "2025-11-25")
    assert played.tools == {"memory": sorted(DESCRIPTIONS)}
    assert played.descriptions == {"memory": DESCRIPTIONS}


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_memory_gold_calls_answer_as_observed(played: Played, scenario: str) -> None:
    assert_scenario(played, scenario, EXPECTED)
