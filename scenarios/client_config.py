"""The one reader of MCP client configuration files, for every way a config enters proctor.

``servers check``, ``servers call``, a suite's ``servers_file`` and ``import mcpservers`` all read
through :func:`read_client_servers`, so a file one of them accepts the others accept too. It
takes what Claude Desktop, Claude Code, Cursor, Windsurf, Cline, Gemini CLI, VS Code, Zed,
Continue, Goose, Codex CLI and opencode write (``client_formats`` finds each client's servers),
as JSON with comments and trailing commas, YAML or TOML, and turns each server into proctor's
own shape (the fields of ``StdioServer``/``HttpServer``). Settings keep their client's meaning:
a timeout in the client's unit, the tools a client offers the model (``includeTools``,
``excludeTools``, ``disabledTools``), a disabled server.

Client variables become what proctor can expand: ``${input:id}`` and ``${env:X}`` read the
environment (the notes name what to export), ``${workspaceFolder}`` is the project folder.
Relative paths (command, cwd, envFile) resolve against the project the file lives in, and a
stdio server runs there, as editors run it, so relative arguments mean the same thing too.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from proctor.scenarios.client_formats import ClientFile, client_file
from proctor.scenarios.errors import SuiteError
from proctor.scenarios.jsonc import CLIENT_ONLY_KEYS, strip_jsonc
from proctor.scenarios.suite_text import UnsafeFile, parse_yaml, read_regular_bytes

# Where each client writes its transport, and the spellings proctor maps to its own three.
_KINDS = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamablehttp": "http",
    "streamable_http": "http",
    "sse": "sse",
}
# Fields proctor reads itself; anything else in an entry is a client's own and is noted, not used.
_NATIVE = ("description", "disabled", "timeout_s", "lifecycle", "roots", "sampling", "launch", "include_tools",
           "exclude_tools", "env_passthrough")  # fmt: skip
# Each client's spelling of the tools it offers the model: (field, proctor's field).
_TOOL_FILTERS = (("includeTools", "include_tools"), ("enabledTools", "include_tools"),
                 ("excludeTools", "exclude_tools"), ("disabledTools", "exclude_tools"))  # fmt: skip
_EDITOR_FOLDERS = (".vscode", ".cursor", ".windsurf", ".roo", ".kiro", ".gemini", ".claude", ".zed", ".codex",
                   ".continue", ".opencode")  # fmt: skip
_CLIENT_VAR = re.compile(r"\$\{(input|env):([^}]+)\}|\$\{(workspaceFolder|userHome)\}")
_JSON_SUFFIXES = (".json", ".jsonc", ".json5", "")


def var_name(*parts: str) -> str:
    """An environment variable name made of ``parts`` (``gh-token`` -> ``GH_TOKEN``)."""
    return re.sub(r"[^A-Za-z0-9]+", "_", "_".join(parts)).strip("_").upper() or "SECRET"


def project_folder(path: Path) -> Path:
    """The folder a config's relative paths mean: ``.vscode/mcp.json`` belongs to its parent."""
    folder = path.resolve().parent
    if folder.name == "mcpServers" and folder.parent.name == ".continue":  # a Continue block file
        folder = folder.parent
    return folder.parent if folder.name in _EDITOR_FOLDERS else folder


def read_config_data(path: Path) -> Any:
    """The parsed file: YAML for ``.yaml``/``.yml``, TOML for ``.toml`` (Codex), JSON with comments else."""
    try:  # a regular file of bounded size: a FIFO or /dev/zero is refused, not read
        text = read_regular_bytes(path).decode("utf-8-sig")
    except UnsafeFile as exc:
        raise SuiteError(str(exc)) from exc
    except UnicodeDecodeError as exc:
        raise SuiteError(f"{path}: not UTF-8 text (byte {exc.start}); save the file as UTF-8") from exc
    suffix = path.suffix.lower()
    if suffix == ".toml":
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise SuiteError(f"{path}: not valid TOML ({exc})") from exc
    if suffix in (".yaml", ".yml") or (suffix not in _JSON_SUFFIXES and not text.lstrip().startswith("{")):
        return parse_yaml(text, path)
    try:
        return json.loads(strip_jsonc(text))
    except RecursionError as exc:  # json nests as deep as the text does
        raise SuiteError(f"{path}: nested too deeply to be a client configuration; flatten it") from exc
    except json.JSONDecodeError as exc:
        raise SuiteError(
            f"{path}: line {exc.lineno}, column {exc.colno}: not valid JSON ({exc.msg}); "
            "comments and trailing commas are fine, other JSON5 syntax is not"
        ) from exc


def server_entries(data: Any, path: Path) -> dict[str, Any]:
    """The ``name -> entry`` mapping, wherever the client keeps it."""
    return client_file(data, path).entries


def _inputs(data: Any) -> dict[str, Mapping[str, Any]]:
    items = data.get("inputs") if isinstance(data, dict) else None
    return {str(i["id"]): i for i in items or [] if isinstance(i, dict) and "id" in i}


