"""AnthropicProvider through the real ``anthropic`` SDK doing real HTTP to a local fake."""

from __future__ import annotations

import random
import ssl
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
import pytest

from proctor.engine.providers.anthropic_provider import AnthropicProvider
from proctor.engine.providers.base import (
    AssistantTurn,
    Message,
    ProviderError,
    ToolImage,
    ToolOutcome,
    ToolResults,
    UserMessage,
)
from proctor.engine.providers.model_rules import plan_request
from proctor.engine.providers.prices import PriceTable
from proctor.engine.providers.retry import Backoff
from proctor.engine.tools.toolbox import ToolSpec
from proctor.scenarios.schema import ModelSettings
from proctor.store.events import ToolCallRequest
from tests.fakes import fake_anthropic as fa
from tests.fakes.recording_sleep import RecordingSleep

KEY = "sk-ant-api03-TESTKEY-0123456789abcdef"
GREP = ToolSpec("grep", "Search files", {"type": "object", "properties": {"pattern": {"type": "string"}}})
# One TLS context for every client: loading CA certificates per client costs ~0.2 s.
TLS = ssl.create_default_context()
ASK: list[Message] = [UserMessage("Where is TopicCreator defined?")]


@pytest.fixture
def fake() -> Iterator[fa.FakeAnthropic]:
    with fa.FakeAnthropic() as server:
        yield server


@pytest.fixture
def sleep() -> RecordingSleep:
    return RecordingSleep()


def make_provider(fake: fa.FakeAnthropic, sleep: RecordingSleep, **overrides: Any) -> AnthropicProvider:
    options: dict[str, Any] = {
        "api_key": KEY,
        "base_url": fake.base_url,
        "prices": PriceTable(),
        "backoff": Backoff(base_s=0.01, multiplier=2.0, max_s=1.0, jitter=0.0),
        "sleep": sleep,
        "rng": random.Random(0),
        "deadline_s": 10.0,
        "request_timeout_s": 5.0,
        "http_client": httpx2.AsyncClient(verify=TLS),
    }
    options.update(overrides)
    return AnthropicProvider("claude-test", **options)


@pytest.fixture
async def provider(fake: fa.FakeAnthropic, sleep: RecordingSleep) -> AsyncIterator[AnthropicProvider]:
    made = make_provider(fake, sleep)
    yield made
    await made.aclose()


async def test_identity() -> None:
    made = AnthropicProvider("claude-x", api_key=KEY, base_url="http://127.0.0.1:9", prices=PriceTable())
    assert made.model_id == "anthropic:claude-x"
    assert made.provider_name == "anthropic"
    await made.aclose()
    with pytest.raises(ValueError):
        AnthropicProvider("claude-x", api_key="", prices=PriceTable())


async def test_streams_text_deltas(fake: fa.FakeAnthropic, provider: AnthropicProvider) -> None:
    fake.enqueue(fa.message_reply(text=["The class ", "is in ", "app/topics.py:12"]))
    deltas: list[str] = []

    async def on_text(delta: str) -> None:
        deltas.append(delta)

    turn = await provider.session(3).turn("Be brief.", ASK, [GREP], on_text=on_text)
    assert deltas == ["The class ", "is in ", "app/topics.py:12"]
    assert turn.text == "The class is in app/topics.py:12"
    assert turn.tool_calls == []
    assert turn.stop_reason == "end_turn"
    assert turn.retries == 0
    assert turn.usage.input_tokens == 10
    assert turn.usage.output_tokens == 5
    assert not turn.usage.estimated


async def test_request_wire_format(fake: fa.FakeAnthropic, sleep: RecordingSleep) -> None:
    settings = ModelSettings(max_output_tokens=321, temperature=0.2)
    made = make_provider(fake, sleep, plan=plan_request("anthropic:claude-test", settings))
    fake.enqueue(fa.message_reply(text=["ok"]))
    conversation: list[Message] = [
        UserMessage("find it"),
        AssistantTurn(
            "Searching.",
            [
                ToolCallRequest(call_id="tu_1", name="grep", arguments={"pattern": "Topic"}),
                ToolCallRequest(call_id="tu_2", name="grep", arguments={"pattern": "Creator"}),
            ],
        ),
        ToolResults(
            [ToolOutcome("tu_1", "grep", "a.py:3"), ToolOutcome("tu_2", "grep", "no such dir", is_error=True)]
        ),
        UserMessage("and now?"),
        AssistantTurn(""),
        UserMessage("answer"),
    ]
    await made.session(1).turn("system prompt", conversation, [GREP])
    await made.aclose()
    body = fake.requests[0].json()
    assert fake.requests[0].path == "/v1/messages"
    assert body["model"] == "claude-test"
    assert body["max_tokens"] == 321
    assert body["temperature"] == 0.2
    assert body["stream"] is True
    assert body["system"] == "system prompt"
    assert "seed" not in body
    assert body["tools"] == [
        {"name": "grep", "description": "Search files", "input_schema": GREP.input_schema}
    ]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "find it"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Searching."},
                {"type": "tool_use", "id": "tu_1", "name": "grep", "input": {"pattern": "Topic"}},
                {"type": "tool_use", "id": "tu_2", "name": "grep", "input": {"pattern": "Creator"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "tu_1", "content": "a.py:3", "is_error": False},
                {"type": "tool_result", "tool_use_id": "tu_2", "content": "no such dir", "is_error": True},
                {"type": "text", "text": "and now?"},
                {"type": "text", "text": "answer"},
            ],
        },
    ]


