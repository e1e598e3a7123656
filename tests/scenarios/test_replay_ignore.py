"""``replay.ignore`` in suite.yaml: rules that parse, and errors that name the file, line, field and fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.scenarios.json_paths import JsonPathError, mask_path, parse_path
from proctor.scenarios.loader import SuiteError, load_suite

SUITE = """name: t
mcpServers:
  git: {command: python, args: [-m, x]}
arms:
  mcp: {servers: [git]}
replay:
  ignore:
%s
"""


def _suite(tmp_path: Path, rules: str) -> Path:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "suite.yaml").write_text(SUITE % rules)
    (tmp_path / "scenarios" / "one.yaml").write_text("id: one\nprompt: hi\n")
    return tmp_path


def test_rules_per_server_and_tool_load(tmp_path: Path) -> None:
    loaded = load_suite(
        _suite(
            tmp_path,
            "    - {server: git, tool: 'git_*', paths: ['$.commits[*].date', 'meta.id'], patterns: ['[0-9a-f]{40}']}\n"
            "    - {patterns: ['\\d{4}-\\d\\d-\\d\\d']}",
        )
    )
    first, second = loaded.suite.replay.ignore
    assert (first.server, first.tool, first.paths) == ("git", "git_*", ["$.commits[*].date", "meta.id"])
    assert (second.server, second.tool) == ("*", "*")


@pytest.mark.parametrize(
    ("rule", "needles"),
    [
        (
            "    - {server: git, patterns: ['(unclosed']}",
            ["line 8", "replay.ignore.0.patterns", "RE2", "(unclosed"],
        ),
        ("    - {server: git, paths: ['$.a[']}", ["replay.ignore.0.paths", "write keys as .key"]),
        ("    - {server: git}", ["replay.ignore.0", "give 'paths'"]),
        (
            "    - {server: gti, paths: [$.id]}",
            ["suite.yaml:8", "replay.ignore.0.server", "unknown server 'gti'", "defined: git"],
        ),
        ("    - {server: git, paths: [$.id], when: always}", ["replay.ignore.0.when", "unknown field"]),
    ],
)
def test_a_bad_rule_names_file_field_and_fix(tmp_path: Path, rule: str, needles: list[str]) -> None:
    with pytest.raises(SuiteError) as err:
        load_suite(_suite(tmp_path, rule))
    message = str(err.value)
    assert str(tmp_path / "suite.yaml") in message
    for needle in needles:
        assert needle in message, message


def test_paths_mask_every_match_and_leave_the_rest() -> None:
    doc = {"commits": [{"id": "a", "date": 1}, {"id": "b", "date": 2}], "meta": {"x": 1, "y": 2}, "n": 3}
    assert mask_path(doc, parse_path("$.commits[*].date"), "M") == {
        "commits": [{"id": "a", "date": "M"}, {"id": "b", "date": "M"}],
        "meta": {"x": 1, "y": 2},
        "n": 3,
    }
    assert mask_path(doc, parse_path("meta.*"), "M")["meta"] == {"x": "M", "y": "M"}
    assert mask_path(doc, parse_path('$["commits"][1].id'), "M")["commits"][1] == {"id": "M", "date": 2}
    assert mask_path(doc, parse_path("$.nothing.here"), "M") == doc
    assert doc["commits"][0]["date"] == 1  # the input is not modified


@pytest.mark.parametrize("bad", ["$", "", "$.a..b", "a[x]", "$.a[1"])
def test_unreadable_paths_are_refused(bad: str) -> None:
    with pytest.raises(JsonPathError):
        parse_path(bad)
