"""What each model accepts in a request, decided by the model and never by the endpoint.

gpt-5 refuses ``max_tokens`` through Azure or a LiteLLM gateway exactly as at api.openai.com,
and claude-opus-4-7 refuses ``temperature`` wherever it is served; so the request is planned
from the model's name (its last path segment: ``openai/gpt-5`` on OpenRouter is ``gpt-5``).
Each rule names the page it comes from. A suite's ``model_settings`` override a rule where the
API allows it; asking for what the API refuses is a ``ModelSettingsError`` before the run
(exit 2) that names the field and the fix. A default the model refuses (the judge's
temperature 0.0) is dropped instead, and the plan says so in ``notes``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from proctor.scenarios.model_ids import split_model_id
from proctor.scenarios.schema import ModelSettings

TemperatureRule = Literal["any", "never", "reasoning_off"]
"""``never``: the API refuses the field; ``reasoning_off``: only with ``reasoning_effort: none``."""
TokenParam = Literal["max_tokens", "max_completion_tokens"]
Thinking = Literal["none", "budget", "adaptive"]
Api = Literal["chat", "responses"]

ANTHROPIC_EFFORTS = ("low", "medium", "high", "xhigh", "max")
DEFAULT_OUTPUT_TOKENS = 4096
REASONING_OUTPUT_TOKENS = 16384
"""Reasoning models spend their reasoning out of the reply's limit: 4,096 cut answers short."""

ANTHROPIC_MIGRATION = "https://platform.claude.com/docs/en/about-claude/models/migration-guide"
ANTHROPIC_THINKING = "https://platform.claude.com/docs/en/build-with-claude/extended-thinking"
ANTHROPIC_EFFORT = "https://platform.claude.com/docs/en/build-with-claude/effort"
OPENAI_REASONING = "https://platform.openai.com/docs/guides/reasoning"
OPENAI_CHAT_CREATE = "https://platform.openai.com/docs/api-reference/chat/create"
OPENAI_MODELS = "https://platform.openai.com/docs/models"
DEEPSEEK_THINKING = "https://api-docs.deepseek.com/guides/thinking_mode#tool-calls"
KIMI_THINKING = "https://platform.moonshot.ai/docs/guide/use-kimi-k2-thinking-model"


@dataclass(frozen=True)
class ModelRule:
    """What a family of models accepts; ``pattern`` matches the model's last name segment."""

    family: str
    provider: str
    pattern: str
    source: str
    temperature: TemperatureRule = "any"
    token_param: TokenParam = "max_tokens"
    output_tokens: int = DEFAULT_OUTPUT_TOKENS
    thinking: Thinking = "none"
    effort: bool = False
    api: Api = "chat"
    responses_only: bool = False
    echo_reasoning: bool = False
    """The API requires the reasoning it sent to come back with the turn (DeepSeek, Kimi)."""

    def matches(self, provider: str, name: str) -> bool:
        return provider == self.provider and re.match(self.pattern, name) is not None


_ANTHROPIC_ADAPTIVE_ONLY = r"claude-(fable-5|mythos-5|opus-4-[78]|opus-5|sonnet-5)"
_ANTHROPIC_EFFORT = r"claude-(opus-4-[56]|sonnet-4-6)"

