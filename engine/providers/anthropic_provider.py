"""Anthropic Messages API as a ``Provider``: streamed turns, tool use, usage, retries.

The SDK's retries are off; ``call_with_retries`` owns retrying under the trial's deadline.
The wire format (requests, folding stream events) lives in ``anthropic_wire``.
"""

from __future__ import annotations

import asyncio
import random
from typing import TYPE_CHECKING, Any, cast

import anthropic
import httpx2

from proctor.engine.http_limits import CappedTransport, too_large
from proctor.engine.providers.anthropic_wire import (
    AnthropicStreamState,
    to_anthropic_messages,
    to_anthropic_tools,
    turn_fingerprint,
)
from proctor.engine.providers.assembly import estimate_completion_tokens, estimate_prompt_tokens
from proctor.engine.providers.base import Message, ModelSession, ModelTurn, TextDeltaCallback
from proctor.engine.providers.prices import PriceTable
from proctor.engine.providers.retry import Backoff, Failure, Sleep, call_with_retries
from proctor.engine.providers.sdk_errors import (
    IncompleteStreamError,
    connection_failure,
    failure_for_status,
    failure_for_stream_error,
    failure_for_transport,
    wire_error_fields,
)
from proctor.engine.tools.toolbox import ToolSpec
from proctor.store.events import ToolCallRequest, Usage

if TYPE_CHECKING:
    from anthropic.types import MessageParam, ToolParam

SOURCE = "anthropic"
_STOP_REASONS = {"end_turn": "end_turn", "tool_use": "tool_use", "max_tokens": "max_tokens"}


class AnthropicSession:
    """One trial's conversation; Anthropic has no sampling seed, so ``seed`` is kept only for the record.

    Remembers the full content of replies that carried thinking blocks, to echo them back.
    """

    def __init__(self, provider: AnthropicProvider, seed: int) -> None:
        self._provider = provider
        self.seed = seed
        self._echo: dict[str, list[dict[str, Any]]] = {}

    async def turn(
        self,
        system: str,
        messages: list[Message],
        tools: list[ToolSpec],
        *,
        on_text: TextDeltaCallback | None = None,
    ) -> ModelTurn:
        provider = self._provider
        wire_messages = to_anthropic_messages(messages, self._echo)
        wire_tools = to_anthropic_tools(tools)

        async def attempt() -> AnthropicStreamState:
            return await provider.stream_once(system, wire_messages, wire_tools, on_text)

        attempted = await call_with_retries(
            attempt,
            deadline_s=provider.deadline_s,
            max_attempts=provider.max_attempts,
            classify=provider.classify,
            backoff=provider.backoff,
            sleep=provider.sleep,
            rng=provider.rng,
        )
        state = attempted.value
        text = state.text()
        calls = state.tool_calls()
        if state.has_thinking():
            self._echo[turn_fingerprint(text, calls)] = state.wire_content()
        return ModelTurn(
            text=text,
            tool_calls=calls,
            usage=_usage(state, system, messages, tools, text, calls),
            stop_reason=_STOP_REASONS.get(state.stop_reason or "", state.stop_reason or "unknown"),
            retries=attempted.retries,
        )


def _usage(
    state: AnthropicStreamState,
    system: str,
    messages: list[Message],
    tools: list[ToolSpec],
    text: str,
    calls: list[ToolCallRequest],
) -> Usage:
    estimated = state.input_tokens is None or state.output_tokens is None
    input_tokens = state.input_tokens
    if input_tokens is None:
        input_tokens = estimate_prompt_tokens(system, messages, tools)
    output_tokens = state.output_tokens
    if output_tokens is None:
        output_tokens = estimate_completion_tokens(text, calls)
    return Usage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_tokens=state.cache_read_tokens,
        cache_write_tokens=state.cache_write_tokens,
        estimated=estimated,
    )


