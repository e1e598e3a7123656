"""``offline:gold``: an agent that plays a scenario's gold tool calls and answers with their results.

It exists to exercise a server without a model: the calls a scenario says are right are made,
step by step (the calls inside one step in one turn, so the agent loop runs them in parallel),
with exactly the gold arguments, and the answer is what the tools returned. Nothing is chosen,
ranked or guessed, so two runs against the same server record the same calls, and a run against
a changed server shows what changed. A scenario without gold calls cannot be played; the run
refuses it before any trial starts (``missing_gold``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from proctor.engine.providers.base import (
    Message,
    ModelTurn,
    ProviderError,
    TextDeltaCallback,
    ToolResults,
    UserMessage,
    estimate_tokens,
)
from proctor.engine.providers.offline.tools import context_tokens
from proctor.engine.tools.toolbox import ToolSpec
from proctor.store.events import ToolCallRequest, Usage

GOLD_MODEL = "offline:gold"
#: Characters of one tool result quoted in the answer; the full result is in the transcript.
MAX_QUOTED_CHARS = 4000


@dataclass(frozen=True)
class GoldRequest:
    """One gold call as the scenario states it: a tool (on a server, if named) and its arguments."""

    tool: str
    arguments: Mapping[str, Any]
    server: str | None = None


GoldPlan = tuple[tuple[GoldRequest, ...], ...]


def gold_plan(steps: Iterable[Iterable[Any]]) -> GoldPlan:
    """Plain requests from a scenario's ``gold_tool_calls`` (anything with tool, arguments, server)."""
    return tuple(
        tuple(GoldRequest(g.tool, dict(g.arguments), g.server) for g in step) for step in steps if step
    )


def missing_gold(scenarios: Sequence[Any], models: Sequence[str], where: Mapping[str, Any]) -> list[str]:
    """One line per scenario ``offline:gold`` would have to play but that has no gold calls."""
    if GOLD_MODEL not in models:
        return []
    return [
        f"{where[s.id]}: scenario {s.id!r}: field 'gold_tool_calls' is empty, but model "
        f"{GOLD_MODEL} replays it; add gold_tool_calls to the scenario, leave it out with --scenarios, "
        "or choose another model"
        for s in scenarios
        if not any(s.gold_tool_calls)
    ]


class GoldProvider:
    """The ``offline:gold`` model; sessions are per scenario (``gold_session``), not per seed alone."""

    @property
    def model_id(self) -> str:
        return GOLD_MODEL

    @property
    def provider_name(self) -> str:
        return "offline"

    def session(self, seed: int) -> GoldSession:
        """Without a scenario there is nothing to play: a judge or a draft cannot use this model."""
        raise ProviderError(
            f"{GOLD_MODEL} only plays a scenario's gold_tool_calls in a run; it cannot judge or draft",
            error_type="unsupported",
        )

    def gold_session(self, scenario_id: str, plan: GoldPlan) -> GoldSession:
        if not plan:
            raise ProviderError(
                f"scenario {scenario_id!r} has no gold_tool_calls for {GOLD_MODEL} to play",
                error_type="missing_gold",
            )
        return GoldSession(plan)

    def parameters(self) -> dict[str, Any]:
        return {"policy": "gold", "deterministic": True}

    async def aclose(self) -> None:
        return None


class GoldSession:
    """Plays the plan's steps on the first prompt, then answers; later prompts get no more calls."""

    def __init__(self, plan: GoldPlan) -> None:
        self._plan = plan
        self._next_step = 0
        self._sent: list[tuple[str, GoldRequest]] = []  # (call_id, request), in the order made
        self._answered = False

    async def turn(
        self,
        system: str,
        messages: list[Message],
        tools: list[ToolSpec],
        *,
        on_text: TextDeltaCallback | None = None,
    ) -> ModelTurn:
        input_tokens = context_tokens(system, messages, tools)
        if self._next_step < len(self._plan):
            step = self._plan[self._next_step]
            self._next_step += 1
            calls = [self._request(g, tools) for g in step]
            out = sum(estimate_tokens(json.dumps(c.arguments)) + 5 for c in calls)
            return ModelTurn(
                "", calls, Usage(input_tokens=input_tokens, output_tokens=out, estimated=True), "tool_use"
            )
        answer = "" if self._answered or not _is_first_prompt(messages) else self._answer(messages)
        self._answered = True
        if on_text is not None and answer:
            await on_text(answer)
        usage = Usage(input_tokens=input_tokens, output_tokens=estimate_tokens(answer), estimated=True)
        return ModelTurn(answer, [], usage, "end_turn")

    def _request(self, gold: GoldRequest, tools: list[ToolSpec]) -> ToolCallRequest:
        call_id = f"gold_{len(self._sent) + 1}"
        self._sent.append((call_id, gold))
        name, arguments = exposed_call(gold, tools)
        return ToolCallRequest(call_id=call_id, name=name, arguments=arguments)

    def _answer(self, messages: list[Message]) -> str:
        results = {r.call_id: r for m in messages if isinstance(m, ToolResults) for r in m.results}
        parts = []
        for call_id, gold in self._sent:
            outcome = results.get(call_id)
            head = f"{gold.tool} {json.dumps(dict(gold.arguments), sort_keys=True, ensure_ascii=False)}"
            if outcome is None:
                parts.append(f"{head}: not run")
                continue
            text = outcome.content
            if len(text) > MAX_QUOTED_CHARS:
                text = (
                    text[:MAX_QUOTED_CHARS]
                    + f"\n[... {len(outcome.content) - MAX_QUOTED_CHARS} more characters]"
                )
            parts.append(f"{head}{' (error)' if outcome.is_error else ''}:\n{text}")
        return "\n\n".join(parts)


def exposed_call(gold: GoldRequest, tools: list[ToolSpec]) -> tuple[str, dict[str, Any]]:
    """The name the trial offers the gold tool under, and the arguments to send.

    Tools whose names collide across servers are offered as ``server__tool``; behind tool
    retrieval only ``route`` and ``execute`` are offered, and the gold call goes through
    ``execute``. A tool the arm does not offer is called by its own name, so the transcript
    shows the toolbox's "unknown tool" error rather than a silently skipped call.
    """
    arguments = dict(gold.arguments)
    names = {t.name for t in tools}
    if gold.server and f"{gold.server}__{gold.tool}" in names:
        return f"{gold.server}__{gold.tool}", arguments
    if gold.tool not in names and {"route", "execute"} <= names:
        return "execute", {"tool": gold.tool, "arguments": arguments}
    return gold.tool, arguments


def _is_first_prompt(messages: list[Message]) -> bool:
    return sum(isinstance(m, UserMessage) for m in messages) <= 1


__all__ = [
    "GOLD_MODEL",
    "GoldPlan",
    "GoldProvider",
    "GoldRequest",
    "GoldSession",
    "exposed_call",
    "gold_plan",
    "missing_gold",
]
