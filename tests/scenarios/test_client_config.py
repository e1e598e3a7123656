"""One reader for MCP client configs: servers check, servers_file and import mcpservers agree.

The fixtures in client_configs/ reproduce configurations published in public repositories and
client docs (README.md there names each source).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from proctor.app.cli import main
from proctor.scenarios.importers.common import ImportFormatError
from proctor.scenarios.importers.mcpservers import load_server_set
from proctor.scenarios.loader import SuiteError, expand_server, load_servers_file, load_suite
from proctor.scenarios.schema import HttpServer, StdioServer

CONFIGS = Path(__file__).parent / "client_configs"
READABLE = [
    "claude_desktop/claude_desktop_config.json",
    "claude_transport/local-mcp.json",
    "cursor/.cursor/mcp.json",
    "cursor_servers/.cursor/mcp.json",
    "jsonc/servers.jsonc",
    "vscode/.vscode/mcp.json",
    "windsurf/mcp_config.json",
]


def _transport(server: object) -> str:
    if isinstance(server, HttpServer):
        return "sse" if server.type == "sse" else "http"
    assert isinstance(server, StdioServer)
    return "stdio"


@pytest.mark.parametrize("name", READABLE)
def test_servers_check_and_import_read_every_published_shape_the_same_way(name: str) -> None:
    path = CONFIGS / name
    checked = load_servers_file(path)
    imported, _ = load_server_set(path)
    assert list(checked) == list(imported)
    for server, cfg in checked.items():
        again = (HttpServer if "url" in imported[server] else StdioServer).model_validate(imported[server])
        assert _transport(again) == _transport(cfg), server
        if isinstance(cfg, StdioServer):
            assert isinstance(again, StdioServer)
            assert (again.command, again.cwd, again.env_file) == (cfg.command, cfg.cwd, cfg.env_file)
        else:
            assert isinstance(again, HttpServer) and again.url == cfg.url


def test_legacy_sse_and_claude_style_transport_objects_are_read_not_refused() -> None:
    vscode = load_servers_file(CONFIGS / "vscode/.vscode/mcp.json")
    assert _transport(vscode["weather-sse"]) == "sse"
    assert _transport(vscode["snowflake"]) == "http"
    assert _transport(vscode["GitLab-MCP"]) == "stdio"
    claude = load_servers_file(CONFIGS / "claude_transport/local-mcp.json")
    assert [(_transport(c), c.url) for c in claude.values() if isinstance(c, HttpServer)] == [
        ("sse", "http://localhost:3009/sse"),
        ("http", "http://localhost:3010/mcp"),
    ]


def test_a_jsonc_file_is_read_as_json_with_comments_not_as_yaml() -> None:
    servers = load_servers_file(CONFIGS / "jsonc/servers.jsonc")
    memory = servers["memory"]
    assert isinstance(memory, StdioServer) and memory.args == ["-y", "@modelcontextprotocol/server-memory"]


def test_vscode_inputs_become_variables_the_notes_name_and_workspace_folder_is_the_project() -> None:
    notes: list[str] = []
    servers = load_servers_file(CONFIGS / "vscode/.vscode/mcp.json", notes)
    weather = servers["weather-sse"]
    assert isinstance(weather, HttpServer) and weather.headers == {"x-api-key": "${WEATHER_API_KEY}"}
    snowflake = servers["snowflake"]
    assert isinstance(snowflake, HttpServer) and snowflake.url.endswith("/mcp-servers/${REGION:-eu}")
    gitlab = servers["GitLab-MCP"]
    assert isinstance(gitlab, StdioServer)
    assert gitlab.env_file == str(CONFIGS / "vscode" / ".env") and gitlab.cwd == str(CONFIGS / "vscode")
    assert any("export WEATHER_API_KEY" in n and "Weather API Key" in n for n in notes)
    assert any("export GITLAB_TOKEN" in n for n in notes)
    expanded = expand_server("weather-sse", weather, {"WEATHER_API_KEY": "k1"})
    assert isinstance(expanded, HttpServer) and expanded.headers == {"x-api-key": "k1"}


def test_windows_commands_and_docker_without_stdin_are_named_in_notes() -> None:
    notes: list[str] = []
    load_servers_file(CONFIGS / "claude_desktop/claude_desktop_config.json", notes)
    assert any("'codemcp'" in n and "Windows program" in n for n in notes)
    assert any("'filesystem'" in n and "Windows program" in n for n in notes)
    assert any("'no-stdin'" in n and "add -i" in n for n in notes)
    assert not any("'gitlab'" in n for n in notes)


def test_a_url_ending_in_sse_without_a_type_is_read_as_sse_and_says_so() -> None:
    notes: list[str] = []
    servers = load_servers_file(CONFIGS / "windsurf/mcp_config.json", notes)
    assert _transport(servers["my-site"]) == "sse"
    assert any("'my-site'" in n and "legacy SSE" in n for n in notes)


def test_relative_command_cwd_and_arguments_resolve_against_the_project_folder() -> None:
    servers = load_servers_file(CONFIGS / "cursor/.cursor/mcp.json")
    project = CONFIGS / "cursor"
    tools, script = servers["local-tools"], servers["script"]
    assert isinstance(tools, StdioServer) and isinstance(script, StdioServer)
    assert (tools.command, tools.cwd) == ("node", str(project))  # on PATH; build/index.js is read in cwd
    assert (script.command, script.cwd) == (str(project / "bin/server.sh"), str(project / "tools"))


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "not_mcp/.cursor/mcp.json",
            r"not an MCP client configuration \(its top-level keys are model, rules\)",
        ),
        ("fetch_transport/claude_desktop_config.json", r"field 'transport': 'fetch' is not a transport"),
    ],
)
def test_files_that_are_not_mcp_configs_fail_the_same_clear_way_everywhere(
    name: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = CONFIGS / name
    with pytest.raises(SuiteError, match=message):
        load_servers_file(path)
    with pytest.raises(ImportFormatError, match=message):
        load_server_set(path)
    assert main(["servers", "check", str(path)]) == 2
    assert main(["import", "mcpservers", str(path), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count(str(path)) >= 2 and len([line for line in err.splitlines() if "not" in line]) >= 2


def test_a_suite_servers_file_reads_env_file_and_paths_from_its_own_folder(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(CONFIGS / "vscode", project)
    (project / ".env").write_text(
        "# from the project\nGITLAB_API_URL='https://gitlab.example.com'\nexport DEBUG=1\n"
    )
    suite = tmp_path / "suite"
    (suite / "scenarios").mkdir(parents=True)
    (suite / "suite.yaml").write_text(
        "name: t\nservers_file: ../project/.vscode/mcp.json\narms:\n  gl: {servers: [GitLab-MCP]}\n"
    )
    (suite / "scenarios" / "a.yaml").write_text("id: a\nprompt: hi\nkeywords: {required: [x]}\n")
    loaded = load_suite(suite)
    gitlab = loaded.servers["GitLab-MCP"]
    assert isinstance(gitlab, StdioServer) and gitlab.cwd == str(project)
    expanded = expand_server("GitLab-MCP", gitlab, {"GITLAB_TOKEN": "t"})
    assert isinstance(expanded, StdioServer)
    assert expanded.env == {
        "GITLAB_API_URL": "https://gitlab.example.com",
        "DEBUG": "1",
        "GITLAB_TOKEN": "t",
        "GITLAB_READ_ONLY_MODE": "true",
    }
    assert any("export GITLAB_TOKEN" in w for w in loaded.warnings)
    (project / ".env").unlink()
    with pytest.raises(SuiteError, match=r"env_file: cannot read .*\.env"):
        expand_server("GitLab-MCP", gitlab, {"GITLAB_TOKEN": "t"})


def test_import_keeps_sse_and_writes_a_suite_the_loader_reads(tmp_path: Path) -> None:
    out = tmp_path / "suite"
    assert main(["import", "mcpservers", str(CONFIGS / "vscode/.vscode/mcp.json"), "-o", str(out)]) == 0
    loaded = load_suite(out)
    assert _transport(loaded.servers["weather-sse"]) == "sse"
    assert json.dumps(loaded.servers["GitLab-MCP"].model_dump()).count("${GITLAB_TOKEN}") == 1


def test_a_config_saved_by_windows_notepad_with_bom_and_crlf_is_read(tmp_path: Path) -> None:
    text = (CONFIGS / "claude_desktop/claude_desktop_config.json").read_text().replace("\n", "\r\n")
    path = tmp_path / "claude_desktop_config.json"
    path.write_bytes("\ufeff".encode() + text.encode())
    assert (
        list(load_servers_file(path))
        == list(load_server_set(path)[0])
        == [
            "codemcp",
            "filesystem",
            "gitlab",
            "no-stdin",
            "thinking",
        ]
    )
