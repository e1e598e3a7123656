from __future__ import annotations

import asyncio
from typing import Any

from proctor.engine.providers.base import (
    AssistantTurn,
    Message,
    ModelTurn,
    ProviderError,
    ToolResults,
    UserMessage,
)
from proctor.engine.providers.prices import PriceTable
from proctor.engine.runs.agent_loop import run_agent
from proctor.engine.tools.toolbox import ToolCallOutcome, ToolSpec
from proctor.scenarios.schema import Limits, Price
from proctor.store.events import (
    ErrorEvent,
    Event,
    FinalAnswer,
    ModelResponse,
    ToolCall,
    ToolCallRequest,
    ToolResult,
    Usage,
)


class ScriptedSession:
    """Plays back turns; records the conversations it was shown."""

    def __init__(self, turns: list[ModelTurn | Exception]) -> None:
        self.turns = turns
        self.seen: list[list[Message]] = []

    async def turn(self, system: str, messages: list[Message], tools: list[ToolSpec], **_: Any) -> ModelTurn:
        self.seen.append(list(messages))
        item = self.turns.pop(0)
        if isinstance(item, Exception):
            raise item
        return item


class SlowEchoToolbox:
    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.active = 0
        self.max_active = 0

    def specs(self) -> list[ToolSpec]:
        return [
            ToolSpec("echo", "echo text", {"type": "object", "properties": {"x": {"type": "string"}}}, "srv")
        ]

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolCallOutcome:
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        await asyncio.sleep(self.delay)
        self.active -= 1
        if arguments.get("x") == "fail":
            return ToolCallOutcome("srv", name, "boom", True, 0.0, "tool_error")
        return ToolCallOutcome("srv", name, f"echo:{arguments.get('x')}", False, 0.001)

    async def aclose(self) -> None:
        return None


def _call(i: int, x: str) -> ToolCallRequest:
    return ToolCallRequest(call_id=f"c{i}", name="echo", arguments={"x": x})


def _turn(
    text: str = "", calls: list[ToolCallRequest] | None = None, inp: int = 100, out: int = 10
) -> ModelTurn:
    return ModelTurn(
        text, calls or [], Usage(input_tokens=inp, output_tokens=out), "tool_use" if calls else "end_turn"
    )


async def _run(
    session: ScriptedSession,
    toolbox: Any,
    limits: Limits,
    prompts: list[str] | None = None,
    model_id: str = "openai:m",
) -> tuple[Any, list[Event]]:
    events: list[Event] = []
    result = await run_agent(
        model_id=model_id,
        session=session,
        toolbox=toolbox,
        prompts=prompts or ["q?"],
        limits=limits,
        prices=PriceTable({"openai:m": Price(input=1.0, output=2.0)}),
        emit=events.append,
    )
    return result, events


async def test_parallel_tool_calls_run_concurrently_and_results_feed_back() -> None:
    session = ScriptedSession([_turn(calls=[_call(1, "a"), _call(2, "b")]), _turn("the answer")])
    toolbox = SlowEchoToolbox(delay=0.05)
    result, events = await _run(session, toolbox, Limits())
    assert toolbox.max_active == 2
    assert (result.status, result.stop, result.final_answer, result.tool_calls) == (
        "finished",
        "answer",
        "the answer",
        2,
    )
    fed_back = session.seen[1][-1]
    assert isinstance(fed_back, ToolResults)
    assert [r.content for r in fed_back.results] == ["echo:a", "echo:b"]
    kinds = [e.kind for e in events]
    assert kinds.count("tool_call") == 2 and kinds.count("tool_result") == 2
    assert kinds[-1] == "final_answer"
    assert result.usage.input_tokens == 200 and result.usage.output_tokens == 20
    assert abs(result.cost_usd - (200 * 1.0 + 20 * 2.0) / 1e6) < 1e-12


async def test_an_unpriced_model_costs_none_never_zero() -> None:
    session = ScriptedSession([_turn(calls=[_call(1, "a")]), _turn("the answer")])
    result, events = await _run(session, SlowEchoToolbox(delay=0), Limits(), model_id="openai:no-price")
    assert result.cost_usd is None
    assert [e.cost_usd for e in events if isinstance(e, ModelResponse)] == [None, None]


async def test_tool_error_is_a_result_not_a_trial_error() -> None:
    session = ScriptedSession([_turn(calls=[_call(1, "fail")]), _turn("recovered")])
    result, events = await _run(session, SlowEchoToolbox(), Limits())
    assert result.status == "finished"
    (tr,) = [e for e in events if isinstance(e, ToolResult)]
    assert tr.is_error and tr.error_type == "tool_error"
    assert isinstance(session.seen[1][-1], ToolResults) and session.seen[1][-1].results[0].is_error


async def test_max_turns_stops_the_loop() -> None:
    session = ScriptedSession([_turn("thinking", calls=[_call(i, str(i))]) for i in range(10)])
    result, _ = await _run(session, SlowEchoToolbox(), Limits(max_turns=3))
    assert result.stop == "max_turns" and result.tool_calls == 3 and result.final_answer == "thinking"


async def test_max_tool_calls_refuses_the_excess_and_stops() -> None:
    session = ScriptedSession([_turn(calls=[_call(1, "a"), _call(2, "b"), _call(3, "c")])])
    result, events = await _run(session, SlowEchoToolbox(), Limits(max_tool_calls=2))
    assert result.stop == "max_tool_calls" and result.tool_calls == 2
    assert sum(isinstance(e, ToolCall) for e in events) == 2


async def test_malformed_arguments_are_recorded_as_a_tool_error() -> None:
    bad = ToolCallRequest(call_id="c1", name="echo", arguments={"__raw__": "{not json"})
    session = ScriptedSession([_turn(calls=[bad]), _turn("ok")])
    result, events = await _run(session, SlowEchoToolbox(), Limits())
    (tr,) = [e for e in events if isinstance(e, ToolResult)]
    assert tr.error_type == "malformed_arguments" and tr.is_error
    assert result.status == "finished"


async def test_provider_failure_ends_the_trial_as_error_with_redacted_message(monkeypatch: Any) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdefXYZ")
    err = ProviderError("401 for key sk-test-0123456789abcdefXYZ", error_type="auth")
    session = ScriptedSession([err])
    result, events = await _run(session, SlowEchoToolbox(), Limits())
    assert result.status == "error"
    (ev,) = [e for e in events if isinstance(e, ErrorEvent)]
    assert ev.fatal and ev.error_type == "auth"
    assert "sk-test" not in ev.message and "[redacted: " in ev.message
    assert not any(isinstance(e, FinalAnswer) for e in events)


async def test_steps_run_in_one_conversation_and_answers_are_joined() -> None:
    session = ScriptedSession([_turn("first"), _turn("second")])
    result, _ = await _run(session, SlowEchoToolbox(), Limits(), prompts=["step one", "step two"])
    assert result.final_answer == "first\n\nsecond"
    second_view = session.seen[1]
    assert [type(m) for m in second_view] == [UserMessage, AssistantTurn, UserMessage]


async def test_tool_io_tokens_are_the_tool_results_share_of_input() -> None:
    session = ScriptedSession([_turn(calls=[_call(1, "x" * 300)]), _turn("done", inp=1000)])
    _, events = await _run(session, SlowEchoToolbox(), Limits())
    responses = [e for e in events if isinstance(e, ModelResponse)]
    assert responses[0].tool_io_tokens == 0
    assert 0 < responses[1].tool_io_tokens < 1000
