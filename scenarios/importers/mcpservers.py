"""An MCP client configuration file as a suite, without copying its secrets.

The file is read by ``scenarios.client_config`` (the reader ``servers check`` and a suite's
``servers_file`` use), so import accepts exactly what a run accepts.

Secrets never reach the suite: an ``env`` value whose name looks like a credential, a header
such as ``Authorization``, a flag such as ``--api-key VALUE``, a ``?api_key=`` URL parameter,
and anything shaped like a well-known key become ``${VAR}`` references, which proctor expands
from the environment when it starts the server. The notes name the variables to export, never
their values.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from pydantic import ValidationError

from proctor.scenarios.client_config import canonical_servers, read_client_servers
from proctor.scenarios.client_config import var_name as _var_name
from proctor.scenarios.client_formats import SECRET_NAME as _SECRET_NAME
from proctor.scenarios.errors import SuiteError
from proctor.scenarios.importers.common import ImportedSuite, ImportFormatError, scenario_id
from proctor.scenarios.importers.suite_files import validated
from proctor.scenarios.schema import HttpServer, StdioServer

_KEY_SHAPE = re.compile(
    r"(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|glpat-[A-Za-z0-9_-]{16,})"
)
_REFERENCE = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}$")


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


def _secret_value(secrets: _Secrets, server: str, key: str, var: str, value: str, what: str) -> str:
    """``value`` of env/header ``key``; a literal credential becomes ``${VAR}`` (``var`` names it)."""
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


def _scrubbed(
    servers: Mapping[str, dict[str, Any]], where: str
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Servers in proctor's shape with every literal secret turned into a ``${VAR}`` reference."""
    secrets = _Secrets()
    out: dict[str, dict[str, Any]] = {}
    for name, server in servers.items():
        data = dict(server)
        http = "url" in data
        if http:
            data["url"] = _url(secrets, name, str(data["url"]))
            if data.get("headers"):
                data["headers"] = {
                    k: _secret_value(secrets, name, k, f"{name}_{k}", v, f"header {k}")
                    for k, v in data["headers"].items()
                }
        else:
            if data.get("args"):
                data["args"] = _args(secrets, name, data["args"])
            if data.get("env"):
                data["env"] = {
                    k: _secret_value(secrets, name, k, k, v, f"env {k}") for k, v in data["env"].items()
                }
        model = HttpServer if http else StdioServer
        try:
            model.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(f"field '{'.'.join(map(str, e['loc']))}': {e['msg']}" for e in exc.errors())
            raise ImportFormatError(
                f"{where}: server {name!r}: not a valid {'HTTP' if http else 'stdio'} server ({problems}); a stdio "
                "server needs 'command' (and optional 'args', 'env'), an HTTP server needs 'url'"
            ) from exc
        out[name] = data
    return out, secrets.notes


def normalize_servers(raw: Mapping[str, Any], where: str) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Client server entries (already parsed) as proctor ``mcpServers`` mappings, plus notes."""
    try:
        canonical, notes = canonical_servers(raw, where, None)
    except ImportFormatError:
        raise
    except SuiteError as exc:
        raise ImportFormatError(str(exc)) from exc
    servers, secret_notes = _scrubbed(canonical, where)
    return servers, notes + secret_notes


def load_server_set(path: Path) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """A client configuration file's servers, read as ``servers check`` reads them, secrets scrubbed."""
    try:
        canonical, notes = read_client_servers(path)
    except ImportFormatError:
        raise
    except SuiteError as exc:
        raise ImportFormatError(str(exc)) from exc
    servers, secret_notes = _scrubbed(canonical, str(path))
    return servers, notes + secret_notes


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
    "read_mcpservers",
]
