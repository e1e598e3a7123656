"""One trial: a model and a toolbox in a loop until a final answer or a limit.

The loop owns the provider-neutral conversation and records every step as an event: model
requests and responses (with usage and cost), tool calls and results (with latency and
errors), assistant prose, the final answer, and why the loop stopped. A tool that fails is a
result the model sees, never an exception that ends the trial; a model that fails for good
ends the trial as an error.
"""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Callable
from dataclasses import dataclass

from proctor.engine.providers.base import (
    AssistantTurn,
    Message,
    ModelSession,
    ProviderError,
    ToolImage,
    ToolOutcome,
    ToolResults,
    UserMessage,
)
from proctor.engine.providers.prices import PriceTable
from proctor.engine.tools.caps import cap_block, cap_stored, cap_structured, cap_text
from proctor.engine.tools.toolbox import (
    CURRENT_SAMPLER,
    Blob,
    Sampler,
    SampleReply,
    SampleRequest,
    Toolbox,
    ToolCallOutcome,
    ToolSpec,
)
from proctor.scenarios.schema import Limits
from proctor.store.events import (
    AssistantMessage,
    ErrorEvent,
    Event,
    FinalAnswer,
    ModelReasoning,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolCallRequest,
    ToolResult,
    Usage,
)
from proctor.store.outcomes import outcome_of
from proctor.store.redaction import redact

# What both model APIs accept as images (Anthropic caps an image at 5 MB); others stay labels.
MODEL_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
MAX_MODEL_IMAGE_BYTES = 5 * 1024 * 1024

DEFAULT_SYSTEM_PROMPT = (
    "You are answering questions about a code base using the tools you are given. Look things up "
    "rather than guessing. In your final answer, cite the code you rely on as `path:line` "
    "(or `path:start-end`) exactly as it is in the repository."
)


@dataclass(frozen=True)
class LoopResult:
    status: str
    stop: str
    final_answer: str
    tool_calls: int
    usage: Usage
    cost_usd: float | None
    error: str = ""


async def run_agent(
    *,
    model_id: str,
    session: ModelSession,
    toolbox: Toolbox,
    prompts: list[str],
    limits: Limits,
    prices: PriceTable,
    emit: Callable[[Event], None],
    system_prompt: str = DEFAULT_SYSTEM_PROMPT,
    put_blob: Callable[[Blob], None] | None = None,
) -> LoopResult:
    """Run every step's prompt in one conversation; the answer is the steps' answers in order.

    A reply cut at the output limit or refused ends the trial with that stop (``truncated``,
    ``refused``: store/outcomes.py), its tool calls not run: it is recorded, never judged.

    ``put_blob`` stores binary tool output (images, audio) once; without it only the labels are kept.
    """
    state = _LoopState(put_blob)
    messages: list[Message] = []
    answers: list[str] = []
    tools = toolbox.specs()
    stop = "answer"
    try:
        for prompt in prompts:
            messages.append(UserMessage(prompt))
            answer, stop = await _run_step(
                model_id, session, toolbox, tools, messages, limits, prices, emit, system_prompt, state
            )
            answers.append(answer)
            if stop != "answer":
                break
    except ProviderError as exc:
        message = redact(str(exc))
        state.charge(exc.usage, prices.cost(model_id, exc.usage))  # attempts cut short were billed
        emit(ErrorEvent(where="model", error_type=exc.error_type, message=message, fatal=True))
        return state.result("error", "error", "\n\n".join(answers), message)
    final = "\n\n".join(a for a in answers if a)
    emit(FinalAnswer(text=final))
    return state.result("finished", stop, final)