RULES: tuple[ModelRule, ...] = (
    ModelRule(
        "Claude Opus 4.7 and later (Opus 4.8, Opus 5, Sonnet 5, Fable 5)",
        "anthropic",
        _ANTHROPIC_ADAPTIVE_ONLY,
        f"{ANTHROPIC_MIGRATION} (sampling parameters removed, adaptive thinking only)",
        temperature="never",
        thinking="adaptive",
        effort=True,
    ),
    ModelRule(
        "Claude Opus 4.5/4.6 and Sonnet 4.6",
        "anthropic",
        _ANTHROPIC_EFFORT,
        f"{ANTHROPIC_THINKING}; {ANTHROPIC_EFFORT}",
        thinking="budget",
        effort=True,
    ),
    ModelRule("Claude models", "anthropic", r"claude-", ANTHROPIC_THINKING, thinking="budget"),
    ModelRule(
        "OpenAI -pro models (Responses API only)",
        "openai",
        r"(gpt-5[.\d]*|o\d+)-pro\b",
        f"{OPENAI_MODELS} (each -pro model's page: 'available in the Responses API only'); {OPENAI_REASONING}",
        temperature="never",
        token_param="max_completion_tokens",
        output_tokens=REASONING_OUTPUT_TOKENS,
        effort=True,
        api="responses",
        responses_only=True,
    ),
    ModelRule(
        "gpt-5 chat models (no reasoning)",
        "openai",
        r"gpt-5[.\d]*-chat",
        OPENAI_CHAT_CREATE,
        token_param="max_completion_tokens",
    ),
    ModelRule(
        "gpt-5 models",
        "openai",
        r"gpt-5",
        f"{OPENAI_REASONING}; {OPENAI_CHAT_CREATE} (max_tokens 'is not compatible with o-series models')",
        temperature="reasoning_off",
        token_param="max_completion_tokens",
        output_tokens=REASONING_OUTPUT_TOKENS,
        effort=True,
    ),
    ModelRule(
        "o-series models",
        "openai",
        r"o\d",
        f"{OPENAI_REASONING}; {OPENAI_CHAT_CREATE}",
        temperature="never",
        token_param="max_completion_tokens",
        output_tokens=REASONING_OUTPUT_TOKENS,
        effort=True,
    ),
    ModelRule(
        "OpenAI GPT-4 and earlier",
        "openai",
        r"(gpt-4|gpt-3\.5|chatgpt-)",
        f"{OPENAI_CHAT_CREATE} (max_tokens deprecated in favour of max_completion_tokens)",
        token_param="max_completion_tokens",
    ),
    ModelRule(
        "DeepSeek reasoning models",
        "openai",
        r"deepseek-(reasoner|r1|v3\.2|v4)",
        f"{DEEPSEEK_THINKING} (reasoning_content of a tool-calling turn must be passed back)",
        output_tokens=REASONING_OUTPUT_TOKENS,
        echo_reasoning=True,
    ),
    ModelRule(
        "Kimi K2 thinking models",
        "openai",
        r"kimi-k2(\.\d|-thinking)",
        f"{KIMI_THINKING} (keep reasoning_content in the context of a tool-calling turn)",
        output_tokens=REASONING_OUTPUT_TOKENS,
        echo_reasoning=True,
    ),
    ModelRule(
        "OpenAI-compatible models",
        "openai",
        r"",
        "compatible servers (vLLM, ollama, llama.cpp, OpenRouter) read max_tokens",
    ),
)


class ModelSettingsError(ValueError):
    """A suite asks a model for what its API refuses; the message names the field and the fix."""

    def __init__(self, field: str, detail: str) -> None:
        super().__init__(f"field '{field}': {detail}")
        self.field = field


def model_name(name: str) -> str:
    """The part of a model name the rules match: lowercased, after a gateway's ``vendor/`` prefix;
    a fine-tuned OpenAI model (``ft:BASE:org::id``) by its base model, whose rules it keeps."""
    short = name.rsplit("/", 1)[-1].lower()
    return short.removeprefix("ft:")


def rule_for(model_id: str) -> ModelRule:
    provider, name = split_model_id(model_id)
    short = model_name(name)
    for rule in RULES:
        if rule.matches(provider, short):
            return rule
    return ModelRule("unknown models", provider, r"", "no rule: proctor's defaults")


@dataclass(frozen=True)
class RequestPlan:
    """What every request to one model carries, decided once from its rule and the suite."""

    model_id: str
    rule: ModelRule
    temperature: float | None
    output_tokens: int
    token_param: TokenParam
    reasoning_effort: str | None = None
    thinking_budget: int | None = None
    api: Api = "chat"
    notes: tuple[str, ...] = field(default=())

    @property
    def echo_reasoning(self) -> bool:
        return self.rule.echo_reasoning

    @property
    def adaptive_thinking(self) -> bool:
        return self.rule.thinking == "adaptive" and self.reasoning_effort not in (None, "none")

    def parameters(self) -> dict[str, Any]:
        """As recorded with each trial: what is sent (None: not sent), and why where it differs."""
        out: dict[str, Any] = {
            "temperature": self.temperature,
            "max_output_tokens": self.output_tokens,
            "token_limit_param": self.token_param if self.api == "chat" else "max_output_tokens",
            "api": self.api,
            "streaming": True,
        }
        if self.reasoning_effort is not None:
            out["reasoning_effort"] = self.reasoning_effort
        if self.thinking_budget is not None:
            out["thinking_budget"] = self.thinking_budget
        if self.notes:
            out["adapted"] = list(self.notes)
        return out


