"""What the engine remembers across trials to keep its per-trial cost down, and that it stays correct.

The tool list of a shared server is built once per listing; the offline agent remembers pure
functions of (task, tools) by the tools' identity; redaction picks its prefilter by text length;
a single tool call runs in the trial's own task without leaking the trial's sampler.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

import mcp.types as mtypes

from proctor.engine.providers.base import AssistantTurn, ToolOutcome, ToolResults, UserMessage
from proctor.engine.providers.offline.agent import OfflineProvider
from proctor.engine.providers.prices import PriceTable
from proctor.engine.runs.agent_loop import run_agent
from proctor.engine.tools.mcp_connection import McpConnection
from proctor.engine.tools.toolbox import CURRENT_SAMPLER, ToolCallOutcome, ToolSpec
from proctor.scenarios.schema import Limits, StdioServer
from proctor.store import redaction
from proctor.store.events import Event, ToolCall


def _tool(name: str, props: dict[str, Any]) -> mtypes.Tool:
    return mtypes.Tool(
        name=name, description=f"{name} tool", input_schema={"type": "object", "properties": props}
    )


def test_a_connection_builds_its_tool_specs_once_per_listing(tmp_path: Path) -> None:
    conn = McpConnection("srv", StdioServer(command=sys.executable), tmp_path)
    conn.tools = [_tool("find_definition", {"symbol": {"type": "string"}})]
    first, second = conn.specs(), conn.specs()
    assert first == second and first is not second, "a fresh list each time: callers may extend it"
    assert first[0] is second[0], "the specs themselves are shared by the trials"
    conn.tools = [_tool("search", {"query": {"type": "string"}})]  # a restart lists the tools again
    assert [s.name for s in conn.specs()] == ["search"]
    assert conn.specs()[0].input_schema["properties"] == {"query": {"type": "string"}}


async def _first_call(tools: list[ToolSpec], task: str, seed: int = 1) -> tuple[str, dict[str, Any]]:
    session = OfflineProvider("single").session(seed)
    turn = await session.turn("system", [UserMessage(task)], tools)
    assert turn.tool_calls, turn
    return turn.tool_calls[0].name, dict(turn.tool_calls[0].arguments)


async def test_the_offline_agent_never_mixes_up_tool_lists_it_remembers() -> None:
    task = "Where is `compute_backoff` defined?"
    by_symbol = [ToolSpec("lookup", "Find a definition", {"properties": {"symbol": {"type": "string"}}}, "a")]
    by_query = [ToolSpec("lookup", "Find a definition", {"properties": {"query": {"type": "string"}}}, "b")]
    for _ in range(2):  # the second round is answered from what was remembered
        assert await _first_call(by_symbol, task) == ("lookup", {"symbol": "compute_backoff"})
        assert await _first_call(by_query, task) == ("lookup", {"query": "compute_backoff"})
        # equal but distinct objects (a tool list routed per trial) are looked at afresh, same answer
        fresh = [ToolSpec("lookup", "Find a definition", {"properties": {"symbol": {"type": "string"}}}, "a")]
        assert await _first_call(fresh, task) == ("lookup", {"symbol": "compute_backoff"})


async def test_the_offline_agent_answers_the_same_the_first_and_the_hundredth_time() -> None:
    tools = [
        ToolSpec("find_definition", "Find where a function is defined", {"properties": {"symbol": {}}}, "s")
    ]
    result = "pkg/mod.py:10-12: function pkg.mod.f\n  10 | def f(x):\n  11 |     return x + 1\n  12 |"

    async def trial() -> tuple[int, int, str]:
        session = OfflineProvider("single").session(7)
        messages: list[Any] = [UserMessage("Where is `f` defined?")]
        first = await session.turn("system", messages, tools)
        call = first.tool_calls[0]
        messages += [
            AssistantTurn("", [call]),
            ToolResults([ToolOutcome(call.call_id, call.name, result, False)]),
        ]
        last = await session.turn("system", messages, tools)
        return first.usage.input_tokens, last.usage.input_tokens, last.text

    once = await trial()
    assert all([await trial() == once for _ in range(100)])
    assert "`pkg/mod.py:10`" in once[2]


def test_both_prefilters_of_the_redactor_agree() -> None:
    rng = random.Random(5)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-. \n"
    starts = list(redaction._SHAPE_STARTS)
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 300)))
        if rng.random() < 0.5:
            at = rng.randint(0, len(text))
            text = text[:at] + rng.choice(starts) + text[at:]
        expected = redaction._ANY_START.search(text) is not None
        assert (redaction._ANY_START_SHORT.search(text) is not None) == expected, text


def test_long_and_short_text_are_redacted_alike() -> None:
    token = "ghp_" + "A1b2C3d4E5" * 4
    short = f"token {token} end"
    long = "x" * (redaction._SHORT_CHARS + 10) + short
    assert redaction.redact(short) == "token [redacted: github-token] end"
    assert redaction.redact(long).endswith("token [redacted: github-token] end")
    assert token not in redaction.redact(long)


class _SamplerSpy:
    def __init__(self) -> None:
        self.seen: list[object] = []

    def specs(self) -> list[ToolSpec]:
        return [ToolSpec("echo", "echo", {"properties": {"x": {"type": "string"}}}, "srv")]

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolCallOutcome:
        self.seen.append(CURRENT_SAMPLER.get())
        return ToolCallOutcome("srv", name, "ok", False, 0.0)

    async def aclose(self) -> None:
        return None


async def test_a_single_tool_call_sees_the_trials_sampler_and_it_does_not_leak() -> None:
    from proctor.engine.providers.base import ModelTurn
    from proctor.store.events import ToolCallRequest, Usage

    class Session:
        def __init__(self) -> None:
            self.turns = [
                ModelTurn(
                    "",
                    [ToolCallRequest(call_id="c1", name="echo", arguments={"x": "a"})],
                    Usage(),
                    "tool_use",
                ),
                ModelTurn("done", [], Usage(), "end_turn"),
            ]

        async def turn(self, *args: Any, **kwargs: Any) -> ModelTurn:
            return self.turns.pop(0)

    toolbox = _SamplerSpy()
    events: list[Event] = []
    result = await run_agent(
        model_id="offline:single",
        session=Session(),
        toolbox=toolbox,
        prompts=["q?"],
        limits=Limits(),
        prices=PriceTable({}),
        emit=events.append,
    )
    assert result.final_answer == "done" and [type(e) for e in events if isinstance(e, ToolCall)] == [
        ToolCall
    ]
    assert toolbox.seen and toolbox.seen[0] is not None, "the server may sample through the trial's model"
    assert CURRENT_SAMPLER.get() is None, "the trial's task does not keep it"
