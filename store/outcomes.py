"""How an answer ended, in words every reader shares: stop reasons and the outcomes they mean.

A provider (or an agent CLI's stream) names why its model stopped in this vocabulary; an answer
cut at the output limit or refused by the model is its own outcome, stored, shown, counted and
never judged as if it were a complete answer. It sits at the bottom (no imports of proctor) so
the engine, the store's readers and the console all read one definition.
"""

from __future__ import annotations

from typing import Literal

END_TURN = "end_turn"
TOOL_USE = "tool_use"
MAX_TOKENS = "max_tokens"
"""The reply hit its output limit (Anthropic ``max_tokens``, OpenAI ``length``/``incomplete``)."""
REFUSAL = "refusal"
"""The model or the API's classifier declined (Anthropic ``refusal``, OpenAI ``content_filter``)."""
PAUSE_TURN = "pause_turn"
"""Anthropic paused a long turn of server tools: sent back as is, it continues (never final)."""
UNREPORTED = "unreported"
"""The stream ended complete (usage sent) but without any finish reason (kimi-k2 via OpenRouter)."""

AnswerOutcome = Literal["complete", "truncated", "refused"]
TRUNCATED: AnswerOutcome = "truncated"
REFUSED: AnswerOutcome = "refused"
NOT_A_COMPLETE_ANSWER: frozenset[str] = frozenset({TRUNCATED, REFUSED})
"""Trial stops (``TrialFinished.stop``) whose answer is never judged."""


def outcome_of(stop_reason: str) -> AnswerOutcome:
    """What a model turn's stop reason makes of its answer."""
    if stop_reason == MAX_TOKENS:
        return TRUNCATED
    if stop_reason == REFUSAL:
        return REFUSED
    return "complete"


def outcome_reason(outcome: str) -> str:
    """Why such an answer is not judged, as reports, the gate and the console say it."""
    if outcome == TRUNCATED:
        return "truncated: the answer was cut at the model's output limit (raise model_settings.MODEL.max_output_tokens)"
    if outcome == REFUSED:
        return "refused: the model declined to answer"
    return ""


__all__ = [
    "END_TURN",
    "MAX_TOKENS",
    "NOT_A_COMPLETE_ANSWER",
    "PAUSE_TURN",
    "REFUSAL",
    "REFUSED",
    "TOOL_USE",
    "TRUNCATED",
    "UNREPORTED",
    "AnswerOutcome",
    "outcome_of",
    "outcome_reason",
]
