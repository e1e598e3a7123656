"""``proctor servers check|call`` on client files as their clients write them, with a real server.

The server is ``@modelcontextprotocol/server-filesystem`` (pinned in tests/reference_servers,
14 tools). Each config is written in the shape its client documents (named per test).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.app.cli import main

FILESYSTEM = (
    Path(__file__).resolve().parents[2]
    / "reference_servers"
    / "node_modules"
    / ".bin"
    / "mcp-server-filesystem"
)
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not FILESYSTEM.exists(), reason="run `make test`: it installs the reference servers"),
]


def _filesystem(root: Path) -> dict[str, object]:
    return {"command": str(FILESYSTEM), "args": [str(root)]}


def _check(
    path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str]:
    monkeypatch.setenv("COLUMNS", "400")  # the table's rows stay whole
    code = main(["servers", "check", str(path)])
    out = capsys.readouterr()
    return code, out.out + out.err


def test_gemini_include_and_exclude_tools_decide_what_the_listing_offers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Gemini CLI .gemini/settings.json (geminicli.com/docs/tools/mcp-server): includeTools, then
    # excludeTools wins; timeout in milliseconds.
    path = tmp_path / ".gemini" / "settings.json"
    path.parent.mkdir()
    entry = _filesystem(tmp_path) | {
        "includeTools": ["read_text_file", "list_directory", "write_file"],
        "excludeTools": ["write_file"],
        "timeout": 30000,
    }
    path.write_text(json.dumps({"mcpServers": {"fs": entry}}))
    code, out = _check(path, capsys, monkeypatch)
    assert code == 0
    assert "2 of 14 offered: list_directory, read_text_file; 12 hidden by include_tools/exclude_tools:" in out
    assert "write_file" in out.split("hidden by", 1)[1]


def test_a_cline_server_with_disabled_true_is_skipped_not_started(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Cline's cline_mcp_settings.json (docs.cline.bot, MCP): "disabled": true keeps a server off.
    path = tmp_path / "cline_mcp_settings.json"
    servers = {
        "fs": _filesystem(tmp_path) | {"disabled": False, "autoApprove": []},
        "github": {"command": str(tmp_path / "not-installed"), "disabled": True},
    }
    path.write_text(json.dumps({"mcpServers": servers}))
    code, out = _check(path, capsys, monkeypatch)
    assert code == 0, out
    github = next(line for line in out.splitlines() if "github" in line)
    assert "skipped" in github and "disabled" in github and "not-installed" not in out
    assert "│ ok " in next(line for line in out.splitlines() if "│ fs " in line)


def test_one_vscode_input_without_default_does_not_keep_the_others_from_being_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # VS Code .vscode/mcp.json (code.visualstudio.com/docs/copilot/chat/mcp-servers): "inputs" with
    # a password prompt, referenced as ${input:id}; no default, so the user must export it.
    monkeypatch.delenv("GITHUB_PAT", raising=False)
    path = tmp_path / ".vscode" / "mcp.json"
    path.parent.mkdir()
    config = {
        "inputs": [
            {"type": "promptString", "id": "github-pat", "description": "GitHub PAT", "password": True}
        ],
        "servers": {
            "fs": _filesystem(tmp_path) | {"type": "stdio"},
            "github": {"type": "stdio", "command": "npx", "env": {"GITHUB_TOKEN": "${input:github-pat}"}},
        },
    }
    path.write_text(json.dumps(config))
    code, out = _check(path, capsys, monkeypatch)
    assert code == 3  # not every server was checked; nothing was refused
    assert "│ ok " in next(line for line in out.splitlines() if "│ fs " in line)
    github = next(line for line in out.splitlines() if "│ github " in line)
    assert "needs input" in github and "${GITHUB_PAT} is not set" in github
    assert "export GITHUB_PAT before running" in out  # the reader's note names the input
    assert main(["servers", "call", str(path), "fs", "list_allowed_directories"]) == 0
