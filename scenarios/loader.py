"""Load a suite folder (``suite.yaml`` + ``scenarios/*.yaml``) into validated models.

Every error names the file, the field and what would be valid, and loading stops at the
first file that is wrong, before anything is run or written.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from proctor.scenarios.client_config import read_client_servers, read_env_file
from proctor.scenarios.errors import SuiteError as SuiteError  # re-exported: callers import it from here
from proctor.scenarios.schema import (
    McpServersFile,
    Scenario,
    ServerConfig,
    StdioServer,
    Suite,
    replay_server_name,
)
from proctor.scenarios.suite_text import UnsafeFile, parse_yaml, read_regular_bytes

M = TypeVar("M", bound=BaseModel)
#: The mock MCP server a ``replay:`` arm starts (by module name: the scenarios layer imports no engine).
REPLAY_SERVER_MODULE = "proctor.engine.tools.recorded_server"
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
            digest.update(_read_bytes(f) if f.is_file() else b"")
            digest.update(b"\0")
        return digest.hexdigest()

    @property
    def warnings(self) -> list[str]:
        """What will not be measured as the user may expect (printed before a run)."""
        return (
            [*self.notes]
            + [
                f"{self.scenario_files.get(s.id, self.root)}: scenario {s.id!r} defines no claims, key points, "
                "keywords, rubric or gold calls, so its trials will be 'not judged' (no pass, no fairness); add one"
                for s in self.scenarios
                if not s.has_checks
            ]
            + [
                f"{self.scenario_files.get(s.id, self.root)}: gold call {g.tool}: nothing checks what it returns "
                f"(its expect is a review note: {g.expect.review})"
                for s in self.scenarios
                for step in s.gold_tool_calls
                for g in step
                if g.expect is not None and g.expect.review and not g.expect.checks
            ]
        )

    def scenario(self, scenario_id: str) -> Scenario:
        for s in self.scenarios:
            if s.id == scenario_id:
                return s
        raise KeyError(scenario_id)


def _format_validation(path: Path, exc: ValidationError, text: str = "") -> str:
    """One line per problem, like a compiler: file, line (when the YAML says), field, fix."""
    lines = [f"{path}: invalid"]
    for err in exc.errors():
        raw = list(err["loc"])
        parts = [str(p) for p in raw]
        if len(parts) >= 3 and parts[0] == "mcpServers" and parts[2] in ("stdio", "http"):
            del parts[2]  # the discriminator's tag, not a field the user wrote
            del raw[2]
        keyword = len(parts) >= 4 and parts[0] == "keywords" and parts[3] in ("word", "check")
        if keyword:
            del parts[3]  # the keyword's shape (a plain word or a {kind: value} mapping), a tag too
            del raw[3]
        loc = ".".join(parts) or "(top level)"
        msg = err["msg"]
        if err["type"] == "extra_forbidden" and keyword:
            msg = "unknown keyword kind (valid: word, contains, exact, starts_with, e.g. {contains: test_})"
        elif err["type"] == "extra_forbidden":
            msg = "unknown field (check the spelling; see the README's suite format)"
        elif err["type"] == "missing":
            msg = "required field is missing"
        ctx = err.get("ctx") or {}
        if "expected" in ctx:
            msg += f" (valid: {ctx['expected']})"
        if err["type"] == "string_type" and isinstance(err.get("input"), dict):
            msg += (
                "; YAML read this text as a mapping because it contains ': ' "
                '(quote the whole text, e.g. "The cap is: 300 s", or use a block scalar >-)'
            )
        line = _line_of(text, raw) if text else None
        at = f"line {line}: " if line else ""
        lines.append(f"  {at}field '{loc}': {msg}")
    return "\n".join(lines)


def _line_of(text: str, loc: Sequence[int | str]) -> int | None:
    """The 1-based line where the YAML node at ``loc`` starts; None when the path leaves the file."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if str(k.value) == str(part)), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            break
        if node is None:
            return None
    return None if node is None else node.start_mark.line + 1


def _read_bytes(path: Path) -> bytes:
    try:
        return read_regular_bytes(path)
    except UnsafeFile as exc:
        raise SuiteError(str(exc)) from exc


def _read_text(path: Path) -> str:
    try:
        return _read_bytes(path).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SuiteError(
            f"{path}: not UTF-8 text (byte {exc.start} is {exc.object[exc.start : exc.start + 1]!r}); "
            "save the file as UTF-8"
        ) from exc


def _read_yaml(path: Path) -> Any:
    return parse_yaml(_read_text(path), path)


