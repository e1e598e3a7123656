"""One trial's agent session, from toolbox to final answer, wherever it runs.

The runner (in the engine's process) and a Ray worker (in another process, maybe on another
machine) both play trials with this code, so a trial's events are the same whichever executor
ran it. It only needs a ``TrialEnv`` (the suite, its workspace, a server pool, providers) and a
sink for events and blobs; it returns the ``TrialFinished`` event and leaves emitting it, and
everything after it (flushing, scoring), to the runner.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from dataclasses import dataclass, field
from typing import Protocol

from proctor.engine.providers.base import ModelSession, Provider, ProviderError
from proctor.engine.providers.offline.gold import GoldProvider, gold_plan
from proctor.engine.providers.prices import PriceTable
from proctor.engine.providers.registry import make_provider
from proctor.engine.providers.tool_rules import (
    ToolProblem,
    WireTools,
    adapt_tools,
    tool_problems,
    wire_api_of,
)
from proctor.engine.runs.agent_loop import DEFAULT_SYSTEM_PROMPT, run_agent
from proctor.engine.tools.baseline import BaselineToolbox
from proctor.engine.tools.mcp_toolbox import McpToolbox, ServerPool, ServerStartError
from proctor.engine.tools.retrieval import RetrievalToolbox
from proctor.engine.tools.run_surface import with_definition_tokens
from proctor.engine.tools.toolbox import Blob, EmptyToolbox, Toolbox, ToolSpec
from proctor.scenarios.loader import LoadedSuite, SuiteError
from proctor.scenarios.schema import Scenario
from proctor.scenarios.workspace import Workspace
from proctor.store.events import (
    AgentBrief,
    ErrorEvent,
    Event,
    ListedTool,
    ToolsListed,
    TrialFinished,
    Usage,
)
from proctor.store.redaction import redact


@dataclass(frozen=True)
class TrialSpec:
    """What names one attempt of one trial: plain values, safe to ship to another process."""

    trial_id: int
    attempt: int
    scenario: str
    arm: str
    model: str
    epoch: int
    seed: int


class TrialSink(Protocol):
    """Where a playing trial's events and binary tool outputs go."""

    def emit(self, event: Event) -> None: ...

    def put_blob(self, blob: Blob) -> None: ...


@dataclass
class TrialEnv:
    """A process's means to play trials: one server pool and one provider per model, shared by its trials."""

    loaded: LoadedSuite
    workspace: Workspace
    prices: PriceTable
    pool: ServerPool
    providers: dict[str, Provider] = field(default_factory=dict)
    briefed: set[str] = field(default_factory=set)  # system prompts already stored as blobs

    def provider(self, model_id: str) -> Provider:
        if model_id not in self.providers:
            suite = self.loaded.suite
            self.providers[model_id] = make_provider(
                model_id, self.prices, dict(suite.providers), settings=suite.model_settings.get(model_id)
            )
        return self.providers[model_id]

    async def aclose(self) -> None:
        """Stop every server, then close the providers."""
        try:
            await self.pool.aclose()
        finally:
            for p in self.providers.values():
                await p.aclose()


async def play_trial(env: TrialEnv, spec: TrialSpec, sink: TrialSink) -> TrialFinished:
    """Open the arm's tools, run the agent under the trial's wall-clock limit, close the tools."""
    scenario = env.loaded.scenario(spec.scenario)
    started = time.perf_counter()
    limits = env.loaded.suite.limits
    try:
        toolbox = await _toolbox(env, spec.arm, scenario)
    except (ServerStartError, SuiteError) as exc:
        message = redact(str(exc))
        sink.emit(ErrorEvent(where="mcp", error_type="server_start", message=message, fatal=True))
        return failed("server_start", message, time.perf_counter() - started)
    try:
        wire, problems = _held_to_rules(spec.model, toolbox)
        sink.emit(ToolsListed(tools=with_definition_tokens(_listed(t, wire) for t in _offered(toolbox))))
        for server in toolbox.connected():
            sink.emit(server)
        if problems:
            message = tool_rules_message(spec.model, problems)
            sink.emit(ErrorEvent(where="tools", error_type="tool_rules", message=message, fatal=True))
            return failed("tool_rules", message, time.perf_counter() - started)
        system_prompt = env.loaded.suite.system_prompt or DEFAULT_SYSTEM_PROMPT
        sink.emit(_brief(env, sink, spec.model, system_prompt, scenario.prompts(), wire))
        session = _session(env.provider(spec.model), spec.seed, scenario)
        async with asyncio.timeout(limits.trial_timeout_s):
            result = await run_agent(
                model_id=spec.model,
                session=session,
                toolbox=toolbox,
                prompts=scenario.prompts(),
                limits=limits,
                prices=env.prices,
                emit=sink.emit,
                system_prompt=system_prompt,
                put_blob=sink.put_blob,
            )
        return TrialFinished(
            status="finished" if result.status == "finished" else "error",
            stop=result.stop,
            final_answer=result.final_answer,
            tool_calls=result.tool_calls,
            usage=result.usage,
            cost_usd=result.cost_usd,
            wall_s=time.perf_counter() - started,
            error=result.error,
        )
    except ProviderError as exc:  # a model that cannot play this trial at all (offline:gold, no gold)
        message = redact(str(exc))
        sink.emit(ErrorEvent(where="model", error_type=exc.error_type, message=message, fatal=True))
        return failed(exc.error_type, message, time.perf_counter() - started)
    except TimeoutError:
        message = f"trial exceeded its wall-clock limit of {limits.trial_timeout_s:g}s"
        sink.emit(ErrorEvent(where="trial", error_type="timeout", message=message, fatal=True))
        return failed("timeout", message, time.perf_counter() - started)
    finally:
        await toolbox.aclose()


