"""What the Anthropic and OpenAI providers share around their wire formats.

Both SDKs are generated from the same template: one client with ``close()``, streams that are
async context managers, and the same exception classes under the same names. So the settings,
the retry loop under the trial's deadline, folding a stream into a state, the cost and the
skeleton of error classification live here once; each provider keeps its own request, its own
stream state and the part of classification where the two APIs really differ.
"""

from __future__ import annotations

import asyncio
import random
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import httpx2

from proctor.engine.http_limits import too_large
from proctor.engine.providers.base import Message, ModelTurn, ProviderError, Reasoning, TextDeltaCallback
from proctor.engine.providers.model_rules import RequestPlan, plan_request
from proctor.engine.providers.prices import PriceTable
from proctor.engine.providers.retry import Attempted, Backoff, Failure, Sleep, call_with_retries
from proctor.engine.providers.sdk_errors import (
    IncompleteStreamError,
    connection_failure,
    failure_for_transport,
)
from proctor.engine.providers.tool_rules import WireApi, WireTools, adapt_tools, name_tools_in_error
from proctor.engine.tools.toolbox import ToolSpec
from proctor.store.events import AnswerCitation, ToolCallRequest, Usage

T = TypeVar("T")
E = TypeVar("E", contravariant=True)
S = TypeVar("S", bound="StreamState[Any]")


class StreamState(Protocol[E]):
    """A reply as it streams in: folds events, then gives the text and the tool calls it held."""

    def feed(self, event: E) -> str | None:
        """Fold one event into the reply so far; returns a text delta to show, if any."""
        ...

    def text(self) -> str: ...

    def tool_calls(self) -> list[ToolCallRequest]: ...


class EventStream(AbstractAsyncContextManager[Any], Protocol):
    """An SDK's streamed response: iterated for events, closed on leaving the ``async with``."""

    def __aiter__(self) -> AsyncIterator[Any]: ...


class _Client(Protocol):
    async def close(self) -> None: ...


C = TypeVar("C", bound=_Client)


async def fold_stream(stream: EventStream, state: S, on_text: TextDeltaCallback | None) -> S:
    """Feed every event of ``stream`` to ``state``, showing text deltas as they arrive."""
    async with stream:
        async for event in stream:
            delta = state.feed(event)
            if delta and on_text is not None:
                await on_text(delta)
    return state


@dataclass(frozen=True)
class SdkErrors:
    """The exception classes an SDK of that template raises (``APITimeoutError`` and so on)."""

    timeout: type[BaseException]
    connection: type[BaseException]
    validation: type[BaseException]


class SdkProvider(ABC, Generic[C]):
    """Settings and behaviour common to ``AnthropicProvider`` and ``OpenAIProvider``.

    ``backoff``, ``sleep`` and ``rng`` shape the retries (tests make them instant);
    ``http_client`` replaces the SDK's own (it is closed by ``aclose``). ``plan`` is what every
    request carries (model_rules.py; by default the model's rule). A subclass sets ``SOURCE``,
    ``WIRE_API`` and ``ERRORS`` and answers ``_open_client`` and ``api_failure``.
    """

    SOURCE: ClassVar[str]
    WIRE_API: ClassVar[WireApi]
    ERRORS: ClassVar[SdkErrors]

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
        plan: RequestPlan | None = None,
        backoff: Backoff | None = None,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        self._client: C = self._open_client(api_key, base_url, request_timeout_s, http_client)
        self._model = model
        self._api_key = api_key
        self.prices = prices
        self.deadline_s = deadline_s
        self.max_attempts = max_attempts
        self.plan = plan or plan_request(f"{self.SOURCE}:{model}")
        self.backoff = backoff
        self.sleep = sleep
        self.rng = rng

    @abstractmethod
    def _open_client(
        self, api_key: str, base_url: str | None, timeout_s: float, http_client: httpx2.AsyncClient | None
    ) -> C:
        """The SDK's client, its own retries off; raises ``ValueError`` if the key will not do."""

    @property
    def model_id(self) -> str:
        return f"{self.SOURCE}:{self._model}"

    @property
    def provider_name(self) -> str:
        return self.SOURCE

    def cost(self, usage: Usage) -> float | None:
        return self.prices.cost(self.model_id, usage)

    @property
    def wire_api(self) -> WireApi:
        """Whose rules the tool definitions are held to (tool_rules.py)."""
        return self.WIRE_API

    def parameters(self) -> dict[str, Any]:
        # None: the parameter is not sent, so the API's default applies.
        return self.plan.parameters()

    async def aclose(self) -> None:
        await self._client.close()

    async def retrying(self, attempt: Callable[[], Awaitable[T]]) -> Attempted[T]:
        """``attempt`` under this provider's deadline, retry budget and backoff."""
        return await call_with_retries(
            attempt,
            deadline_s=self.deadline_s,
            max_attempts=self.max_attempts,
            classify=self.classify,
            backoff=self.backoff,
            sleep=self.sleep,
            rng=self.rng,
        )

    def classify(self, exc: BaseException) -> Failure | None:
        return classify_sdk_error(exc, self.SOURCE, self.ERRORS, self.api_failure)

    @abstractmethod
    def api_failure(self, exc: BaseException) -> Failure | None:
        """The API's own error (an HTTP status, an error event in the stream), or ``None``."""

    @property
    def secrets(self) -> tuple[str, ...]:
        """What an error message must never repeat."""
        return (self._api_key,)


