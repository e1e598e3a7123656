"""mcpServers import from Claude Desktop, Cursor and VS Code files; secrets never copied."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.engine.runs.imported_runs import save_import
from proctor.scenarios.importers.common import ImportFormatError
from proctor.scenarios.importers.mcpservers import load_server_set, read_mcpservers
from proctor.scenarios.jsonc import strip_jsonc
from proctor.scenarios.loader import expand_server, load_suite
from proctor.scenarios.schema import HttpServer, StdioServer

GH_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3"
BEARER = "opaque-session-value-123"
CLAUDE = {
    "mcpServers": {
        "github": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-github", "--api-key", "literal-key-value"],
            "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": GH_TOKEN, "LOG_LEVEL": "debug", "GIT_AUTHOR_NAME": "Ada"},
        },
        "remote": {"url": "https://mcp.example.com/mcp?api_key=qwerty12345&team=core", "headers": {"Authorization": f"Bearer {BEARER}"}},
        "old": {"command": "old-server", "disabled": True},
    },
    "globalShortcut": "Ctrl+Space",
}  # fmt: skip
VSCODE = """{
  // servers for this workspace
  "inputs": [{"type": "promptString", "id": "gh-token", "password": true}],
  "servers": {
    "gh": {"type": "stdio", "command": "npx", "args": ["server-github"],
           "env": {"GITHUB_TOKEN": "${input:gh-token}"}, "envFile": "${workspaceFolder}/.env",},
    /* remote one */
    "docs": {"type": "http", "url": "https://docs.example.com/mcp", "gallery": true},
    "events": {"type": "sse", "url": "http://127.0.0.1:9000/sse"},
  },
}"""


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_claude_desktop_file_becomes_a_suite_without_its_secrets(tmp_path: Path) -> None:
    source = _write(tmp_path / "claude_desktop_config.json", json.dumps(CLAUDE))
    imported = read_mcpservers(source)
    saved = save_import(imported, tmp_path / "suite")
    text = (saved.out_dir / "suite.yaml").read_text()
    for secret in (GH_TOKEN, BEARER, "qwerty12345", "literal-key-value"):
        assert secret not in text
        assert not any(secret in n for n in imported.notes)
    loaded = load_suite(saved.out_dir)
    assert list(loaded.suite.arms) == ["baseline", "github", "remote"]
    assert loaded.suite.arms["github"].servers == ["github"]
    github = loaded.servers["github"]
    assert isinstance(github, StdioServer)
    assert github.env == {
        "GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_PERSONAL_ACCESS_TOKEN}",
        "LOG_LEVEL": "debug",
        "GIT_AUTHOR_NAME": "Ada",
    }
    assert github.args[-2:] == ["--api-key", "${GITHUB_API_KEY}"]
    remote = loaded.servers["remote"]
    assert isinstance(remote, HttpServer)
    assert remote.headers == {"Authorization": "Bearer ${REMOTE_AUTHORIZATION}"}
    assert remote.url == "https://mcp.example.com/mcp?api_key=${REMOTE_API_KEY}&team=core"
    assert loaded.servers["old"].disabled
    assert any("export GITHUB_PERSONAL_ACCESS_TOKEN" in n for n in imported.notes)
    env = {
        "GITHUB_PERSONAL_ACCESS_TOKEN": GH_TOKEN,
        "GITHUB_API_KEY": "k",
        "REMOTE_AUTHORIZATION": BEARER,
        "REMOTE_API_KEY": "q",
    }
    assert expand_server("remote", remote, env).headers["Authorization"] == f"Bearer {BEARER}"  # type: ignore[union-attr]
    assert expand_server("github", github, env).env["GITHUB_PERSONAL_ACCESS_TOKEN"] == GH_TOKEN  # type: ignore[union-attr]
    assert (saved.out_dir / "scenarios" / "example.yaml").is_file()


def test_vscode_mcp_json_with_comments_types_and_inputs(tmp_path: Path) -> None:
    servers, notes = load_server_set(_write(tmp_path / "mcp.json", VSCODE))
    assert servers["gh"] == {
        "command": "npx",
        "args": ["server-github"],
        "env": {"GITHUB_TOKEN": "${GH_TOKEN}"},
        "env_file": str(tmp_path / ".env"),  # ${workspaceFolder} is the file's project folder
        "cwd": str(tmp_path),
    }
    assert servers["docs"] == {"url": "https://docs.example.com/mcp"}
    assert servers["events"] == {"type": "sse", "url": "http://127.0.0.1:9000/sse"}
    assert any("${input:gh-token}" in n and "export GH_TOKEN" in n for n in notes)


def test_vscode_settings_and_cursor_layouts(tmp_path: Path) -> None:
    settings = {
        "editor.fontSize": 12,
        "mcp": {"servers": {"fs": {"command": "mcp-fs", "args": ["${userHome}/code"]}}},
    }
    servers, _ = load_server_set(_write(tmp_path / "settings.json", json.dumps(settings)))
    assert servers == {"fs": {"command": "mcp-fs", "args": ["${HOME}/code"], "cwd": str(tmp_path)}}
    cursor = {
        "mcpServers": {"web": {"serverUrl": "https://w.example.com/mcp", "timeout": 60, "alwaysAllow": ["a"]}}
    }
    servers, notes = load_server_set(_write(tmp_path / "mcp.json", json.dumps(cursor)))
    assert servers == {"web": {"url": "https://w.example.com/mcp", "timeout_s": 60.0}}
    assert any("alwaysAllow" in n for n in notes)


def test_strip_jsonc_keeps_slashes_and_commas_inside_strings() -> None:
    text = '{"u": "https://x/y", "c": "a, }", // note\n "l": [1, 2,], /* x */ }'
    assert json.loads(strip_jsonc(text)) == {"u": "https://x/y", "c": "a, }", "l": [1, 2]}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"mcpServers": {"a": {"args": ["x"]}}}',
            r"server 'a': has no command; a stdio server needs 'command'",
        ),
        ('{"mcpServers": {"a": "npx"}}', r"server 'a': expected an object with 'command' or 'url'"),
        (
            '{"mcpServers": {"a": {"command": "x", "env": ["A=1"]}}}',
            r"server 'a', field 'env': expected an object",
        ),
        ('{"mcpServers": {"a": {"url": "ftp://x"}}}', r"server 'a': not a valid HTTP server .*http://"),
        (
            '{"preferences": {}}',
            r"not an MCP client configuration \(its top-level keys are preferences\); expected \{\"mcpServers\"",
        ),
        ('{"mcpServers": {"a": }', r"line 1, column \d+: not valid JSON"),
        ('{"mcpServers": {}}', r"the server list is empty"),
    ],
)
def test_malformed_configs_are_refused(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path / "c.json", text)
    with pytest.raises(ImportFormatError, match=message) as info:
        read_mcpservers(path)
    assert str(info.value).startswith(str(path))
