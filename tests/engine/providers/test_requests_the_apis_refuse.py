"""Requests real model APIs refuse, sent through the real SDKs to fakes that refuse them the same way.

The fakes answer 400 with the API's own error text for each documented rule
(tests/fakes/api_rules.py names the page or the recorded 400 of each); the replayed responses
are recorded traffic (tests/fakes/cassettes/). Every test here failed before proctor planned
requests by model and checked tool definitions.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx2
import pytest

from proctor.engine.judges.base import JudgeSubject
from proctor.engine.judges.llm import LlmJudge
from proctor.engine.judges.registry import make_judge, make_suite_judges
from proctor.engine.providers.anthropic_provider import AnthropicProvider
from proctor.engine.providers.base import (
    AssistantTurn,
    Message,
    ProviderError,
    ToolOutcome,
    ToolResults,
    UserMessage,
)
from proctor.engine.providers.openai_provider import OpenAIProvider
from proctor.engine.providers.prices import PriceTable
from proctor.engine.providers.registry import ProviderConfigError, make_provider
from proctor.scenarios.loader import load_suite
from proctor.scenarios.schema import Scenario, Scoring
from tests.engine.reference_tools import colliding_registry_tools, fixture_tools
from tests.fakes import fake_anthropic as fa
from tests.fakes import fake_openai as fo
from tests.fakes.fake_anthropic import ToolUseScript
from tests.fakes.fake_openai import CallPiece
from tests.fakes.replay_server import ReplayServer

if TYPE_CHECKING:
    from proctor.scenarios.schema import ModelSettings

ANTHROPIC_KEY = "sk-ant-api03-RULES-0123456789abcdef"
OPENAI_KEY = "sk-proj-RULES-0123456789abcdef"
TLS = ssl.create_default_context()
ASK: list[Message] = [UserMessage("What is in the notes?")]
SUBJECT = JudgeSubject(
    Scenario(id="s", prompt="Where is the delay computed?"), "In retry.py:12.", "", "mcp", "m"
)
GOOD = {"score": 0.8, "rationale": "names the file"}


@pytest.fixture
def anthropic(monkeypatch: pytest.MonkeyPatch) -> Iterator[fa.FakeAnthropic]:
    with fa.FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
        yield fake


@pytest.fixture
def openai(monkeypatch: pytest.MonkeyPatch) -> Iterator[fo.FakeOpenAI]:
    with fo.FakeOpenAI() as fake:
        # A gateway in front of OpenAI's models (Azure, LiteLLM): a base_url, OpenAI's model names.
        monkeypatch.setenv("OPENAI_BASE_URL", fake.openai_base_url)
        monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
        yield fake


def planned(model_id: str, settings: ModelSettings) -> Any:
    from proctor.engine.providers.model_rules import plan_request

    return plan_request(model_id, settings)


def anthropic_provider(base_url: str, model: str, settings: ModelSettings | None = None) -> AnthropicProvider:
    return AnthropicProvider(
        model,
        api_key=ANTHROPIC_KEY,
        base_url=base_url,
        prices=PriceTable(),
        **({"plan": planned(f"anthropic:{model}", settings)} if settings else {}),
        max_attempts=1,
        deadline_s=10.0,
        http_client=httpx2.AsyncClient(verify=TLS),
    )


def openai_provider(base_url: str, model: str, settings: ModelSettings | None = None) -> OpenAIProvider:
    return OpenAIProvider(
        model,
        api_key=OPENAI_KEY,
        base_url=base_url,
        prices=PriceTable(),
        **({"plan": planned(f"openai:{model}", settings)} if settings else {}),
        max_attempts=1,
        deadline_s=10.0,
        http_client=httpx2.AsyncClient(verify=TLS),
    )


async def test_a_judge_on_claude_opus_4_7_sends_no_temperature_and_gets_its_verdict(
    anthropic: fa.FakeAnthropic,
) -> None:
    anthropic.enqueue(fa.message_reply(text=[json.dumps(GOOD)]))
    judge = make_judge("anthropic:claude-opus-4-7", Scoring(), temperature=0.0)
    assert isinstance(judge, LlmJudge)
    outcome = await judge.judge(SUBJECT, 1)
    await judge.aclose()
    assert outcome.error == "" and outcome.verdict is not None and outcome.verdict.score == 0.8
    assert "temperature" not in anthropic.requests[0].json()
    assert outcome.meta.temperature is None  # recorded as what was sent


async def test_a_judge_on_gpt5_through_a_base_url_sends_neither_max_tokens_nor_temperature(
    openai: fo.FakeOpenAI,
) -> None:
    openai.enqueue(fo.completion_reply(text=[json.dumps(GOOD)]))
    judge = make_judge("openai:gpt-5", Scoring(), temperature=0.0)
    assert isinstance(judge, LlmJudge)
    outcome = await judge.judge(SUBJECT, 1)
    await judge.aclose()
    assert outcome.error == "" and outcome.verdict is not None
    body = openai.requests[0].json()
    assert "max_tokens" not in body and "temperature" not in body
    assert body["max_completion_tokens"] == 16384


async def test_an_agent_on_gpt5_through_a_gateway_gets_max_completion_tokens(openai: fo.FakeOpenAI) -> None:
    openai.enqueue(fo.completion_reply(text=["done"]))
    provider = make_provider("openai:gpt-5", PriceTable(), {})
    turn = await provider.session(1).turn("", ASK, [])
    await provider.aclose()
    assert turn.text == "done"
    assert "max_completion_tokens" in openai.requests[0].json()


async def test_a_suite_setting_the_api_refuses_stops_the_provider_before_any_request() -> None:
    from proctor.scenarios.schema import ModelSettings

    with pytest.raises(ProviderConfigError) as caught:
        make_provider("anthropic:claude-opus-4-7", PriceTable(), {}, settings=ModelSettings(temperature=0.3))
    assert "field 'model_settings.anthropic:claude-opus-4-7.temperature'" in str(caught.value)


async def test_a_suites_settings_are_sent_per_model_and_a_null_judge_temperature_loads(
    tmp_path: Path, openai: fo.FakeOpenAI
) -> None:
    # A gateway model whose name says nothing (an Azure deployment): the suite names the field
    # and the limit, and a judge with temperature null sends none (main refused the null).
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "s.yaml").write_text("id: s\nprompt: Where is the delay computed?\n")
    (tmp_path / "suite.yaml").write_text(
        """name: gateway
