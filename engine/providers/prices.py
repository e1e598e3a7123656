"""What a model call cost, from a dated price table that a suite can override.

Prices change without notice. The figures below were read from the vendors' model and
pricing pages (and, where noted, announcements) as of ``PRICES_AS_OF``; CHECK THEM against
https://platform.claude.com/docs/en/about-claude/pricing and
https://developers.openai.com/api/docs/pricing before trusting a cost, and override them in
the suite (``prices:`` in suite.yaml, keyed ``provider:model`` or bare model). A model that is
in neither table is *unpriced*: ``cost`` returns ``None``, never a guess.

Token semantics (the providers normalize to them): ``input_tokens`` are uncached prompt
tokens, ``cache_read_tokens`` / ``cache_write_tokens`` the cached ones, so the four counts
add up to everything billed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from proctor.scenarios.schema import Price
from proctor.store.events import Usage

PRICES_AS_OF = "2026-11-01"

FREE_PROVIDERS = frozenset({"offline"})

_DATE_SUFFIX = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$")


def _p(input: float, output: float, cache_read: float, cache_write: float) -> Price:
    return Price(input=input, output=output, cache_read=cache_read, cache_write=cache_write)


# US$ per million tokens: input, output, cache read, cache write (Anthropic: 5-minute writes).
BUILTIN_PRICES: dict[str, Price] = {
    "anthropic:claude-fable-5-1": _p(10.0, 50.0, 0.25, 12.50),
    "anthropic:claude-opus-5-5": _p(4.0, 20.0, 0.20, 5.00),
    "anthropic:claude-opus-5": _p(5.0, 25.0, 0.50, 6.25),
    "anthropic:claude-opus-4-8": _p(5.0, 25.0, 0.50, 6.25),
    "anthropic:claude-opus-4-7": _p(5.0, 25.0, 0.50, 6.25),
    "anthropic:claude-opus-4-6": _p(5.0, 25.0, 0.50, 6.25),
    "anthropic:claude-opus-4-5": _p(5.0, 25.0, 0.50, 6.25),
    # Sonnet 5.5 cache reads were cut from 0.20 to 0.10 on 2026-10-07.
    "anthropic:claude-sonnet-5-5": _p(2.0, 10.0, 0.10, 2.50),
    "anthropic:claude-sonnet-5": _p(2.0, 10.0, 0.20, 2.50),
    "anthropic:claude-sonnet-4-5": _p(3.0, 15.0, 0.30, 3.75),
    "anthropic:claude-haiku-4-5": _p(1.0, 5.0, 0.10, 1.25),
    # claude-haiku-5-5 is left out on purpose: its price depends on the prompt length
    # (two bands around 100k tokens), which one flat row would get wrong. Override it.
    # GPT-5.6 tiers: announced preview prices; cache writes at 1.25x input.
    "openai:gpt-5.6-sol": _p(5.0, 30.0, 0.50, 6.25),
    "openai:gpt-5.6-terra": _p(2.5, 15.0, 0.25, 3.125),
    "openai:gpt-5.6-luna": _p(1.0, 6.0, 0.10, 1.25),
    "openai:gpt-5.5": _p(5.0, 30.0, 0.50, 5.0),
    "openai:gpt-5.4": _p(2.5, 15.0, 0.25, 2.5),
    "openai:gpt-5.4-mini": _p(0.75, 4.5, 0.075, 0.75),
    "openai:gpt-5.4-nano": _p(0.20, 1.25, 0.02, 0.20),
    "openai:gpt-5": _p(1.25, 10.0, 0.125, 1.25),
    "openai:gpt-5-mini": _p(0.25, 2.0, 0.025, 0.25),
    "openai:gpt-4.1": _p(2.0, 8.0, 0.50, 2.0),
    "openai:gpt-4.1-mini": _p(0.40, 1.60, 0.10, 0.40),
    "openai:gpt-4o": _p(2.5, 10.0, 1.25, 2.5),
    "openai:gpt-4o-mini": _p(0.15, 0.60, 0.075, 0.15),
}


def split_model_id(model_id: str) -> tuple[str, str]:
    """``"provider:name"`` -> ``(provider, name)``; a bare name has provider ``""``."""
    provider, sep, name = model_id.partition(":")
    return (provider, name) if sep else ("", model_id)


class PriceTable:
    """Built-in prices plus the suite's overrides (which win), looked up by model id."""

    def __init__(
        self, overrides: Mapping[str, Price] | None = None, *, builtin: Mapping[str, Price] | None = None
    ):
        self._overrides = dict(overrides or {})
        self._builtin = dict(BUILTIN_PRICES if builtin is None else builtin)

    def price(self, model_id: str) -> Price | None:
        """The price for ``model_id``; a dated snapshot name (``-20250929``) falls back to its alias."""
        provider, name = split_model_id(model_id)
        undated = _DATE_SUFFIX.sub("", name)
        candidates = [name] if undated == name else [name, undated]
        for table in (self._overrides, self._builtin):
            found = _lookup(table, provider, candidates)
            if found is not None:
                return found
        return None

    def is_priced(self, model_id: str) -> bool:
        return split_model_id(model_id)[0] in FREE_PROVIDERS or self.price(model_id) is not None

    def cost(self, model_id: str, usage: Usage) -> float | None:
        """US dollars for ``usage``; 0.0 for offline models, ``None`` when the model is unpriced."""
        if split_model_id(model_id)[0] in FREE_PROVIDERS:
            return 0.0
        price = self.price(model_id)
        if price is None:
            return None
        return (
            usage.input_tokens * price.input
            + usage.output_tokens * price.output
            + usage.cache_read_tokens * price.cache_read
            + usage.cache_write_tokens * price.cache_write
        ) / 1_000_000


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
