"""Where each MCP client keeps its servers, and each client's own entry in the one shape
``client_config`` reads (an ``mcpServers`` entry: command, args, env, cwd, url, headers, type).

The shapes are the ones each client's documentation shows: ``mcpServers`` (Claude Desktop,
Claude Code, Cursor, Windsurf, Cline, Gemini CLI, LM Studio), ``servers`` and ``mcp.servers``
(VS Code), ``context_servers`` (Zed), ``mcpServers`` as a list (Continue's config.yaml and its
``.continue/mcpServers/*.yaml`` blocks), ``extensions`` (Goose), ``[mcp_servers.NAME]`` tables
(Codex CLI's config.toml) and ``mcp`` with ``type: local|remote`` (opencode). A field whose
meaning belongs to one client is translated here into proctor's own: opencode's command list,
Goose's ``cmd``/``envs``/``enabled``, a Codex ``enabled_tools`` list, a timeout in milliseconds.
Anything else is refused with the format it looks like and what to do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proctor.scenarios.errors import SuiteError

# AUTH but not AUTHOR (GIT_AUTHOR_NAME is not a credential; AUTHORIZATION is).
SECRET_NAME = re.compile(
    r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTHORIZATION|AUTH(?!ORS?(?:_|\b))|BEARER|COOKIE|SESSION"
    r"|(?:^|_)PAT(?:_|$))",
    re.I,
)
MILLISECONDS = 0.001
# Fields only Gemini CLI writes in an mcpServers entry: such a file's timeouts are milliseconds.
_GEMINI_FIELDS = ("httpUrl", "includeTools", "excludeTools", "trust")
_GOOSE_BUILT_IN = ("builtin", "platform", "frontend", "inline_python")
_CONTINUE_SECRET = re.compile(r"\$\{\{\s*(?:secrets|inputs)\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_BARE_VAR = re.compile(r"(?<![\w$])\$([A-Za-z_][A-Za-z0-9_]*)")
_OPENCODE_VAR = re.compile(r"\{env:([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass
class ClientFile:
    """A file's servers as ``name -> mcpServers entry``, who writes that shape, and what the
    entries' own ``timeout`` counts (seconds, or milliseconds for Gemini CLI)."""

    client: str
    entries: dict[str, Any]
    timeout_unit_s: float = 1.0
    notes: list[str] = field(default_factory=list)


def client_file(data: Any, path: Path) -> ClientFile:
    """The servers of a parsed client configuration, wherever its client keeps them."""
    if not isinstance(data, dict):
        raise SuiteError(
            f"{path}: not an MCP client configuration (it holds a {type(data).__name__}, not an object); "
            + _EXPECTED
        )
    servers = data.get("mcpServers")
    if isinstance(data.get("mcp_servers"), dict):
        return _codex(data["mcp_servers"], path)
    if isinstance(servers, list):
        return _continue(servers, path)
    if isinstance(servers, dict):
        return _mcp_servers(data, servers, path)
    if isinstance(data.get("context_servers"), dict):
        return _zed(data["context_servers"], path)
    extensions = data.get("extensions")
    if isinstance(extensions, dict) and any(isinstance(e, dict) for e in extensions.values()):
        return _goose(extensions, path)
    if isinstance(data.get("servers"), dict):
        return ClientFile("VS Code (mcp.json)", dict(data["servers"]))
    mcp = data.get("mcp")
    if isinstance(mcp, dict):
        inner = mcp.get("servers")
        if isinstance(inner, dict):
            if _opencode_like(data, inner):
                return _opencode(inner, path)
            return ClientFile("VS Code (settings.json)", dict(inner))
        if _opencode_like(data, mcp):
            return _opencode(mcp, path)
    raise SuiteError(f"{path}: {_not_a_config(data)}")


_EXPECTED = (
    'expected {"mcpServers": {...}} (Claude Desktop, Claude Code, Cursor, Windsurf, Cline, Gemini CLI), '
    '{"servers": {...}} (VS Code mcp.json), {"mcp": {"servers": {...}}} (VS Code settings.json), '
    '"context_servers" (Zed), "mcpServers:" as a list (Continue), "extensions:" (Goose), '
    '[mcp_servers.NAME] tables (Codex config.toml) or "mcp" with type local/remote (opencode)'
)


