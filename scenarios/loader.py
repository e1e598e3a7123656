"""Load a suite folder (``suite.yaml`` + ``scenarios/*.yaml``) into validated models.

Every error names the file, the field and what would be valid, and loading stops at the
first file that is wrong, before anything is run or written.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from proctor.scenarios.client_config import read_client_servers, read_env_file
from proctor.scenarios.errors import SuiteError as SuiteError  # re-exported: callers import it from here
from proctor.scenarios.schema import McpServersFile, Scenario, ServerConfig, StdioServer, Suite

M = TypeVar("M", bound=BaseModel)
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True)
class LoadedSuite:
    root: Path
    suite: Suite
    scenarios: list[Scenario]
    servers: dict[str, ServerConfig]
    scenario_files: dict[str, Path] = field(default_factory=dict)
    files: tuple[Path, ...] = ()
    notes: tuple[str, ...] = ()  # what loading ignored on purpose (a client's UI-only keys)

    @property
    def content_hash(self) -> str:
        """sha256 over every file the suite was loaded from: a run is resumed only by the suite it ran."""
        digest = hashlib.sha256()
        for f in sorted(self.files):
            digest.update(Path(os.path.relpath(f, self.root)).as_posix().encode() + b"\0")  # may be ../
            digest.update(f.read_bytes() if f.is_file() else b"")
            digest.update(b"\0")
        return digest.hexdigest()

    @property
    def warnings(self) -> list[str]:
        """What will not be measured as the user may expect (printed before a run)."""
        return [*self.notes] + [
            f"{self.scenario_files.get(s.id, self.root)}: scenario {s.id!r} defines no claims, key points, "
            "keywords, rubric or gold calls, so its trials will be 'not judged' (no pass, no fairness); add one"
            for s in self.scenarios
            if not s.has_checks
        ]

    def scenario(self, scenario_id: str) -> Scenario:
        for s in self.scenarios:
            if s.id == scenario_id:
                return s
        raise KeyError(scenario_id)


def _format_validation(path: Path, exc: ValidationError) -> str:
    lines = [f"{path}: invalid"]
    for err in exc.errors():
        parts = [str(p) for p in err["loc"]]
        if len(parts) >= 3 and parts[0] == "mcpServers" and parts[2] in ("stdio", "http"):
            del parts[2]  # the discriminator's tag, not a field the user wrote
        loc = ".".join(parts) or "(top level)"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown field (check the spelling; see the README's suite format)"
        elif err["type"] == "missing":
            msg = "required field is missing"
        ctx = err.get("ctx") or {}
        if "expected" in ctx:
            msg += f" (valid: {ctx['expected']})"
        lines.append(f"  field '{loc}': {msg}")
    return "\n".join(lines)


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SuiteError(f"{path}: cannot read ({exc.strerror})") from exc
    except UnicodeDecodeError as exc:
        raise SuiteError(
            f"{path}: not UTF-8 text (byte {exc.start} is {exc.object[exc.start : exc.start + 1]!r}); "
            "save the file as UTF-8"
        ) from exc


def _read_yaml(path: Path) -> Any:
    text = _read_text(path)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise SuiteError(f"{path}:{where}: not valid YAML: {getattr(exc, 'problem', exc)}") from exc


def _validate(model: type[M], data: Any, path: Path) -> M:
    if not isinstance(data, dict):
        raise SuiteError(f"{path}: expected a mapping of fields at the top level, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise SuiteError(_format_validation(path, exc)) from exc


def load_servers_file(path: Path, notes: list[str] | None = None) -> dict[str, ServerConfig]:
    """Read an MCP client configuration file (Claude Desktop, Cursor, VS Code, Windsurf; JSONC or YAML).

    The same reader as ``import mcpservers``; what it ignored or needs from the user goes to ``notes``.
    """
    servers, found = read_client_servers(path)
    if notes is not None:
        notes += found
    return dict(_validate(McpServersFile, {"mcpServers": servers}, path).mcpServers)


def expand_vars(value: str, env: dict[str, str], where: str) -> str:
    """Expand ``${VAR}`` and ``${VAR:-default}``; an unset variable without default is an error."""

    def sub(m: re.Match[str]) -> str:
        name, default = m.group(1), m.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        raise SuiteError(f"{where}: ${{{name}}} is not set; export it or write ${{{name}:-default}}")

    return _VAR.sub(sub, value)


def expand_server(name: str, cfg: ServerConfig, env: dict[str, str]) -> ServerConfig:
    """Return ``cfg`` with ``${VAR}`` expanded in command, args, env, cwd, url and headers."""
    where = f"mcpServers.{name}"
    if isinstance(cfg, StdioServer):
        child_env = {k: expand_vars(v, env, f"{where}.env.{k}") for k, v in cfg.env.items()}
        if cfg.env_file:
            child_env = (
                read_env_file(Path(expand_vars(cfg.env_file, env, f"{where}.env_file")), where) | child_env
            )
        return cfg.model_copy(
            update={
                "command": expand_vars(cfg.command, env, f"{where}.command"),
                "args": [expand_vars(a, env, f"{where}.args") for a in cfg.args],
                "env": child_env,
                "cwd": expand_vars(cfg.cwd, env, f"{where}.cwd") if cfg.cwd else None,
                "env_file": None,
            }
        )
    launch = expand_server(name, cfg.launch, env) if cfg.launch else None
    assert launch is None or isinstance(launch, StdioServer)
    return cfg.model_copy(
        update={
            "url": expand_vars(cfg.url, env, f"{where}.url"),
            "headers": {k: expand_vars(v, env, f"{where}.headers.{k}") for k, v in cfg.headers.items()},
            "launch": launch,
        }
    )


def load_suite(root: str | Path) -> LoadedSuite:
    root = Path(root).resolve()
    suite_file = root / "suite.yaml" if root.is_dir() else root
    if not suite_file.is_file():
        raise SuiteError(f"{suite_file}: suite file not found (a suite is a folder with suite.yaml)")
    root = suite_file.parent
    suite = _validate(Suite, _read_yaml(suite_file), suite_file)

    servers: dict[str, ServerConfig] = {}
    notes: list[str] = []
    if suite.servers_file:
        servers |= load_servers_file(root / suite.servers_file, notes)
    servers |= suite.mcpServers
    for arm_name, arm in suite.arms.items():
        for s in [*arm.servers, *arm.distractors]:
            if s not in servers:
                known = ", ".join(sorted(servers)) or "none defined"
                raise SuiteError(
                    f"{suite_file}: field 'arms.{arm_name}.servers': unknown server {s!r} (defined: {known})"
                )
            if servers[s].disabled:
                raise SuiteError(f"{suite_file}: field 'arms.{arm_name}.servers': server {s!r} is disabled")

    scenario_dir = root / "scenarios"
    files = sorted(scenario_dir.glob("*.yaml")) + sorted(scenario_dir.glob("*.yml"))
    if not files:
        raise SuiteError(f"{scenario_dir}: no scenario files (*.yaml) found")
    scenarios: list[Scenario] = []
    seen: dict[str, Path] = {}
    for f in files:
        sc = _validate(Scenario, _read_yaml(f), f)
        if sc.id in seen:
            raise SuiteError(
                f"{f}: field 'id': {sc.id!r} is already used by {seen[sc.id]}; ids must be unique"
            )
        seen[sc.id] = f
        scenarios.append(sc)
    sources = [suite_file, *files] + ([root / suite.servers_file] if suite.servers_file else [])
    return LoadedSuite(
        root=root,
        suite=suite,
        scenarios=scenarios,
        servers=servers,
        scenario_files=seen,
        files=tuple(f.resolve() for f in sources),
        notes=tuple(notes),
    )
