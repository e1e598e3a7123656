"""The third-party MCP servers under test: where ``make test`` installs them, and their suites'
gold calls played through proctor's own MCP connection (``ServerPool``/``McpToolbox``, as a trial
calls tools), so a test can compare what each server answered with what was observed."""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from proctor.engine.tools.mcp_toolbox import McpToolbox, ServerPool
from proctor.engine.tools.toolbox import ToolCallOutcome
from proctor.scenarios.loader import LoadedSuite, load_suite
from proctor.scenarios.schema import GoldCall, Scenario
from proctor.scenarios.workspace import Workspace
from proctor.store.events import ServerConnected

HERE = Path(__file__).resolve().parent
SUITES = HERE / "suites"
PROJECT = HERE / "project"  # the files the filesystem and git suites pin (repo: {source})
REFERENCE = HERE.parents[1] / "reference_servers"
NPM_SCOPE = REFERENCE / "node_modules" / "@modelcontextprotocol"

VENVS = {"git": ".venv-git", "official": ".venv-official", "mcp1": ".venv-mcp1"}  # install -> venv
# Each suite's servers come from one install; ``make test`` writes the stamp when it is done.
STAMPS = {"npm": REFERENCE / "node_modules" / ".installed-stamp"} | {
    install: REFERENCE / venv / ".installed-stamp" for install, venv in VENVS.items()
}
# suite -> (install, package as the registry names it)
SERVERS = {
    "filesystem": ("npm", "@modelcontextprotocol/server-filesystem"),
    "memory": ("npm", "@modelcontextprotocol/server-memory"),
    "everything": ("npm", "@modelcontextprotocol/server-everything"),
    "sequential-thinking": ("npm", "@modelcontextprotocol/server-sequential-thinking"),
    "git": ("git", "mcp-server-git"),
    "time": ("official", "mcp-server-time"),
    "fetch": ("official", "mcp-server-fetch"),
    "calculator": ("mcp1", "mcp-server-calculator"),
    "sqlite": ("mcp1", "mcp-server-sqlite"),
}
_REQUIREMENTS = {
    "git": "requirements-git.txt",
    "official": "requirements-official.txt",
    "mcp1": "requirements-mcp1.txt",
}


def pinned_version(suite: str) -> str:
    """The version ``tests/reference_servers`` pins for a suite's server."""
    install, package = SERVERS[suite]
    if install == "npm":
        deps: dict[str, str] = json.loads((REFERENCE / "package.json").read_text())["dependencies"]
        return deps[package]
    for line in (REFERENCE / _REQUIREMENTS[install]).read_text().splitlines():
        name, _, version = line.partition("==")
        if name.strip().lower() == package:
            return version.strip()
    raise AssertionError(f"{_REQUIREMENTS[install]} does not pin {package}")


def installed_version(suite: str) -> str | None:
    install, package = SERVERS[suite]
    if install == "npm":
        manifest = REFERENCE / "node_modules" / package / "package.json"
        return str(json.loads(manifest.read_text())["version"]) if manifest.exists() else None
    dist = package.replace("-", "_")
    found = sorted((REFERENCE / VENVS[install]).glob(f"lib/python*/site-packages/{dist}-*.dist-info"))
    return found[0].name.removeprefix(f"{dist}-").removesuffix(".dist-info") if found else None


def require_installed(suite: str) -> None:
    """Skip when ``make test`` has not installed the suite's server; fail when it is not the pin."""
    stamp = STAMPS[SERVERS[suite][0]]
    if not stamp.exists():
        pytest.skip(
            f"{SERVERS[suite][1]} is not installed ({stamp} missing): "
            "`make test` installs the third-party servers pinned in tests/reference_servers"
        )
    pinned, found = pinned_version(suite), installed_version(suite)
    if found != pinned:
        pytest.fail(
            f"{SERVERS[suite][1]} is {found}, pinned {pinned}: run `make test` to reinstall", pytrace=False
        )


@dataclass(frozen=True)
class Call:
    """One gold call and what the server answered."""

    gold: GoldCall
    outcome: ToolCallOutcome


@dataclass
class Played:
    """A suite's gold calls played in order, scenario by scenario, as trials would."""

    loaded: LoadedSuite
    checkout: Path | None  # the pinned repository the servers saw (its path is in some results)
    tools: dict[str, list[str]] = field(default_factory=dict)  # server -> listed tool names
    descriptions: dict[str, dict[str, str]] = field(default_factory=dict)  # server -> tool -> description
    connected: dict[str, ServerConnected] = field(default_factory=dict)
    calls: dict[str, list[Call]] = field(default_factory=dict)  # scenario id -> calls in gold order


