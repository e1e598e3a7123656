"""Costs from the suite's prices, else genai-prices (pinned): dated, tiered, cache- and reasoning-aware."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from proctor.engine.providers.prices import PriceTable, library_version
from proctor.scenarios.schema import Price
from proctor.store.events import Usage

MILLION = Usage(input_tokens=1_000_000, output_tokens=1_000_000)
DEC_2026 = datetime(2026, 12, 1, tzinfo=UTC)


def test_the_run_records_the_library_its_version_and_the_price_date() -> None:
    table = PriceTable({"openai:x": Price(input=1, output=1)}, at=DEC_2026)
    assert table.provenance() == {
        "library": "genai-prices",
        "version": library_version(),
        "price_date": "2026-12-01",
        "overrides": ["openai:x"],
    }
    assert library_version() == "0.2.3"  # pyproject.toml pins it: a release changes prices


def test_anthropic_and_openai_models_are_priced_by_the_library() -> None:
    table = PriceTable(at=DEC_2026)
    # genai-prices 0.2.3's data: Opus 4.7 $5/$25, gpt-5 $1.25/$10 per million tokens.
    assert table.cost("anthropic:claude-opus-4-7", MILLION) == pytest.approx(30.0)
    assert table.cost("openai:gpt-5", MILLION) == pytest.approx(11.25)
    # Claude Sonnet 5: genai-prices 0.2.3 records that Anthropic made the introductory $2/$10
    # permanent and cancelled the 2026-09-01 increase (its data at 4fda389 of August still had it).
    assert table.cost("anthropic:claude-sonnet-5", MILLION) == pytest.approx(12.0)


def test_cache_reads_are_priced_at_their_rate_and_long_prompts_at_their_tier() -> None:
    table = PriceTable(at=DEC_2026)
    cached = Usage(input_tokens=0, cache_read_tokens=100_000)
    assert table.cost("anthropic:claude-sonnet-4-5", cached) == pytest.approx(100_000 * 0.30 / 1e6)
    # Over 200k prompt tokens Sonnet 4.5 costs $6 a million, not $3: a flat table got it wrong.
    long_prompt = Usage(input_tokens=1_000_000)
    assert table.cost("anthropic:claude-sonnet-4-5", long_prompt) == pytest.approx(6.0)


def test_xai_reasoning_tokens_are_billed_as_output_to_the_recordings_own_cost() -> None:
    table = PriceTable(at=DEC_2026)
    table.served_at("openai:grok-3-mini", "https://api.x.ai/v1")
    # The usage of tests/fakes/cassettes/xai_reasoning_tool_call.json as proctor reads it; the
    # recording's cost_in_usd_ticks is 1,497,500 (1e-10 US$ each).
    usage = Usage(input_tokens=1, cache_read_tokens=306, output_tokens=26 + 227, reasoning_tokens=227)
    assert table.cost("openai:grok-3-mini", usage) == pytest.approx(1497500 * 1e-10)


def test_a_gateway_in_front_of_openai_prices_openais_models_and_nothing_else() -> None:
    table = PriceTable(at=DEC_2026)
    table.served_at("openai:gpt-5", "http://127.0.0.1:4000/v1")
    table.served_at("openai:qwen2.5-coder:7b", "http://127.0.0.1:11434/v1")
    assert table.cost("openai:gpt-5", MILLION) == pytest.approx(11.25)
    assert table.cost("openai:qwen2.5-coder:7b", MILLION) is None


def test_overrides_win_by_full_id_or_bare_name() -> None:
    usage = Usage(input_tokens=1_000_000)
    assert PriceTable({"openai:gpt-5": Price(input=10, output=20)}).cost(
        "openai:gpt-5", usage
    ) == pytest.approx(10)
    assert PriceTable({"gpt-5": Price(input=100, output=200)}).cost("openai:gpt-5", usage) == pytest.approx(
        100
    )


def test_an_override_sums_the_four_token_kinds() -> None:
    table = PriceTable({"anthropic:m": Price(input=3, output=15, cache_read=0.3, cache_write=3.75)})
    usage = Usage(input_tokens=2_000, output_tokens=1_000, cache_read_tokens=10_000, cache_write_tokens=4_000)
    expected = (2_000 * 3 + 1_000 * 15 + 10_000 * 0.3 + 4_000 * 3.75) / 1_000_000
    assert table.cost("anthropic:m", usage) == pytest.approx(expected)


def test_an_override_prices_a_model_the_library_does_not_know() -> None:
    table = PriceTable({"openai:llama3.1:8b": Price(input=0.1, output=0.2)})
    assert table.is_priced("openai:llama3.1:8b")
    assert table.cost("openai:llama3.1:8b", Usage(output_tokens=1_000_000)) == pytest.approx(0.2)


def test_a_dated_snapshot_is_priced_as_its_model() -> None:
    table = PriceTable(at=DEC_2026)
    usage = Usage(input_tokens=1_000_000)
    assert table.cost("anthropic:claude-sonnet-4-5-20250929", usage) == table.cost(
        "anthropic:claude-sonnet-4-5", usage
    )
    overridden = PriceTable({"anthropic:claude-m-4-5": Price(input=3, output=15)})
    assert overridden.cost("anthropic:claude-m-4-5-20250929", usage) == pytest.approx(3)


def test_an_unknown_model_is_unpriced_never_zero() -> None:
    table = PriceTable()
    assert table.cost("openai:mystery-model-9", MILLION) is None
    assert not table.is_priced("openai:mystery-model-9")


def test_offline_models_are_free() -> None:
    table = PriceTable()
    assert table.cost("offline:default", MILLION) == 0.0
    assert table.is_priced("offline:anything")
