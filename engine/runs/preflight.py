"""Checks made before the first trial: what would fail every trial of an arm or a model is found
in a second, named by file, field and fix, instead of after forty trials.

Each check returns problems as data (``Problem``), and says which arms or models a problem stops,
so ``--keep-going`` can run the rest. Nothing is started here: a stdio server's command is looked
up on the PATH the server will get, an endpoint that proctor does not start (an HTTP server's
``url``, a provider's ``base_url``) is connected to once, and an API model's key is looked for
where its provider will read it. ``proctor run``/``demo`` call ``find_problems`` and print them;
the runner (``open_run``) refuses a plan with problems the same way, so every caller of the
engine meets the same checks.

Checks that need the servers' tool definitions run after these, once the servers are up: the
gold calls' tool names in ``check_listed_tools``, and each provider's rules on tool names, schemas
and descriptions in ``tool_preflight.check_tool_rules``, which the runner calls as soon as the
run's shared servers have listed their tools (still before the first trial).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from proctor.engine.providers.registry import ProviderConfigError, credentials
from proctor.engine.runs.gold_check import check_gold_tools
from proctor.engine.runs.options import RunError, RunOptions
from proctor.engine.tools.server_env import child_env
from proctor.scenarios.loader import LoadedSuite, SuiteError
from proctor.scenarios.model_ids import API_PROVIDERS, BASE_URL_ENV, split_model_id
from proctor.scenarios.schema import HttpServer, Scenario, ServerConfig, StdioServer
from proctor.scenarios.workspace import Workspace

CONNECT_TIMEOUT_S = 3.0
"""An endpoint that neither accepts nor refuses within this is left to the trials (a slow network)."""


@dataclass(frozen=True)
class Problem:
    """Something that would fail trials before they start: where it is said, and how to fix it."""

    where: str
    """The file that says it (``/x/suite.yaml``), or the flag (``--models``)."""
    field: str
    """The field in that file (``mcpServers.codeintel.command``); empty for a flag."""
    message: str
    """What is wrong, then the fix."""
    arms: frozenset[str] = frozenset()
    """The arms it stops (a server they use)."""
    models: frozenset[str] = frozenset()
    """The models it stops (their key or endpoint)."""

    def line(self) -> str:
        at = f"{self.where}: field '{self.field}'" if self.field else self.where
        return f"{at}: {self.message}"


@dataclass(frozen=True)
class Plan:
    """What a run will play: its arms and models (scenarios and epochs cannot be stopped by a check)."""

    arms: tuple[str, ...]
    models: tuple[str, ...]
    models_from: str = field(default="")
    """Where the models were named: ``--models`` or the suite file's ``models`` field."""


class PreflightError(RunError):
    """The run was refused before its first trial; ``problems`` says why, one line each."""

    def __init__(self, problems: Sequence[Problem], plan: Plan) -> None:
        self.problems = tuple(problems)
        can = runnable(plan, problems)
        lines = [p.line() for p in problems]
        hint = (
            f"fix {'it' if len(lines) == 1 else 'them'}, or pass --keep-going to run what can run "
            f"(arms {', '.join(can.arms)}; models {', '.join(can.models)})"
            if can.arms and can.models
            else "fix " + ("it" if len(lines) == 1 else "them")
        )
        head = "nothing ran: " + ("1 problem" if len(lines) == 1 else f"{len(lines)} problems")
        super().__init__(f"{head} before the first trial:\n  " + "\n  ".join(lines) + f"\n{hint}")


def models_source(loaded: LoadedSuite, given: RunOptions, recorded: Mapping[str, Any] | None) -> str:
    """Where the models a run will play were named: the flag, the resumed run, or suite.yaml."""
    if given.models:
        return "--models"
    if recorded is not None and recorded.get("models"):
        return f"{given.db} (the run's models)"
    return str(loaded.root / "suite.yaml")


def plan_of(loaded: LoadedSuite, options: RunOptions, models_from: str | None = None) -> Plan:
    """The arms and models ``options`` (already resumed, if it is a resume) will play."""
    suite = loaded.suite
    return Plan(
        arms=tuple(options.arms or suite.arms),
        models=tuple(options.models or suite.models),
        models_from=models_from or ("--models" if options.models else str(loaded.root / "suite.yaml")),
    )


def find_problems(loaded: LoadedSuite, options: RunOptions, models_from: str | None = None) -> list[Problem]:
    """Every problem of the plan ``options`` describe; nothing is started."""
    if options.executor == "ray":
        return []  # keys and commands are the workers' own; the Ray probe checks them there
    plan = plan_of(loaded, options, models_from)
    return [*model_problems(loaded, plan), *server_problems(loaded, plan)]


