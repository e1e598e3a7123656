"""Every client's own config format through the one reader, with its settings' own meaning.

The fixtures in client_configs/ follow each client's documentation (keys, nesting, variable
syntax; names and values changed, no file copied): README.md there names the page per fixture,
and each test below says which one it holds to.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.app.cli import main
from proctor.scenarios.importers.mcpservers import load_server_set
from proctor.scenarios.loader import SuiteError, load_servers_file, load_suite
from proctor.scenarios.schema import HttpServer, StdioServer

CONFIGS = Path(__file__).parent / "client_configs"


def _read(name: str) -> tuple[dict[str, StdioServer | HttpServer], list[str]]:
    notes: list[str] = []
    return load_servers_file(CONFIGS / name, notes), notes


def test_gemini_cli_timeouts_are_milliseconds_and_its_tool_lists_are_kept() -> None:
    # geminicli.com/docs/tools/mcp-server: "timeout" in ms, includeTools/excludeTools, httpUrl,
    # env values "$VAR", and the mcp.excluded list of servers to skip.
    servers, notes = _read("gemini/.gemini/settings.json")
    notes_server, docs, experimental = servers["notes"], servers["docs"], servers["experimental"]
    assert isinstance(notes_server, StdioServer) and notes_server.timeout_s == 30.0
    assert notes_server.include_tools == ["read_note", "search_notes", "write_note"]
    assert notes_server.exclude_tools == ["write_note"]
    assert notes_server.env["NOTES_TOKEN"] == "${NOTES_API_TOKEN}"
    assert notes_server.cwd == str(CONFIGS / "gemini" / "tools")
    assert isinstance(docs, HttpServer) and docs.timeout_s == 5.0 and docs.url.endswith("/mcp")
    assert experimental.disabled
    assert any("timeout 30000 is milliseconds in Gemini CLI: timeout_s 30" in n for n in notes)


def test_a_large_timeout_in_a_file_of_seconds_is_named_as_maybe_milliseconds(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": {"s": {"command": "node", "timeout": 30000}}}')
    servers, notes = load_servers_file(path), []
    load_servers_file(path, notes)
    assert servers["s"].timeout_s == 30000.0
    assert any("read as seconds (8.3 h)" in n and "timeout_s: 30" in n for n in notes)


def test_windsurf_disabled_tools_are_hidden_from_the_model_not_ignored(tmp_path: Path) -> None:
    # Windsurf's mcp_config.json: "disabledTools": [names] per server (docs.windsurf.com, MCP).
    path = tmp_path / "mcp_config.json"
    path.write_text(
        '{"mcpServers": {"fs": {"command": "npx", "disabledTools": ["write_file", "move_file"]}}}'
    )
    assert load_servers_file(path)["fs"].exclude_tools == ["write_file", "move_file"]


def test_cline_disabled_servers_and_timeouts_in_seconds(tmp_path: Path) -> None:
    # Cline's cline_mcp_settings.json: disabled, alwaysAllow/autoApprove, timeout in seconds.
    servers, _ = _read("cline/cline_mcp_settings.json")
    assert servers["github"].disabled and not servers["weather"].disabled
    assert servers["weather"].timeout_s == 60.0


def test_zed_context_servers_in_both_command_forms() -> None:
    # zed.dev/docs/ai/mcp: context_servers with command/args/env or url/headers; older settings
    # wrote "command": {"path", "args", "env"} beside "source": "custom" and "settings".
    servers, notes = _read("zed/.zed/settings.json")
    local, older, remote = servers["local-notes"], servers["older-form"], servers["remote-docs"]
    assert isinstance(local, StdioServer) and (local.command, local.args) == (
        "uvx",
        ["notes-mcp", "--folder", "./notes"],
    )
    assert local.cwd == str(CONFIGS / "zed")  # .zed/settings.json belongs to its project
    assert isinstance(older, StdioServer) and older.command == "/usr/local/bin/todo-mcp"
    assert older.args == ["--stdio"] and older.env == {"TODO_DB": "todo.sqlite"}
    assert isinstance(remote, HttpServer) and remote.url == "https://docs.example.com/mcp"
    assert servers["switched-off"].disabled
    assert "mcp-server-context7" not in servers
    assert any("'mcp-server-context7' is provided by a Zed extension" in n for n in notes)


def test_continue_lists_its_servers_in_config_yaml_and_in_block_files() -> None:
    # docs.continue.dev "How to Set Up MCP": mcpServers as a YAML list of {name, type, command,
    # args, env, url}, ${{ secrets.NAME }}; a block file in .continue/mcpServers/ with name/version/schema.
    servers, _ = _read("continue/config.yaml")
    assert list(servers) == ["SQLite MCP", "Supabase MCP", "Remote search", "Legacy events"]
    supabase = servers["Supabase MCP"]
    assert isinstance(supabase, StdioServer) and supabase.env == {"SUPABASE_TOKEN": "${SUPABASE_TOKEN}"}
    assert supabase.args[-1] == "${SUPABASE_TOKEN}"
    search, events = servers["Remote search"], servers["Legacy events"]
    assert isinstance(search, HttpServer) and search.type is None
    assert isinstance(events, HttpServer) and events.type == "sse"
    block, _ = _read("continue/.continue/mcpServers/playwright-mcp.yaml")
    browser = block["Browser search"]
    assert isinstance(browser, StdioServer) and browser.args == ["@playwright/mcp@latest"]
    assert browser.cwd == str(CONFIGS / "continue")  # the workspace, not .continue/mcpServers


def test_goose_extensions_with_cmd_envs_enabled_and_available_tools() -> None:
    # goose "Configuration Files" guide: extensions NAME: {type stdio|streamable_http|builtin, cmd,
    # args, envs, env_keys, timeout (seconds), uri, enabled, available_tools}.
    servers, notes = _read("goose/config.yaml")
    fs, remote = servers["filesystem"], servers["remote-tools"]
    assert isinstance(fs, StdioServer) and fs.command == "npx" and fs.timeout_s == 120.0
    assert fs.include_tools == ["read_text_file", "list_directory"]
    assert fs.env == {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}  # a credential is handed explicitly
    assert fs.env_passthrough == ["FILESYSTEM_LOG_DIR"]
    assert (
        isinstance(remote, HttpServer) and remote.disabled and remote.url == "https://tools.example.com/mcp"
    )
    assert "developer" not in servers and any("'developer' is built into Goose" in n for n in notes)


def test_codex_config_toml_tables_are_read_as_toml() -> None:
    # openai/codex docs/config.md "MCP integration": [mcp_servers.NAME] command, args, env table,
    # env_vars, cwd, tool_timeout_sec, enabled, enabled_tools/disabled_tools, url, bearer_token_env_var.
    servers, notes = _read("codex/.codex/config.toml")
    docs, figma, old = servers["docs"], servers["figma"], servers["old"]
    assert isinstance(docs, StdioServer) and (docs.command, docs.cwd, docs.timeout_s) == (
        "npx",
        "/srv/docs",
        45.0,
    )
    assert docs.env == {"LOG_LEVEL": "debug", "DOCS_API_KEY": "${DOCS_API_KEY}"}
    assert docs.env_passthrough == ["DOCS_INDEX_DIR"]
    assert (docs.include_tools, docs.exclude_tools) == (["search", "summarize", "fetch"], ["fetch"])
    assert isinstance(figma, HttpServer)
    assert figma.headers == {"X-Team": "design", "Authorization": "Bearer ${FIGMA_TOKEN}"}
    assert old.disabled
    assert any("startup_timeout_sec is not used" in n for n in notes)


def test_opencode_local_and_remote_servers_with_command_lists() -> None:
    # opencode.ai/docs/mcp-servers: mcp NAME: {type local, command [list], environment, enabled,
    # timeout (ms)} or {type remote, url, headers}; {env:NAME} variables; V2 nests them in mcp.servers.
    servers, _ = _read("opencode/opencode.json")
    everything, jira = servers["everything"], servers["jira"]
    assert isinstance(everything, StdioServer)
    assert (everything.command, everything.args) == ("npx", ["-y", "@modelcontextprotocol/server-everything"])
    assert everything.env == {"EVERYTHING_MODE": "stdio"} and everything.timeout_s == 10.0
    assert (
        isinstance(jira, HttpServer)
        and jira.disabled
        and jira.headers == {"Authorization": "Bearer ${JIRA_TOKEN}"}
    )
    v2, _ = _read("opencode_v2/opencode.jsonc")
    assert not v2["my-server"].disabled and v2["parked"].disabled


@pytest.mark.parametrize(
    ("name", "text", "looks_like"),
    [
        ("docker-compose.yaml", "services:\n  web: {image: nginx}\n", "a Docker Compose file"),
        ("config.yaml", "GOOSE_PROVIDER: openai\nGOOSE_MODEL: gpt-4o\n", "a Goose config.yaml"),
        ("config.toml", 'model = "o3"\napproval_policy = "never"\n', "a Codex config.toml"),
        (
            ".claude.json",
            '{"projects": {"/home/me/app": {"mcpServers": {"x": {"command": "node"}}}}}',
            "Claude Code's ~/.claude.json",
        ),
        ("opencode.json", '{"$schema": "https://opencode.ai/config.json", "theme": "x"}', "an opencode.json"),
    ],
)
def test_a_file_that_is_not_a_client_config_is_named_with_what_to_do(
    name: str, text: str, looks_like: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(SuiteError, match="it looks like " + looks_like.replace("(", r"\(")):
        load_servers_file(path)
    assert main(["servers", "check", str(path)]) == 2
    assert looks_like in capsys.readouterr().err


def test_a_toml_file_that_is_not_toml_says_so(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[mcp_servers.x\ncommand = 1\n")
    with pytest.raises(SuiteError, match=r"config.toml: not valid TOML"):
        load_servers_file(path)


@pytest.mark.parametrize(
    "name",
    [
        "gemini/.gemini/settings.json",
        "cline/cline_mcp_settings.json",
        "zed/.zed/settings.json",
        "continue/config.yaml",
        "continue/.continue/mcpServers/playwright-mcp.yaml",
        "goose/config.yaml",
        "codex/.codex/config.toml",
        "opencode/opencode.json",
        "opencode_v2/opencode.jsonc",
    ],
)
def test_every_client_format_imports_as_a_suite_the_loader_reads(name: str, tmp_path: Path) -> None:
    out = tmp_path / "suite"
    assert main(["import", "mcpservers", str(CONFIGS / name), "-o", str(out)]) == 0
    loaded = load_suite(out)
    checked = load_servers_file(CONFIGS / name)
    assert list(loaded.servers) == list(checked) == list(load_server_set(CONFIGS / name)[0])
    enabled = {n for n, c in checked.items() if not c.disabled}
    assert {s for arm in loaded.suite.arms.values() for s in arm.servers} == enabled
