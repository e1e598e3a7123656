"""Keyword kinds on real answers: the checks of a published harness (luuuc/sense, MIT) give the
hits its own scorer recorded (tests/engine/fixtures/sense_keywords/)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from proctor.engine.scoring import keyword_coverage
from proctor.scenarios.schema import Keywords

FIXTURE = Path(__file__).parents[1] / "fixtures" / "sense_keywords" / "sessions.json"
SESSIONS: list[dict[str, Any]] = json.loads(FIXTURE.read_text())["sessions"]
# sense's text check kinds, as a proctor scenario writes them (its other checks are not about
# the answer's words: tool use, grep use, cited files, a git diff).
KINDS = {
    "word": "word",
    "phrase": "word",
    "contains": "contains",
    "transcript_contains": "contains",
    "exact": "exact",
    "starts_with": "starts_with",
}


def _keyword(check: dict[str, Any]) -> Any:
    kind = KINDS[check["type"]]
    return check["value"] if kind == "word" else {kind: check["value"]}


def _text_checks(session: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in session["checks"] if c["type"] in KINDS and c["layer"] == "fairness"]


CASES = [
    pytest.param(
        s["answer_text"], c, id=f"{s['result'].removeprefix('bench/results/')}:{c['type']}:{c['value']}"
    )
    for s in SESSIONS
    for c in _text_checks(s)
]


def test_the_fixture_holds_misses_and_every_kind_its_scenarios_use() -> None:
    kinds = {(c["type"], c["hit"]) for s in SESSIONS for c in _text_checks(s)}
    assert kinds == {("word", True), ("word", False), ("contains", True), ("contains", False)}
    assert len(CASES) >= 100


@pytest.mark.parametrize(("answer", "check"), CASES)
def test_each_published_check_hits_as_the_harness_recorded(answer: str, check: dict[str, Any]) -> None:
    keywords = Keywords.model_validate({"required": [_keyword(check)]})
    coverage = keyword_coverage(answer, keywords.required)
    assert coverage.value == (1.0 if check["hit"] else 0.0)


@pytest.mark.parametrize("session", SESSIONS, ids=[s["result"] for s in SESSIONS])
def test_per_occurrence_sums_a_scenarios_checks_over_its_steps_as_the_harness_does(
    session: dict[str, Any],
) -> None:
    checks = _text_checks(session)
    keywords = Keywords.model_validate(
        {
            "required": [_keyword(c) for c in checks if c["required"]],
            "bonus": [_keyword(c) for c in checks if not c["required"]],
        }
    )
    hits = sum(c["hit"] * (1.0 if c["required"] else 0.5) for c in checks)
    total = sum(1.0 if c["required"] else 0.5 for c in checks)
    got = keyword_coverage(session["answer_text"], keywords.required, keywords.bonus, "per_occurrence")
    assert got.value == pytest.approx(hits / total)


def test_flask_lists_keywords_in_several_steps_which_once_counts_once() -> None:
    (flask,) = [s for s in SESSIONS if s["result"] == "bench/results/baseline/flask"]
    required = Keywords.model_validate(
        {"required": [_keyword(c) for c in _text_checks(flask) if c["required"]]}
    ).required
    assert required.count("wsgi_app") == 2 and required.count("__call__") == 2
    once = keyword_coverage(flask["answer_text"], required, count="once")
    each = keyword_coverage(flask["answer_text"], required, count="per_occurrence")
    assert len(each.required_hits) + len(each.required_missed) == len(required)
    assert len(once.required_hits) + len(once.required_missed) == len(required) - 2


def test_a_published_substring_check_for_test_underscore_matches_only_as_contains() -> None:
    (flask,) = [s for s in SESSIONS if s["result"] == "bench/results/baseline/flask"]
    (check,) = [c for c in flask["checks"] if c["value"] == "test_"]
    assert (check["type"], check["hit"]) == ("contains", True)
    answer = flask["answer_text"]
    assert (
        keyword_coverage(answer, [], Keywords.model_validate({"bonus": [{"contains": "test_"}]}).bonus).value
        == 1.0
    )
    assert keyword_coverage(answer, [], ["test_"]).value == 0.0  # a whole word: test_ never stands alone