async def test_no_system_no_tools_no_temperature_are_omitted(
    fake: fa.FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.enqueue(fa.message_reply(text=["hi"]))
    await provider.session(1).turn("", ASK, [])
    body = fake.requests[0].json()
    assert "system" not in body
    assert "tools" not in body
    assert "temperature" not in body


async def test_key_travels_only_in_the_authorization_header(
    fake: fa.FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.enqueue(fa.message_reply(text=["hi"]))
    await provider.session(1).turn("sys", ASK, [GREP])
    request = fake.requests[0]
    assert request.headers["authorization"] == f"Bearer {KEY}"
    others = {name: value for name, value in request.headers.items() if name != "authorization"}
    assert KEY not in repr(others)
    assert KEY.encode() not in request.body
    assert KEY not in request.path


async def test_single_tool_use_in_pieces(fake: fa.FakeAnthropic, provider: AnthropicProvider) -> None:
    fake.enqueue(
        fa.message_reply(
            text=["Let me look."],
            tools=[fa.ToolUseScript("toolu_1", "grep", ['{"pat', 'tern": "Topic', 'Creator"}'])],
        )
    )
    turn = await provider.session(1).turn("sys", ASK, [GREP])
    assert turn.text == "Let me look."
    assert turn.tool_calls == [
        ToolCallRequest(call_id="toolu_1", name="grep", arguments={"pattern": "TopicCreator"})
    ]
    assert turn.stop_reason == "tool_use"


async def test_parallel_tool_uses(fake: fa.FakeAnthropic, provider: AnthropicProvider) -> None:
    fake.enqueue(
        fa.message_reply(
            tools=[
                fa.ToolUseScript("toolu_a", "grep", ['{"pattern": "a"}']),
                fa.ToolUseScript("toolu_b", "read", ['{"path": ', '"x.py"}']),
                fa.ToolUseScript("toolu_c", "list", []),
            ]
        )
    )
    turn = await provider.session(1).turn("sys", ASK, [GREP])
    assert [(c.call_id, c.name, c.arguments) for c in turn.tool_calls] == [
        ("toolu_a", "grep", {"pattern": "a"}),
        ("toolu_b", "read", {"path": "x.py"}),
        ("toolu_c", "list", {}),
    ]


async def test_malformed_tool_json_is_kept_raw(fake: fa.FakeAnthropic, provider: AnthropicProvider) -> None:
    fake.enqueue(fa.message_reply(tools=[fa.ToolUseScript("toolu_1", "grep", ['{"pattern": ', "oops"])]))
    turn = await provider.session(1).turn("sys", ASK, [GREP])
    assert turn.tool_calls[0].arguments == {"__raw__": '{"pattern": oops'}


async def test_cache_usage_is_captured(fake: fa.FakeAnthropic, provider: AnthropicProvider) -> None:
    usage = fa.WireUsage(
        input_tokens=40, output_tokens=9, cache_read_input_tokens=900, cache_creation_input_tokens=70
    )
    fake.enqueue(fa.message_reply(text=["ok"], usage=usage))
    turn = await provider.session(1).turn("sys", ASK, [GREP])
    assert (turn.usage.input_tokens, turn.usage.output_tokens) == (40, 9)
    assert (turn.usage.cache_read_tokens, turn.usage.cache_write_tokens) == (900, 70)
    assert not turn.usage.estimated


async def test_missing_usage_is_estimated(fake: fa.FakeAnthropic, provider: AnthropicProvider) -> None:
    fake.enqueue(fa.message_reply(text=["An answer of some length."], usage=None))
    turn = await provider.session(1).turn("A system prompt.", ASK, [GREP])
    assert turn.usage.estimated
    assert turn.usage.input_tokens > 0
    assert turn.usage.output_tokens > 0


async def test_max_tokens_stop_reason(fake: fa.FakeAnthropic, provider: AnthropicProvider) -> None:
    fake.enqueue(fa.message_reply(text=["cut"], stop_reason="max_tokens"))
    turn = await provider.session(1).turn("sys", ASK, [])
    assert turn.stop_reason == "max_tokens"


async def test_429_honours_retry_after(
    fake: fa.FakeAnthropic, provider: AnthropicProvider, sleep: RecordingSleep
) -> None:
    fake.enqueue(fa.rate_limited(retry_after_s=0.5), fa.message_reply(text=["ok"]))
    turn = await provider.session(1).turn("sys", ASK, [])
    assert turn.text == "ok"
    assert turn.retries == 1
    assert sleep.delays == [0.5]
    assert len(fake.requests) == 2


async def test_retry_after_beyond_the_deadline_gives_up(
    fake: fa.FakeAnthropic, sleep: RecordingSleep
) -> None:
    made = make_provider(fake, sleep, deadline_s=2.0)
    fake.enqueue(fa.rate_limited(retry_after_s=600), fa.message_reply(text=["never"]))
    with pytest.raises(ProviderError) as caught:
        await made.session(1).turn("sys", ASK, [])
    await made.aclose()
    assert caught.value.error_type == "rate_limited"
    assert sleep.delays == []
    assert len(fake.requests) == 1


async def test_500_and_529_are_retried_with_backoff(
    fake: fa.FakeAnthropic, provider: AnthropicProvider, sleep: RecordingSleep
) -> None:
    fake.enqueue(fa.server_error(), fa.overloaded(), fa.message_reply(text=["fine"]))
    turn = await provider.session(1).turn("sys", ASK, [])
    assert turn.text == "fine"
    assert turn.retries == 2
    assert sleep.delays == [0.01, 0.02]
    assert len(fake.requests) == 3


async def test_overloaded_until_attempts_run_out(fake: fa.FakeAnthropic, sleep: RecordingSleep) -> None:
    made = make_provider(fake, sleep, max_attempts=3)
    fake.enqueue(fa.overloaded(), fa.overloaded(), fa.overloaded(), fa.message_reply(text=["late"]))
    with pytest.raises(ProviderError) as caught:
        await made.session(1).turn("sys", ASK, [])
    await made.aclose()
    assert (caught.value.error_type, caught.value.retries) == ("overloaded", 2)
    assert len(fake.requests) == 3


async def test_error_event_mid_stream_is_retried(
    fake: fa.FakeAnthropic, provider: AnthropicProvider, sleep: RecordingSleep
) -> None:
    fake.enqueue(fa.midstream_error_reply("overloaded_error"), fa.message_reply(text=["whole"]))
    turn = await provider.session(1).turn("sys", ASK, [])
    assert turn.text == "whole"
    assert turn.retries == 1
    assert len(fake.requests) == 2


async def test_client_error_event_mid_stream_is_final(
    fake: fa.FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.enqueue(fa.midstream_error_reply("invalid_request_error", "bad"), fa.message_reply(text=["x"]))
    with pytest.raises(ProviderError) as caught:
        await provider.session(1).turn("sys", ASK, [])
    assert (caught.value.error_type, caught.value.retries) == ("stream_error", 0)
    assert "invalid_request_error" in str(caught.value)


async def test_truncated_stream_and_dropped_connection_are_retried(
    fake: fa.FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.enqueue(fa.truncated_reply(), fa.DROP, fa.message_reply(text=["done"]))
    turn = await provider.session(1).turn("sys", ASK, [])
    assert turn.text == "done"
    assert turn.retries == 2


async def test_401_is_not_retried_and_the_key_is_not_in_the_error(
    fake: fa.FakeAnthropic, provider: AnthropicProvider, sleep: RecordingSleep
) -> None:
    fake.enqueue(fa.unauthorized(f"invalid x-api-key: {KEY}"), fa.message_reply(text=["never"]))
    with pytest.raises(ProviderError) as caught:
        await provider.session(1).turn("sys", ASK, [])
    assert (caught.value.error_type, caught.value.retries) == ("auth", 0)
    assert "401" in str(caught.value)
    assert KEY not in str(caught.value)
    assert "TESTKEY" not in str(caught.value)
    assert caught.value.__cause__ is None
    assert sleep.delays == []
    assert len(fake.requests) == 1


async def test_hang_times_out_within_the_deadline(fake: fa.FakeAnthropic, sleep: RecordingSleep) -> None:
    made = make_provider(fake, sleep, deadline_s=0.25, request_timeout_s=30.0)
    fake.enqueue(fa.HANG)
    started = time.monotonic()
    with pytest.raises(ProviderError) as caught:
        await made.session(1).turn("sys", ASK, [])
    elapsed = time.monotonic() - started
    await made.aclose()
    assert caught.value.error_type == "timeout"
    # The deadline (0.25 s) ended it, not the request timeout (30 s): the margin is for a busy machine.
    assert 0.2 < elapsed < 15.0


async def test_hang_mid_stream_times_out(fake: fa.FakeAnthropic, sleep: RecordingSleep) -> None:
    made = make_provider(fake, sleep, deadline_s=0.25, request_timeout_s=30.0)
    fake.enqueue(fa.hang_mid_stream_reply())
    with pytest.raises(ProviderError) as caught:
        await made.session(1).turn("sys", ASK, [])
    await made.aclose()
    assert caught.value.error_type == "timeout"


async def test_request_timeout_is_retried_then_succeeds(
    fake: fa.FakeAnthropic, sleep: RecordingSleep
) -> None:
    made = make_provider(fake, sleep, deadline_s=5.0, request_timeout_s=0.1)
    fake.enqueue(fa.HANG, fa.message_reply(text=["after a timeout"]))
    turn = await made.session(1).turn("sys", ASK, [])
    await made.aclose()
    assert turn.text == "after a timeout"
    assert turn.retries == 1


async def test_cost_uses_the_price_table(fake: fa.FakeAnthropic, sleep: RecordingSleep) -> None:
    from proctor.scenarios.schema import Price

    made = make_provider(fake, sleep, prices=PriceTable({"claude-test": Price(input=1_000_000, output=0)}))
    fake.enqueue(fa.message_reply(text=["ok"], usage=fa.WireUsage(input_tokens=3, output_tokens=4)))
    turn = await made.session(1).turn("sys", ASK, [])
    await made.aclose()
    assert made.cost(turn.usage) == pytest.approx(3.0)


async def test_thinking_blocks_are_echoed_back_verbatim(
    fake: fa.FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.enqueue(
        fa.message_reply(
            thinking=["I should ", "grep."],
            signature="sig-123",
            redacted="opaque==",
            text=["Searching."],
            tools=[fa.ToolUseScript("toolu_1", "grep", ['{"pattern": "T"}'])],
        ),
        fa.message_reply(text=["Found."]),
    )
    session = provider.session(1)
    deltas: list[str] = []

    async def on_text(delta: str) -> None:
        deltas.append(delta)

    first = await session.turn("sys", ASK, [GREP], on_text=on_text)
    assert first.text == "Searching."
    assert deltas == ["Searching."]
    follow_up: list[Message] = [
        *ASK,
        AssistantTurn(first.text, first.tool_calls),
        ToolResults([ToolOutcome("toolu_1", "grep", "a.py:1")]),
    ]
    second = await session.turn("sys", follow_up, [GREP])
    assert second.text == "Found."
    assistant = fake.requests[1].json()["messages"][1]
    assert assistant == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "I should grep.", "signature": "sig-123"},
            {"type": "redacted_thinking", "data": "opaque=="},
            {"type": "text", "text": "Searching."},
            {"type": "tool_use", "id": "toolu_1", "name": "grep", "input": {"pattern": "T"}},
        ],
    }
    fake.enqueue(fa.message_reply(text=["Again."]))
    await provider.session(2).turn("sys", follow_up, [GREP])
    rebuilt = fake.requests[2].json()["messages"][1]["content"]
    assert [block["type"] for block in rebuilt] == ["text", "tool_use"]


async def test_tool_images_travel_as_image_blocks_inside_the_tool_result(
    fake: fa.FakeAnthropic, sleep: RecordingSleep
) -> None:
    made = make_provider(fake, sleep)
    fake.enqueue(fa.message_reply(text=["a logo"]))
    conversation: list[Message] = [
        UserMessage("what is on the picture?"),
        AssistantTurn("", [ToolCallRequest(call_id="tu_1", name="grep", arguments={})]),
        ToolResults(
            [
                ToolOutcome(
                    "tu_1", "grep", "[image image/png, 3 bytes]", images=(ToolImage("image/png", "AAEC"),)
                )
            ]
        ),
    ]
    await made.session(1).turn("", conversation, [GREP])
    await made.aclose()
    result = fake.requests[0].json()["messages"][-1]["content"][0]
    assert result == {
        "type": "tool_result",
        "tool_use_id": "tu_1",
        "content": [
            {"type": "text", "text": "[image image/png, 3 bytes]"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAEC"}},
        ],
        "is_error": False,
    }