def _not_a_config(data: dict[Any, Any]) -> str:
    """What the file looks like instead, and what to do with it."""
    keys = ", ".join(sorted(map(str, data))[:8]) or "none"
    seen = f"not an MCP client configuration (its top-level keys are {keys})"
    projects = data.get("projects")
    if isinstance(projects, dict) and any(
        isinstance(p, dict) and "mcpServers" in p for p in projects.values()
    ):
        return (
            f"{seen}: it looks like Claude Code's ~/.claude.json, which keeps servers per project under "
            'projects.PATH.mcpServers; copy that object into a file of its own as {"mcpServers": {...}}'
        )
    for keys_of, looks, fix in _LOOKALIKES:
        if keys_of & set(map(str, data)):
            return f"{seen}: it looks like {looks} with no MCP servers; {fix}"
    for key in ("mcpServers", "mcp_servers", "context_servers", "extensions", "servers", "mcp"):
        if key in data:
            return f"{seen}: its '{key}' holds a {type(data[key]).__name__}, not an object of servers; {_EXPECTED}"
    return f"{seen}; {_EXPECTED}"


_LOOKALIKES: tuple[tuple[frozenset[str], str, str], ...] = (
    (
        frozenset({"services"}),
        "a Docker Compose file",
        'write a stdio entry that runs "docker run -i --rm IMAGE"',
    ),
    (
        frozenset({"GOOSE_PROVIDER", "GOOSE_MODEL", "active_provider"}),
        "a Goose config.yaml",
        "add the servers under extensions: (type: stdio, cmd, args)",
    ),
    (
        frozenset({"model_provider", "model_providers", "approval_policy", "sandbox_mode"}),
        "a Codex config.toml",
        "add each server as an [mcp_servers.NAME] table (command, args)",
    ),
    (
        frozenset({"$schema", "agent", "provider"}),
        "an opencode.json",
        'add the servers under "mcp" (type: local, command: [...])',
    ),
    (
        frozenset({"assistant", "agent_servers", "language_models", "theme"}),
        "a Zed settings.json",
        'add the servers under "context_servers" (command, args, env)',
    ),
    (
        frozenset({"schema", "models", "rules", "context"}),
        "a Continue config.yaml or a client's rules file",
        "add the servers under mcpServers: as a list of {name, command, args}",
    ),
)


def _mcp_servers(data: dict[str, Any], servers: dict[str, Any], path: Path) -> ClientFile:
    """``mcpServers`` as most clients write it; a Gemini CLI settings file counts in milliseconds."""
    gemini = path.parent.name == ".gemini" or any(
        isinstance(e, dict) and any(k in e for k in _GEMINI_FIELDS) for e in servers.values()
    )
    if not gemini:
        return ClientFile("mcpServers (Claude Desktop, Claude Code, Cursor, Windsurf, Cline)", dict(servers))
    entries = {name: _gemini_entry(entry) for name, entry in servers.items()}
    notes: list[str] = []
    mcp: dict[str, Any] = data["mcp"] if isinstance(data.get("mcp"), dict) else {}
    allowed, excluded = mcp.get("allowed"), mcp.get("excluded")
    for name, entry in entries.items():
        if not isinstance(entry, dict):
            continue
        off = (isinstance(excluded, list) and name in excluded) or (
            isinstance(allowed, list) and name not in allowed
        )
        if off:
            entry["disabled"] = True
            notes.append(f"{path}: server {name!r} is left out by mcp.allowed/mcp.excluded: it is disabled")
    return ClientFile("Gemini CLI", entries, MILLISECONDS, notes)


def _gemini_entry(entry: Any) -> Any:
    """Gemini CLI expands ``$VAR`` as well as ``${VAR}`` in ``env``; proctor expands ``${VAR}``."""
    if not isinstance(entry, dict) or not isinstance(entry.get("env"), dict):
        return entry
    env = {k: _BARE_VAR.sub(r"${\1}", v) if isinstance(v, str) else v for k, v in entry["env"].items()}
    return entry | {"env": env}


