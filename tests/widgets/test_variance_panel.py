"""The variance panel never presents a deterministic judge's σ of 0 as a reliable judge."""

from __future__ import annotations

from proctor.widgets.variance_panel import VarianceRow, variance_text


def _rows() -> list[VarianceRow]:
    return [VarianceRow(layer="criterion", mean_sigma=0.1, max_sigma=0.15, groups=6)]


def test_only_deterministic_judges_say_sigma_measures_nothing() -> None:
    text = variance_text(_rows(), 0.05, 3, deterministic=["offline:lexical"], judges=1).plain
    assert "deterministic judge (offline:lexical)" in text
    assert "σ 0.100" not in text


def test_mixed_panel_reports_sigma_and_names_the_left_out_judge() -> None:
    text = variance_text(_rows(), 0.05, 3, deterministic=["offline:lexical"], judges=2).plain
    assert "σ leaves out offline:lexical" in text and "σ 0.100" in text


def test_llm_judges_only_show_sigma() -> None:
    text = variance_text(_rows(), 0.05, 3).plain
    assert "deterministic" not in text and "σ 0.100" in text


def test_the_panel_names_the_sd_convention_its_sigma_and_floor_are_in() -> None:
    assert variance_text(_rows(), 0.05, 2).plain.startswith("judge σ (sample SD) · floor 0.05 · ≤2 passes")
    assert "judge σ (population SD) · floor" in variance_text(_rows(), 0.05, 2, sd="population").plain