class _Vars:
    """Client variables rewritten for proctor; remembers which inputs the user must export."""

    def __init__(self, project: Path | None, inputs: Mapping[str, Mapping[str, Any]], where: str) -> None:
        self.project, self.inputs, self.where = project, inputs, where
        self.notes: list[str] = []

    def __call__(self, value: str) -> str:
        def sub(m: re.Match[str]) -> str:
            if m.group(1) == "env":
                return f"${{{m.group(2)}}}"
            if m.group(1) == "input":
                return self._input(m.group(2))
            if m.group(3) == "userHome":
                return "${HOME}"
            return str(self.project) if self.project else "${WORKSPACE_FOLDER}"

        return _CLIENT_VAR.sub(sub, value)

    def _input(self, ident: str) -> str:
        var = var_name(ident)
        spec = self.inputs.get(ident, {})
        what = str(spec.get("description") or ident)
        default = spec.get("default")
        has_default = isinstance(default, str) and not spec.get("password")
        then = (
            f"export {var} to change its default {default!r}"
            if has_default
            else f"export {var} before running"
        )
        note = f"{self.where}: ${{input:{ident}}} ({what}) reads ${{{var}}}; {then}"
        if note not in self.notes:
            self.notes.append(note)
        return f"${{{var}:-{default}}}" if has_default else f"${{{var}}}"


def _kind(entry: dict[str, Any], where: str) -> tuple[str, bool]:
    """The entry's transport (stdio, http or sse), with a Claude-style ``transport`` object unpacked."""
    transport = entry.pop("transport", None)
    if isinstance(transport, dict):
        for key, value in transport.items():
            if key != "type":
                entry.setdefault(key, value)
        transport = transport.get("type")
    field = "type" if entry.get("type") else "transport" if transport else "transportType"
    raw = entry.pop("type", None) or transport or entry.pop("transportType", None)
    if "serverUrl" in entry or "httpUrl" in entry:
        entry.setdefault("url", entry.pop("serverUrl", None) or entry.pop("httpUrl", None))
    if raw is None:
        if "url" not in entry or "command" in entry:
            return "stdio", False
        # Cursor and Windsurf detect the transport; an SDK-made SSE server serves ``/sse``.
        sse = urlsplit(str(entry["url"])).path.rstrip("/").endswith("/sse")
        return ("sse", True) if sse else ("http", False)
    kind = _KINDS.get(str(raw).lower())
    if kind is None:
        raise SuiteError(
            f"{where}, field '{field}': {raw!r} is not a transport proctor speaks (valid: stdio, http, sse)"
        )
    return kind, False


def _path(value: str, base: Path | None) -> str:
    if base is None or "${" in value or Path(value).is_absolute():
        return value
    return str((base / value).resolve())


def _command(value: str, base: Path | None) -> str:
    # A bare name (node, npx, uvx) is looked up on PATH; only a path is made absolute.
    return _path(value, base) if ("/" in value or value.startswith(".")) else value


def _windows_notes(entry: dict[str, Any], where: str) -> list[str]:
    command = str(entry.get("command", ""))
    args = [str(a) for a in entry.get("args", [])]
    notes = []
    if re.match(r"^[A-Za-z]:[\\/]", command) or command.lower().endswith((".exe", ".cmd", ".bat")):
        notes.append(
            f"{where}: command {command!r} is a Windows program; it starts only on a machine that has it"
        )
    if (
        Path(command).name == "docker"
        and args[:1] == ["run"]
        and not {"-i", "--interactive", "-it"} & set(args)
    ):
        notes.append(f"{where}: 'docker run' without -i gives the server no stdin; add -i to its args")
    return notes


