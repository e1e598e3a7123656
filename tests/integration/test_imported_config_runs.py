"""An imported client config runs: ``import mcpservers FILE -o suite`` then ``run suite --headless``.

Every shape the one reader reads (scenarios/client_config.py, scenarios/client_formats.py) is
written here as its client documents it (the documenting page is named per shape; the values
are this test's), naming the real ``mcp-server-time`` (PyPI, pinned in
tests/reference_servers/requirements-official.txt). The file lives in a project folder of its
own, the commands run from another folder, and the run uses the default database
``runs/NAME.db``: a relative path, while every server runs in its ``cwd`` (import writes one on
every server). Before the fix, the supervisor, started in that ``cwd``, was told to write
``runs/NAME.db.logs/.time.stderr.log.ID.pid``, another file there: "did not start: No such file
or directory" for every server trial.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from proctor.app.cli import main
from proctor.store.events import ErrorEvent, ServerConnected, ToolsListed
from proctor.store.read.reader import StoreReader

TIME = (
    Path(__file__).resolve().parents[1] / "reference_servers" / ".venv-official" / "bin" / "mcp-server-time"
)
TIME_TOOLS = ["convert_time", "get_current_time"]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not TIME.exists(), reason="run `make test`: it installs the reference servers"),
]


def _json(data: object) -> str:
    return json.dumps(data, indent=2)


# (file inside the project, its text for a server running ``command`` in ``cwd``, tools offered)
Shape = Callable[[str, str], str]
SHAPES: dict[str, tuple[str, Shape, list[str]]] = {
    # modelcontextprotocol.io quickstart: claude_desktop_config.json
    "claude-desktop": (
        "claude_desktop_config.json",
        lambda cmd, cwd: _json(
            {"mcpServers": {"time": {"command": cmd, "args": ["--local-timezone", "UTC"]}}}
        ),
        TIME_TOOLS,
    ),
    # Claude Code .mcp.json: type, env with ${VAR:-default}
    "claude-code": (
        ".mcp.json",
        lambda cmd, cwd: _json(
            {"mcpServers": {"time": {"type": "stdio", "command": cmd, "env": {"TZ": "${TIME_TEST_TZ:-UTC}"}}}}
        ),
        TIME_TOOLS,
    ),
    # a Claude-style transport object
    "claude-transport": (
        "local-mcp.json",
        lambda cmd, cwd: _json({"mcpServers": {"time": {"transport": {"type": "stdio", "command": cmd}}}}),
        TIME_TOOLS,
    ),
    # Cursor .cursor/mcp.json, with a relative cwd
    "cursor": (
        ".cursor/mcp.json",
        lambda cmd, cwd: _json({"mcpServers": {"time": {"command": cmd, "cwd": "tools"}}}),
        TIME_TOOLS,
    ),
    # VS Code .vscode/mcp.json: servers, type, inputs with a default, comments
    "vscode-mcp-json": (
        ".vscode/mcp.json",
        lambda cmd, cwd: (
            "// VS Code\n"
            + _json(
                {
                    "inputs": [{"type": "promptString", "id": "tz", "description": "Zone", "default": "UTC"}],
                    "servers": {
                        "time": {"type": "stdio", "command": cmd, "args": ["--local-timezone", "${input:tz}"]}
                    },
                }
            )
        ),
        TIME_TOOLS,
    ),
    # VS Code settings.json: mcp.servers
    "vscode-settings": (
        ".vscode/settings.json",
        lambda cmd, cwd: _json({"editor.tabSize": 2, "mcp": {"servers": {"time": {"command": cmd}}}}),
        TIME_TOOLS,
    ),
    # Windsurf mcp_config.json: disabledTools
    "windsurf": (
        "mcp_config.json",
        lambda cmd, cwd: _json({"mcpServers": {"time": {"command": cmd, "disabledTools": ["convert_time"]}}}),
        ["get_current_time"],
    ),
    # Cline cline_mcp_settings.json: disabled, autoApprove, timeout in seconds
    "cline": (
        "cline_mcp_settings.json",
        lambda cmd, cwd: _json(
            {
                "mcpServers": {
                    "time": {"command": cmd, "disabled": False, "autoApprove": [], "timeout": 60},
                    "off": {"command": "not-installed-anywhere", "disabled": True},
                }
            }
        ),
        TIME_TOOLS,
    ),
    # Gemini CLI .gemini/settings.json: cwd, timeout in ms, includeTools
    "gemini": (
        ".gemini/settings.json",
        lambda cmd, cwd: _json(
            {
                "mcpServers": {
                    "time": {
                        "command": cmd,
                        "cwd": "./tools",
                        "timeout": 30000,
                        "includeTools": ["get_current_time"],
                    }
                }
            }
        ),
        ["get_current_time"],
    ),
    # Zed .zed/settings.json: context_servers
    "zed": (
        ".zed/settings.json",
        lambda cmd, cwd: _json({"context_servers": {"time": {"command": cmd, "args": [], "env": {}}}}),
        TIME_TOOLS,
    ),
    # Continue config.yaml: mcpServers as a list
    "continue": (
        "config.yaml",
        lambda cmd, cwd: (
            f"name: c\nversion: 1.0.0\nschema: v1\nmcpServers:\n  - name: time\n    command: {cmd}\n"
        ),
        TIME_TOOLS,
    ),
    # Continue block file .continue/mcpServers/time.yaml
    "continue-block": (
        ".continue/mcpServers/time.yaml",
        lambda cmd, cwd: (
            f"name: t\nversion: 0.0.1\nschema: v1\nmcpServers:\n  - name: time\n    type: stdio\n    command: {cmd}\n"
        ),
        TIME_TOOLS,
    ),
    # Goose config.yaml: extensions (cmd, args, type, enabled, timeout, available_tools)
    "goose": (
        "config.yaml",
        lambda cmd, cwd: (
            "extensions:\n  developer: {type: builtin, name: developer, enabled: true}\n"
            f"  time:\n    type: stdio\n    name: time\n    enabled: true\n    cmd: {cmd}\n    args: []\n"
            "    timeout: 300\n    available_tools: [get_current_time]\n"
        ),
        ["get_current_time"],
    ),
    # Codex CLI .codex/config.toml: [mcp_servers.NAME] with cwd and enabled_tools
    "codex": (
        ".codex/config.toml",
        lambda cmd, cwd: (
            f'[mcp_servers.time]\ncommand = "{cmd}"\ncwd = "{cwd}"\nenabled_tools = ["convert_time"]\n'
        ),
        ["convert_time"],
    ),
    # opencode opencode.json: type local, command as a list, enabled
    "opencode": (
        "opencode.json",
        lambda cmd, cwd: _json(
            {
                "$schema": "https://opencode.ai/config.json",
                "mcp": {"time": {"type": "local", "command": [cmd], "enabled": True}},
            }
        ),
        TIME_TOOLS,
    ),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_an_imported_config_runs_from_another_folder_with_the_default_database(
    shape: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    where, text, offered = SHAPES[shape]
    project = tmp_path / "project"
    (project / "tools").mkdir(parents=True)
    config = project / where
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(text(str(TIME), str(project / "tools")))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("PROCTOR_CACHE", str(tmp_path / "cache"))
    assert main(["import", "mcpservers", str(config), "-o", "suite"]) == 0
    assert main(["run", "suite", "--headless"]) == 0
    dbs = list((work / "runs").glob("*.db"))
    assert len(dbs) == 1  # the default, relative database
    with StoreReader(dbs[0]) as reader:
        trials = {t.arm: t for t in reader.trials()}
        assert set(trials) == {"baseline", "time"}
        assert all(not t.error and t.status == "finished" for t in trials.values()), trials
        events = [e.event for e in reader.trial_events(trials["time"].id)]
    assert not [e for e in events if isinstance(e, ErrorEvent)]
    assert [e.name for e in events if isinstance(e, ServerConnected)] == ["mcp-time"]
    listed = next(e for e in events if isinstance(e, ToolsListed))
    assert sorted(t.name for t in listed.tools) == offered
