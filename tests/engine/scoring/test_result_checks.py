"""Results as real servers answer them (tests/engine/fixtures/tool_results/, recorded by its
script): which look like errors the server did not flag, and what an expectation says of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from proctor.engine.scoring.result_checks import disguised_error, json_document, unmet_expectations
from proctor.scenarios.schema import ResultExpectation

RESULTS: list[dict[str, Any]] = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "tool_results" / "results.json").read_text()
)["results"]
# (server, tool, the first words of the text) of every recorded result that is an error in
# disguise: isError false, the failure in the text.
DISGUISED = {
    ("sqlite", "read_query", "Database error: no such table: nowhere"),
    ("sqlite", "read_query", "Database error: incomplete input"),
    ("sqlite", "read_query", "Error: Only SELECT queries are allowed for read_query"),
    ("sqlite", "write_query", "Error: SELECT queries are not allowed for write_query"),
    ("everything", "get-annotated-message", "Error: Operation failed"),
    ("filesystem", "read_multiple_files", "nowhere.txt: Error - ENOENT: no such file or directory"),
}


def _id(r: dict[str, Any]) -> str:
    return f"{r['server']}/{r['tool']}:{json.dumps(r['arguments'], sort_keys=True)}"


@pytest.mark.parametrize("result", [r for r in RESULTS if not r["is_error"]], ids=_id)
def test_a_result_the_server_did_not_flag_is_flagged_only_when_its_text_is_an_error(
    result: dict[str, Any],
) -> None:
    why = disguised_error(result["text"], result["structured"])
    disguised = any(
        (result["server"], result["tool"]) == (server, tool) and result["text"].startswith(text)
        for server, tool, text in DISGUISED
    )
    assert (why is not None) == disguised, why
    if why is not None:
        assert why.startswith(f"the text begins {json.dumps(result['text'][:40])[:-1]}")


def test_only_the_first_line_is_read_so_a_later_files_error_in_a_batch_is_not_flagged() -> None:
    # A limit, kept on purpose: a later line starting "Error" is as often content (a log, a file).
    (batch,) = [r for r in RESULTS if r["arguments"] == {"paths": ["inventory/stock.py", "nowhere.txt"]}]
    assert "nowhere.txt: Error - ENOENT" in batch["text"] and not batch["is_error"]
    assert disguised_error(batch["text"], batch["structured"]) is None


def test_the_recording_holds_disguised_errors_real_successes_and_flagged_errors() -> None:
    assert sum(1 for r in RESULTS if r["is_error"]) >= 8
    assert {r["server"] for r in RESULTS} == {
        "sqlite",
        "everything",
        "filesystem",
        "memory",
        "time",
        "git",
        "fetch",
    }
    found = {
        (r["server"], r["tool"])
        for r in RESULTS
        if not r["is_error"] and disguised_error(r["text"], r["structured"])
    }
    assert found == {(s, t) for s, t, _ in DISGUISED}


@pytest.mark.parametrize(
    ("text", "structured", "why"),
    [
        # Beside the recording, written here: what other servers are reported to answer.
        ('{"success": false, "message": "no such row"}', None, 'its JSON says "success": false'),
        ("{}", {"ok": False}, 'its JSON says "ok": false'),
        ('{"status": "ERROR", "rows": []}', None, 'its JSON says "status": "ERROR"'),
        ('{"error": {"code": 42}}', None, 'its JSON has "error": "{\\"code\\": 42}"'),
        ("TypeError: fetch failed", None, 'the text begins "TypeError: fetch failed"'),
        ('Parser Error: syntax error at or near "SELEC"', None, "the text begins"),
        ("\n  **Error:** the index is stale", None, "the text begins"),
        ("ERROR 1064 (42000): You have an error in your SQL syntax", None, "the text begins"),
        ("MCP error -32602: Invalid params", None, "the text begins"),
        ("ValueError: invalid literal for int() with base 10: 'x'", None, "the text begins"),
        ("app.py:12:     logger.error(msg)", None, None),
        ('{"error": null, "rows": [1]}', None, None),
        ('{"success": true}', None, None),
        ("Error handling in Flask is done by errorhandler.", None, None),
        ("Errors: 0, warnings: 2", None, None),
        ("Found 3 failed jobs", None, None),
    ],
)
def test_written_cases_beside_the_recording(
    text: str, structured: dict[str, Any] | None, why: str | None
) -> None:
    got = disguised_error(text, structured)
    assert (got is None) == (why is None) and (why is None or (got is not None and got.startswith(why)))


def _expect(**fields: Any) -> ResultExpectation:
    return ResultExpectation.model_validate(fields)


def _recorded(server: str, tool: str, **arguments: Any) -> dict[str, Any]:
    (found,) = [r for r in RESULTS if (r["server"], r["tool"], r["arguments"]) == (server, tool, arguments)]
    return found


def test_expectations_on_real_results_name_what_the_result_lacks() -> None:
    bolt = _recorded("sqlite", "read_query", query="SELECT name, price FROM parts")
    missing = _recorded("sqlite", "read_query", query="SELECT * FROM nowhere")
    want = _expect(contains="'bolt'", not_contains="error")
    assert unmet_expectations(want, bolt["text"], bolt["structured"]) == []
    assert unmet_expectations(want, missing["text"], missing["structured"]) == [
        "does not contain \"'bolt'\"",
        'contains "error"',
    ]
    weather = _recorded("everything", "get-structured-content", location="New York")
    assert json_document(weather["text"], weather["structured"]) == {
        "temperature": 33,
        "conditions": "Cloudy",
        "humidity": 82,
    }
    assert (
        unmet_expectations(
            _expect(json={"$.conditions": "Cloudy", "humidity": "82"}), weather["text"], weather["structured"]
        )
        == []
    )
    assert unmet_expectations(
        _expect(json={"$.conditions": "Sunny", "$.wind": 3}), weather["text"], None
    ) == [
        'has $.conditions = "Cloudy", not "Sunny"',
        "has no $.wind (expected 3)",
    ]
    graph = _recorded("memory", "read_graph")
    assert unmet_expectations(_expect(json={"entities": []}), graph["text"], graph["structured"]) == []
    status = _recorded("git", "git_status", repo_path=".")
    assert unmet_expectations(_expect(json={"$.x": 1}), status["text"], status["structured"]) == [
        "is not JSON, so $.x cannot be read"
    ]


def test_every_value_a_wildcard_reaches_must_match_and_a_review_note_checks_nothing() -> None:
    rows = '{"rows": [{"ok": true}, {"ok": false}]}'
    assert unmet_expectations(_expect(json={"$.rows[*].ok": True}), rows, None) == [
        "has $.rows[*].ok = false, not true"
    ]
    assert unmet_expectations(_expect(review="write what it must hold"), "anything", None) == []
    assert unmet_expectations(_expect(contains="x"), "", None, has_result=False) == ["no result was recorded"]
