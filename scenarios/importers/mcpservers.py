"""Reading MCP server definitions as clients write them, without copying their secrets.

Accepted files: Claude Desktop / Cursor / Windsurf / Cline (``{"mcpServers": {...}}``), VS Code
``.vscode/mcp.json`` (``{"servers": {...}}``) and VS Code ``settings.json``
(``{"mcp": {"servers": {...}}}``), as JSON with comments and trailing commas allowed (VS Code
writes JSONC), or YAML. Each client adds keys of its own; ``type``/``transport`` choose stdio or
HTTP, Windsurf's ``serverUrl`` is ``url``, Cline's ``timeout`` is ``timeout_s``, and keys that
only steer a client's UI (``autoApprove``, ``alwaysAllow``, ...) are dropped with a note.

Secrets never reach the suite: an ``env`` value whose name looks like a credential, a header
such as ``Authorization``, a flag such as ``--api-key VALUE``, a ``?api_key=`` URL parameter,
and anything shaped like a well-known key become ``${VAR}`` references, which proctor expands
from the environment when it starts the server. The notes name the variables to export, never
their values. Client variables (``${input:x}``, ``${env:X}``, ``${workspaceFolder}``) become
plain ``${VAR}`` references too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import yaml
from pydantic import ValidationError

from proctor.scenarios.importers.common import ImportedSuite, ImportFormatError, read_text, scenario_id
from proctor.scenarios.importers.suite_files import validated
from proctor.scenarios.jsonc import CLIENT_ONLY_KEYS, strip_jsonc
from proctor.scenarios.schema import HttpServer, StdioServer

# AUTH but not AUTHOR (GIT_AUTHOR_NAME is not a credential; AUTHORIZATION is).
_SECRET_NAME = re.compile(
    r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTHORIZATION|AUTH(?!ORS?(?:_|\b))|BEARER|COOKIE|SESSION)",
    re.I,
)
_KEY_SHAPE = re.compile(
    r"(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|glpat-[A-Za-z0-9_-]{16,})"
)
_REFERENCE = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}$")
_CLIENT_VAR = re.compile(r"\$\{(input|env):([^}]+)\}|\$\{(workspaceFolder|userHome)\}")
_HTTP_TYPES = {"http", "streamable-http", "streamablehttp", "streamable_http", "sse"}


def _var_name(*parts: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", "_".join(parts)).strip("_").upper() or "SECRET"


def read_client_config(path: Path) -> dict[str, Any]:
    """The raw ``name -> server`` mapping of a client configuration file."""
    text = read_text(path)
    try:
        if path.suffix in (".yaml", ".yml"):
            data = yaml.safe_load(text)
        else:
            try:
                data = json.loads(text)
            except json.JSONDecodeError:
                data = json.loads(strip_jsonc(text))
    except json.JSONDecodeError as exc:
        raise ImportFormatError(
            f"{path}: line {exc.lineno}, column {exc.colno}: not valid JSON ({exc.msg})"
        ) from exc
    except yaml.YAMLError as exc:
        raise ImportFormatError(f"{path}: not valid YAML ({exc})") from exc
    if isinstance(data, dict):
        for found in (data.get("mcpServers"), data.get("servers"), (data.get("mcp") or {}).get("servers")):
            if isinstance(found, dict):
                return found
    raise ImportFormatError(
        f'{path}: no MCP servers found; expected {{"mcpServers": {{...}}}} (Claude Desktop, Cursor), '
        '{"servers": {...}} (VS Code mcp.json) or {"mcp": {"servers": {...}}} (VS Code settings.json)'
    )


class _Secrets:
    """Turns literal secrets into ``${VAR}`` references; remembers which variables it made."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}
        self.notes: list[str] = []

    def reference(self, server: str, name: str, value: str, what: str) -> str:
        var = _var_name(name)
        if var in self.values and self.values[var] != value:
            var = _var_name(server, name)
        self.values[var] = value
        self.notes.append(f"server {server!r}: {what} now reads ${{{var}}}; export {var} before running")
        return f"${{{var}}}"

    def scrub(self, server: str, text: str, what: str) -> str:
        """Replace key-shaped substrings of ``text``."""
        count = 0

        def sub(m: re.Match[str]) -> str:
            nonlocal count
            count += 1
            return self.reference(server, f"{server}_{what}_{count}", m.group(0), what)

        return _KEY_SHAPE.sub(sub, text)


