"""Answers that are not ordinary answers, read from real recorded traffic (tests/fakes/cassettes/).

Each cassette is served by the replay server on 127.0.0.1 to the real SDK; what proctor makes of
it is checked against what the recording says.
"""

from __future__ import annotations

import json
import ssl
from typing import Any

import httpx2
import pytest

from proctor.engine.providers.anthropic_provider import AnthropicProvider
from proctor.engine.providers.base import Message, ModelTurn, ProviderError, UserMessage
from proctor.engine.providers.openai_provider import OpenAIProvider
from proctor.engine.providers.prices import PriceTable
from proctor.engine.providers.retry import Backoff
from proctor.engine.tools.toolbox import ToolSpec
from tests.fakes import fake_anthropic as fa
from tests.fakes import fake_openai as fo
from tests.fakes.recording_sleep import RecordingSleep
from tests.fakes.replay_server import Api, ReplayServer

TLS = ssl.create_default_context()
ASK: list[Message] = [UserMessage("Go on.")]
FAST = Backoff(base_s=0.001, multiplier=1.0, max_s=0.001, jitter=0.0)


def provider(server: ReplayServer | fa.FakeAnthropic | fo.FakeOpenAI, api: Api, model: str, **kw: Any) -> Any:
    base_url = server.sdk_base_url if isinstance(server, ReplayServer) else (
        server.base_url if isinstance(server, fa.FakeAnthropic) else server.openai_base_url
    )  # fmt: skip
    cls = AnthropicProvider if api == "anthropic" else OpenAIProvider
    options: dict[str, Any] = {
        "api_key": "sk-test-RECORDED-0123456789abcdef",
        "base_url": base_url,
        "prices": PriceTable(),
        "deadline_s": 10.0,
        "backoff": FAST,
        "sleep": RecordingSleep(),
        "http_client": httpx2.AsyncClient(verify=TLS),
    } | kw
    return cls(model, **options)


async def replay(
    name: str, api: Api, model: str, tools: list[ToolSpec] | None = None
) -> tuple[ModelTurn, ReplayServer]:
    with ReplayServer(name, api) as server:
        made = provider(server, api, model)
        turn = await made.session(1).turn("", ASK, tools or [])
        await made.aclose()
    return turn, server


async def test_an_anthropic_reply_cut_at_max_tokens_says_so() -> None:
    turn, _ = await replay("anthropic_max_tokens", "anthropic", "claude-sonnet-4-5")
    assert turn.stop_reason == "max_tokens"
    assert turn.text == "- Captain\n- Scoop"  # the text as recorded, kept


async def test_an_anthropic_refusal_is_a_refusal_with_no_text() -> None:
    turn, _ = await replay("anthropic_refusal", "anthropic", "claude-fable-5")
    assert (turn.stop_reason, turn.text, turn.tool_calls) == ("refusal", "", [])
    assert turn.usage.output_tokens == 5


async def test_pause_turn_is_continued_with_the_paused_content_sent_back_as_received() -> None:
    turn, server = await replay("anthropic_pause_turn_web_search", "anthropic", "claude-sonnet-4-5")
    assert len(server.requests) == 2
    assert turn.stop_reason == "end_turn"
    recorded = server.cassette.request(1)["messages"][-1]  # what pydantic-ai sent to continue
    sent = server.requests[1].json()["messages"][-1]
    assert sent["role"] == recorded["role"] == "assistant"
    assert [b["type"] for b in sent["content"]] == [b["type"] for b in recorded["content"]]
    assert [b.get("id") for b in sent["content"]] == [b.get("id") for b in recorded["content"]]
    thinking = next(b for b in sent["content"] if b["type"] == "thinking")
    assert (
        thinking["signature"] == next(b for b in recorded["content"] if b["type"] == "thinking")["signature"]
    )
    # The two parts' usage is one turn's; Anthropic counted the paused part's thinking tokens.
    assert turn.usage.input_tokens == 404500 + 482529
    assert turn.usage.reasoning_tokens == 261
    assert [r.source for r in turn.reasoning] == ["thinking"]


async def test_text_blocks_split_by_citations_join_as_written_and_keep_their_citations() -> None:
    turn, _ = await replay("anthropic_pause_turn_web_search", "anthropic", "claude-sonnet-4-5")
    # Runs of text that the searches interrupt are paragraphs, not glued sentences.
    assert (
        "Let me continue with the remaining searches as requested:\n\nLet me continue with the last"
        in turn.text
    )
    assert "requested:Let me" not in turn.text
    # Adjacent blocks a citation split are one sentence, joined as the model wrote it.
    assert "Sunrise today is at 5:50 AM local time, with sunset at 8:35 PM.\n\n**Air Quality**:" in turn.text
    assert len(turn.citations) == 19
    first = turn.citations[0]
    assert first.type == "web_search_result_location" and first.url.startswith("http")
    assert first.supports.startswith("San Francisco's current temperature is 57°F")


