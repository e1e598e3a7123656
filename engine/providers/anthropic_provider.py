"""Anthropic Messages API as a ``Provider``: streamed turns, tool use, usage, retries.

What both SDK providers share (settings, retries, folding the stream) is ``sdk_provider``;
the wire format (requests, folding stream events) lives in ``anthropic_wire``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

import anthropic
import httpx2

from proctor.engine.http_limits import CappedTransport
from proctor.engine.providers.anthropic_wire import (
    AnthropicStreamState,
    to_anthropic_messages,
    to_anthropic_tools,
)
from proctor.engine.providers.assembly import (
    estimate_completion_tokens,
    estimate_prompt_tokens,
    turn_fingerprint,
)
from proctor.engine.providers.base import ModelSession, Reasoning, TextDeltaCallback, estimate_tokens
from proctor.engine.providers.model_rules import RequestPlan
from proctor.engine.providers.retry import Failure
from proctor.engine.providers.sdk_errors import (
    IncompleteStreamError,
    failure_for_status,
    failure_for_stream_error,
    wire_error_fields,
)
from proctor.engine.providers.sdk_provider import Prompt, SdkErrors, SdkProvider, SdkSession, fold_stream
from proctor.store.events import AnswerCitation, ToolCallRequest, Usage
from proctor.store.outcomes import END_TURN, MAX_TOKENS, PAUSE_TURN, REFUSAL, TOOL_USE

if TYPE_CHECKING:
    from anthropic.types import MessageParam, ToolParam

SOURCE = "anthropic"
_STOP_REASONS = {
    "end_turn": END_TURN,
    "tool_use": TOOL_USE,
    "max_tokens": MAX_TOKENS,
    "refusal": REFUSAL,
    "pause_turn": PAUSE_TURN,
    "stop_sequence": END_TURN,
}
MAX_CONTINUATIONS = 8
"""``pause_turn`` replies continued within one turn before the turn is given up as it stands."""


def anthropic_options(plan: RequestPlan) -> dict[str, Any]:
    """The plan's sampling and reasoning fields, as the Messages API spells them (the SDK's
    ``create`` takes no ``temperature``: it goes in the body, as the API reads it)."""
    options: dict[str, Any] = {}
    if plan.temperature is not None:
        options["temperature"] = plan.temperature
    if plan.thinking_budget is not None:
        options["thinking"] = {"type": "enabled", "budget_tokens": plan.thinking_budget}
    elif plan.adaptive_thinking:
        options["thinking"] = {"type": "adaptive"}
    if plan.reasoning_effort not in (None, "none"):
        options["output_config"] = {"effort": plan.reasoning_effort}
    return options


class AnthropicSession(SdkSession["AnthropicProvider", AnthropicStreamState]):
    """One trial's conversation; Anthropic has no sampling seed, so ``seed`` is kept only for the record.

    Remembers the full content of replies that carried thinking blocks, to echo them back. A
    reply paused by the API (``pause_turn``: long server-tool work) is sent back as received and
    continued, within the same turn: a paused reply is never a final answer.
    """

    def __init__(self, provider: AnthropicProvider, seed: int) -> None:
        super().__init__(provider, seed)
        self._echo: dict[str, list[dict[str, Any]]] = {}

    def request(
        self, prompt: Prompt, on_text: TextDeltaCallback | None
    ) -> Callable[[], Awaitable[AnthropicStreamState]]:
        wire = prompt.wire
        wire_messages = to_anthropic_messages(prompt.messages, self._echo, wire.wire_name)
        wire_tools = to_anthropic_tools(list(wire.sent))

        async def attempt() -> AnthropicStreamState:
            state = await self.provider.stream_once(prompt.system, wire_messages, wire_tools, on_text)
            for _ in range(MAX_CONTINUATIONS):
                if state.stop_reason != "pause_turn":
                    break
                paused = {"role": "assistant", "content": state.wire_content()}
                more = await self.provider.stream_once(
                    prompt.system, [*wire_messages, paused], wire_tools, on_text
                )
                state = state.continued_by(more)
            if state.needs_echo():
                calls = [
                    c.model_copy(update={"name": wire.original_name(c.name)}) for c in state.tool_calls()
                ]
                self._echo[turn_fingerprint(state.text(), calls)] = state.wire_content()
            return state

        return attempt

    def usage(
        self, state: AnthropicStreamState, prompt: Prompt, text: str, calls: list[ToolCallRequest]
    ) -> Usage:
        """Each count the stream did not report is estimated on its own."""
        input_tokens = state.input_tokens
        if input_tokens is None:
            input_tokens = estimate_prompt_tokens(prompt.system, prompt.messages, prompt.tools)
        output_tokens = state.output_tokens
        if output_tokens is None:
            output_tokens = estimate_completion_tokens(text, calls)
        thinking = state.thinking_tokens
        if thinking is None and state.has_thinking():
            thinking = sum(estimate_tokens(text) for text, _ in state.reasoning())
        return Usage(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cache_read_tokens=state.cache_read_tokens,
            cache_write_tokens=state.cache_write_tokens,
            estimated=state.input_tokens is None or state.output_tokens is None,
            reasoning_tokens=thinking or 0,
        )

    def stop_reason(self, state: AnthropicStreamState, calls: list[ToolCallRequest]) -> str:
        return _STOP_REASONS.get(state.stop_reason or "", state.stop_reason or "unknown")

    def reasoning(self, state: AnthropicStreamState) -> list[Reasoning]:
        return [Reasoning(text, "thinking", redacted) for text, redacted in state.reasoning()]

    def citations(self, state: AnthropicStreamState) -> list[AnswerCitation]:
        return state.citations()


class AnthropicProvider(SdkProvider[anthropic.AsyncAnthropic]):
    """``anthropic:<model>`` through ``anthropic.AsyncAnthropic`` (streaming Messages API)."""

    SOURCE = SOURCE
    WIRE_API = "anthropic"
    ERRORS = SdkErrors(
        anthropic.APITimeoutError, anthropic.APIConnectionError, anthropic.APIResponseValidationError
    )

    def _open_client(
        self, api_key: str, base_url: str | None, timeout_s: float, http_client: httpx2.AsyncClient | None
    ) -> anthropic.AsyncAnthropic:
        if not api_key:
            raise ValueError("anthropic: an API key is required")
        return anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=base_url,
            max_retries=0,
            timeout=timeout_s,
            http_client=http_client
            or anthropic.DefaultAsyncHttpxClient(transport=CappedTransport(lines_everywhere=True)),
            open_telemetry=False,
        )

    def session(self, seed: int) -> ModelSession:
        return AnthropicSession(self, seed)

    async def stream_once(
        self,
        system: str,
        wire_messages: list[dict[str, Any]],
        wire_tools: list[dict[str, Any]],
        on_text: TextDeltaCallback | None,
    ) -> AnthropicStreamState:
        """One streamed request, no retries; raises the SDK's exceptions or ``IncompleteStreamError``."""
        stream = await self._client.messages.create(
            model=self._model,
            max_tokens=self.plan.output_tokens,
            messages=cast("list[MessageParam]", wire_messages),
            system=system if system else anthropic.omit,
            tools=cast("list[ToolParam]", wire_tools) if wire_tools else anthropic.omit,
            stream=True,
            extra_body=anthropic_options(self.plan) or None,
        )
        state = await fold_stream(stream, AnthropicStreamState(), on_text)
        if not state.finished:
            raise IncompleteStreamError("the stream ended before message_stop", state)
        return state

    def api_failure(self, exc: BaseException) -> Failure | None:
        """An HTTP error status, or an error event in a 200 stream (which the SDK raises with 200)."""
        if not isinstance(exc, anthropic.APIStatusError):
            return None
        wire_type, wire_code, wire_message = wire_error_fields(exc.body)
        detail = wire_message or exc.api_message or type(exc).__name__
        if exc.status_code < 400:
            return failure_for_stream_error(
                SOURCE, wire_type=wire_type or exc.type, detail=detail, secrets=self.secrets
            )
        return failure_for_status(
            SOURCE,
            exc.status_code,
            wire_type=wire_type or exc.type,
            wire_code=exc.error_code or wire_code,
            detail=detail,
            headers=exc.response.headers,
            secrets=self.secrets,
        )
