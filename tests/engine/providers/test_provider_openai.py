"""OpenAIProvider through the real ``openai`` SDK doing real HTTP to a local fake."""

from __future__ import annotations

import random
import ssl
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
import pytest

from proctor.engine.providers import registry
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
from proctor.engine.providers.openai_provider import OpenAIProvider
from proctor.engine.providers.prices import PriceTable
from proctor.engine.providers.retry import Backoff
from proctor.engine.tools.toolbox import ToolSpec
from proctor.scenarios.schema import ModelSettings, ProviderSpec
from proctor.store.events import ToolCallRequest
from tests.fakes import fake_openai as fo
from tests.fakes.fake_openai import CallPiece
from tests.fakes.recording_sleep import RecordingSleep

KEY = "sk-proj-TESTKEY-0123456789abcdef"
GREP = ToolSpec("grep", "Search files", {"type": "object", "properties": {"pattern": {"type": "string"}}})
# One TLS context for every client: loading CA certificates per client costs ~0.2 s.
TLS = ssl.create_default_context()
ASK: list[Message] = [UserMessage("Where is TopicCreator defined?")]


@pytest.fixture
def fake() -> Iterator[fo.FakeOpenAI]:
    with fo.FakeOpenAI() as server:
        yield server


@pytest.fixture
def sleep() -> RecordingSleep:
    return RecordingSleep()


def make_provider(fake: fo.FakeOpenAI, sleep: RecordingSleep, **overrides: Any) -> OpenAIProvider:
    options: dict[str, Any] = {
        "api_key": KEY,
        "base_url": fake.openai_base_url,
        "prices": PriceTable(),
        "backoff": Backoff(base_s=0.01, multiplier=2.0, max_s=1.0, jitter=0.0),
        "sleep": sleep,
        "rng": random.Random(0),
        "deadline_s": 10.0,
        "request_timeout_s": 5.0,
        "http_client": httpx2.AsyncClient(verify=TLS),
    }
    options.update(overrides)
    return OpenAIProvider("gpt-test", **options)


@pytest.fixture
async def provider(fake: fo.FakeOpenAI, sleep: RecordingSleep) -> AsyncIterator[OpenAIProvider]:
    made = make_provider(fake, sleep)
    yield made
    await made.aclose()


async def test_identity() -> None:
    made = OpenAIProvider("gpt-x", api_key=KEY, base_url="http://127.0.0.1:9/v1", prices=PriceTable())
    assert made.model_id == "openai:gpt-x"
    assert made.provider_name == "openai"
    await made.aclose()
    with pytest.raises(ValueError):
        OpenAIProvider("gpt-x", api_key="", prices=PriceTable())


async def test_streams_text_deltas(fake: fo.FakeOpenAI, provider: OpenAIProvider) -> None:
    fake.enqueue(fo.completion_reply(text=["It is ", "in app/", "topics.py:12"]))
    deltas: list[str] = []

    async def on_text(delta: str) -> None:
        deltas.append(delta)

    turn = await provider.session(3).turn("Be brief.", ASK, [GREP], on_text=on_text)
    assert deltas == ["It is ", "in app/", "topics.py:12"]
    assert turn.text == "It is in app/topics.py:12"
    assert turn.tool_calls == []
    assert turn.stop_reason == "end_turn"
    assert (turn.usage.input_tokens, turn.usage.output_tokens, turn.usage.estimated) == (20, 7, False)
    assert turn.retries == 0


