"""Before the first trial: every arm's tools held to the rules of each model's API.

One definition the API refuses (an ``anyOf`` at a schema's root, for Anthropic) fails every
request of the arm, so a run that would spend its whole budget on 400s is refused before it
starts, naming the server, the tool, the field and the fix (exit 2). The shared servers are up
by now (server_warmup.py), so their tool lists cost nothing here; an arm with a per-trial
server, or a server that did not start, is left to its trials, which check the same rules
(trial_play.py) and end in error with the same message.
"""

from __future__ import annotations

from collections.abc import Sequence

from proctor.engine.providers.tool_rules import tool_problems, wire_api_of
from proctor.engine.runs.options import RunError
from proctor.engine.runs.trial_play import tool_rules_message
from proctor.engine.runs.trial_seam import RunServices
from proctor.engine.tools.mcp_toolbox import McpToolbox, ServerStartError
from proctor.store.read.reader import TrialRecord


async def check_tool_rules(run: RunServices, trials: Sequence[TrialRecord]) -> None:
    """Raise ``RunError`` when a model's API refuses a tool of an arm it is run with."""
    suite = run.loaded.suite
    problems: list[str] = []
    checked: set[tuple[str, str, str]] = set()
    for t in sorted(trials, key=lambda t: (t.arm, t.model, t.scenario)):
        api = wire_api_of(t.model)
        arm = suite.arms[t.arm]
        if api is None or arm.baseline or arm.tool_retrieval is not None:
            continue  # built-in tools and the router's two tools are proctor's own: they pass
        servers = run.workspace.servers_for([*arm.servers, *arm.distractors], run.loaded.scenario(t.scenario))
        if any(cfg.lifecycle != "shared" for cfg in servers.values()):
            continue
        key = (t.arm, t.model, repr(sorted(servers)))
        if key in checked:
            continue
        checked.add(key)
        try:
            toolbox = await McpToolbox.open(run.pool, servers, None)
        except ServerStartError:
            continue  # the trials record why it did not start
        try:
            found = tool_problems(api, toolbox.specs())
        finally:
            await toolbox.aclose()
        if found:
            problems.append(f"arm '{t.arm}' with {tool_rules_message(t.model, found)}")
    if problems:
        raise RunError(
            "\n".join(problems)
            + "\nnothing was run: fix the servers' definitions, or leave them out of these arms' models"
        )


__all__ = ["check_tool_rules"]