def _validate(model: type[M], data: Any, path: Path) -> M:
    if not isinstance(data, dict):
        raise SuiteError(f"{path}: expected a mapping of fields at the top level, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        text = path.read_text(encoding="utf-8") if path.suffix in (".yaml", ".yml") else ""
        raise SuiteError(_format_validation(path, exc, text)) from exc


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


def _with_replay_servers(
    suite: Suite, root: Path, suite_file: Path, servers: dict[str, ServerConfig], problems: list[str]
) -> Suite:
    """Each ``replay:`` arm gets the mock server that serves its recording, started like any
    stdio server (so the pool, the gold check and every report treat it as one). Whether the
    database and the run exist is checked when a run selects the arm (``engine.runs.replay_arms``):
    a suite may define the arm before the run it serves has been recorded."""
    arms = dict(suite.arms)
    for arm_name, arm in suite.arms.items():
        if arm.replay is None:
            continue
        name = replay_server_name(arm.replay)
        if name in servers and name not in arm.servers:
            problems.append(
                f"{suite_file}: field 'arms.{arm_name}.replay': the server name {name!r} it needs is already "
                "defined in mcpServers; rename that server"
            )
            continue
        args = [
            "-m",
            REPLAY_SERVER_MODULE,
            "--db",
            str((root / arm.replay.db).resolve()),
            "--run",
            arm.replay.run,
        ]
        if arm.replay.arm:
            args += ["--arm", arm.replay.arm]
        servers[name] = StdioServer(
            command=sys.executable,
            args=args,
            description=f"run {arm.replay.run} served back from its recording",
        )
        arms[arm_name] = arm.model_copy(update={"servers": [name]})
    return suite.model_copy(update={"arms": arms}) if arms != suite.arms else suite


def _unknown_ignore_servers(
    suite: Suite, servers: dict[str, ServerConfig], suite_file: Path, text: str
) -> list[str]:
    """A ``replay.ignore`` rule naming a server the suite does not define would never apply."""
    problems = []
    for k, rule in enumerate(suite.replay.ignore):
        if any(c in rule.server for c in "*?[") or rule.server in servers:
            continue
        line = _line_of(text, ["replay", "ignore", k, "server"])
        at = f":{line}" if line else ""
        known = ", ".join(sorted(servers)) or "none defined"
        problems.append(
            f"{suite_file}{at}: field 'replay.ignore.{k}.server': unknown server {rule.server!r} "
            f"(defined: {known}; or '*' for every server)"
        )
    return problems


def load_suite(root: str | Path, *, need_scenarios: bool = True) -> LoadedSuite:
    """The suite and its scenarios; ``need_scenarios=False`` (``servers check``) allows none yet."""
    root = Path(root).resolve()
    suite_file = root / "suite.yaml" if root.is_dir() else root
    if not suite_file.is_file():
        raise SuiteError(f"{suite_file}: suite file not found (a suite is a folder with suite.yaml)")
    root = suite_file.parent
    # Every file is read and every problem collected before raising: a suite with several
    # mistakes is reported whole, not one per attempt.
    problems: list[str] = []
    suite: Suite | None = None
    try:
        suite = _validate(Suite, _read_yaml(suite_file), suite_file)
    except SuiteError as exc:
        problems.append(str(exc))

    servers: dict[str, ServerConfig] = {}
    notes: list[str] = []
    if suite is not None:
        if suite.servers_file:
            try:
                servers |= load_servers_file(root / suite.servers_file, notes)
            except SuiteError as exc:
                problems.append(str(exc))
        servers |= suite.mcpServers
        suite = _with_replay_servers(suite, root, suite_file, servers, problems)
        suite_text = _read_text(suite_file)
        for arm_name, arm in suite.arms.items():
            line = _line_of(suite_text, ["arms", arm_name, "servers"])
            at = f":{line}" if line else ""
            for s in [*arm.servers, *arm.distractors]:
                if s not in servers:
                    known = ", ".join(sorted(servers)) or "none defined"
                    problems.append(
                        f"{suite_file}{at}: field 'arms.{arm_name}.servers': unknown server {s!r} (defined: {known})"
                    )
                elif servers[s].disabled:
                    problems.append(
                        f"{suite_file}{at}: field 'arms.{arm_name}.servers': server {s!r} is disabled"
                    )
        problems += _unknown_ignore_servers(suite, servers, suite_file, suite_text)

    scenario_dir = root / "scenarios"
    files = sorted(scenario_dir.glob("*.yaml")) + sorted(scenario_dir.glob("*.yml"))
    if not files and need_scenarios:
        problems.append(f"{scenario_dir}: no scenario files (*.yaml) found")
    scenarios: list[Scenario] = []
    seen: dict[str, Path] = {}
    for f in files:
        try:
            sc = _validate(Scenario, _read_yaml(f), f)
        except SuiteError as exc:
            problems.append(str(exc))
            continue
        if sc.id in seen:
            problems.append(
                f"{f}: field 'id': {sc.id!r} is already used by {seen[sc.id]}; ids must be unique"
            )
            continue
        seen[sc.id] = f
        scenarios.append(sc)
    if problems:
        head = f"{len(problems)} problems in the suite:\n" if len(problems) > 1 else ""
        raise SuiteError(head + "\n".join(problems))
    assert suite is not None
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