def play_gold(suite_dir: Path, cache: Path) -> Played:
    """Start the suite's servers once (per trial for ``per_trial`` ones) and play every
    scenario's gold calls through the same toolbox a trial uses. Scenarios play at once; the
    calls of one scenario, inside a step too, one after another, so a stateful server answers
    the same way every time."""
    loaded = load_suite(suite_dir)
    cache.mkdir(parents=True, exist_ok=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PROCTOR_CACHE", str(cache))  # pinned checkouts go here, not to ~/.cache
        workspace = Workspace.prepare(loaded)
        repo = workspace.repo_for(None)
    played = Played(loaded, repo.path if repo else None)
    asyncio.run(
        _play(played, workspace, Path(tempfile.mkdtemp(prefix="proctor-third-party-logs-", dir=cache)))
    )
    for server, names in played.tools.items():
        played.tools[server] = sorted(set(names))
    return played


async def _play(played: Played, workspace: Workspace, log_dir: Path) -> None:
    (arm,) = played.loaded.suite.arms.values()
    pool = ServerPool(log_dir)

    async def play(scenario: Scenario) -> None:
        toolbox = await McpToolbox.open(pool, workspace.servers_for(arm.servers, scenario), None)
        try:
            for server in toolbox.connected():
                played.connected[server.server] = server
            for spec in toolbox.specs():
                played.tools.setdefault(spec.server, []).append(spec.name)
                played.descriptions.setdefault(spec.server, {})[spec.name] = spec.description
            calls = played.calls[scenario.id] = []
            for step in scenario.gold_tool_calls:
                for gold in step:
                    calls.append(Call(gold, await toolbox.call(gold.tool, gold.arguments)))
        finally:
            await toolbox.aclose()

    try:
        # Scenarios at once, as a run's trials are (a shared server serves them all); the calls
        # of one scenario one after another.
        await asyncio.gather(*(play(sc) for sc in played.loaded.scenarios))
    finally:
        await pool.aclose()


# -- what was observed, and how a result is compared with it -------------------------------------


@dataclass(frozen=True)
class Expect:
    """What a server answered to one gold call when we ran it (see each test module's comment).

    ``text`` is the recorded text and ``structured`` the structuredContent (None: the server sent
    none), exact, with a pattern (``re.compile``) wherever a value changes from run to run (a
    clock, today's date); ``{REPO}`` stands for the pinned checkout's path.
    """

    tool: str
    text: str | re.Pattern[str]
    is_error: bool = False
    structured: Mapping[str, Any] | None = None
    # Progress notifications filed under the call. Other notices (a log line, the server asking
    # for roots) come on the server's own schedule and land under whichever call is in flight.
    progress: int = 0


@dataclass(frozen=True)
class Answer:
    """One recorded call and its result, from the live connection or from a run's database."""

    tool: str
    arguments: Mapping[str, Any]
    text: str
    is_error: bool
    structured: Mapping[str, Any] | None
    notices: tuple[str, ...] = ()


def answers(calls: Sequence[Call]) -> list[Answer]:
    return [
        Answer(
            c.gold.tool,
            c.gold.arguments,
            c.outcome.content,
            c.outcome.is_error,
            c.outcome.structured,
            tuple(n.method for n in c.outcome.notices),
        )
        for c in calls
    ]


def assert_answers(got: Sequence[Answer], expected: Sequence[Expect], repo: Path | None, where: str) -> None:
    """Each answer as observed, in order; the message names the call that differs."""
    assert [a.tool for a in got] == [e.tool for e in expected], where
    for i, (answer, want) in enumerate(zip(got, expected, strict=True)):
        at = f"{where}, call {i + 1} ({answer.tool} {json.dumps(answer.arguments)})"
        text = answer.text.replace(str(repo), "{REPO}") if repo else answer.text
        assert matches(text, want.text), f"{at}: text {text!r}"
        assert answer.is_error == want.is_error, f"{at}: is_error {answer.is_error}"
        structured = answer.structured
        if repo and structured is not None:
            structured = json.loads(json.dumps(structured).replace(json.dumps(str(repo))[1:-1], "{REPO}"))
        assert matches(structured, want.structured), f"{at}: structured {structured!r}"
        progress = sum(1 for n in answer.notices if n == "notifications/progress")
        assert progress == want.progress, f"{at}: notices {answer.notices}"


def matches(value: Any, want: Any) -> bool:
    """``value == want``, where a pattern anywhere in ``want`` matches a whole string."""
    if isinstance(want, re.Pattern):
        return isinstance(value, str) and want.fullmatch(value) is not None
    if isinstance(want, Mapping):
        return (
            isinstance(value, Mapping)
            and set(value) == set(want)
            and all(matches(value[k], want[k]) for k in want)
        )
    if isinstance(want, list | tuple):
        return (
            isinstance(value, list | tuple)
            and len(value) == len(want)
            and all(matches(v, w) for v, w in zip(value, want, strict=True))
        )
    return bool(value == want)


def json_text(value: Any) -> str:
    """How the servers that answer JSON print it (2-space indent), for expectations built from data."""
    return json.dumps(value, indent=2, ensure_ascii=False)


def with_holes(text: str, **holes: str) -> re.Pattern[str]:
    """``text`` as a literal pattern, except each ``<NAME>`` in it, which matches ``holes[NAME]``."""
    pattern = re.escape(text)
    for name, hole in holes.items():
        pattern = pattern.replace(re.escape(f"<{name}>"), f"(?:{hole})")
    return re.compile(pattern, re.DOTALL)


def played_suite(suite: str, factory: pytest.TempPathFactory) -> Played:
    """A module's one play of its suite (servers started once), after checking the install."""
    require_installed(suite)
    return play_gold(SUITES / suite, factory.mktemp(f"third-party-{suite}"))


def assert_scenario(played: Played, scenario: str, expected: Mapping[str, Sequence[Expect]]) -> None:
    assert set(expected) == set(played.calls), "every scenario of the suite has its expectations here"
    assert_answers(answers(played.calls[scenario]), expected[scenario], played.checkout, scenario)