def canonical_entry(
    name: str,
    entry: Any,
    where: str,
    base: Path | None,
    variables: _Vars | None = None,
    client: ClientFile | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """One client entry in proctor's server shape, plus what was ignored or needs the user.

    ``client`` says whose file it is: its ``timeout`` counts in that client's unit."""
    here = f"{where}: server {name!r}"
    if not isinstance(entry, dict):
        raise SuiteError(f"{here}: expected an object with 'command' or 'url' (stdio, or http and sse)")
    entry = dict(entry)
    kind, guessed = _kind(entry, here)
    sub = variables or _Vars(base, {}, here)
    notes: list[str] = []
    if guessed:
        notes.append(
            f'{here}: its url ends in /sse, so it is read as a legacy SSE server; write "type": "http" if not'
        )
    ignored = sorted(k for k in entry if k in CLIENT_ONLY_KEYS)
    for k in ignored:
        entry.pop(k)
    if ignored:
        notes.append(f"{here}: ignored client-only field(s) {', '.join(ignored)}")
    notes += _timeout(entry, here, client)
    for client_field, own in _TOOL_FILTERS:
        tools = entry.pop(client_field, None)
        if tools:
            if not isinstance(tools, list):
                raise SuiteError(f"{here}, field '{client_field}': expected a list of tool names")
            entry[own] = [*entry.get(own, []), *map(str, tools)]
    if entry.pop("enabled", True) is False:
        entry["disabled"] = True
    field = "command" if kind == "stdio" else "url"
    if not str(entry.get(field) or "").strip():
        raise SuiteError(
            f"{here}: has no {field}; a stdio server needs 'command' (and optional 'args', 'env'), "
            "an HTTP or SSE server needs 'url'"
        )
    out: dict[str, Any] = {}
    if kind == "stdio":
        out |= _stdio(entry, here, base, sub)
        notes += _windows_notes(out, here)
    else:
        if kind == "sse":
            out["type"] = "sse"
        out["url"] = sub(str(entry.pop("url")))
        headers = entry.pop("headers", None) or {}
        if not isinstance(headers, dict):
            raise SuiteError(f"{here}, field 'headers': expected an object of header: value")
        if headers:
            out["headers"] = {str(k): sub(str(v)) for k, v in headers.items()}
    out |= {k: entry.pop(k) for k in _NATIVE if k in entry}
    if entry:
        notes.append(f"{here}: ignored unknown field(s) {', '.join(sorted(map(str, entry)))}")
    return out, notes


def _timeout(entry: dict[str, Any], here: str, client: ClientFile | None) -> list[str]:
    """``timeout`` in the client's unit (Gemini CLI: milliseconds) as proctor's ``timeout_s``."""
    timeout = entry.pop("timeout", None)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
        return []
    unit = client.timeout_unit_s if client else 1.0
    seconds = float(timeout) * unit
    entry.setdefault("timeout_s", seconds)
    if unit != 1.0:
        return [f"{here}: timeout {timeout:g} is milliseconds in {client.client if client else 'this client'}: "
                f"timeout_s {seconds:g}"]  # fmt: skip
    if timeout >= 1000:
        return [f"{here}: timeout {timeout:g} is read as seconds ({seconds / 3600:.1f} h); if the client meant "
                f"milliseconds (Gemini CLI, opencode), write timeout_s: {seconds / 1000:g}"]  # fmt: skip
    return []


def _stdio(entry: dict[str, Any], here: str, base: Path | None, sub: _Vars) -> dict[str, Any]:
    out: dict[str, Any] = {"command": _command(sub(str(entry.pop("command"))), base)}
    args = entry.pop("args", None) or []
    if not isinstance(args, list):
        raise SuiteError(f"{here}, field 'args': expected a list of strings")
    if args:
        out["args"] = [sub(str(a)) for a in args]
    env = entry.pop("env", None) or {}
    if not isinstance(env, dict):
        raise SuiteError(f"{here}, field 'env': expected an object of NAME: value")
    if env:
        out["env"] = {str(k): sub(str(v)) for k, v in env.items()}
    env_file = entry.pop("envFile", None) or entry.pop("env_file", None)
    if env_file:
        out["env_file"] = _path(sub(str(env_file)), base)
    cwd = entry.pop("cwd", None)
    if cwd:
        out["cwd"] = _path(sub(str(cwd)), base)
    elif base is not None:
        out["cwd"] = str(base)
    return out


def read_env_file(path: Path, where: str) -> dict[str, str]:
    """A dotenv file as VS Code's ``envFile`` reads it: ``NAME=value`` lines, ``#`` comments, quotes."""
    try:
        text = read_regular_bytes(path).decode("utf-8-sig")
    except UnsafeFile as exc:
        raise SuiteError(f"{where}.env_file: cannot read {path} ({exc.reason})") from exc
    except UnicodeDecodeError as exc:
        raise SuiteError(f"{where}.env_file: cannot read {path} ({exc})") from exc
    env: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("export "):
            line = line[len("export ") :].lstrip()
        name, eq, value = line.partition("=")
        if not eq or line.startswith("#") or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name.strip()):
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        env[name.strip()] = value
    return env


def read_client_servers(path: Path, base: Path | None = None) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Every server in a client configuration file, in proctor's shape, plus notes for the user.

    ``base`` overrides the folder relative paths resolve against (default: the file's project).
    """
    data = read_config_data(path)
    found = client_file(data, path)
    servers, notes = canonical_servers(
        found.entries, str(path), base or project_folder(path), _inputs(data), found
    )
    return servers, found.notes + notes


def canonical_servers(
    entries: Mapping[Any, Any],
    where: str,
    base: Path | None,
    inputs: Mapping[str, Mapping[str, Any]] | None = None,
    client: ClientFile | None = None,
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Client entries (``name -> entry``, already parsed) in proctor's shape, plus notes for the user.

    The one loop every client entry goes through, from a file or from an importer's source.
    """
    out: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    for name, entry in entries.items():
        variables = _Vars(base, inputs or {}, f"{where}: server {name!r}")
        out[str(name)], entry_notes = canonical_entry(str(name), entry, where, base, variables, client)
        notes += entry_notes + variables.notes
    return out, notes


__all__ = [
    "canonical_entry",
    "canonical_servers",
    "project_folder",
    "read_client_servers",
    "read_config_data",
    "read_env_file",
    "server_entries",
    "var_name",
]
