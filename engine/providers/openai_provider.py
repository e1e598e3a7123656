"""OpenAI Chat Completions (and compatible servers) as a ``Provider``: streamed turns, tools, usage.

Chat Completions is the portable choice: ollama, vLLM, llama.cpp and OpenRouter speak it via
``base_url``. The wire format (messages, reassembling streamed chunks) lives in
``openai_wire``; servers that omit usage get an estimate marked as such.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

import httpx2
import openai

from proctor.engine.http_limits import CappedTransport
from proctor.engine.providers.assembly import estimated_usage, turn_fingerprint
from proctor.engine.providers.base import ModelSession, Reasoning, TextDeltaCallback
from proctor.engine.providers.openai_responses import (
    ResponsesStreamState,
    to_responses_input,
    to_responses_tools,
)
from proctor.engine.providers.openai_wire import (
    OpenAIStreamState,
    split_think,
    to_openai_messages,
    to_openai_tools,
)
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
    """One trial's conversation; the epoch's seed is sent with every request.

    For a model whose API wants its reasoning back (DeepSeek, Kimi), remembers the
    ``reasoning_content`` of each reply to send it back with that turn.
    """

    def __init__(self, provider: OpenAIProvider, seed: int) -> None:
        super().__init__(provider, seed)
        self._reasoning: dict[str, str] = {}

    def request(
        self, prompt: Prompt, on_text: TextDeltaCallback | None
    ) -> Callable[[], Awaitable[OpenAIStreamState]]:
        wire = prompt.wire
        echo = self._reasoning if self.provider.plan.echo_reasoning else None
        wire_messages = to_openai_messages(prompt.system, prompt.messages, wire.wire_name, echo)
        wire_tools = to_openai_tools(list(wire.sent))

        async def attempt() -> OpenAIStreamState:
            state = await self.provider.stream_once(wire_messages, wire_tools, self.seed, on_text)
            if echo is not None and state.reasoning_text():
                calls = [
                    c.model_copy(update={"name": wire.original_name(c.name)}) for c in state.tool_calls()
                ]
                self._reasoning[turn_fingerprint(self.answer_text(state), calls)] = state.reasoning_text()
            return state

        return attempt

    def usage(
        self, state: OpenAIStreamState, prompt: Prompt, text: str, calls: list[ToolCallRequest]
    ) -> Usage:
        """A server that reported no usage gets an estimate of the whole turn."""
        return state.usage() or estimated_usage(prompt.system, prompt.messages, prompt.tools, text, calls)

    def stop_reason(self, state: OpenAIStreamState, calls: list[ToolCallRequest]) -> str:
        return state.stop_reason(bool(calls))

    def answer_text(self, state: OpenAIStreamState) -> str:
        text = split_think(state.text())[0]
        return text or ("".join(state.refusal_parts) if state.refusal_parts else "")

    def reasoning(self, state: OpenAIStreamState) -> list[Reasoning]:
        found = [Reasoning(state.reasoning_text(), "reasoning_content")] if state.reasoning_text() else []
        think = split_think(state.text())[1]
        return [*found, Reasoning(think, "think_tag")] if think else found

    def reported_cost(self, state: OpenAIStreamState) -> float | None:
        return state.reported_cost


class ResponsesSession(SdkSession["OpenAIProvider", ResponsesStreamState]):
    """One trial's conversation over the Responses API (no seed: it takes none)."""

    def __init__(self, provider: OpenAIProvider, seed: int) -> None:
        super().__init__(provider, seed)
        self._echo: dict[str, list[dict[str, Any]]] = {}

    def request(
        self, prompt: Prompt, on_text: TextDeltaCallback | None
    ) -> Callable[[], Awaitable[ResponsesStreamState]]:
        wire = prompt.wire
        items = to_responses_input(prompt.messages, self._echo, wire.wire_name)
        tools = to_responses_tools(list(wire.sent))

        async def attempt() -> ResponsesStreamState:
            state = await self.provider.stream_responses_once(prompt.system, items, tools, on_text)
            calls = [c.model_copy(update={"name": wire.original_name(c.name)}) for c in state.tool_calls()]
            self._echo[turn_fingerprint(self.answer_text(state), calls)] = state.wire_items()
            return state

        return attempt

    def usage(
        self, state: ResponsesStreamState, prompt: Prompt, text: str, calls: list[ToolCallRequest]
    ) -> Usage:
        return state.usage() or estimated_usage(prompt.system, prompt.messages, prompt.tools, text, calls)

    def stop_reason(self, state: ResponsesStreamState, calls: list[ToolCallRequest]) -> str:
        return state.stop_reason(bool(calls))

    def answer_text(self, state: ResponsesStreamState) -> str:
        return split_think(state.text())[0] or state.refusal()

    def reasoning(self, state: ResponsesStreamState) -> list[Reasoning]:
        return state.reasoning()