def _session(provider: Provider, seed: int, scenario: Scenario) -> ModelSession:
    """The trial's conversation; ``offline:gold`` plays this scenario's gold calls instead of a seed's choices."""
    if isinstance(provider, GoldProvider):
        return provider.gold_session(scenario.id, gold_plan(scenario.gold_tool_calls))
    return provider.session(seed)


def _held_to_rules(model: str, toolbox: Toolbox) -> tuple[WireTools | None, list[ToolProblem]]:
    """The tools the model sees as its API is sent them, and what that API would refuse."""
    api = wire_api_of(model)
    if api is None:
        return None, []
    specs = toolbox.specs()
    return adapt_tools(api, specs), tool_problems(api, specs)


def _listed(tool: ToolSpec, wire: WireTools | None) -> ListedTool:
    listed = tool.listed()
    sent = wire.wire_name(tool.name) if wire is not None else tool.name
    return listed if sent == tool.name else listed.model_copy(update={"sent_as": sent})


def tool_rules_message(model: str, problems: list[ToolProblem]) -> str:
    """Why a model cannot be sent an arm's tools, one line per definition it refuses."""
    head = f"{model}: {len(problems)} tool definition(s) the API refuses"
    return head + ":\n" + "\n".join(f"  {p.message()}" for p in problems)


def _brief(
    env: TrialEnv,
    sink: TrialSink,
    model: str,
    system_prompt: str,
    prompts: list[str],
    wire: WireTools | None = None,
) -> AgentBrief:
    """The trial's inputs; the system prompt's text goes to the blobs table once per process.

    ``parameters`` are what each request carries, with every adaptation made for the API
    (a temperature not sent, a tool renamed or its description cut) under ``adapted``.
    """
    text = redact(system_prompt)
    sha = hashlib.sha256(text.encode()).hexdigest()
    if sha not in env.briefed:
        env.briefed.add(sha)
        sink.put_blob(Blob(sha, "text/plain; charset=utf-8", text.encode()))
    parameters = dict(env.provider(model).parameters())
    adapted = [*parameters.pop("adapted", []), *(a.message() for a in (wire.adaptations if wire else ()))]
    if adapted:
        parameters["adapted"] = adapted
    return AgentBrief(
        model=model,
        system_prompt_sha256=sha,
        system_prompt_chars=len(text),
        prompts=prompts,
        parameters=parameters,
    )


async def _toolbox(env: TrialEnv, arm_name: str, scenario: Scenario) -> Toolbox:
    arm = env.loaded.suite.arms[arm_name]
    if arm.baseline:
        repo = env.workspace.repo_for(scenario)
        return BaselineToolbox(repo) if repo is not None else EmptyToolbox()
    servers = env.workspace.servers_for([*arm.servers, *arm.distractors], scenario)
    inner = await McpToolbox.open(env.pool, servers, env.loaded.suite.limits.tool_timeout_s)
    if arm.tool_retrieval is not None:
        return RetrievalToolbox(inner, arm.tool_retrieval.top_k)
    return inner


def _offered(toolbox: Toolbox) -> list[ToolSpec]:
    """What the model can reach: its tools, and behind a router the tools it can route to."""
    specs = toolbox.specs()
    if isinstance(toolbox, RetrievalToolbox):
        specs += toolbox.routed_specs()
    return specs


def failed(stop: str, message: str, wall_s: float) -> TrialFinished:
    """The end of a trial that never got an answer (its servers, its limit or its worker failed)."""
    return TrialFinished(
        status="error",
        stop=stop,
        final_answer="",
        tool_calls=0,
        usage=Usage(),
        cost_usd=0.0,
        wall_s=wall_s,
        error=message,
    )


__all__ = ["TrialEnv", "TrialSink", "TrialSpec", "failed", "play_trial"]