async def test_request_wire_format(fake: fo.FakeOpenAI, sleep: RecordingSleep) -> None:
    settings = ModelSettings(max_output_tokens=222, temperature=0.0)
    made = make_provider(fake, sleep, plan=plan_request("openai:gpt-test", settings))
    fake.enqueue(fo.completion_reply(text=["ok"]))
    conversation: list[Message] = [
        UserMessage("find it"),
        AssistantTurn(
            "",
            [
                ToolCallRequest(call_id="call_1", name="grep", arguments={"pattern": "Topic"}),
                ToolCallRequest(call_id="call_2", name="grep", arguments={"__raw__": '{"pattern": oops'}),
            ],
        ),
        ToolResults(
            [ToolOutcome("call_1", "grep", "a.py:3"), ToolOutcome("call_2", "grep", "bad args", True)]
        ),
        AssistantTurn("Found it."),
        UserMessage("thanks"),
    ]
    await made.session(42).turn("system prompt", conversation, [GREP])
    await made.aclose()
    request = fake.requests[0]
    body = request.json()
    assert request.path == "/v1/chat/completions"
    assert body["model"] == "gpt-test"
    assert body["seed"] == 42
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 222
    assert "max_completion_tokens" not in body
    assert body["temperature"] == 0.0
    assert body["tools"] == [
        {
            "type": "function",
            "function": {"name": "grep", "description": "Search files", "parameters": GREP.input_schema},
        }
    ]
    assert body["messages"] == [
        {"role": "system", "content": "system prompt"},
        {"role": "user", "content": "find it"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "grep", "arguments": '{"pattern": "Topic"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "grep", "arguments": '{"pattern": oops'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "a.py:3"},
        {"role": "tool", "tool_call_id": "call_2", "content": "Error: bad args"},
        {"role": "assistant", "content": "Found it."},
        {"role": "user", "content": "thanks"},
    ]


async def test_official_endpoint_uses_max_completion_tokens(
    fake: fo.FakeOpenAI, sleep: RecordingSleep, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake.openai_base_url)
    plan = plan_request("openai:gpt-4.1", ModelSettings(max_output_tokens=99))
    made = make_provider(fake, sleep, base_url=None, plan=plan)
    fake.enqueue(fo.completion_reply(text=["ok"]))
    await made.session(1).turn("", ASK, [])
    await made.aclose()
    body = fake.requests[0].json()
    assert body["max_completion_tokens"] == 99
    assert "max_tokens" not in body
    assert "tools" not in body
    assert "temperature" not in body
    assert body["messages"] == [{"role": "user", "content": "Where is TopicCreator defined?"}]


async def test_key_travels_only_in_the_authorization_header(
    fake: fo.FakeOpenAI, provider: OpenAIProvider
) -> None:
    fake.enqueue(fo.completion_reply(text=["hi"]))
    await provider.session(1).turn("sys", ASK, [GREP])
    request = fake.requests[0]
    assert request.headers["authorization"] == f"Bearer {KEY}"
    others = {name: value for name, value in request.headers.items() if name != "authorization"}
    assert KEY not in repr(others)
    assert KEY.encode() not in request.body
    assert KEY not in request.path


async def test_single_tool_call_in_pieces(fake: fo.FakeOpenAI, provider: OpenAIProvider) -> None:
    fake.enqueue(
        fo.completion_reply(
            calls=[
                CallPiece(0, "", call_id="call_a", name="grep"),
                CallPiece(0, '{"pat'),
                CallPiece(0, 'tern": "Topic'),
                CallPiece(0, 'Creator"}'),
            ]
        )
    )
    turn = await provider.session(1).turn("sys", ASK, [GREP])
    assert turn.tool_calls == [
        ToolCallRequest(call_id="call_a", name="grep", arguments={"pattern": "TopicCreator"})
    ]
    assert turn.stop_reason == "tool_use"


async def test_parallel_tool_calls_interleaved(fake: fo.FakeOpenAI, provider: OpenAIProvider) -> None:
    fake.enqueue(
        fo.completion_reply(
            text=["Two searches."],
            calls=[
                CallPiece(0, '{"pattern":', call_id="call_a", name="grep"),
                CallPiece(1, '{"path": "x', call_id="call_b", name="read"),
                CallPiece(0, ' "a"}'),
                CallPiece(1, '.py"}'),
            ],
        )
    )
    turn = await provider.session(1).turn("sys", ASK, [GREP])
    assert turn.text == "Two searches."
    assert [(c.call_id, c.name, c.arguments) for c in turn.tool_calls] == [
        ("call_a", "grep", {"pattern": "a"}),
        ("call_b", "read", {"path": "x.py"}),
    ]


async def test_parallel_tool_calls_whole_in_one_chunk(fake: fo.FakeOpenAI, provider: OpenAIProvider) -> None:
    fake.enqueue(
        fo.completion_reply(
            calls=[
                CallPiece(0, '{"pattern": "a"}', call_id="call_a", name="grep"),
                CallPiece(1, "{}", call_id="call_b", name="list"),
                CallPiece(2, "", call_id="call_c", name="status"),
            ],
            calls_per_chunk=3,
        )
    )
    turn = await provider.session(1).turn("sys", ASK, [GREP])
    assert [(c.call_id, c.name, c.arguments) for c in turn.tool_calls] == [
        ("call_a", "grep", {"pattern": "a"}),
        ("call_b", "list", {}),
        ("call_c", "status", {}),
    ]


async def test_reused_index_with_a_new_id_is_a_new_call(
    fake: fo.FakeOpenAI, provider: OpenAIProvider
) -> None:
    fake.enqueue(
        fo.completion_reply(
            calls=[
                CallPiece(0, '{"pattern": "a"}', call_id="call_a", name="grep"),
                CallPiece(0, '{"pattern": ', call_id="call_b", name="grep"),
                CallPiece(0, '"b"}'),
            ]
        )
    )
    turn = await provider.session(1).turn("sys", ASK, [GREP])
    assert [(c.call_id, c.arguments) for c in turn.tool_calls] == [
        ("call_a", {"pattern": "a"}),
        ("call_b", {"pattern": "b"}),
    ]


async def test_malformed_arguments_are_kept_raw(fake: fo.FakeOpenAI, provider: OpenAIProvider) -> None:
    fake.enqueue(
        fo.completion_reply(
            calls=[
                CallPiece(0, '{"pattern": "a"', call_id="call_a", name="grep"),
                CallPiece(1, "[1]", "call_b", "x"),
            ]
        )
    )
    turn = await provider.session(1).turn("sys", ASK, [GREP])
    assert [c.arguments for c in turn.tool_calls] == [{"__raw__": '{"pattern": "a"'}, {"__raw__": "[1]"}]


async def test_stop_with_tool_calls_counts_as_tool_use(fake: fo.FakeOpenAI, provider: OpenAIProvider) -> None:
    fake.enqueue(
        fo.completion_reply(calls=[CallPiece(0, "{}", call_id="call_a", name="list")], finish_reason="stop"),
        fo.completion_reply(text=["cut"], finish_reason="length"),
    )
    assert (await provider.session(1).turn("sys", ASK, [])).stop_reason == "tool_use"
    assert (await provider.session(1).turn("sys", ASK, [])).stop_reason == "max_tokens"


async def test_cached_tokens_are_split_out(fake: fo.FakeOpenAI, provider: OpenAIProvider) -> None:
    fake.enqueue(
        fo.completion_reply(
            text=["ok"], usage=fo.WireUsage(prompt_tokens=1000, completion_tokens=9, cached_tokens=768)
        )
    )
    turn = await provider.session(1).turn("sys", ASK, [])
    assert (turn.usage.input_tokens, turn.usage.cache_read_tokens, turn.usage.output_tokens) == (232, 768, 9)
    assert not turn.usage.estimated


async def test_missing_usage_is_estimated(fake: fo.FakeOpenAI, provider: OpenAIProvider) -> None:
    fake.enqueue(fo.completion_reply(text=["An answer of some length."], usage=None))
    turn = await provider.session(1).turn("A system prompt.", ASK, [GREP])
    assert turn.usage.estimated
    assert turn.usage.input_tokens > 0
    assert turn.usage.output_tokens > 0


async def test_429_honours_retry_after(
    fake: fo.FakeOpenAI, provider: OpenAIProvider, sleep: RecordingSleep
) -> None:
    fake.enqueue(fo.rate_limited(retry_after_s=0.75), fo.completion_reply(text=["ok"]))
    turn = await provider.session(1).turn("sys", ASK, [])
    assert (turn.text, turn.retries) == ("ok", 1)
    assert sleep.delays == [0.75]


async def test_retry_after_beyond_the_deadline_gives_up(fake: fo.FakeOpenAI, sleep: RecordingSleep) -> None:
    made = make_provider(fake, sleep, deadline_s=1.0)
    fake.enqueue(fo.rate_limited(retry_after_s=120), fo.completion_reply(text=["never"]))
    with pytest.raises(ProviderError) as caught:
        await made.session(1).turn("sys", ASK, [])
    await made.aclose()
    assert (caught.value.error_type, caught.value.retries) == ("rate_limited", 0)
    assert sleep.delays == []


async def test_5xx_are_retried_with_backoff(
    fake: fo.FakeOpenAI, provider: OpenAIProvider, sleep: RecordingSleep
) -> None:
    fake.enqueue(
        fo.server_error(500), fo.server_error(503), fo.server_error(529), fo.completion_reply(text=["fine"])
    )
    turn = await provider.session(1).turn("sys", ASK, [])
    assert (turn.text, turn.retries) == ("fine", 3)
    assert sleep.delays == [0.01, 0.02, 0.04]
    assert len(fake.requests) == 4


async def test_error_mid_stream_is_retried(fake: fo.FakeOpenAI, provider: OpenAIProvider) -> None:
    fake.enqueue(fo.midstream_error_reply(), fo.completion_reply(text=["whole"]))
    turn = await provider.session(1).turn("sys", ASK, [])
    assert (turn.text, turn.retries) == ("whole", 1)


async def test_truncated_stream_and_dropped_connection_are_retried(
    fake: fo.FakeOpenAI, provider: OpenAIProvider
) -> None:
    fake.enqueue(fo.truncated_reply(), fo.DROP, fo.completion_reply(text=["done"]))
    turn = await provider.session(1).turn("sys", ASK, [])
    assert (turn.text, turn.retries) == ("done", 2)


async def test_401_is_not_retried_and_the_key_is_not_in_the_error(
    fake: fo.FakeOpenAI, provider: OpenAIProvider, sleep: RecordingSleep
) -> None:
    fake.enqueue(fo.unauthorized(f"Incorrect API key provided: {KEY}."), fo.completion_reply(text=["never"]))
    with pytest.raises(ProviderError) as caught:
        await provider.session(1).turn("sys", ASK, [])
    assert (caught.value.error_type, caught.value.retries) == ("auth", 0)
    assert KEY not in str(caught.value)
    assert "TESTKEY" not in str(caught.value)
    assert caught.value.__cause__ is None
    assert sleep.delays == []
    assert len(fake.requests) == 1


async def test_quota_429_is_not_retried(fake: fo.FakeOpenAI, provider: OpenAIProvider) -> None:
    fake.enqueue(fo.error_reply(429, "You exceeded your quota", "insufficient_quota", "insufficient_quota"))
    with pytest.raises(ProviderError) as caught:
        await provider.session(1).turn("sys", ASK, [])
    assert caught.value.error_type == "quota"
    assert len(fake.requests) == 1


async def test_hang_times_out_within_the_deadline(fake: fo.FakeOpenAI, sleep: RecordingSleep) -> None:
    made = make_provider(fake, sleep, deadline_s=0.25, request_timeout_s=30.0)
    fake.enqueue(fo.HANG)
    started = time.monotonic()
    with pytest.raises(ProviderError) as caught:
        await made.session(1).turn("sys", ASK, [])
    elapsed = time.monotonic() - started
    await made.aclose()
    assert caught.value.error_type == "timeout"
    # The deadline (0.25 s) ended it, not the request timeout (30 s): the margin is for a busy machine.
    assert 0.2 < elapsed < 15.0


async def test_request_timeouts_until_attempts_run_out(fake: fo.FakeOpenAI, sleep: RecordingSleep) -> None:
    made = make_provider(fake, sleep, deadline_s=5.0, request_timeout_s=0.1, max_attempts=2)
    fake.enqueue(fo.HANG, fo.HANG, fo.completion_reply(text=["late"]))
    with pytest.raises(ProviderError) as caught:
        await made.session(1).turn("sys", ASK, [])
    await made.aclose()
    assert (caught.value.error_type, caught.value.retries) == ("timeout", 1)
    assert len(fake.requests) == 2


async def test_empty_key_is_allowed_for_a_compatible_server(
    fake: fo.FakeOpenAI, sleep: RecordingSleep
) -> None:
    made = make_provider(fake, sleep, api_key="")
    fake.enqueue(fo.completion_reply(text=["local"]))
    turn = await made.session(1).turn("sys", ASK, [])
    await made.aclose()
    assert turn.text == "local"


async def test_tool_images_follow_the_tool_messages_as_one_user_message(
    fake: fo.FakeOpenAI, sleep: RecordingSleep
) -> None:
    made = make_provider(fake, sleep)
    fake.enqueue(fo.completion_reply(text=["a logo"]))
    conversation: list[Message] = [
        UserMessage("what is on the picture?"),
        AssistantTurn("", [ToolCallRequest(call_id="call_1", name="grep", arguments={})]),
        ToolResults(
            [
                ToolOutcome(
                    "call_1", "grep", "[image image/png, 3 bytes]", images=(ToolImage("image/png", "AAEC"),)
                )
            ]
        ),
    ]
    await made.session(1).turn("", conversation, [GREP])
    await made.aclose()
    messages = fake.requests[0].json()["messages"]
    assert messages[-2] == {"role": "tool", "tool_call_id": "call_1", "content": "[image image/png, 3 bytes]"}
    assert messages[-1] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "Images returned by tool call call_1 (grep):"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAEC"}},
        ],
    }


async def test_a_local_openai_compatible_server_needs_no_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with fo.FakeOpenAI() as local:
        local.enqueue(fo.completion_reply(text=["hi from llama"]))
        specs = {"openai": ProviderSpec(base_url=local.openai_base_url)}
        made = registry.make_provider("openai:llama3", PriceTable(), specs)
        reply = await made.session(1).turn("", ASK, [])
        await made.aclose()
        assert reply.text == "hi from llama"
        assert local.requests[0].headers["authorization"] == f"Bearer {registry.KEYLESS_PLACEHOLDER}"
    with pytest.raises(registry.ProviderConfigError, match="no API key: set OPENAI_API_KEY"):
        registry.make_provider("openai:gpt-4.1", PriceTable(), {})
    official = {"openai": ProviderSpec(base_url="https://api.openai.com/v1")}
    with pytest.raises(registry.ProviderConfigError, match="no API key"):
        registry.make_provider("openai:gpt-4.1", PriceTable(), official)