def runnable(plan: Plan, problems: Iterable[Problem]) -> Plan:
    """The plan less the arms and models the problems stop."""
    found = list(problems)
    stopped_arms = set().union(*(p.arms for p in found))
    stopped_models = set().union(*(p.models for p in found))
    return Plan(
        arms=tuple(a for a in plan.arms if a not in stopped_arms),
        models=tuple(m for m in plan.models if m not in stopped_models),
        models_from=plan.models_from,
    )


def refuse_problems(loaded: LoadedSuite, options: RunOptions, models_from: str | None = None) -> None:
    """Raise PreflightError when the plan has problems (the runner's check)."""
    problems = find_problems(loaded, options, models_from)
    if problems:
        raise PreflightError(problems, plan_of(loaded, options, models_from))


def model_problems(loaded: LoadedSuite, plan: Plan) -> list[Problem]:
    """API models without a key, or with a ``base_url`` nothing listens on."""
    specs = dict(loaded.suite.providers)
    suite_file = str(loaded.root / "suite.yaml")
    out: list[Problem] = []
    endpoints: dict[str, list[tuple[str, str, str]]] = {}
    for model in plan.models:
        provider, _ = split_model_id(model)
        if provider not in API_PROVIDERS:
            continue
        spec = specs.get(provider)
        try:
            _, base_url = credentials(model, specs)
        except ProviderConfigError as exc:
            if spec is not None and spec.api_key_env:
                out.append(
                    Problem(
                        suite_file, f"providers.{provider}.api_key_env", str(exc), models=frozenset([model])
                    )
                )
            else:
                out.append(_model_problem(plan, model, str(exc)))
            continue
        if base_url:
            if spec is not None and spec.base_url:
                where, field_name = suite_file, f"providers.{provider}.base_url"
            else:
                where, field_name = f"the environment variable {BASE_URL_ENV[provider]}", ""
            endpoints.setdefault(base_url, []).append((model, where, field_name))
    refused = _unreachable(endpoints)
    for url, why in refused.items():
        for model, where, field_name in endpoints[url]:
            out.append(
                Problem(
                    where,
                    field_name,
                    f"{model}: nothing answers at {url} ({why}); start the model server, or fix the URL",
                    models=frozenset([model]),
                )
            )
    return out


def _model_problem(plan: Plan, model: str, message: str) -> Problem:
    in_file = plan.models_from.endswith("suite.yaml")
    return Problem(plan.models_from, "models" if in_file else "", message, models=frozenset([model]))


def server_problems(loaded: LoadedSuite, plan: Plan) -> list[Problem]:
    """Servers of the plan's arms whose command is missing, or whose URL refuses connections."""
    users: dict[str, set[str]] = {}
    for arm_name in plan.arms:
        arm = loaded.suite.arms.get(arm_name)
        if arm is None:
            continue  # an unknown arm is the matrix's to refuse, naming the arms there are
        for server in (*arm.servers, *arm.distractors):
            users.setdefault(server, set()).add(arm_name)
    if not users:
        return []
    try:
        configs = _expanded(loaded, sorted(users))
    except SuiteError:
        return []  # a variable that does not expand: the run says so where it always did
    found: dict[tuple[str, str], Problem] = {}
    endpoints: dict[str, list[tuple[str, str]]] = {}
    for name, cfg in configs:
        where, prefix = _origin(loaded, name)
        arms = frozenset(users[name])
        for field_name, message in _stdio_problems(cfg, prefix):
            found.setdefault((name, field_name), Problem(where, field_name, message, arms=arms))
        if isinstance(cfg, HttpServer) and cfg.launch is None:
            endpoints.setdefault(cfg.url, []).append((name, f"{prefix}.url"))
    for url, why in _unreachable(endpoints).items():
        for name, field_name in endpoints[url]:
            where, _ = _origin(loaded, name)
            message = (
                f"nothing accepts connections at {url} ({why}); start the server first, fix the url, "
                "or give a 'launch:' command so proctor starts it"
            )
            found.setdefault(
                (name, field_name), Problem(where, field_name, message, arms=frozenset(users[name]))
            )
    return list(found.values())


