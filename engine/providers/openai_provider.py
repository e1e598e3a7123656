"""OpenAI Chat Completions (and compatible servers) as a ``Provider``: streamed turns, tools, usage.

Chat Completions is the portable choice: ollama, vLLM, llama.cpp and OpenRouter speak it via
``base_url``. The wire format (messages, reassembling streamed chunks) lives in
``openai_wire``; servers that omit usage get an estimate marked as such.
"""

from __future__ import annotations

import asyncio
import random
from typing import TYPE_CHECKING, Any, cast

import httpx2
import openai

from proctor.engine.http_limits import CappedTransport, too_large
from proctor.engine.providers.assembly import estimated_usage
from proctor.engine.providers.base import Message, ModelSession, ModelTurn, TextDeltaCallback
from proctor.engine.providers.openai_wire import OpenAIStreamState, to_openai_messages, to_openai_tools
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
from proctor.store.events import Usage

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolUnionParam

SOURCE = "openai"
NO_KEY_PLACEHOLDER = "no-key"


class OpenAISession:
    """One trial's conversation; the epoch's seed is sent with every request."""

    def __init__(self, provider: OpenAIProvider, seed: int) -> None:
        self._provider = provider
        self.seed = seed

    async def turn(
        self,
        system: str,
        messages: list[Message],
        tools: list[ToolSpec],
        *,
        on_text: TextDeltaCallback | None = None,
    ) -> ModelTurn:
        provider = self._provider
        wire_messages = to_openai_messages(system, messages)
        wire_tools = to_openai_tools(tools)

        async def attempt() -> OpenAIStreamState:
            return await provider.stream_once(wire_messages, wire_tools, self.seed, on_text)

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
        usage = state.usage() or estimated_usage(system, messages, tools, text, calls)
        return ModelTurn(
            text=text,
            tool_calls=calls,
            usage=usage,
            stop_reason=state.stop_reason(bool(calls)),
            retries=attempted.retries,
        )


class OpenAIProvider:
    """``openai:<model>`` through ``openai.AsyncOpenAI`` Chat Completions, or any compatible ``base_url``.

    Without ``base_url`` the request uses ``max_completion_tokens`` (current OpenAI models reject
    ``max_tokens``); with one it uses ``max_tokens``, which compatible servers understand.
    An empty key is allowed only with ``base_url`` (local servers often need none).
    ``backoff``, ``sleep``, ``rng`` and ``http_client`` as for ``AnthropicProvider``.
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
        if not api_key and base_url is None:
            raise ValueError("openai: an API key is required unless base_url points at a compatible server")
        self._model = model
        self._api_key = api_key
        self._official = base_url is None
        self.prices = prices
        self.deadline_s = deadline_s
        self.max_attempts = max_attempts
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.backoff = backoff
        self.sleep = sleep
        self.rng = rng
        self._client = openai.AsyncOpenAI(
            api_key=api_key or NO_KEY_PLACEHOLDER,
            base_url=base_url,
            max_retries=0,
            timeout=request_timeout_s,
            http_client=http_client
            or openai.DefaultAsyncHttpxClient(transport=CappedTransport(lines_everywhere=True)),
        )

    @property
    def model_id(self) -> str:
        return f"{SOURCE}:{self._model}"

    @property
    def provider_name(self) -> str:
        return SOURCE

    def session(self, seed: int) -> ModelSession:
        return OpenAISession(self, seed)

    def cost(self, usage: Usage) -> float | None:
        return self.prices.cost(self.model_id, usage)

    def parameters(self) -> dict[str, Any]:
        # None: the parameter is not sent, so the API's default applies.
        return {"max_tokens": self.max_tokens, "temperature": self.temperature, "streaming": True}

    async def aclose(self) -> None:
        await self._client.close()

    async def stream_once(
        self,
        wire_messages: list[dict[str, Any]],
        wire_tools: list[dict[str, Any]],
        seed: int,
        on_text: TextDeltaCallback | None,
    ) -> OpenAIStreamState:
        """One streamed request, no retries; raises the SDK's exceptions or ``IncompleteStreamError``."""
        limit = openai.omit if self._official else self.max_tokens
        completion_limit = self.max_tokens if self._official else openai.omit
        stream = await self._client.chat.completions.create(
            model=self._model,
            messages=cast("list[ChatCompletionMessageParam]", wire_messages),
            tools=cast("list[ChatCompletionToolUnionParam]", wire_tools) if wire_tools else openai.omit,
            stream=True,
            stream_options={"include_usage": True},
            seed=seed,
            temperature=self.temperature if self.temperature is not None else openai.omit,
            max_tokens=limit,
            max_completion_tokens=completion_limit,
        )
        state = OpenAIStreamState()
        async with stream:
            async for chunk in stream:
                delta = state.feed(chunk)
                if delta and on_text is not None:
                    await on_text(delta)
        if state.finish_reason is None:
            raise IncompleteStreamError("the stream ended without a finish_reason")
        return state

    def classify(self, exc: BaseException) -> Failure | None:
        return classify_openai_error(exc, secrets=(self._api_key,))


def classify_openai_error(exc: BaseException, *, secrets: tuple[str, ...]) -> Failure | None:
    """OpenAI SDK exceptions (and raw ``httpx2`` ones) -> retry decision."""
    if (big := too_large(exc)) is not None:  # an endless reply comes back endless: not retried
        return Failure("bad_response", False, f"{SOURCE}: {big}")
    if isinstance(exc, openai.APIStatusError):
        wire_type, wire_code, wire_message = wire_error_fields(exc.body)
        return failure_for_status(
            SOURCE,
            exc.status_code,
            wire_type=wire_type,
            wire_code=wire_code,
            detail=wire_message or type(exc).__name__,
            headers=exc.response.headers,
            secrets=secrets,
        )
    if isinstance(exc, openai.APITimeoutError):
        return Failure("timeout", True, f"{SOURCE}: request timed out")
    if isinstance(exc, openai.APIConnectionError):
        return connection_failure(SOURCE, exc)
    if isinstance(exc, openai.APIResponseValidationError):
        return Failure("bad_response", False, f"{SOURCE}: the response did not match the API schema")
    if isinstance(exc, openai.APIError):
        wire_type, wire_code, wire_message = wire_error_fields(exc.body)
        return failure_for_stream_error(
            SOURCE, wire_type=wire_type or wire_code, detail=wire_message or exc.message, secrets=secrets
        )
    return failure_for_transport(SOURCE, exc)
