"""``proctor init``'s drafted expectations, from results real servers gave
(tests/engine/fixtures/tool_results/, recorded by its script)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from proctor.engine.authoring.expectations import Observed, drafted_expectation, is_read_only
from proctor.engine.scoring.result_checks import unmet_expectations
from proctor.scenarios.schema import ResultExpectation

RESULTS: list[dict[str, Any]] = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "tool_results" / "results.json").read_text()
)["results"]


def _observed(server: str, tool: str, **arguments: Any) -> list[Observed]:
    return [
        Observed(r["text"], r["is_error"], r["structured"])
        for r in RESULTS
        if (r["server"], r["tool"], r["arguments"]) == (server, tool, arguments)
    ]


def _twice(server: str, tool: str, **arguments: Any) -> list[Observed]:
    (once,) = _observed(server, tool, **arguments)
    return [once, once]


def test_fields_that_echo_an_argument_are_drafted_and_a_clock_never_is() -> None:
    now = _observed("time", "get_current_time", timezone="Europe/Paris")
    assert len(now) == 2
    assert drafted_expectation(now, {"timezone": "Europe/Paris"}) == {"json": {"$.timezone": "Europe/Paris"}}


def test_a_text_result_gives_the_line_that_echoes_an_argument() -> None:
    echo = _twice("everything", "echo", message="count the washers")
    assert drafted_expectation(echo, {"message": "count the washers"}) == {
        "contains": "Echo: count the washers"
    }
    status = _twice("git", "git_status", repo_path=".")
    assert drafted_expectation(status, {"repo_path": "."}) == {"contains": "Repository status:"}


def test_structured_content_gives_its_small_fields() -> None:
    graph = _twice("memory", "read_graph")
    assert drafted_expectation(graph, {}) == {"json": {"$.entities": [], "$.relations": []}}
    weather = _twice("everything", "get-structured-content", location="New York")
    assert drafted_expectation(weather, {"location": "New York"}) == {
        "json": {"$.temperature": 33, "$.conditions": "Cloudy", "$.humidity": 82}
    }


def test_every_drafted_expectation_holds_for_the_result_it_was_drafted_from() -> None:
    for r in RESULTS:
        observed = [Observed(r["text"], r["is_error"], r["structured"])] * 2
        drafted = drafted_expectation(observed, r["arguments"])
        expect = ResultExpectation.model_validate(drafted)
        assert unmet_expectations(expect, r["text"], r["structured"]) == [], (r["tool"], drafted)


def test_an_error_or_an_error_in_disguise_leaves_a_review_note() -> None:
    missing = _twice("sqlite", "read_query", query="SELECT * FROM nowhere")
    (note,) = drafted_expectation(missing, {"query": "SELECT * FROM nowhere"}).values()
    assert "reads like an error the server did not flag" in note and "Database error: no such table" in note
    refused = _twice("fetch", "fetch", url="https://warehouse.invalid/stock")
    (note,) = drafted_expectation(refused, {}).values()
    assert note.startswith(
        "proctor init called it with these arguments and the server answered with an error"
    )
    assert list(drafted_expectation(refused[:1], {})) == ["review"]


def test_only_a_tool_that_says_it_is_read_only_is_probed() -> None:
    assert is_read_only({"readOnlyHint": True}) and not is_read_only({"readOnlyHint": False})
    assert not is_read_only(None) and not is_read_only({"destructiveHint": False})
