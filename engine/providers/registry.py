"""From ``provider:name`` in a suite to a live provider.

This is the only place API keys are read: from the environment variable the suite names (or
the provider's conventional one), handed straight to the SDK and registered for redaction.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from proctor.engine.providers.base import Provider
from proctor.engine.providers.model_rules import ModelSettingsError, plan_request
from proctor.engine.providers.offline.agent import OfflineProvider
from proctor.engine.providers.offline.gold import GoldProvider
from proctor.engine.providers.prices import PriceTable
from proctor.scenarios.model_ids import (
    AGENT_FORMS_TEXT,
    API_KEY_ENV,
    BASE_URL_ENV,
    OFFLINE,
    split_model_id,
)
from proctor.scenarios.schema import ModelSettings, ProviderSpec
from proctor.store.redaction import register_secret


class ProviderConfigError(Exception):
    """A model cannot be used as configured (unknown provider, missing key)."""


KEYLESS_PLACEHOLDER = "no-key-needed"


def _is_official_openai(base_url: str) -> bool:
    host = urlsplit(base_url).hostname or ""
    return host == "api.openai.com" or host.endswith(".openai.com")


def credentials(model_id: str, specs: dict[str, ProviderSpec]) -> tuple[str, str | None]:
    """An API model's key and base URL, from where the suite says (or the provider's variables).

    Raises ProviderConfigError without a key; the run's preflight calls it before any trial.
    """
    provider, name = split_model_id(model_id)
    if provider not in API_KEY_ENV or not name:
        raise ProviderConfigError(f"{model_id!r}: use {AGENT_FORMS_TEXT}")
    spec = specs.get(provider, ProviderSpec())
    key_env = spec.api_key_env or API_KEY_ENV[provider]
    api_key = os.environ.get(key_env, "")
    base_url = spec.base_url or os.environ.get(BASE_URL_ENV[provider]) or None
    if not api_key and provider == "openai" and base_url and not _is_official_openai(base_url):
        # A local OpenAI-compatible server (ollama, llama.cpp, vLLM) needs no key, but the SDK
        # refuses an empty one; this placeholder is what those servers ignore.
        return KEYLESS_PLACEHOLDER, base_url
    if not api_key:
        raise ProviderConfigError(
            f"{model_id}: no API key: set {key_env} (or choose the offline agent with --models offline:default)"
        )
    return api_key, base_url


def make_provider(
    model_id: str,
    prices: PriceTable,
    specs: dict[str, ProviderSpec],
    *,
    settings: ModelSettings | None = None,
    default_temperature: float | None = None,
) -> Provider:
    """The provider of ``model_id``; its requests follow the model's rule and the suite's
    ``settings`` for it; ``default_temperature`` (a judge's) is sent where the model takes it."""
    provider, name = split_model_id(model_id)
    if provider == OFFLINE:
        if name == "gold":
            return GoldProvider()
        try:
            return OfflineProvider(name or "default")
        except ValueError as exc:
            raise ProviderConfigError(str(exc)) from exc
    try:
        plan = plan_request(model_id, settings, default_temperature=default_temperature)
    except ModelSettingsError as exc:
        raise ProviderConfigError(f"suite.yaml: {exc}") from exc
    api_key, base_url = credentials(model_id, specs)
    if api_key != KEYLESS_PLACEHOLDER:
        register_secret(api_key)
    prices.served_at(model_id, base_url)
    # The SDKs take seconds to import; offline runs and read-only commands never pay for them.
    if provider == "anthropic":
        from proctor.engine.providers.anthropic_provider import AnthropicProvider

        return AnthropicProvider(name, api_key=api_key, base_url=base_url, prices=prices, plan=plan)
    from proctor.engine.providers.openai_provider import OpenAIProvider

    return OpenAIProvider(name, api_key=api_key, base_url=base_url, prices=prices, plan=plan)
