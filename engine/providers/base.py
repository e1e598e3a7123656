"""What the agent loop needs from a model, independent of any vendor's wire format.

A provider turns a provider-neutral conversation into one model turn (text plus tool calls
plus usage). The agent loop owns the conversation; providers translate it to and from their
API on every call, so the offline agent, Anthropic and OpenAI are interchangeable.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from proctor.engine.tools.toolbox import ToolSpec
from proctor.store.events import AnswerCitation, ToolCallRequest, Usage


@dataclass(frozen=True)
class UserMessage:
    text: str


@dataclass(frozen=True)
class AssistantTurn:
    text: str
    tool_calls: list[ToolCallRequest] = field(default_factory=list)


@dataclass(frozen=True)
class ToolImage:
    """An image a tool returned, for models that accept images (base64, as the MCP block held it)."""

    mime_type: str
    data_b64: str


@dataclass(frozen=True)
class ToolOutcome:
    call_id: str
    name: str
    content: str
    is_error: bool = False
    images: tuple[ToolImage, ...] = ()


@dataclass(frozen=True)
class ToolResults:
    results: list[ToolOutcome]


Message = UserMessage | AssistantTurn | ToolResults


@dataclass(frozen=True)
class Reasoning:
    """What a model reasoned in one turn, kept apart from its answer (never judged)."""

    text: str
    source: str
    """thinking (Anthropic), reasoning_content (DeepSeek, Kimi, xAI), think_tag, summary (Responses)."""
    redacted: bool = False


@dataclass(frozen=True)
class ModelTurn:
    """One model response: prose, the tools it wants called, and what it cost.

    ``stop_reason`` is in store/outcomes.py's words; ``usage`` counts every billed attempt of
    the turn (an attempt retried after a cut stream was generated, and billed, too);
    ``reported_cost_usd`` is the cost the response itself carried (OpenRouter, xAI), if any.
    """

    text: str
    tool_calls: list[ToolCallRequest]
    usage: Usage
    stop_reason: str
    retries: int = 0
    reasoning: tuple[Reasoning, ...] = ()
    citations: tuple[AnswerCitation, ...] = ()
    reported_cost_usd: float | None = None


TextDeltaCallback = Callable[[str], Awaitable[None]]


class ModelSession(Protocol):
    """One trial's conversation with one model; may keep per-trial state (the offline agent does)."""

    async def turn(
        self,
        system: str,
        messages: list[Message],
        tools: list[ToolSpec],
        *,
        on_text: TextDeltaCallback | None = None,
    ) -> ModelTurn: ...


class Provider(Protocol):
    """A model endpoint; ``session`` starts one trial's conversation with a seed for that epoch."""

    @property
    def model_id(self) -> str:
        """``provider:name`` as written in the suite."""
        ...

    @property
    def provider_name(self) -> str:
        """``anthropic``, ``openai`` or ``offline``: the key for concurrency limits and prices."""
        ...

    def session(self, seed: int) -> ModelSession: ...

    def parameters(self) -> dict[str, Any]:
        """The sampling parameters sent with every call, as recorded with each trial."""
        ...

    async def aclose(self) -> None: ...


class ProviderError(Exception):
    """A model call failed for good (after retries, or not retryable); the message is safe to store.

    ``usage`` counts what its failed attempts were billed (a stream cut after generating).
    """

    def __init__(
        self,
        message: str,
        *,
        error_type: str = "provider_error",
        retries: int = 0,
        usage: Usage | None = None,
    ) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.retries = retries
        self.usage = usage or Usage()


def estimate_tokens(text: str) -> int:
    """A rough token count (~4 characters a token) for offline agents and phase splits."""
    return max(1, (len(text) + 3) // 4) if text else 0
