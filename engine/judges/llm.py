"""An LLM as judge (``anthropic:*`` / ``openai:*``): one model call per pass, JSON validated.

A reply that does not validate is sent back once or twice with the reason (three attempts in
all); after that the pass is a judge error: no verdict, the reason recorded, never a pass or a
fail. A provider failure (after the provider's own retries) is a judge error too. The tokens of
every attempt are counted as the ``judge`` phase.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import ValidationError

from proctor.engine.judges.base import JudgeOutcome, JudgeSubject, Verdict, rubric_hash
from proctor.engine.judges.prompts import (
    PROMPT_HASH,
    PROMPT_VERSION,
    SYSTEM_PROMPT,
    build_prompt,
    correction,
)
from proctor.engine.providers.base import AssistantTurn, Message, Provider, ProviderError, UserMessage
from proctor.engine.providers.prices import PriceTable
from proctor.engine.scoring import COGNITIVE_MODES
from proctor.scenarios.schema import Scenario
from proctor.store.events import Usage
from proctor.store.records import JudgmentMeta
from proctor.store.redaction import redact

DEFAULT_ATTEMPTS = 3
_FENCE = re.compile(r"^```[A-Za-z0-9_-]*\s*\n(.*?)\n?```$", re.DOTALL)


class VerdictError(ValueError):
    """A judge reply is not a valid verdict; the message says why (never quotes the reply)."""


def extract_json(text: str) -> str:
    """The reply without surrounding whitespace or a Markdown code fence (```json ... ```)."""
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    return fenced.group(1).strip() if fenced else stripped


def parse_verdict(text: str, scenario: Scenario) -> Verdict:
    """Parse and validate one reply against ``Verdict`` and what the scenario asks for."""
    body = extract_json(text)
    if not body:
        raise VerdictError("the reply was empty")
    try:
        data: Any = json.loads(body)
    except json.JSONDecodeError as exc:
        raise VerdictError(f"not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    if not isinstance(data, dict):
        raise VerdictError(f"expected a JSON object, got {type(data).__name__}")
    try:
        verdict = Verdict.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'object'}: {e['msg']}"
            for e in exc.errors(include_url=False, include_input=False)
        )
        raise VerdictError(problems) from None
    _check_against(verdict, scenario)
    return verdict


def _check_against(verdict: Verdict, scenario: Scenario) -> None:
    if verdict.failure_mode is not None and verdict.failure_mode not in COGNITIVE_MODES:
        raise VerdictError(f"failure_mode must be null or one of {', '.join(COGNITIVE_MODES)}")
    if len(verdict.claims) != len(scenario.claims):
        raise VerdictError(f"expected {len(scenario.claims)} claims, got {len(verdict.claims)}")
    expected = [c.name for c in scenario.rubric]
    got = [c.name for c in verdict.criteria]
    if sorted(got) != sorted(expected):
        raise VerdictError(f"criteria must be exactly {expected}, got {got}")
    if scenario.key_points and verdict.key_points_success is None:
        raise VerdictError("key_points_success must be true or false: the task has key points")


class LlmJudge:
    """Judges with ``provider``; each pass is a fresh session seeded with its pass number."""

    def __init__(
        self,
        provider: Provider,
        *,
        temperature: float | None,
        prices: PriceTable | None = None,
        max_attempts: int = DEFAULT_ATTEMPTS,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self._provider = provider
        self._prices = prices or PriceTable()
        self.temperature = temperature
        self.max_attempts = max_attempts

    @property
    def judge_id(self) -> str:
        return self._provider.model_id

    def meta(self, subject: JudgeSubject) -> JudgmentMeta:
        return JudgmentMeta(
            prompt_version=PROMPT_VERSION,
            prompt_hash=PROMPT_HASH,
            rubric_hash=rubric_hash(subject.scenario),
            temperature=self.temperature,
            source=f"proctor:llm:{self.judge_id}",
        )

    async def judge(self, subject: JudgeSubject, pass_no: int) -> JudgeOutcome:
        session = self._provider.session(pass_no)
        messages: list[Message] = [UserMessage(build_prompt(subject))]
        usage = Usage()
        error = ""
        attempts = 0
        for attempts in range(1, self.max_attempts + 1):
            try:
                turn = await session.turn(SYSTEM_PROMPT, messages, [])
            except ProviderError as exc:
                return self._outcome(subject, None, f"judge call failed: {redact(str(exc))}", usage, attempts)
            except Exception as exc:  # a bug or an SDK surprise is still a judge error, not a verdict
                message = f"judge call failed: {type(exc).__name__}: {redact(str(exc))}"
                return self._outcome(subject, None, message, usage, attempts)
            usage = usage + turn.usage
            try:
                verdict = parse_verdict(turn.text, subject.scenario)
            except VerdictError as exc:
                error = str(exc)
                messages = [*messages, AssistantTurn(turn.text), UserMessage(correction(error))]
                continue
            return self._outcome(subject, verdict, "", usage, attempts)
        return self._outcome(
            subject, None, f"no valid verdict after {attempts} attempts: {error}", usage, attempts
        )

    def _outcome(
        self, subject: JudgeSubject, verdict: Verdict | None, error: str, usage: Usage, attempts: int
    ) -> JudgeOutcome:
        return JudgeOutcome(
            verdict=verdict,
            error=error,
            meta=self.meta(subject),
            usage=usage,
            attempts=attempts,
            cost_usd=self._prices.cost(self.judge_id, usage),
        )

    async def aclose(self) -> None:
        await self._provider.aclose()


__all__ = ["DEFAULT_ATTEMPTS", "LlmJudge", "VerdictError", "extract_json", "parse_verdict"]
