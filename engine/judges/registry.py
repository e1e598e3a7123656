"""From the suite's ``judge`` section (``model``, or a ``panel`` of models) to judges."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from proctor.engine.judges.base import Judge
from proctor.engine.judges.llm import LlmJudge
from proctor.engine.judges.offline import OfflineJudge
from proctor.engine.providers.prices import PriceTable
from proctor.engine.providers.registry import ProviderConfigError, make_provider
from proctor.scenarios.model_ids import (
    API_PROVIDERS,
    JUDGE_FORMS_TEXT,
    OFFLINE,
    OFFLINE_JUDGE,
    OFFLINE_JUDGE_FORM,
    split_model_id,
)
from proctor.scenarios.schema import ModelSettings, ProviderSpec, Scoring, Suite


def make_judge(
    model_id: str,
    scoring: Scoring,
    *,
    temperature: float | None = 0.0,
    providers: Mapping[str, ProviderSpec] | None = None,
    prices: PriceTable | None = None,
    settings: Mapping[str, ModelSettings] | None = None,
) -> Judge:
    """``offline:lexical``, ``anthropic:NAME`` or ``openai:NAME`` (the key comes from the environment).

    ``temperature`` is sent only to a model that accepts it (model_rules.py); a suite's
    ``model_settings`` for the judge's model win over it.
    """
    provider, name = split_model_id(model_id)
    if provider == OFFLINE:
        if name not in ("", OFFLINE_JUDGE):
            raise ProviderConfigError(f"judge {model_id!r}: the offline judge is '{OFFLINE_JUDGE_FORM}'")
        return OfflineJudge(scoring.claims_pass_threshold)
    if provider not in API_PROVIDERS or not name:
        raise ProviderConfigError(f"judge {model_id!r}: use {JUDGE_FORMS_TEXT}")
    table = prices or PriceTable()
    made = make_provider(
        model_id,
        table,
        dict(providers or {}),
        settings=(settings or {}).get(model_id),
        default_temperature=temperature,
    )
    return LlmJudge(made, temperature=made.parameters().get("temperature"), prices=table)


def judge_models(suite: Suite, override: str | None = None) -> list[str]:
    """The judge models a run uses: ``override``, else the panel if there is one, else ``model``."""
    if override:
        return [override]
    spec = suite.judge
    return list(dict.fromkeys(spec.panel)) if spec.panel else [spec.model]


def make_suite_judges(suite: Suite, override: str | None = None) -> list[Judge]:
    """Every judge of the suite's panel (or its one judge), built with the suite's providers and prices."""
    prices = PriceTable(suite.prices)
    return [
        make_judge(
            m,
            suite.scoring,
            temperature=suite.judge.temperature,
            providers=suite.providers,
            prices=prices,
            settings=suite.model_settings,
        )
        for m in judge_models(suite, override)
    ]


async def close_judges(judges: Sequence[Judge]) -> None:
    """Close the HTTP clients of LLM judges (the offline judge holds none)."""
    for judge in judges:
        if isinstance(judge, LlmJudge):
            await judge.aclose()


__all__ = ["close_judges", "judge_models", "make_judge", "make_suite_judges"]