async def test_thinking_is_kept_apart_from_the_answer_and_counted() -> None:
    turn, _ = await replay("anthropic_thinking_stream", "anthropic", "claude-sonnet-4-5")
    (thought,) = turn.reasoning
    assert thought.source == "thinking" and thought.text and thought.text not in turn.text
    assert 0 < turn.usage.reasoning_tokens < turn.usage.output_tokens == 282


async def test_an_openai_compatible_reply_cut_at_length_is_truncated_not_an_error() -> None:
    turn, server = await replay("openrouter_length_stop", "openai", "minimax/minimax-m2:free")
    assert len(server.requests) == 1  # the error chunk after finish_reason "length" is not retried
    assert turn.stop_reason == "max_tokens"
    assert turn.reasoning[0].text.startswith("We need to respond to a greeting")


async def test_a_complete_stream_without_finish_reason_is_accepted_once_with_its_reported_cost() -> None:
    turn, server = await replay("openrouter_no_finish_reason", "openai", "anthropic/claude-sonnet-4.5")
    assert len(server.requests) == 1  # main retried it five times, each a billed generation
    assert turn.text == "2 + 2 = 4" and turn.stop_reason == "unreported"
    assert turn.reported_cost_usd == pytest.approx(0.000669)
    assert turn.usage.reasoning_tokens == 13


async def test_xai_reasoning_tokens_are_output_and_its_reported_cost_is_read() -> None:
    turn, _ = await replay("xai_reasoning_tool_call", "openai", "grok-3-mini")
    # completion_tokens 26 leaves out the 227 reasoning tokens (total 560 = 307 + 26 + 227).
    assert turn.usage.output_tokens == 26 + 227  # main: 26, the reasoning left unbilled
    assert turn.usage.reasoning_tokens == 227
    assert (turn.usage.input_tokens, turn.usage.cache_read_tokens) == (1, 306)
    assert turn.reported_cost_usd == pytest.approx(1497500 * 1e-10)
    assert turn.reasoning[0].source == "reasoning_content" and [c.name for c in turn.tool_calls] == [
        "weather"
    ]


async def test_think_tags_in_the_content_are_reasoning_not_the_answer() -> None:
    turn, _ = await replay("groq_think_in_content", "openai", "deepseek-r1-distill-llama-70b")
    assert "<think>" not in turn.text and "</think>" not in turn.text
    (thought,) = turn.reasoning
    assert thought.source == "think_tag" and thought.text.startswith(
        "Okay, so I want to make Uruguayan alfajores"
    )


@pytest.mark.parametrize("api", ["anthropic", "openai"])
async def test_every_billed_attempt_is_counted_when_a_cut_stream_is_retried(api: Api) -> None:
    fake: fa.FakeAnthropic | fo.FakeOpenAI
    with fa.FakeAnthropic() if api == "anthropic" else fo.FakeOpenAI() as fake:  # type: ignore[attr-defined]
        if isinstance(fake, fa.FakeAnthropic):
            fake.enqueue(fa.truncated_reply(), fa.message_reply(text=["done"], usage=fa.WireUsage(10, 5)))
        else:
            fake.enqueue(fo.truncated_reply(), fo.completion_reply(text=["done"], usage=fo.WireUsage(20, 7)))
        made = provider(fake, api, "m-test")
        turn = await made.session(1).turn("", ASK, [])
        await made.aclose()
    assert turn.retries == 1 and turn.text == "done"
    single = 5 if api == "anthropic" else 7
    assert turn.usage.output_tokens > single  # the cut attempt's tokens are in the turn's usage
    # Anthropic reported the cut attempt's input at message_start; the OpenAI stream, nothing.
    assert turn.usage.estimated == (api == "openai")


async def test_a_turn_that_fails_for_good_carries_what_its_attempts_were_billed() -> None:
    with fo.FakeOpenAI() as fake:
        fake.enqueue(*[fo.truncated_reply() for _ in range(2)])
        made = provider(fake, "openai", "m-test", max_attempts=2)
        with pytest.raises(ProviderError) as caught:
            await made.session(1).turn("", ASK, [])
        await made.aclose()
    assert caught.value.usage.output_tokens > 0 and caught.value.usage.input_tokens > 0


def test_the_cassettes_name_their_source_and_licence() -> None:
    from tests.fakes.replay_server import CASSETTES, load_cassette

    for path in sorted(CASSETTES.glob("*.json")):
        source = load_cassette(path.stem).source
        assert source["license"] in ("MIT", "Apache-2.0") and len(source["commit"]) == 40, path
        assert path.stem in (CASSETTES / "README.md").read_text()
    assert json.loads((CASSETTES / "anthropic_max_tokens.json").read_text())["derived"]
