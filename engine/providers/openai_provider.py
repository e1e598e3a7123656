"""OpenAI Chat Completions (and compatible servers) as a ``Provider``: streamed turns, tools, usage.

Chat Completions is the portable choice: ollama, vLLM, llama.cpp and OpenRouter speak it via
``base_url``. The wire format (messages, reassembling streamed chunks) lives in
``openai_wire``; servers that omit usage get an estimate marked as such.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any, cast

import httpx2
import openai

from proctor.engine.http_limits import CappedTransport
from proctor.engine.providers.assembly import estimated_usage
from proctor.engine.providers.base import ModelSession, TextDeltaCallback
from proctor.engine.providers.openai_wire import OpenAIStreamState, to_openai_messages, to_openai_tools
from proctor.engine.providers.retry import Failure
from proctor.engine.providers.sdk_errors import (
    IncompleteStreamError,
    failure_for_status,
    failure_for_stream_error,
    wire_error_fields,
)
from proctor.engine.providers.sdk_provider import Prompt, SdkErrors, SdkProvider, SdkSession, fold_stream
from proctor.store.events import ToolCallRequest, Usage

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolUnionParam

SOURCE = "openai"
NO_KEY_PLACEHOLDER = "no-key"


class OpenAISession(SdkSession["OpenAIProvider", OpenAIStreamState]):
    """One trial's conversation; the epoch's seed is sent with every request."""

    def request(
        self, prompt: Prompt, on_text: TextDeltaCallback | None
    ) -> Callable[[], Awaitable[OpenAIStreamState]]:
        wire_messages = to_openai_messages(prompt.system, prompt.messages)
        wire_tools = to_openai_tools(prompt.tools)
        return partial(self.provider.stream_once, wire_messages, wire_tools, self.seed, on_text)

    def usage(
        self, state: OpenAIStreamState, prompt: Prompt, text: str, calls: list[ToolCallRequest]
    ) -> Usage:
        """A server that reported no usage gets an estimate of the whole turn."""
        return state.usage() or estimated_usage(prompt.system, prompt.messages, prompt.tools, text, calls)

    def stop_reason(self, state: OpenAIStreamState, calls: list[ToolCallRequest]) -> str:
        return state.stop_reason(bool(calls))


class OpenAIProvider(SdkProvider[openai.AsyncOpenAI]):
    """``openai:<model>`` through ``openai.AsyncOpenAI`` Chat Completions, or any compatible ``base_url``.

    Without ``base_url`` the request uses ``max_completion_tokens`` (current OpenAI models reject
    ``max_tokens``); with one it uses ``max_tokens``, which compatible servers understand.
    An empty key is allowed only with ``base_url`` (local servers often need none).
    """

    SOURCE = SOURCE
    ERRORS = SdkErrors(openai.APITimeoutError, openai.APIConnectionError, openai.APIResponseValidationError)

    def _open_client(
        self, api_key: str, base_url: str | None, timeout_s: float, http_client: httpx2.AsyncClient | None
    ) -> openai.AsyncOpenAI:
        if not api_key and base_url is None:
            raise ValueError("openai: an API key is required unless base_url points at a compatible server")
        self._official = base_url is None
        return openai.AsyncOpenAI(
            api_key=api_key or NO_KEY_PLACEHOLDER,
            base_url=base_url,
            max_retries=0,
            timeout=timeout_s,
            http_client=http_client
            or openai.DefaultAsyncHttpxClient(transport=CappedTransport(lines_everywhere=True)),
        )

    def session(self, seed: int) -> ModelSession:
        return OpenAISession(self, seed)

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
        state = await fold_stream(stream, OpenAIStreamState(), on_text)
        if state.finish_reason is None:
            raise IncompleteStreamError("the stream ended without a finish_reason")
        return state

    def api_failure(self, exc: BaseException) -> Failure | None:
        """An HTTP error status, or an error event in the stream (the SDK raises a bare ``APIError``)."""
        if isinstance(exc, openai.APIStatusError):
            wire_type, wire_code, wire_message = wire_error_fields(exc.body)
            return failure_for_status(
                SOURCE,
                exc.status_code,
                wire_type=wire_type,
                wire_code=wire_code,
                detail=wire_message or type(exc).__name__,
                headers=exc.response.headers,
                secrets=self.secrets,
            )
        if isinstance(exc, openai.APIError):
            wire_type, wire_code, wire_message = wire_error_fields(exc.body)
            return failure_for_stream_error(
                SOURCE,
                wire_type=wire_type or wire_code,
                detail=wire_message or exc.message,
                secrets=self.secrets,
            )
        return None
