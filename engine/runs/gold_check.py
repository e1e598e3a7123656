"""Before a run: every gold tool call must name a tool some arm offers.

A gold call to a tool no arm offers (a typo, a renamed tool, a server left out of every arm) can
never be matched, so TFS/TEFS and the diagnosis would quietly count every trial as wrong. The
servers are started once, their tool lists read, and the run refused with the scenario file and
the field before any trial is spent. A server that does not start is skipped here: the run
itself records that failure where the user will look for it.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from proctor.engine.runs.replay_arms import servable_arms
from proctor.engine.tools.baseline import SPECS as BASELINE_SPECS
from proctor.engine.tools.mcp_toolbox import ServerPool, ServerStartError
from proctor.scenarios.loader import LoadedSuite, SuiteError
from proctor.scenarios.workspace import Workspace

START_CONCURRENCY = 8
MAX_SERVERS_CHECKED = 32  # beyond this (one server per tool, as MCPAgentBench) starting all costs minutes


async def offered_tools(loaded: LoadedSuite, arms: list[str]) -> dict[str, set[str]] | None:
    """Tool names per server of the given arms (``baseline`` for the repository tools).

    None when a server could not be started: its tools are unknown, so nothing can be refused.
    """
    names = sorted(
        {s for a in arms for s in (*loaded.suite.arms[a].servers, *loaded.suite.arms[a].distractors)}
    )
    offered: dict[str, set[str]] = {}
    if any(loaded.suite.arms[a].baseline for a in arms):
        offered["baseline"] = {s.name for s in BASELINE_SPECS}
    if not names:
        return offered
    configs = Workspace.prepare(loaded).servers_for(names, loaded.scenarios[0])
    limit = asyncio.Semaphore(START_CONCURRENCY)
    with tempfile.TemporaryDirectory(prefix="proctor-gold-check-") as logs:
        pool = ServerPool(Path(logs))

        async def tools_of(name: str) -> set[str] | None:
            async with limit:
                try:
                    conn = await pool.acquire(name, configs[name])
                except ServerStartError:
                    return None
                return {s.name for s in conn.specs()}  # what the model is offered: the config filters

        try:
            found = await asyncio.gather(*(tools_of(n) for n in names))
        finally:
            await pool.aclose()
    if any(tools is None for tools in found):
        return None
    offered.update({n: tools for n, tools in zip(names, found, strict=True) if tools is not None})
    return offered


def unknown_gold_tools(loaded: LoadedSuite, offered: dict[str, set[str]]) -> list[str]:
    """One line per gold call whose tool (on its server, if it names one) no arm offers."""
    everything = set().union(*offered.values()) if offered else set()
    # A replay arm's server serves tools recorded from other servers: it stands in for any of them.
    replay_servers = {a.servers[0] for a in loaded.suite.arms.values() if a.replay is not None and a.servers}
    replayed = set().union(*(offered.get(s, set()) for s in replay_servers))
    problems = []
    for scenario in loaded.scenarios:
        where = loaded.scenario_files.get(scenario.id, loaded.root)
        for s, step in enumerate(scenario.gold_tool_calls):
            for c, call in enumerate(step):
                pool = (offered.get(call.server, set()) | replayed) if call.server else everything
                if call.server and call.server not in loaded.servers:
                    defined = ", ".join(sorted(loaded.servers)) or "none"
                    problems.append(
                        f"{where}: field 'gold_tool_calls.{s}.{c}.server': server {call.server!r} is not "
                        f"defined in suite.yaml's mcpServers (defined: {defined}); fix the name or define it"
                    )
                elif call.tool not in pool:
                    on = f" on server {call.server!r}" if call.server else ""
                    problems.append(
                        f"{where}: field 'gold_tool_calls.{s}.{c}.tool': {call.tool!r}{on} is offered by no arm "
                        f"(offered: {', '.join(sorted(pool)) or 'none'}); fix the name or add its server to an arm"
                    )
    return problems


async def check_gold_tools(loaded: LoadedSuite) -> str | None:
    """Raise SuiteError naming every gold call no arm can answer; return why nothing was checked."""
    if not any(s.gold_tool_calls for s in loaded.scenarios):
        return None
    arms = servable_arms(loaded)  # a replay arm whose run is still to be recorded has nothing to offer
    servers = {s for a in arms for s in (*loaded.suite.arms[a].servers, *loaded.suite.arms[a].distractors)}
    if len(servers) > MAX_SERVERS_CHECKED:
        return f"gold tool names not checked before the run: {len(servers)} servers would have to start"
    offered = await offered_tools(loaded, arms)
    if offered is None:
        return "gold tool names not checked before the run: a server did not start (the run will say why)"
    problems = unknown_gold_tools(loaded, offered)
    if problems:
        more = f"\n(and {len(problems) - 10} more)" if len(problems) > 10 else ""
        raise SuiteError("\n".join(problems[:10]) + more)
    return None


__all__ = ["check_gold_tools", "offered_tools", "unknown_gold_tools"]