def _client_vars(value: str) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group(1) is not None:
            return f"${{{_var_name(m.group(2))}}}"
        return "${HOME}" if m.group(3) == "userHome" else "${WORKSPACE_FOLDER}"

    return _CLIENT_VAR.sub(sub, value)


def _secret_value(secrets: _Secrets, server: str, key: str, var: str, value: str, what: str) -> str:
    """``value`` of env/header ``key``; a literal credential becomes ``${VAR}`` (``var`` names it)."""
    value = _client_vars(value)
    if "${" in value:
        return value
    if _SECRET_NAME.search(key) and value:
        prefix = ""
        scheme, space, rest = value.partition(" ")
        if space and scheme.lower() in ("bearer", "token", "basic") and rest:
            prefix, value = scheme + " ", rest
        return prefix + secrets.reference(server, var, value, what)
    return secrets.scrub(server, value, what)


def _args(secrets: _Secrets, server: str, args: list[str]) -> list[str]:
    out: list[str] = []
    secret_flag: str | None = None
    for arg in args:
        arg = _client_vars(arg)
        if secret_flag is not None and not arg.startswith("-"):
            out.append(
                secrets.reference(server, f"{server}_{secret_flag}", arg, f"argument after --{secret_flag}")
            )
            secret_flag = None
            continue
        secret_flag = None
        flag, eq, value = arg.partition("=")
        if arg.startswith("-") and _SECRET_NAME.search(flag):
            name = flag.lstrip("-")
            if eq:
                if not _REFERENCE.match(value):
                    value = secrets.reference(server, f"{server}_{name}", value, f"argument {flag}")
                out.append(f"{flag}={value}")
            else:
                out.append(arg)
                secret_flag = name
            continue
        out.append(secrets.scrub(server, arg, "argument"))
    return out


def _url(secrets: _Secrets, server: str, url: str) -> str:
    url = _client_vars(url)
    parts = urlsplit(url)
    if not parts.query:
        return secrets.scrub(server, url, "url")
    query = []
    changed = False
    for k, v in parse_qsl(parts.query, keep_blank_values=True):
        if _SECRET_NAME.search(k) and v and "${" not in v:
            v = secrets.reference(server, f"{server}_{k}", v, f"url parameter {k}")
            changed = True
        query.append((k, v))
    if changed:
        url = urlunsplit(parts._replace(query=urlencode(query, safe="${}:-")))
    return secrets.scrub(server, url, "url")