class OpenAIProvider(SdkProvider[openai.AsyncOpenAI]):
    """``openai:<model>`` through ``openai.AsyncOpenAI`` Chat Completions, or any compatible ``base_url``.

    The output limit goes in the field the model's rule names (``max_completion_tokens`` for
    OpenAI's models, ``max_tokens`` for others), whatever the endpoint: gpt-5 behind Azure or a
    gateway refuses ``max_tokens`` as api.openai.com does (model_rules.py).
    An empty key is allowed only with ``base_url`` (local servers often need none).
    """

    SOURCE = SOURCE
    WIRE_API = "openai"
    ERRORS = SdkErrors(openai.APITimeoutError, openai.APIConnectionError, openai.APIResponseValidationError)

    def _open_client(
        self, api_key: str, base_url: str | None, timeout_s: float, http_client: httpx2.AsyncClient | None
    ) -> openai.AsyncOpenAI:
        if not api_key and base_url is None:
            raise ValueError("openai: an API key is required unless base_url points at a compatible server")
        return openai.AsyncOpenAI(
            api_key=api_key or NO_KEY_PLACEHOLDER,
            base_url=base_url,
            max_retries=0,
            timeout=timeout_s,
            http_client=http_client
            or openai.DefaultAsyncHttpxClient(transport=CappedTransport(lines_everywhere=True)),
        )

    def session(self, seed: int) -> ModelSession:
        if self.plan.api == "responses":
            return ResponsesSession(self, seed)
        return OpenAISession(self, seed)

    async def stream_responses_once(
        self,
        system: str,
        items: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        on_text: TextDeltaCallback | None,
    ) -> ResponsesStreamState:
        """One streamed Responses request, no retries; stateless (``store: false``), so the
        reasoning comes back encrypted, to be sent back with its turn."""
        plan = self.plan
        effort = plan.reasoning_effort
        stream = await self._client.responses.create(
            model=self._model,
            input=cast("Any", items),
            instructions=system or openai.omit,
            tools=cast("Any", tools) if tools else openai.omit,
            stream=True,
            store=False,
            include=["reasoning.encrypted_content"] if plan.rule.effort or effort else openai.omit,
            max_output_tokens=plan.output_tokens,
            temperature=plan.temperature if plan.temperature is not None else openai.omit,
            reasoning=cast("Any", {"effort": effort}) if effort else openai.omit,
        )
        state = await fold_stream(stream, ResponsesStreamState(), on_text)
        if not state.finished or state.status == "failed":
            raise IncompleteStreamError(
                f"the response stream ended {state.status or 'before response.completed'}", state
            )
        return state

    async def stream_once(
        self,
        wire_messages: list[dict[str, Any]],
        wire_tools: list[dict[str, Any]],
        seed: int,
        on_text: TextDeltaCallback | None,
    ) -> OpenAIStreamState:
        """One streamed request, no retries; raises the SDK's exceptions or ``IncompleteStreamError``."""
        plan = self.plan
        by_completion = plan.token_param == "max_completion_tokens"
        stream = await self._client.chat.completions.create(
            model=self._model,
            messages=cast("list[ChatCompletionMessageParam]", wire_messages),
            tools=cast("list[ChatCompletionToolUnionParam]", wire_tools) if wire_tools else openai.omit,
            stream=True,
            stream_options={"include_usage": True},
            seed=seed,
            temperature=plan.temperature if plan.temperature is not None else openai.omit,
            max_tokens=openai.omit if by_completion else plan.output_tokens,
            max_completion_tokens=plan.output_tokens if by_completion else openai.omit,
            reasoning_effort=cast("Any", plan.reasoning_effort) if plan.reasoning_effort else openai.omit,
        )
        state = OpenAIStreamState()
        try:
            await fold_stream(stream, state, on_text)
        except openai.APIError:
            # OpenRouter ends a reply cut at its limit with an error chunk after finish_reason
            # "length" ("Token limit reached"): the reply is there, and it was truncated.
            if state.finish_reason is None:
                raise
        if not state.complete():
            raise IncompleteStreamError("the stream ended without a finish_reason or usage", state)
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
