"""What a model call cost: the suite's prices, else pydantic's maintained, dated ``genai-prices``.

Prices change without notice, and some depend on the prompt's length or the date (a long-context
tier, an introductory rate): a hand-written table got both wrong. ``genai-prices`` (MIT, pinned
in pyproject.toml) prices each call from its token counts at the run's date, cache reads and
writes at their own rates and reasoning tokens as the output they are billed as. The suite's
``prices:`` (keyed ``provider:model`` or bare model, US$ per million tokens) win over it. A model
neither knows is *unpriced*: ``cost`` returns ``None``, never a guess. A cost the response itself
reported (OpenRouter's ``usage.cost``, xAI's ``cost_in_usd_ticks``) wins over both; the agent
loop uses it where the provider read one.

Token semantics (the providers normalize to them): ``input_tokens`` are uncached prompt
tokens, ``cache_read_tokens`` / ``cache_write_tokens`` the cached ones, so the four counts
add up to everything billed; ``reasoning_tokens`` are part of ``output_tokens``.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from datetime import UTC, datetime
from functools import lru_cache
from importlib.metadata import version
from typing import Any
from urllib.parse import urlsplit

from proctor.scenarios.schema import Price
from proctor.store.events import Usage

FREE_PROVIDERS = frozenset({"offline"})
PRICE_LIBRARY = "genai-prices"
GENAI_PROVIDER = {"anthropic": "anthropic", "openai": "openai"}
"""proctor's provider -> genai-prices' provider id, when no other endpoint is named."""

_DATE_SUFFIX = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$")


def split_model_id(model_id: str) -> tuple[str, str]:
    """``"provider:name"`` -> ``(provider, name)``; a bare name has provider ``""``."""
    provider, sep, name = model_id.partition(":")
    return (provider, name) if sep else ("", model_id)


class PriceTable:
    """The suite's overrides, then genai-prices at ``at`` (the run's start), by model id.

    ``endpoint`` records where a model is served (its ``base_url``), so a model behind
    OpenRouter or xAI is priced as that provider sells it.
    """

    def __init__(self, overrides: Mapping[str, Price] | None = None, *, at: datetime | None = None):
        self._overrides = dict(overrides or {})
        self.at = at or datetime.now(UTC)
        self._endpoints: dict[str, str] = {}

    def served_at(self, model_id: str, base_url: str | None) -> None:
        """Where ``model_id`` is served; without, the provider's own API is assumed."""
        if base_url:
            self._endpoints[model_id] = base_url

    def override(self, model_id: str) -> Price | None:
        """The suite's price for ``model_id``; a dated snapshot name (``-20250929``) falls back to its alias."""
        provider, name = split_model_id(model_id)
        undated = _DATE_SUFFIX.sub("", name)
        return _lookup(self._overrides, provider, [name] if undated == name else [name, undated])

    def is_priced(self, model_id: str) -> bool:
        return self.cost(model_id, Usage()) is not None

    def cost(self, model_id: str, usage: Usage) -> float | None:
        """US dollars for ``usage``; 0.0 for offline models, ``None`` when the model is unpriced."""
        provider, name = split_model_id(model_id)
        if provider in FREE_PROVIDERS:
            return 0.0
        price = self.override(model_id)
        if price is not None:
            return (
                usage.input_tokens * price.input
                + usage.output_tokens * price.output
                + usage.cache_read_tokens * price.cache_read
                + usage.cache_write_tokens * price.cache_write
            ) / 1_000_000
        return _library_cost(provider, name, self._endpoints.get(model_id), usage, self.at)

    def provenance(self) -> dict[str, Any]:
        """What the run's prices came from, recorded with the run."""
        return {
            "library": PRICE_LIBRARY,
            "version": library_version(),
            "price_date": self.at.date().isoformat(),
            "overrides": sorted(self._overrides),
        }


@lru_cache(maxsize=1)
def library_version() -> str:
    return version(PRICE_LIBRARY)


def _library_cost(provider: str, name: str, base_url: str | None, usage: Usage, at: datetime) -> float | None:
    import genai_prices  # its data module is large: loaded by the first priced call only

    total_input = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
    counts: dict[str, int] = {"input_tokens": total_input, "output_tokens": usage.output_tokens}
    if usage.cache_read_tokens:
        counts["cache_read_tokens"] = usage.cache_read_tokens
    if usage.cache_write_tokens:
        counts["cache_write_tokens"] = usage.cache_write_tokens
    if usage.reasoning_tokens:
        counts["output_reasoning_tokens"] = usage.reasoning_tokens
    priced = genai_prices.Usage(**counts)
    attempts: list[dict[str, Any]] = []
    if base_url and not _is_provider_home(provider, base_url):
        attempts.append({"provider_api_url": base_url})  # OpenRouter, xAI, DeepSeek, Groq...
    if provider in GENAI_PROVIDER:  # else a gateway (Azure, LiteLLM) in front of the provider's models
        attempts.append({"provider_id": GENAI_PROVIDER[provider]})
    for where in attempts:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a price it can only estimate is still a price
                found = genai_prices.calc_price(priced, name, genai_request_timestamp=at, **where)
        except LookupError:
            continue
        return float(found.total_price)
    return None


def _is_provider_home(provider: str, base_url: str) -> bool:
    host = urlsplit(base_url).hostname or ""
    return (provider == "openai" and host.endswith("openai.com")) or (
        provider == "anthropic" and host.endswith("anthropic.com")
    )


def _lookup(table: Mapping[str, Price], provider: str, candidates: list[str]) -> Price | None:
    for candidate in candidates:
        if provider and f"{provider}:{candidate}" in table:
            return table[f"{provider}:{candidate}"]
        if candidate in table:
            return table[candidate]
        if not provider:
            for key, price in table.items():
                if split_model_id(key)[1] == candidate:
                    return price
    return None
