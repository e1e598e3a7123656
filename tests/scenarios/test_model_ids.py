"""The providers a model id may name are listed once; the suite schema and both registries obey it."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from proctor.engine.judges.registry import make_judge
from proctor.engine.providers.prices import PriceTable
from proctor.engine.providers.registry import ProviderConfigError, make_provider
from proctor.scenarios.model_ids import AGENT_FORMS_TEXT, AGENT_PROVIDERS, API_PROVIDERS, JUDGE_FORMS_TEXT
from proctor.scenarios.schema import Scoring, Suite


def _suite(model: str) -> Suite:
    return Suite.model_validate({"name": "s", "arms": {"baseline": {"baseline": True}}, "models": [model]})


def test_messages_offer_the_forms_as_they_always_read() -> None:
    assert AGENT_FORMS_TEXT == "'anthropic:NAME', 'openai:NAME' or 'offline:POLICY'"
    assert JUDGE_FORMS_TEXT == "'offline:lexical', 'anthropic:NAME' or 'openai:NAME'"


@pytest.mark.parametrize("provider", AGENT_PROVIDERS)
def test_a_suite_may_name_every_listed_provider(provider: str) -> None:
    assert _suite(f"{provider}:m").models == [f"{provider}:m"]


def test_a_suite_naming_an_unlisted_provider_is_told_the_listed_forms() -> None:
    with pytest.raises(ValidationError, match=AGENT_FORMS_TEXT):
        _suite("mistral:large")


def test_engine_registries_refuse_what_the_list_lacks_with_the_same_forms() -> None:
    with pytest.raises(ProviderConfigError, match=AGENT_FORMS_TEXT):
        make_provider("mistral:large", PriceTable(), {})
    with pytest.raises(ProviderConfigError, match=JUDGE_FORMS_TEXT):
        make_judge("mistral:large", Scoring())


@pytest.mark.parametrize("provider", API_PROVIDERS)
def test_every_api_provider_is_built_by_the_registry(provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(f"{provider.upper()}_API_KEY", "sk-test-key-for-registry")
    made = make_provider(f"{provider}:m", PriceTable(), {})
    assert made.provider_name == provider
