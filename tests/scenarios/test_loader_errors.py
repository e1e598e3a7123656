"""Every load error names the file, the field and what would be valid."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.scenarios.loader import SuiteError, expand_server, load_servers_file, load_suite
from proctor.scenarios.schema import HttpServer, StdioServer

GOOD_SUITE = """
name: t
mcpServers:
  s1: {command: python, args: [-m, x]}
arms:
  baseline: {baseline: true}
  mcp: {servers: [s1]}
"""
GOOD_SCENARIO = "id: one\nprompt: hello\n"


def _suite(tmp_path: Path, suite: str = GOOD_SUITE, scenarios: dict[str, str] | None = None) -> Path:
    (tmp_path / "scenarios").mkdir(exist_ok=True)
    (tmp_path / "suite.yaml").write_text(suite)
    for name, text in (scenarios or {"one.yaml": GOOD_SCENARIO}).items():
        (tmp_path / "scenarios" / name).write_text(text)
    return tmp_path


def test_good_suite_loads(tmp_path: Path) -> None:
    loaded = load_suite(_suite(tmp_path))
    assert [s.id for s in loaded.scenarios] == ["one"] and set(loaded.servers) == {"s1"}


@pytest.mark.parametrize(
    ("suite", "file", "needles"),
    [
        (GOOD_SUITE.replace("arms:", "armz: {}\narms:"), "suite.yaml", ["field 'armz'", "unknown field"]),
        (
            GOOD_SUITE.replace("servers: [s1]", "servers: [s2]"),
            "suite.yaml",
            ["arms.mcp.servers", "'s2'", "defined: s1"],
        ),
        (GOOD_SUITE + "models: [gpt4]\n", "suite.yaml", ["field 'models'", "anthropic:NAME"]),
        (GOOD_SUITE + "epochs: 0\n", "suite.yaml", ["field 'epochs'", "greater than or equal to 1"]),
        (
            GOOD_SUITE.replace("baseline: {baseline: true}", "baseline: {}"),
            "suite.yaml",
            ["arms.baseline", "baseline: true"],
        ),
        ("name: t\narms: [1, 2\n", "suite.yaml", ["line 3", "not valid YAML"]),
        ("- a\n- b\n", "suite.yaml", ["mapping"]),
        (
            GOOD_SUITE + "concurrency: {per_provider: {offline: 0}}\n",
            "suite.yaml",
            ["concurrency.per_provider"],
        ),
        (
            GOOD_SUITE + "scoring: {fairness: {llm_quality: -1}}\n",
            "suite.yaml",
            ["scoring.fairness.llm_quality"],
        ),
        (GOOD_SUITE + "prices: {'x:y': {input: -1, output: 1}}\n", "suite.yaml", ["prices.x:y.input"]),
        (
            GOOD_SUITE + "scoring: {citation_count: per_line}\n",
            "suite.yaml",
            ["scoring.citation_count", "'file_line' or 'mention'"],
        ),
        (
            GOOD_SUITE + "scoring: {keyword_count: twice}\n",
            "suite.yaml",
            ["field 'scoring.keyword_count'", "'once' or 'per_occurrence'"],
        ),
    ],
)
def test_suite_errors_name_file_field_and_fix(
    tmp_path: Path, suite: str, file: str, needles: list[str]
) -> None:
    with pytest.raises(SuiteError) as info:
        load_suite(_suite(tmp_path, suite))
    msg = str(info.value)
    assert str(tmp_path / file) in msg
    for n in needles:
        assert n in msg, msg


@pytest.mark.parametrize(
    ("scenario", "needles"),
    [
        ("id: one\n", ["exactly one of 'prompt' or 'steps'"]),
        ("id: one\nprompt: ''\n", ["field 'prompt'"]),
        ("id: one\nprompt: '   '\n", ["field 'prompt'"]),
        ("id: 'bad id'\nprompt: x\n", ["field 'id'"]),
        ("id: one\nprompt: x\ncomplexity: huge\n", ["field 'complexity'", "'single'"]),
        ("id: one\nprompt: x\ngold_tool_calls: [{tool: a}]\n", ["gold_tool_calls.0"]),
        (
            "id: one\nprompt: x\nkeywords: {required: [a], optional: [b]}\n",
            ["keywords.optional", "unknown field"],
        ),
        (
            "id: one\nprompt: x\nkeywords:\n  required: [a, {substring: test_}]\n",
            ["line 4: field 'keywords.required.1.substring'", "unknown keyword kind", "{contains: test_}"],
        ),
        (
            "id: one\nprompt: x\nkeywords: {bonus: [{contains: a, exact: b}]}\n",
            ["field 'keywords.bonus.0'", "give exactly one of word, contains, exact, starts_with"],
        ),
        (
            "id: one\nprompt: x\ngold_tool_calls:\n  - [{tool: a, expect: {contain: rows}}]\n",
            ["line 4: field 'gold_tool_calls.0.0.expect.contain'", "unknown field"],
        ),
        (
            "id: one\nprompt: x\ngold_tool_calls: [[{tool: a, expect: {}}]]\n",
            ["field 'gold_tool_calls.0.0.expect'", "contains, not_contains or json", "review note"],
        ),
        (
            "id: one\nprompt: x\ngold_tool_calls: [[{tool: a, expect: {not_contains: ''}}]]\n",
            ["field 'gold_tool_calls.0.0.expect.not_contains'", "an empty text is in every result"],
        ),
        (
            "id: one\nprompt: x\ngold_tool_calls: [[{tool: a, expect: {json: {'$..rows[': 1}}}]]\n",
            ["field 'gold_tool_calls.0.0.expect.json'", "'$..rows['", "e.g. $.commits[*].date"],
        ),
    ],
)
def test_scenario_errors_name_file_and_field(tmp_path: Path, scenario: str, needles: list[str]) -> None:
    with pytest.raises(SuiteError) as info:
        load_suite(_suite(tmp_path, scenarios={"bad.yaml": scenario}))
    msg = str(info.value)
    assert str(tmp_path / "scenarios" / "bad.yaml") in msg
    for n in needles:
        assert n in msg, msg


def test_duplicate_scenario_ids_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match="already used"):
        load_suite(_suite(tmp_path, scenarios={"a.yaml": GOOD_SCENARIO, "b.yaml": GOOD_SCENARIO}))


def test_missing_suite_and_empty_scenarios(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match="suite file not found"):
        load_suite(tmp_path / "nope")
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "suite.yaml").write_text(GOOD_SUITE)
    with pytest.raises(SuiteError, match="no scenario files"):
        load_suite(tmp_path)


def test_claude_desktop_cursor_and_vscode_server_files(tmp_path: Path) -> None:
    claude = tmp_path / "claude.json"
    claude.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "fs": {"command": "npx", "args": ["x"], "env": {"K": "${HOME}"}},
                    "web": {
                        "url": "http://127.0.0.1:1/mcp",
                        "headers": {"Authorization": "Bearer ${TOKEN:-none}"},
                    },
                },
                "other": 1,
            }
        )
    )
    servers = load_servers_file(claude)
    assert isinstance(servers["fs"], StdioServer) and isinstance(servers["web"], HttpServer)
    vscode = tmp_path / "mcp.json"
    vscode.write_text(json.dumps({"servers": {"fs": {"command": "npx"}}}))
    assert set(load_servers_file(vscode)) == {"fs"}
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    with pytest.raises(SuiteError, match=str(bad)):
        load_servers_file(bad)
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"mcpServers": {"x": {"url": "ftp://a"}}}))
    with pytest.raises(SuiteError, match="mcpServers"):
        load_servers_file(wrong)


def test_variable_expansion_with_defaults_and_clear_errors() -> None:
    cfg = StdioServer(command="${PY}", args=["--repo", "${REPO}"], env={"A": "${MISSING:-dflt}"})
    out = expand_server("s", cfg, {"PY": "/usr/bin/python3", "REPO": "/r"})
    assert isinstance(out, StdioServer)
    assert (out.command, out.args, out.env) == ("/usr/bin/python3", ["--repo", "/r"], {"A": "dflt"})
    with pytest.raises(SuiteError, match=r"mcpServers\.s\.args: \$\{REPO\} is not set"):
        expand_server("s", cfg, {"PY": "p"})


def test_a_binary_suite_file_is_named_not_a_traceback(tmp_path: Path) -> None:
    root = _suite(tmp_path)
    (root / "suite.yaml").write_bytes(b"\xff\xfe\x00name: t")
    with pytest.raises(SuiteError, match=r"suite\.yaml: not UTF-8 text"):
        load_suite(root)


def test_a_vs_code_jsonc_servers_file_with_client_keys_loads_and_says_what_it_ignored(tmp_path: Path) -> None:
    (tmp_path / "mcp.json").write_text(
        """{
  // VS Code's mcp.json: comments, trailing commas, inputs, servers, UI-only keys
  "inputs": [{"type": "promptString", "id": "tok", "password": true}],
  "servers": {
    "fs": {"type": "stdio", "command": "npx", "args": ["-y", "server-filesystem", "."], "autoApprove": ["read"],},
    "remote": {"transport": "http", "url": "http://127.0.0.1:9/mcp", "alwaysAllow": []},
    "off": {"command": "x", "disabled": true},
  },
}"""
    )
    suite = GOOD_SUITE.replace(
        "mcpServers:\n  s1: {command: python, args: [-m, x]}\n", "servers_file: mcp.json\n"
    )
    loaded = load_suite(_suite(tmp_path, suite.replace("servers: [s1]", "servers: [fs, remote]")))
    assert set(loaded.servers) == {"fs", "remote", "off"} and loaded.servers["off"].disabled
    assert isinstance(loaded.servers["remote"], HttpServer)
    notes = [w for w in loaded.warnings if "client-only" in w]
    assert any("'fs'" in n and "autoApprove" in n for n in notes)
    assert any("'remote'" in n and "alwaysAllow" in n for n in notes)


def test_a_servers_file_outside_the_suite_folder_is_part_of_its_hash(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (tmp_path / "mcp.json").write_text('{"mcpServers": {"s1": {"command": "python"}}}')
    loaded = load_suite(_suite(suite, GOOD_SUITE.replace("mcpServers:\n  s1: {command: python, args: [-m, x]}\n",
                                                          "servers_file: ../mcp.json\n")))  # fmt: skip
    before = loaded.content_hash
    (tmp_path / "mcp.json").write_text('{"mcpServers": {"s1": {"command": "python3"}}}')
    assert load_suite(suite).content_hash != before


@pytest.mark.parametrize("text", ["name: t\x07\n", "name: t\narms: [1, 2\n"], ids=["no mark", "marked"])
def test_a_suite_and_a_servers_file_word_a_yaml_error_alike(tmp_path: Path, text: str) -> None:
    _suite(tmp_path, suite=text)
    servers = tmp_path / "servers.yaml"
    servers.write_text(text)
    with pytest.raises(SuiteError) as suite_error:
        load_suite(tmp_path)
    with pytest.raises(SuiteError) as file_error:
        load_servers_file(servers)
    suite_line = str(suite_error.value).splitlines()[0]
    file_line = str(file_error.value).splitlines()[0]
    assert suite_line.replace("suite.yaml", "servers.yaml") == file_line
    assert "::" not in suite_line