class AnthropicProvider:
    """``anthropic:<model>`` through ``anthropic.AsyncAnthropic`` (streaming Messages API).

    ``backoff``, ``sleep`` and ``rng`` shape the retries (tests make them instant);
    ``http_client`` replaces the SDK's own (it is closed by ``aclose``).
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        prices: PriceTable,
        deadline_s: float = 120.0,
        max_attempts: int = 5,
        request_timeout_s: float = 60.0,
        max_tokens: int = 4096,
        temperature: float | None = None,
        backoff: Backoff | None = None,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        if not api_key:
            raise ValueError("anthropic: an API key is required")
        self._model = model
        self._api_key = api_key
        self.prices = prices
        self.deadline_s = deadline_s
        self.max_attempts = max_attempts
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.backoff = backoff
        self.sleep = sleep
        self.rng = rng
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=base_url,
            max_retries=0,
            timeout=request_timeout_s,
            http_client=http_client
            or anthropic.DefaultAsyncHttpxClient(transport=CappedTransport(lines_everywhere=True)),
            open_telemetry=False,
        )

    @property
    def model_id(self) -> str:
        return f"{SOURCE}:{self._model}"

    @property
    def provider_name(self) -> str:
        return SOURCE

    def session(self, seed: int) -> ModelSession:
        return AnthropicSession(self, seed)

    def cost(self, usage: Usage) -> float | None:
        return self.prices.cost(self.model_id, usage)

    def parameters(self) -> dict[str, Any]:
        # None: the parameter is not sent, so the API's default applies.
        return {"max_tokens": self.max_tokens, "temperature": self.temperature, "streaming": True}

    async def aclose(self) -> None:
        await self._client.close()

    async def stream_once(
        self,
        system: str,
        wire_messages: list[dict[str, Any]],
        wire_tools: list[dict[str, Any]],
        on_text: TextDeltaCallback | None,
    ) -> AnthropicStreamState:
        """One streamed request, no retries; raises the SDK's exceptions or ``IncompleteStreamError``."""
        extra_body = {"temperature": self.temperature} if self.temperature is not None else None
        stream = await self._client.messages.create(
            model=self._model,
            max_tokens=self.max_tokens,
            messages=cast("list[MessageParam]", wire_messages),
            system=system if system else anthropic.omit,
            tools=cast("list[ToolParam]", wire_tools) if wire_tools else anthropic.omit,
            stream=True,
            extra_body=extra_body,
        )
        state = AnthropicStreamState()
        async with stream:
            async for event in stream:
                delta = state.feed(event)
                if delta and on_text is not None:
                    await on_text(delta)
        if not state.finished:
            raise IncompleteStreamError("the stream ended before message_stop")
        return state

    def classify(self, exc: BaseException) -> Failure | None:
        return classify_anthropic_error(exc, secrets=(self._api_key,))


def classify_anthropic_error(exc: BaseException, *, secrets: tuple[str, ...]) -> Failure | None:
    """Anthropic SDK exceptions (and raw ``httpx2`` ones from mid-stream) -> retry decision."""
    if (big := too_large(exc)) is not None:  # an endless reply comes back endless: not retried
        return Failure("bad_response", False, f"{SOURCE}: {big}")
    if isinstance(exc, anthropic.APIStatusError):
        wire_type, wire_code, wire_message = wire_error_fields(exc.body)
        detail = wire_message or exc.api_message or type(exc).__name__
        if exc.status_code < 400:
            return failure_for_stream_error(
                SOURCE, wire_type=wire_type or exc.type, detail=detail, secrets=secrets
            )
        return failure_for_status(
            SOURCE,
            exc.status_code,
            wire_type=wire_type or exc.type,
            wire_code=exc.error_code or wire_code,
            detail=detail,
            headers=exc.response.headers,
            secrets=secrets,
        )
    if isinstance(exc, anthropic.APITimeoutError):
        return Failure("timeout", True, f"{SOURCE}: request timed out")
    if isinstance(exc, anthropic.APIConnectionError):
        return connection_failure(SOURCE, exc)
    if isinstance(exc, anthropic.APIResponseValidationError):
        return Failure("bad_response", False, f"{SOURCE}: the response did not match the API schema")
    return failure_for_transport(SOURCE, exc)
