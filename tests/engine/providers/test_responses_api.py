"""OpenAI's Responses API through the real ``openai`` SDK, on recorded streams (tests/fakes/cassettes/).

The -pro models are served by it only (the Chat Completions fake answers them 404 with the
API's text, as recorded in continuedev/continue#8326); any ``openai:`` model can be moved to it.
"""

from __future__ import annotations

import json

import pytest

from proctor.engine.providers.base import AssistantTurn, Message, ToolOutcome, ToolResults, UserMessage
from proctor.engine.providers.prices import PriceTable
from proctor.engine.providers.registry import make_provider
from proctor.engine.tools.toolbox import ToolSpec
from tests.engine.providers.test_recorded_answers import provider
from tests.fakes import fake_openai as fo
from tests.fakes.replay_server import ReplayServer

CAPITAL = ToolSpec(
    "get_capital",
    "",
    {"type": "object", "properties": {"country": {"type": "string"}}, "required": ["country"]},
    "geo",
)
CALCULATOR = ToolSpec(
    "calculator",
    "Add or multiply two numbers",
    {
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}, "op": {"type": "string"}},
    },
    "calc",
)


async def test_a_pro_model_is_never_sent_to_chat_completions(monkeypatch: pytest.MonkeyPatch) -> None:
    with fo.FakeOpenAI() as chat:
        monkeypatch.setenv("OPENAI_BASE_URL", chat.openai_base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-RESPONSES-0123456789")
        made = make_provider("openai:gpt-5-pro", PriceTable(), {})
        assert made.parameters()["api"] == "responses"
        with ReplayServer("responses_function_call_stream", "responses") as responses:
            monkeypatch.setenv("OPENAI_BASE_URL", responses.sdk_base_url)
            made = make_provider("openai:gpt-5-pro", PriceTable(), {})
            turn = await made.session(1).turn("", [UserMessage("What is the capital of France?")], [CAPITAL])
            await made.aclose()
        assert chat.requests == []
        assert responses.requests[0].path == "/v1/responses"
        assert [c.name for c in turn.tool_calls] == ["get_capital"]


async def test_a_streamed_function_call_and_its_output_round_trip_as_the_api_recorded_them() -> None:
    from proctor.engine.providers.model_rules import plan_request
    from proctor.scenarios.schema import ModelSettings

    with ReplayServer("responses_function_call_stream", "responses") as server:
        made = provider(
            server, "openai", "gpt-4o", plan=plan_request("openai:gpt-4o", ModelSettings(api="responses"))
        )
        session = made.session(1)
        ask: list[Message] = [UserMessage("What is the capital of France?")]
        first = await session.turn("", ask, [CAPITAL])
        (call,) = first.tool_calls
        assert (call.name, call.arguments, first.stop_reason) == (
            "get_capital",
            {"country": "France"},
            "tool_use",
        )
        history: list[Message] = [
            *ask,
            AssistantTurn(first.text, first.tool_calls),
            ToolResults([ToolOutcome(call.call_id, call.name, "Paris")]),
        ]
        second = await session.turn("", history, [CAPITAL])
        await made.aclose()
        sent = server.requests[1].json()["input"]
        recorded = server.cassette.request(1)["input"]
    assert second.stop_reason == "end_turn" and "Paris" in second.text
    # What pydantic-ai sent for the same turn, which the API accepted: the call and its output
    # (it sent the item id as call_id; proctor sends the call_id the stream gave, as documented).
    assert [(i.get("type"), i.get("name")) for i in sent[1:]] == [
        (i.get("type"), i.get("name")) for i in recorded[1:]
    ]
    assert json.loads(sent[1]["arguments"]) == json.loads(recorded[1]["arguments"])
    assert sent[1]["call_id"] == sent[2]["call_id"] == call.call_id and call.call_id.startswith("call_")
    assert sent[2]["output"] == "Paris"


async def test_reasoning_items_are_kept_apart_counted_and_sent_back_with_their_turn() -> None:
    from proctor.engine.providers.model_rules import plan_request
    from proctor.scenarios.schema import ModelSettings

    with ReplayServer("responses_reasoning_function_call", "responses") as server:
        made = provider(
            server,
            "openai",
            "gpt-5.1-codex-max",
            plan=plan_request("openai:gpt-5.1-codex-max", ModelSettings(api="responses")),
        )
        session = made.session(1)
        ask: list[Message] = [UserMessage("Compute (12 + 7) * 3 * 10 with the calculator.")]
        first = await session.turn("", ask, [CALCULATOR])
        (call,) = first.tool_calls
        history: list[Message] = [
            *ask,
            AssistantTurn(first.text, first.tool_calls),
            ToolResults([ToolOutcome(call.call_id, call.name, "19")]),
        ]
        await session.turn("", history, [CALCULATOR])
        await made.aclose()
        body = server.requests[1].json()
    (thought,) = first.reasoning
    assert thought.source == "summary" and thought.text.startswith("**Calculating step-by-step")
    assert (first.usage.output_tokens, first.usage.reasoning_tokens) == (28, 0)  # as the recording reports
    assert call.arguments == {"a": 12, "b": 7, "op": "add"}
    echoed = body["input"][1]
    assert echoed["type"] == "reasoning" and echoed["encrypted_content"].startswith("gAAAAAB")
    assert body["store"] is False and body["include"] == ["reasoning.encrypted_content"]
    assert "temperature" not in body  # the fake refuses it for reasoning models, as the API does