class _LoopState:
    def __init__(self, put_blob: Callable[[Blob], None] | None) -> None:
        self.put_blob = put_blob
        self.turn = 0
        self.tool_calls = 0
        self.usage = Usage()
        self.cost: float | None = 0.0
        self._specs: tuple[list[ToolSpec], dict[str, ToolSpec]] | None = None

    def specs_of(self, tools: list[ToolSpec]) -> dict[str, ToolSpec]:
        """Each tool by name (the trial's tools are one list for all its steps: built once)."""
        if self._specs is None or self._specs[0] is not tools:
            self._specs = (tools, {t.name: t for t in tools})
        return self._specs[1]

    def charge(self, usage: Usage, cost: float | None) -> None:
        """Count a model call's tokens and dollars; one unpriced call leaves the trial unpriced."""
        self.usage = self.usage + usage
        self.cost = None if cost is None or self.cost is None else self.cost + cost

    def result(self, status: str, stop: str, answer: str, error: str = "") -> LoopResult:
        return LoopResult(status, stop, answer, self.tool_calls, self.usage, self.cost, error)


async def _run_step(
    model_id: str,
    session: ModelSession,
    toolbox: Toolbox,
    tools: list[ToolSpec],
    messages: list[Message],
    limits: Limits,
    prices: PriceTable,
    emit: Callable[[Event], None],
    system_prompt: str,
    state: _LoopState,
) -> tuple[str, str]:
    while True:
        if state.turn >= limits.max_turns:
            return _last_text(messages), "max_turns"
        state.turn += 1
        emit(ModelRequest(turn=state.turn, messages=len(messages), tools=len(tools)))
        started = time.perf_counter()
        reply = await session.turn(system_prompt, messages, tools)
        latency = time.perf_counter() - started
        reported = reply.reported_cost_usd is not None
        cost = reply.reported_cost_usd if reported else prices.cost(model_id, reply.usage)
        state.charge(reply.usage, cost)
        for i, thought in enumerate(reply.reasoning):
            last = i == len(reply.reasoning) - 1
            emit(
                ModelReasoning(
                    turn=state.turn,
                    model=model_id,
                    text=thought.text,
                    redacted=thought.redacted,
                    source=thought.source,
                    tokens=reply.usage.reasoning_tokens or None if last else None,
                )
            )
        emit(
            ModelResponse(
                turn=state.turn,
                model=model_id,
                text=reply.text,
                tool_calls=reply.tool_calls,
                stop_reason=reply.stop_reason,
                usage=reply.usage,
                tool_io_tokens=_tool_io_share(messages, reply.usage.input_tokens),
                cost_usd=cost,
                latency_s=latency,
                retries=reply.retries,
                citations=list(reply.citations),
                cost_reported=reported,
            )
        )
        if reply.text:
            emit(AssistantMessage(turn=state.turn, text=reply.text))
        messages.append(AssistantTurn(reply.text, list(reply.tool_calls)))
        outcome = outcome_of(reply.stop_reason)
        if outcome != "complete":  # cut at the limit or refused: not an answer, and its calls not run
            return reply.text, outcome
        if not reply.tool_calls:
            return reply.text, "answer"
        sampler = _sampler(session, model_id, prices, state)
        allowed = max(0, limits.max_tool_calls - state.tool_calls)
        calls, refused = reply.tool_calls[:allowed], reply.tool_calls[allowed:]
        specs = state.specs_of(tools)
        if len(calls) == 1:  # the usual case: no task of its own (gather would make one)
            c = calls[0]
            outcomes = [
                await _call_tool(toolbox, c, specs.get(c.name), emit, limits, state.put_blob, sampler)
            ]
        else:
            outcomes = await asyncio.gather(
                *(
                    _call_tool(toolbox, c, specs.get(c.name), emit, limits, state.put_blob, sampler)
                    for c in calls
                )
            )
        state.tool_calls += len(calls)
        outcomes += [
            ToolOutcome(c.call_id, c.name, "tool call limit reached; not run", True) for c in refused
        ]
        messages.append(ToolResults(list(outcomes)))
        if refused:
            return _last_text(messages), "max_tool_calls"