def _expanded(loaded: LoadedSuite, names: list[str]) -> list[tuple[str, ServerConfig]]:
    """Each server's config as its trials get it (variables expanded), once per pinned repo."""
    workspace = Workspace.prepare(loaded)
    scenarios: list[Scenario | None] = [*loaded.scenarios] or [None]
    seen: set[tuple[str, str]] = set()
    out = []
    for scenario in scenarios:
        for name, cfg in workspace.servers_for(names, scenario).items():
            key = (name, cfg.model_dump_json())
            if key not in seen:
                seen.add(key)
                out.append((name, cfg))
    return out


def _origin(loaded: LoadedSuite, name: str) -> tuple[str, str]:
    """The file that defines server ``name``, and its field there."""
    if name not in loaded.suite.mcpServers and loaded.suite.servers_file:
        return str(loaded.root / loaded.suite.servers_file), f"mcpServers.{name}"
    return str(loaded.root / "suite.yaml"), f"mcpServers.{name}"


def _stdio_problems(cfg: ServerConfig, prefix: str) -> list[tuple[str, str]]:
    """(field, message) for a stdio command (or an HTTP server's ``launch``) that cannot start."""
    if isinstance(cfg, HttpServer):
        if cfg.launch is None:
            return []
        cfg, prefix = cfg.launch, f"{prefix}.launch"
    assert isinstance(cfg, StdioServer)
    if cfg.cwd is not None and not Path(cfg.cwd).is_dir():
        return [(f"{prefix}.cwd", f"{cfg.cwd} is not a folder; fix the path, or leave cwd out")]
    problem = command_problem(cfg.command, child_env(dict(cfg.env)).get("PATH", ""), cfg.cwd)
    return [] if problem is None else [(f"{prefix}.command", problem)]


def command_problem(command: str, path: str, cwd: str | None) -> str | None:
    """Why ``command`` cannot be started with this PATH and folder, or None when it can."""
    if not command.strip():
        return "the command is empty; give the program that starts the server"
    if os.sep in command:
        target = Path(cwd or os.getcwd()) / command
        if not target.is_file():
            return f"{command!r}: no such file; fix the path (relative paths start from the server's cwd)"
        if not os.access(target, os.X_OK):
            return f"{command!r} is not executable; chmod +x it, or start it through its interpreter"
        return None
    if shutil.which(command, path=path) is None:
        return (
            f"{command!r} is not a command on the server's PATH; install it, or give its full path "
            "(PATH comes from proctor's environment, or the server's env: PATH)"
        )
    return None


def _unreachable(endpoints: Iterable[str]) -> dict[str, str]:
    """Each URL whose host refuses connections, or does not resolve, with why."""
    urls = list(dict.fromkeys(endpoints))
    if not urls:
        return {}
    with ThreadPoolExecutor(max_workers=min(8, len(urls))) as pool:
        answers = list(pool.map(endpoint_problem, urls))
    return {url: why for url, why in zip(urls, answers, strict=True) if why is not None}


def endpoint_problem(url: str) -> str | None:
    """Why nothing can connect to ``url``'s host and port, or None (it accepts, or it is only slow)."""
    parts = urlsplit(url)
    host = parts.hostname
    if not host:
        return "the URL names no host"
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return "the URL's port is not a number"
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S):
            return None
    except ConnectionRefusedError:
        return "connection refused"
    except socket.gaierror:
        return f"the host name {host!r} does not resolve"
    except TimeoutError:
        return None
    except OSError as exc:
        return exc.strerror or type(exc).__name__


async def check_listed_tools(loaded: LoadedSuite, *, left_out: Sequence[str] = ()) -> str | None:
    """Checks over the tools the servers list (started once, here): every gold call must name a
    tool some arm offers. Raises SuiteError naming each problem; returns a note when nothing
    could be checked."""
    if left_out:  # their tools are unknown: a gold call to one of them would be refused wrongly
        return f"gold tool names not checked before the run: arm(s) {', '.join(left_out)} left out"
    return await check_gold_tools(loaded)


def check_listed_tools_now(loaded: LoadedSuite, *, left_out: Sequence[str] = ()) -> str | None:
    """``check_listed_tools`` from synchronous code (the CLI, before its own event loop)."""
    return asyncio.run(check_listed_tools(loaded, left_out=left_out))


__all__ = [
    "Plan",
    "PreflightError",
    "Problem",
    "check_listed_tools",
    "check_listed_tools_now",
    "command_problem",
    "endpoint_problem",
    "find_problems",
    "model_problems",
    "models_source",
    "plan_of",
    "refuse_problems",
    "runnable",
    "server_problems",
]
