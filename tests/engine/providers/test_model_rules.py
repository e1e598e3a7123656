"""The request each model is sent, decided by model (engine/providers/model_rules.py).

Each case is a rule the provider documents; the page is named beside it.
"""

from __future__ import annotations

import pytest

from proctor.engine.providers.model_rules import ModelSettingsError, plan_request, rule_for
from proctor.scenarios.schema import ModelSettings


@pytest.mark.parametrize(
    "model",
    [
        # Anthropic, "Migrating to Claude Opus 4.7"
        # (https://platform.claude.com/docs/en/about-claude/models/migration-guide): temperature,
        # top_p and top_k are removed; a request with one is a 400 "temperature is deprecated".
        "anthropic:claude-opus-4-7",
        "anthropic:claude-opus-4-8",
        "anthropic:claude-opus-5",
        "anthropic:claude-sonnet-5",
        # OpenAI reasoning models (https://platform.openai.com/docs/guides/reasoning): only the
        # default temperature; 400 "'temperature' does not support 0.0 with this model".
        "openai:gpt-5",
        "openai:gpt-5-mini",
        "openai:o3-mini",
        "openai:openai/gpt-5",  # through OpenRouter: the same model, the same rule
    ],
)
def test_a_judges_default_temperature_is_not_sent_to_models_that_refuse_it(model: str) -> None:
    plan = plan_request(model, default_temperature=0.0)
    assert plan.temperature is None
    assert plan.parameters()["temperature"] is None
    assert any("temperature 0 not sent" in note for note in plan.notes)


@pytest.mark.parametrize(
    "model", ["anthropic:claude-sonnet-4-5", "anthropic:claude-haiku-4-5", "openai:gpt-4.1", "openai:llama3"]
)
def test_models_that_take_a_temperature_get_the_judges(model: str) -> None:
    assert plan_request(model, default_temperature=0.0).temperature == 0.0


@pytest.mark.parametrize(
    ("model", "param"),
    [
        # https://platform.openai.com/docs/api-reference/chat/create: max_tokens "is not
        # compatible with o-series models"; gpt-5 answers 400 "Unsupported parameter: 'max_tokens'".
        ("openai:gpt-5", "max_completion_tokens"),
        ("openai:o4-mini", "max_completion_tokens"),
        ("openai:gpt-4o", "max_completion_tokens"),
        # A fine-tuned model keeps its base model's rules (https://platform.openai.com/docs/guides/fine-tuning).
        ("openai:ft:o4-mini-2025-04-16:acme::BqX1", "max_completion_tokens"),
        # Compatible servers (vLLM, ollama, llama.cpp, DeepSeek) read max_tokens.
        ("openai:qwen2.5-coder:7b", "max_tokens"),
        ("openai:deepseek-reasoner", "max_tokens"),
    ],
)
def test_the_token_limit_field_is_decided_by_model_not_by_endpoint(model: str, param: str) -> None:
    assert plan_request(model).token_param == param


def test_a_suite_may_override_the_token_limit_field_and_the_output_length() -> None:
    plan = plan_request(
        "openai:gpt-5", ModelSettings(token_limit_param="max_tokens", max_output_tokens=32000)
    )
    assert (plan.token_param, plan.output_tokens) == ("max_tokens", 32000)


def test_reasoning_models_get_room_for_their_reasoning() -> None:
    assert plan_request("openai:gpt-5").output_tokens > plan_request("openai:gpt-4.1").output_tokens


def test_an_explicit_temperature_a_model_refuses_is_an_error_naming_the_field_and_the_fix() -> None:
    with pytest.raises(ModelSettingsError) as caught:
        plan_request("anthropic:claude-opus-4-7", ModelSettings(temperature=0.2))
    message = str(caught.value)
    assert "model_settings.anthropic:claude-opus-4-7.temperature" in message
    assert "migration-guide" in message and "set it to null" in message


def test_gpt5_takes_a_temperature_only_with_reasoning_off() -> None:
    with pytest.raises(ModelSettingsError, match="reasoning_effort: none"):
        plan_request("openai:gpt-5.4", ModelSettings(temperature=0.2))
    plan = plan_request("openai:gpt-5.4", ModelSettings(temperature=0.2, reasoning_effort="none"))
    assert plan.temperature == 0.2


def test_temperature_null_sends_none_even_where_accepted() -> None:
    assert (
        plan_request("openai:gpt-4.1", ModelSettings(temperature=None), default_temperature=0.0).temperature
        is None
    )


def test_budget_thinking_on_an_adaptive_only_model_is_refused_with_the_alternative() -> None:
    # https://platform.claude.com/docs/en/about-claude/models/migration-guide: Opus 4.7 thinks
    # adaptively only; thinking.budget_tokens is not supported.
    with pytest.raises(ModelSettingsError, match="use reasoning_effort"):
        plan_request("anthropic:claude-opus-4-7", ModelSettings(thinking_budget=4000))
    plan = plan_request("anthropic:claude-opus-4-7", ModelSettings(reasoning_effort="high"))
    assert plan.adaptive_thinking and plan.reasoning_effort == "high"


def test_budget_thinking_leaves_room_for_the_answer_and_takes_no_temperature() -> None:
    # https://platform.claude.com/docs/en/build-with-claude/extended-thinking: budget_tokens must
    # be below max_tokens; thinking is not compatible with temperature.
    plan = plan_request(
        "anthropic:claude-sonnet-4-5", ModelSettings(thinking_budget=8000), default_temperature=0.0
    )
    assert plan.output_tokens > 8000 and plan.temperature is None


def test_responses_only_models_are_planned_on_the_responses_api() -> None:
    # Each -pro model's page at https://platform.openai.com/docs/models: "available in the
    # Responses API only".
    assert plan_request("openai:gpt-5-pro").api == "responses"
    assert plan_request("openai:gpt-5.5-pro").api == "responses"
    with pytest.raises(ModelSettingsError, match="Responses API only"):
        plan_request("openai:o3-pro", ModelSettings(api="chat"))
    assert plan_request("openai:gpt-5", ModelSettings(api="responses")).api == "responses"


def test_deepseek_and_kimi_thinking_models_want_their_reasoning_back() -> None:
    # https://api-docs.deepseek.com/guides/thinking_mode#tool-calls: reasoning_content of a
    # tool-calling turn must be passed back (400 "Missing `reasoning_content` field").
    assert rule_for("openai:deepseek-reasoner").echo_reasoning
    assert rule_for("openai:moonshotai/kimi-k2-thinking").echo_reasoning
    assert not rule_for("openai:gpt-5").echo_reasoning


def test_settings_are_validated_as_suite_fields() -> None:
    from pydantic import ValidationError

    from proctor.scenarios.schema import Suite

    with pytest.raises(ValidationError, match="thinking_budget must be less than max_output_tokens"):
        ModelSettings(thinking_budget=5000, max_output_tokens=4000)
    base = {"name": "s", "arms": {"b": {"baseline": True}}}
    with pytest.raises(ValidationError, match="offline models take none"):
        Suite.model_validate({**base, "model_settings": {"offline:default": {"temperature": 0.1}}})
    with pytest.raises(ValidationError, match="'api' chooses between OpenAI's APIs"):
        Suite.model_validate({**base, "model_settings": {"anthropic:claude-x": {"api": "responses"}}})
    suite = Suite.model_validate({**base, "judge": {"temperature": None}})
    assert suite.judge.temperature is None