async def _call_tool(
    toolbox: Toolbox,
    call: ToolCallRequest,
    spec: ToolSpec | None,
    emit: Callable[[Event], None],
    limits: Limits,
    put_blob: Callable[[Blob], None] | None,
    sampler: Sampler,
) -> ToolOutcome:
    # A name no tool has reaches no server: "" and not built-in, as the toolbox's answer says.
    server, builtin = ("", False) if spec is None else (spec.server, spec.builtin)
    emit(
        ToolCall(
            call_id=call.call_id, server=server, tool=call.name, arguments=call.arguments, builtin=builtin
        )
    )
    if "__raw__" in call.arguments and len(call.arguments) == 1:
        message = "arguments were not valid JSON; send a JSON object matching the tool's input schema"
        emit(
            ToolResult(
                call_id=call.call_id,
                server=server,
                tool=call.name,
                content=message,
                is_error=True,
                error_type="malformed_arguments",
                latency_s=0.0,
                builtin=builtin,
            )
        )
        return ToolOutcome(call.call_id, call.name, message, True)
    token = CURRENT_SAMPLER.set(sampler)  # in this call's context only: concurrent calls keep their own
    try:
        outcome = await toolbox.call(call.name, call.arguments)
    finally:
        CURRENT_SAMPLER.reset(token)
    for notice in outcome.notices:
        emit(notice.model_copy(update={"call_id": call.call_id}))
    if put_blob is not None:
        for blob in outcome.blobs:
            put_blob(blob)
    emit(
        ToolResult(
            call_id=call.call_id,
            server=outcome.server,
            tool=outcome.tool,
            content=cap_stored(outcome.content, limits.tool_result_store_chars),
            is_error=outcome.is_error,
            error_type=outcome.error_type,
            latency_s=outcome.latency_s,
            structured=cap_structured(outcome.structured, limits.tool_result_store_chars),
            blocks=[cap_block(b, limits.tool_result_store_chars) for b in outcome.blocks],
            builtin=outcome.builtin,
        )
    )
    sent = cap_text(outcome.content, limits.tool_result_model_chars, what="sent to the model")
    return ToolOutcome(call.call_id, call.name, sent, outcome.is_error, _images(outcome))


def _sampler(session: ModelSession, model_id: str, prices: PriceTable, state: _LoopState) -> Sampler:
    """The trial's model answering a server's sampling request; its tokens count as the trial's."""

    async def sample(request: SampleRequest) -> SampleReply:
        messages: list[Message] = [
            UserMessage(text) if role == "user" else AssistantTurn(text, [])
            for role, text in request.messages
        ]
        reply = await session.turn(request.system, messages, [])
        reported = reply.reported_cost_usd
        state.charge(reply.usage, reported if reported is not None else prices.cost(model_id, reply.usage))
        return SampleReply(reply.text, model_id)

    return sample


def _images(outcome: ToolCallOutcome) -> tuple[ToolImage, ...]:
    """The result's images in a format and size the model APIs accept; others stay labels only."""
    data = {b.sha256: b.data for b in outcome.blobs}
    return tuple(
        ToolImage(b.mime_type, base64.b64encode(data[b.sha256]).decode())
        for b in outcome.blocks
        if b.type == "image"
        and b.mime_type in MODEL_IMAGE_TYPES
        and b.sha256 in data
        and len(data[b.sha256]) <= MAX_MODEL_IMAGE_BYTES
    )


def _tool_io_share(messages: list[Message], input_tokens: int) -> int:
    """The part of a request's input tokens that were tool results fed back, by their share of the text."""
    tool_chars = sum(len(r.content) for m in messages if isinstance(m, ToolResults) for r in m.results)
    other = sum(len(m.text) for m in messages if isinstance(m, UserMessage | AssistantTurn))
    total = tool_chars + other
    return round(input_tokens * tool_chars / total) if total else 0


def _last_text(messages: list[Message]) -> str:
    for m in reversed(messages):
        if isinstance(m, AssistantTurn) and m.text:
            return m.text
    return ""


__all__ = ["DEFAULT_SYSTEM_PROMPT", "LoopResult", "run_agent"]