arms: {baseline: {baseline: true}}
models: ["openai:prod-deployment"]
judge: {model: "openai:prod-deployment", temperature: null}
model_settings:
  "openai:prod-deployment": {token_limit_param: max_completion_tokens, max_output_tokens: 2000}
"""
    )
    suite = load_suite(tmp_path).suite
    openai.enqueue(fo.completion_reply(text=["done"]), fo.completion_reply(text=[json.dumps(GOOD)]))
    settings = suite.model_settings["openai:prod-deployment"]
    agent = make_provider("openai:prod-deployment", PriceTable(), {}, settings=settings)
    await agent.session(1).turn("", ASK, [])
    await agent.aclose()
    (judge,) = make_suite_judges(suite)
    assert isinstance(judge, LlmJudge)
    outcome = await judge.judge(SUBJECT, 1)
    await judge.aclose()
    assert outcome.verdict is not None
    for request in openai.requests:
        body = request.json()
        assert (body.get("max_completion_tokens"), "max_tokens" in body) == (2000, False)
        assert "temperature" not in body


async def test_sequential_thinking_reaches_an_openai_model_with_its_description_cut(
    openai: fo.FakeOpenAI,
) -> None:
    tools = fixture_tools("sequential-thinking-2026.8.31", "sequential-thinking")
    openai.enqueue(
        fo.completion_reply(
            calls=[
                CallPiece(
                    0, '{"thought": "start", "thoughtNumber": 1}', call_id="c1", name="sequentialthinking"
                )
            ]
        )
    )
    provider = openai_provider(openai.openai_base_url, "gpt-4.1")
    turn = await provider.session(1).turn("", ASK, tools)
    await provider.aclose()
    sent = openai.requests[0].json()["tools"][0]["function"]
    assert len(sent["description"]) <= 1024
    assert [c.name for c in turn.tool_calls] == ["sequentialthinking"]


@pytest.mark.parametrize("api", ["anthropic", "openai"])
async def test_registry_style_server_names_are_sent_as_aliases_and_calls_come_back_by_their_names(
    api: str, anthropic: fa.FakeAnthropic, openai: fo.FakeOpenAI
) -> None:
    tools = colliding_registry_tools()
    original = "io.github.modelcontextprotocol/server-filesystem__read_text_file"
    provider: AnthropicProvider | OpenAIProvider
    if api == "anthropic":
        provider = anthropic_provider(anthropic.base_url, "claude-sonnet-4-5")
        fake: fa.FakeAnthropic | fo.FakeOpenAI = anthropic
    else:
        provider = openai_provider(openai.openai_base_url, "gpt-4.1")
        fake = openai
    session = provider.session(1)
    # Both APIs' rule, ^[a-zA-Z0-9_-]{1,64}$: '.' and '/' become '_' (64 characters: it fits).
    alias = "io_github_modelcontextprotocol_server-filesystem__read_text_file"
    if api == "anthropic":
        anthropic.enqueue(
            fa.message_reply(tools=[ToolUseScript("tu_1", alias, ['{"path": "notes.md"}'])]),
            fa.message_reply(text=["notes"]),
        )
    else:
        openai.enqueue(
            fo.completion_reply(calls=[CallPiece(0, '{"path": "notes.md"}', call_id="c1", name=alias)]),
            fo.completion_reply(text=["notes"]),
        )
    first = await session.turn("", ASK, tools)
    assert [c.name for c in first.tool_calls] == [original]
    history: list[Message] = [
        *ASK,
        AssistantTurn("", first.tool_calls),
        ToolResults([ToolOutcome(first.tool_calls[0].call_id, original, "# notes")]),
    ]
    second = await session.turn("", history, tools)
    await provider.aclose()
    assert second.text == "notes"  # the fake took the history: every name in it was the alias
    assert alias in json.dumps(fake.requests[1].json())


async def test_a_400_about_a_tool_names_the_tool_and_its_server(anthropic: fa.FakeAnthropic) -> None:
    tools = fixture_tools("union-schema-1.0.0", "catalog")
    provider = anthropic_provider(anthropic.base_url, "claude-sonnet-4-5")
    with pytest.raises(ProviderError) as caught:
        await provider.session(1).turn("", ASK, tools)
    await provider.aclose()
    message = str(caught.value)
    assert "input_schema does not support oneOf, allOf, or anyOf at the top level" in message
    assert "tools.0 is 'get_catalog_resource' of server 'catalog'" in message


async def test_deepseek_reasoner_gets_its_reasoning_content_back_on_the_next_turn() -> None:
    weather = fixture_tools("union-schema-1.0.0", "catalog")[1:]  # any tool: the call is renamed to it
    with ReplayServer("deepseek_reasoner_tool_call", "openai", rename={"weather": "ping"}) as server:
        server.enqueue(fo.completion_reply(text=["It is sunny."]))
        provider = openai_provider(server.sdk_base_url, "deepseek-reasoner")
        session = provider.session(1)
        first = await session.turn("", ASK, weather)
        (call,) = first.tool_calls
        history: list[Message] = [
            *ASK,
            AssistantTurn(first.text, first.tool_calls),
            ToolResults([ToolOutcome(call.call_id, call.name, "pong")]),
        ]
        second = await session.turn("", history, weather)
        await provider.aclose()
        assistant: dict[str, Any] = server.requests[1].json()["messages"][1]
    assert second.text == "It is sunny."
    assert assistant["reasoning_content"].startswith("The user is asking for the weather")