@dataclass(frozen=True)
class Prompt:
    """What one turn asks of the model, in the neutral form (each provider translates it).

    ``wire`` holds the tools as this API is sent them (names it accepts) and the way back.
    """

    system: str
    messages: list[Message]
    tools: list[ToolSpec]
    wire: WireTools


P = TypeVar("P", bound=SdkProvider[Any])


class SdkSession(ABC, Generic[P, S]):
    """One trial's conversation through an SDK provider: a turn is one streamed request, retried.

    A provider's session builds its wire request (``request``) and reads usage and the stop
    reason from its stream state; the turn around them is the same for both.
    """

    def __init__(self, provider: P, seed: int) -> None:
        self.provider = provider
        self.seed = seed
        self._wire: tuple[list[ToolSpec], WireTools] | None = None

    def wire_tools(self, tools: list[ToolSpec]) -> WireTools:
        """``tools`` adapted to this API; a trial offers one list for all its turns: adapted once."""
        if self._wire is None or self._wire[0] is not tools:
            self._wire = (tools, adapt_tools(self.provider.wire_api, tools))
        return self._wire[1]

    async def turn(
        self,
        system: str,
        messages: list[Message],
        tools: list[ToolSpec],
        *,
        on_text: TextDeltaCallback | None = None,
    ) -> ModelTurn:
        prompt = Prompt(system, messages, tools, self.wire_tools(tools))
        request = self.request(prompt, on_text)
        billed = Usage()  # attempts cut short and retried: generated, so billed

        async def counted() -> S:
            nonlocal billed
            try:
                return await request()
            except IncompleteStreamError as exc:
                cut: Any = exc.state
                if cut is not None:
                    billed = billed + self.usage(cut, prompt, cut.text(), cut.tool_calls())
                raise

        try:
            attempted = await self.provider.retrying(counted)
        except ProviderError as exc:
            message = name_tools_in_error(str(exc), prompt.wire)
            raise ProviderError(
                message, error_type=exc.error_type, retries=exc.retries, usage=billed
            ) from None
        state = attempted.value
        text = self.answer_text(state)
        calls = [c.model_copy(update={"name": prompt.wire.original_name(c.name)}) for c in state.tool_calls()]
        return ModelTurn(
            text=text,
            tool_calls=calls,
            usage=self.usage(state, prompt, text, calls) + billed,
            stop_reason=self.stop_reason(state, calls),
            retries=attempted.retries,
            reasoning=tuple(self.reasoning(state)),
            citations=tuple(self.citations(state)),
            reported_cost_usd=self.reported_cost(state),
        )

    def answer_text(self, state: S) -> str:
        """The reply's answer, without what the model reasoned (a provider may split it out)."""
        return state.text()

    def reasoning(self, state: S) -> list[Reasoning]:
        """What the model reasoned in this reply, apart from its answer."""
        return []

    def citations(self, state: S) -> list[AnswerCitation]:
        return []

    def reported_cost(self, state: S) -> float | None:
        """The cost the response itself reported, in US dollars; None when it reported none."""
        return None

    @abstractmethod
    def request(self, prompt: Prompt, on_text: TextDeltaCallback | None) -> Callable[[], Awaitable[S]]:
        """The wire request, built once; the call it returns streams it (once per attempt)."""

    @abstractmethod
    def usage(self, state: S, prompt: Prompt, text: str, calls: list[ToolCallRequest]) -> Usage:
        """Usage as the server reported it, estimated where it did not (and marked so)."""

    @abstractmethod
    def stop_reason(self, state: S, calls: list[ToolCallRequest]) -> str:
        """Why the model stopped, in proctor's words (end_turn, tool_use, max_tokens, ...)."""


def classify_sdk_error(
    exc: BaseException,
    source: str,
    errors: SdkErrors,
    api_failure: Callable[[BaseException], Failure | None],
) -> Failure | None:
    """An SDK exception (or a raw ``httpx2`` one from mid-stream) -> retry decision.

    ``api_failure`` reads the API's own errors; it runs after the timeout, connection and
    validation classes, which an SDK may derive from its general API error.
    """
    if (big := too_large(exc)) is not None:  # an endless reply comes back endless: not retried
        return Failure("bad_response", False, f"{source}: {big}")
    if isinstance(exc, errors.timeout):
        return Failure("timeout", True, f"{source}: request timed out")
    if isinstance(exc, errors.connection):
        return connection_failure(source, exc)
    if isinstance(exc, errors.validation):
        return Failure("bad_response", False, f"{source}: the response did not match the API schema")
    if (failure := api_failure(exc)) is not None:
        return failure
    return failure_for_transport(source, exc)


__all__ = [
    "EventStream",
    "Prompt",
    "SdkErrors",
    "SdkProvider",
    "SdkSession",
    "StreamState",
    "classify_sdk_error",
    "fold_stream",
]
