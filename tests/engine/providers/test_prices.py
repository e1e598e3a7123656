"""PriceTable: built-in figures, suite overrides, dated snapshots, unpriced and offline models."""

from __future__ import annotations

import re

import pytest

from proctor.engine.providers.prices import BUILTIN_PRICES, PRICES_AS_OF, PriceTable
from proctor.scenarios.schema import Price
from proctor.store.events import Usage

MILLION = Usage(
    input_tokens=1_000_000, output_tokens=1_000_000, cache_read_tokens=1_000_000, cache_write_tokens=1_000_000
)


def test_table_is_dated_and_sane() -> None:
    assert PRICES_AS_OF == "2026-11-01"
    assert len(BUILTIN_PRICES) >= 6
    for key, price in BUILTIN_PRICES.items():
        assert re.fullmatch(r"(anthropic|openai):[a-z0-9.\-]+", key), key
        assert 0 < price.input < price.output, key
        assert 0 <= price.cache_read < price.input, key
        assert price.cache_write >= price.input, key
    assert any(k.startswith("anthropic:") for k in BUILTIN_PRICES)
    assert any(k.startswith("openai:") for k in BUILTIN_PRICES)


def test_cost_sums_the_four_token_kinds() -> None:
    table = PriceTable(builtin={"anthropic:m": Price(input=3, output=15, cache_read=0.3, cache_write=3.75)})
    usage = Usage(input_tokens=2_000, output_tokens=1_000, cache_read_tokens=10_000, cache_write_tokens=4_000)
    expected = (2_000 * 3 + 1_000 * 15 + 10_000 * 0.3 + 4_000 * 3.75) / 1_000_000
    assert table.cost("anthropic:m", usage) == pytest.approx(expected)


def test_builtin_price_is_used() -> None:
    table = PriceTable()
    price = BUILTIN_PRICES["openai:gpt-4o-mini"]
    assert table.cost("openai:gpt-4o-mini", MILLION) == pytest.approx(
        price.input + price.output + price.cache_read + price.cache_write
    )


def test_overrides_win_by_full_id_or_bare_name() -> None:
    builtin = {"openai:gpt-x": Price(input=1, output=2)}
    by_id = PriceTable({"openai:gpt-x": Price(input=10, output=20)}, builtin=builtin)
    by_name = PriceTable({"gpt-x": Price(input=100, output=200)}, builtin=builtin)
    usage = Usage(input_tokens=1_000_000)
    assert by_id.cost("openai:gpt-x", usage) == pytest.approx(10)
    assert by_name.cost("openai:gpt-x", usage) == pytest.approx(100)
    assert PriceTable(builtin=builtin).cost("openai:gpt-x", usage) == pytest.approx(1)


def test_override_prices_a_model_missing_from_the_table() -> None:
    table = PriceTable({"openai:llama3.1:8b": Price(input=0.1, output=0.2)}, builtin={})
    assert table.is_priced("openai:llama3.1:8b")
    assert table.cost("openai:llama3.1:8b", Usage(output_tokens=1_000_000)) == pytest.approx(0.2)


def test_dated_snapshot_falls_back_to_its_alias() -> None:
    table = PriceTable(builtin={"anthropic:claude-m-4-5": Price(input=3, output=15)})
    usage = Usage(input_tokens=1_000_000)
    assert table.cost("anthropic:claude-m-4-5-20250929", usage) == pytest.approx(3)
    openai_table = PriceTable(builtin={"openai:gpt-m": Price(input=2, output=8)})
    assert openai_table.cost("openai:gpt-m-2025-04-14", usage) == pytest.approx(2)


def test_a_sibling_model_is_not_priced_by_prefix() -> None:
    table = PriceTable(builtin={"openai:gpt-m": Price(input=2, output=8)})
    assert table.price("openai:gpt-m-nano") is None


def test_unpriced_model_costs_none() -> None:
    table = PriceTable(builtin={})
    assert table.cost("openai:mystery", MILLION) is None
    assert not table.is_priced("openai:mystery")


def test_provider_must_match() -> None:
    table = PriceTable(builtin={"openai:shared-name": Price(input=1, output=1)})
    assert table.price("anthropic:shared-name") is None


def test_bare_model_id_finds_a_provider_qualified_price() -> None:
    table = PriceTable(builtin={"openai:gpt-m": Price(input=2, output=8)})
    assert table.cost("gpt-m", Usage(input_tokens=1_000_000)) == pytest.approx(2)


def test_offline_models_are_free() -> None:
    table = PriceTable(builtin={})
    assert table.cost("offline:default", MILLION) == 0.0
    assert table.is_priced("offline:anything")