def plan_request(
    model_id: str,
    settings: ModelSettings | None = None,
    *,
    default_temperature: float | None = None,
) -> RequestPlan:
    """The request ``model_id`` is sent: its rule, then the suite's settings, then a caller's default.

    ``default_temperature`` (the judge's) is sent only to a model that accepts it.
    """
    rule = rule_for(model_id)
    given = settings or ModelSettings()
    asked = given.model_fields_set
    where = f"model_settings.{model_id}"
    notes: list[str] = []
    effort = given.reasoning_effort

    if given.thinking_budget is not None and rule.thinking == "adaptive":
        raise ModelSettingsError(
            f"{where}.thinking_budget",
            f"{rule.family} refuse budget thinking ({rule.source}); "
            "use reasoning_effort (low, medium, high, xhigh or max) instead",
        )
    if given.thinking_budget is not None and rule.provider == "anthropic" and given.temperature is not None:
        raise ModelSettingsError(
            f"{where}.temperature",
            f"extended thinking accepts no temperature ({ANTHROPIC_THINKING}); "
            "remove temperature or thinking_budget",
        )
    if effort is not None and rule.provider == "anthropic" and not rule.effort:
        raise ModelSettingsError(
            f"{where}.reasoning_effort",
            f"{model_id} takes no effort parameter ({ANTHROPIC_EFFORT}); use thinking_budget instead",
        )

    if effort is not None and rule.provider == "anthropic" and effort not in ANTHROPIC_EFFORTS:
        raise ModelSettingsError(
            f"{where}.reasoning_effort",
            f"the Messages API's effort is one of {', '.join(ANTHROPIC_EFFORTS)} ({ANTHROPIC_EFFORT})",
        )

    temperature = _temperature(rule, given, asked, effort, default_temperature, where, notes)

    api: Api = given.api or rule.api
    if api == "chat" and rule.responses_only:
        raise ModelSettingsError(
            f"{where}.api",
            f"{model_id} is served by the Responses API only ({rule.source}); "
            "remove 'api: chat' or set 'api: responses'",
        )
    output = given.max_output_tokens or rule.output_tokens
    if given.thinking_budget is not None and given.max_output_tokens is None:
        output = given.thinking_budget + DEFAULT_OUTPUT_TOKENS
    return RequestPlan(
        model_id=model_id,
        rule=rule,
        temperature=temperature,
        output_tokens=output,
        token_param=given.token_limit_param or rule.token_param,
        reasoning_effort=effort,
        thinking_budget=given.thinking_budget,
        api=api,
        notes=tuple(notes),
    )


def _temperature(
    rule: ModelRule,
    given: ModelSettings,
    asked: set[str],
    effort: str | None,
    default: float | None,
    where: str,
    notes: list[str],
) -> float | None:
    refused = (
        rule.temperature == "never"
        or (rule.temperature == "reasoning_off" and effort != "none")
        or given.thinking_budget is not None  # Anthropic: thinking takes no temperature
    )
    if "temperature" in asked:
        if given.temperature is not None and refused:
            why = "accept temperature only with reasoning_effort: none" if rule.temperature != "never" else ""
            raise ModelSettingsError(
                f"{where}.temperature",
                f"{rule.family} {why or 'refuse temperature'} ({rule.source}); set it to null, or remove it",
            )
        return given.temperature
    if default is not None and refused:
        notes.append(f"temperature {default:g} not sent: {rule.family} refuse it ({rule.source})")
        return None
    return default


__all__ = [
    "RULES",
    "ModelRule",
    "ModelSettingsError",
    "RequestPlan",
    "model_name",
    "plan_request",
    "rule_for",
]