def normalize_servers(raw: Mapping[str, Any], where: str) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Client server entries as proctor ``mcpServers`` mappings (schema-valid), plus notes."""
    secrets = _Secrets()
    notes: list[str] = []
    out: dict[str, dict[str, Any]] = {}
    for name, entry in raw.items():
        here = f"{where}: server {name!r}"
        if not isinstance(entry, dict):
            raise ImportFormatError(f"{here}: expected an object with 'command' or 'url'")
        entry = dict(entry)
        kind = str(entry.pop("type", entry.pop("transport", entry.pop("transportType", "")))).lower()
        if "serverUrl" in entry and "url" not in entry:
            entry["url"] = entry.pop("serverUrl")
        ignored = sorted(k for k in entry if k in CLIENT_ONLY_KEYS)
        for k in ignored:
            entry.pop(k)
        if ignored:
            notes.append(f"{here}: ignored client-only field(s) {', '.join(ignored)}")
        if kind == "sse":
            notes.append(
                f"{here}: uses the SSE transport; proctor connects with streamable HTTP, check it serves that"
            )
        timeout = entry.pop("timeout", None)
        if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
            entry["timeout_s"] = float(timeout)
        http = kind in _HTTP_TYPES or ("url" in entry and "command" not in entry)
        if not str(entry.get("url" if http else "command") or "").strip():
            raise ImportFormatError(
                f"{here}: has no {'url' if http else 'command'}; a stdio server needs 'command' (and optional "
                "'args', 'env'), an HTTP server needs 'url'"
            )
        data: dict[str, Any] = {}
        if http:
            data["url"] = _url(secrets, name, str(entry.pop("url", "")))
            headers = entry.pop("headers", {}) or {}
            if not isinstance(headers, dict):
                raise ImportFormatError(f"{here}, field 'headers': expected an object of header: value")
            if headers:
                data["headers"] = {
                    str(k): _secret_value(secrets, name, str(k), f"{name}_{k}", str(v), f"header {k}")
                    for k, v in headers.items()
                }
        else:
            data["command"] = _client_vars(str(entry.pop("command", "")))
            args = entry.pop("args", []) or []
            if not isinstance(args, list):
                raise ImportFormatError(f"{here}, field 'args': expected a list of strings")
            if args:
                data["args"] = _args(secrets, name, [str(a) for a in args])
            env = entry.pop("env", {}) or {}
            if not isinstance(env, dict):
                raise ImportFormatError(f"{here}, field 'env': expected an object of NAME: value")
            if env:
                data["env"] = {
                    str(k): _secret_value(secrets, name, str(k), str(k), str(v), f"env {k}")
                    for k, v in env.items()
                }
            if entry.get("cwd"):
                data["cwd"] = _client_vars(str(entry.pop("cwd")))
        for key in ("description", "disabled", "timeout_s", "lifecycle"):
            if key in entry:
                data[key] = entry.pop(key)
        entry.pop("cwd", None)
        if entry:
            notes.append(f"{here}: ignored unknown field(s) {', '.join(sorted(entry))}")
        model = HttpServer if http else StdioServer
        try:
            model.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(f"field '{'.'.join(map(str, e['loc']))}': {e['msg']}" for e in exc.errors())
            raise ImportFormatError(
                f"{here}: not a valid {'HTTP' if http else 'stdio'} server ({problems}); a stdio server needs "
                "'command' (and optional 'args', 'env'), an HTTP server needs 'url'"
            ) from exc
        out[str(name)] = data
    return out, notes + secrets.notes


def load_server_set(path: Path) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """A client configuration file's servers, normalized (for an importer's ``--servers``)."""
    return normalize_servers(read_client_config(path), str(path))


def enabled(servers: Mapping[str, Mapping[str, Any]]) -> list[str]:
    return [n for n, s in servers.items() if not s.get("disabled")]


def add_server_arm(suite: dict[str, Any], servers_file: Path, notes: list[str]) -> dict[str, dict[str, Any]]:
    """Put ``--servers FILE``'s servers into ``suite`` with an ``mcp`` arm of the enabled ones."""
    servers, server_notes = load_server_set(servers_file)
    notes += server_notes
    suite["mcpServers"] = servers
    if enabled(servers):
        suite["arms"]["mcp"] = {
            "servers": enabled(servers),
            "description": f"servers from {servers_file.name}",
        }
    return servers


SKELETON_SCENARIO: dict[str, Any] = {
    "id": "example",
    "title": "Replace with a real task",
    "prompt": "Describe a task your MCP servers should help with; proctor compares each server arm against "
    "the baseline on it. Add claims or keywords the answer must contain.",
    "claims": [],
    "keywords": {"required": [], "bonus": []},
}


def read_mcpservers(path: Path) -> ImportedSuite:
    """A suite skeleton: the file's servers, a baseline arm, and one arm per enabled server."""
    servers, notes = load_server_set(path)
    if not servers:
        raise ImportFormatError(f"{path}: the server list is empty; nothing to import")
    arms: dict[str, Any] = {"baseline": {"baseline": True, "description": "no MCP servers"}}
    for name in enabled(servers):
        arm = scenario_id(name)
        if arm in arms:
            arm = f"{arm}-server"
        arms[arm] = {"servers": [name], "description": f"the {name} server alone"}
    if len(arms) == 1:
        notes.append(f"{path}: every server is disabled; the suite has only the baseline arm")
    suite = {
        "name": scenario_id(path.stem),
        "description": f"Servers imported from {path.name}. Write real tasks in scenarios/.",
        "mcpServers": servers,
        "arms": arms,
        "models": ["offline:default"],
    }
    notes.append("scenarios/example.yaml is a placeholder: replace it with real tasks")
    return validated(
        "mcpservers", [path], suite, [(f"{path} (skeleton)", dict(SKELETON_SCENARIO))], notes=notes
    )


__all__ = [
    "add_server_arm",
    "enabled",
    "load_server_set",
    "normalize_servers",
    "read_client_config",
    "read_mcpservers",
]