def _continue(items: list[Any], path: Path) -> ClientFile:
    """Continue's ``mcpServers:`` list (config.yaml, or a ``.continue/mcpServers/*.yaml`` block)."""
    entries: dict[str, Any] = {}
    for number, item in enumerate(items, 1):
        if not isinstance(item, dict):
            raise SuiteError(
                f"{path}, mcpServers item {number}: expected an object with 'name' and 'command' or 'url'"
            )
        # ${{ secrets.NAME }} and ${{ inputs.NAME }} read ${NAME} from the environment
        entry = {k: _substituted(v, _CONTINUE_SECRET) for k, v in item.items() if k != "name"}
        options = entry.pop("requestOptions", None)
        if isinstance(options, dict) and isinstance(options.get("headers"), dict):
            entry.setdefault("headers", options["headers"])
        name = str(item.get("name") or f"server-{number}")
        entries[_unique(name, entries)] = entry
    return ClientFile("Continue", entries)


def _substituted(value: Any, variable: re.Pattern[str]) -> Any:
    """``value`` with a client's own variable syntax (``variable``, one group: the name) as ``${NAME}``."""
    if isinstance(value, str):
        return variable.sub(r"${\1}", value)
    if isinstance(value, list):
        return [_substituted(v, variable) for v in value]
    if isinstance(value, dict):
        return {k: _substituted(v, variable) for k, v in value.items()}
    return value


def _zed(servers: dict[str, Any], path: Path) -> ClientFile:
    """Zed's ``context_servers``: ``command`` as a string (with args, env) or as {path, args, env}."""
    entries: dict[str, Any] = {}
    notes: list[str] = []
    for name, raw in servers.items():
        if not isinstance(raw, dict):
            entries[name] = raw
            continue
        entry = {k: v for k, v in raw.items() if k not in ("source", "settings")}
        command = entry.get("command")
        if isinstance(command, dict):
            entry = {k: v for k, v in entry.items() if k != "command"} | {
                "command": command.get("path"),
                **{k: command[k] for k in ("args", "env") if k in command},
            }
        if "command" not in entry and "url" not in entry:
            notes.append(
                f"{path}: server {name!r} is provided by a Zed extension (no command or url); proctor cannot "
                "start it: write the command the extension runs"
            )
            continue
        if entry.pop("enabled", True) is False:
            entry["disabled"] = True
        entries[name] = entry
    return ClientFile("Zed", entries, notes=notes)


def _goose(extensions: dict[str, Any], path: Path) -> ClientFile:
    """Goose's ``extensions``: ``cmd``/``args``/``envs`` (stdio) or ``uri`` (streamable_http, sse)."""
    entries: dict[str, Any] = {}
    notes: list[str] = []
    for name, raw in extensions.items():
        if not isinstance(raw, dict):
            entries[name] = raw
            continue
        kind = str(raw.get("type") or "stdio")
        if kind in _GOOSE_BUILT_IN:
            notes.append(
                f"{path}: extension {name!r} is built into Goose (type {kind}), not an MCP server proctor can start"
            )
            continue
        entry: dict[str, Any] = {"type": "http" if kind == "streamable_http" else kind}
        moved = {"cmd": "command", "uri": "url", "envs": "env", "timeout": "timeout_s"}
        skip = {"type", "name", "enabled", "bundled", "display_name", "env_keys", "available_tools"}
        entry |= {moved.get(str(k), str(k)): v for k, v in raw.items() if k not in skip}
        if raw.get("enabled") is False:
            entry["disabled"] = True
        if raw.get("available_tools"):
            entry["include_tools"] = raw["available_tools"]
        _pass_names(entry, raw.get("env_keys"))
        entries[name] = entry
    return ClientFile("Goose", entries, notes=notes)


def _codex(servers: dict[str, Any], path: Path) -> ClientFile:
    """Codex CLI's ``[mcp_servers.NAME]`` tables."""
    entries: dict[str, Any] = {}
    notes: list[str] = []
    for name, raw in servers.items():
        if not isinstance(raw, dict):
            entries[name] = raw
            continue
        if "startup_timeout_sec" in raw:
            notes.append(
                f"{path}: server {name!r}: startup_timeout_sec is not used: proctor waits up to 30 s for a "
                "server's handshake (tool_timeout_sec is its timeout_s)"
            )
        moved = {
            "tool_timeout_sec": "timeout_s",
            "enabled_tools": "include_tools",
            "disabled_tools": "exclude_tools",
        }
        skip = {
            "enabled",
            "env_vars",
            "bearer_token_env_var",
            "http_headers",
            "env_http_headers",
            "startup_timeout_sec",
        }
        entry = {moved.get(str(k), str(k)): v for k, v in raw.items() if k not in skip}
        if raw.get("enabled") is False:
            entry["disabled"] = True
        headers = dict(raw.get("http_headers") or {})
        headers |= {h: f"${{{var}}}" for h, var in (raw.get("env_http_headers") or {}).items()}
        if raw.get("bearer_token_env_var"):
            headers["Authorization"] = f"Bearer ${{{raw['bearer_token_env_var']}}}"
        if headers:
            entry["headers"] = headers
        _pass_names(entry, raw.get("env_vars"))
        entries[name] = entry
    return ClientFile("Codex CLI", entries, notes=notes)


def _opencode_like(data: dict[str, Any], servers: dict[str, Any]) -> bool:
    if "opencode" in str(data.get("$schema", "")):
        return True
    return any(
        isinstance(e, dict) and (e.get("type") in ("local", "remote") or isinstance(e.get("command"), list))
        for e in servers.values()
    )


def _opencode(servers: dict[str, Any], path: Path) -> ClientFile:
    """opencode's ``mcp``: ``type: local`` with ``command`` as a list, or ``type: remote`` with a url."""
    entries: dict[str, Any] = {}
    for name, raw in servers.items():
        if not isinstance(raw, dict):
            entries[name] = raw
            continue
        raw = _substituted(raw, _OPENCODE_VAR)  # opencode's {env:NAME}
        kind = raw.get("type")
        entry = {
            k: v for k, v in raw.items() if k not in ("type", "command", "environment", "enabled", "timeout")
        }
        if kind == "remote" and "url" not in raw:
            raise SuiteError(f"{path}: server {name!r}: a remote server needs 'url'")
        if kind != "remote":
            command = raw.get("command")
            parts = [str(c) for c in command] if isinstance(command, list) else [command] if command else []
            if not parts:
                raise SuiteError(
                    f"{path}: server {name!r}, field 'command': a local server needs its command as a list"
                )
            entry |= {"command": parts[0], "args": parts[1:] + list(raw.get("args") or [])}
            if isinstance(raw.get("environment"), dict):
                entry["env"] = raw["environment"]
        if raw.get("enabled") is False:
            entry["disabled"] = True
        timeout = raw.get("timeout")
        if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
            entry["timeout_s"] = timeout * MILLISECONDS
        entries[name] = entry
    return ClientFile("opencode", entries)


def _pass_names(entry: dict[str, Any], names: Any) -> None:
    """Variables a client copies from its own environment: a credential by ``env: ${NAME}``
    (registered, redacted), anything else by ``env_passthrough``."""
    if not isinstance(names, list):
        return
    env = dict(entry.get("env") or {})
    plain = [str(n) for n in names if not SECRET_NAME.search(str(n))]
    env |= {str(n): f"${{{n}}}" for n in names if SECRET_NAME.search(str(n)) and str(n) not in env}
    if env:
        entry["env"] = env
    if plain:
        entry["env_passthrough"] = plain


def _unique(name: str, taken: dict[str, Any]) -> str:
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        candidate = f"{name}-{n}"
    return candidate


__all__ = ["MILLISECONDS", "SECRET_NAME", "ClientFile", "client_file"]
