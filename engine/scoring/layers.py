"""The two score layers, never merged (DESIGN §5, seed 001).

fairness = w · (keyword_coverage, llm_quality, citation_grounding, efficiency)
adoption = w · (tool_fluency, discoverability)

Weights come from the suite (``FairnessWeights``/``AdoptionWeights``) and every result records
them. A component that does not apply (None: no keywords, no citations or no pinned repo, no
judge verdict, discoverability not measurable) is left out and the weights of the present
components are renormalized to sum to 1: value = Σ w_i·x_i / Σ w_i over present components.
The result lists the missing components and the effective weights. With every component
present and weights summing to 1 this is exactly the weighted sum.

A baseline arm has no tooling under test: its adoption is structurally not applicable (value
None, label "n/a (baseline)"), never a 0 that reads as failure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from proctor.scenarios.schema import AdoptionWeights, FairnessWeights
from proctor.store.scores import LayerDetails

Layer = Literal["fairness", "adoption"]
L = TypeVar("L", bound=LayerDetails)
BASELINE_LABEL = "n/a (baseline)"


@dataclass(frozen=True)
class LayerScore:
    layer: Layer
    value: float | None
    label: str
    components: dict[str, float | None]
    weights: dict[str, float]
    effective_weights: dict[str, float] = field(default_factory=dict)
    missing: tuple[str, ...] = ()
    structural_na: bool = False

    def to_details(self, model: type[L]) -> L:
        return model(
            layer=self.layer,
            value=self.value,
            label=self.label,
            components=dict(self.components),
            weights=dict(self.weights),
            effective_weights=dict(self.effective_weights),
            missing=list(self.missing),
            structural_na=self.structural_na,
        )


def combine(layer: Layer, components: Mapping[str, float | None], weights: Mapping[str, float]) -> LayerScore:
    """Weighted mean over the present components (see the module docstring)."""
    for name, w in weights.items():
        if w < 0:
            raise ValueError(f"weight {name} is negative")
    for name, x in components.items():
        if x is not None and not -1e-9 <= x <= 1 + 1e-9:
            raise ValueError(f"{name}={x} is outside [0, 1]")
    present = {k: x for k, x in components.items() if x is not None}
    missing = tuple(k for k, x in components.items() if x is None)
    total = sum(weights[k] for k in present)
    if total <= 0:
        return LayerScore(layer, None, "n/a (no components)", dict(components), dict(weights), {}, missing)
    effective = {k: weights[k] / total for k in present}
    value = sum(effective[k] * x for k, x in present.items())
    label = f"{value:.3f}" + (f" (without {', '.join(missing)})" if missing else "")
    return LayerScore(layer, value, label, dict(components), dict(weights), effective, missing)


def fairness(
    *,
    keyword_coverage: float | None,
    llm_quality: float | None,
    citation_grounding: float | None,
    efficiency: float | None,
    weights: FairnessWeights | None = None,
) -> LayerScore:
    w = weights or FairnessWeights()
    return combine(
        "fairness",
        {
            "keyword_coverage": keyword_coverage,
            "llm_quality": llm_quality,
            "citation_grounding": citation_grounding,
            "efficiency": efficiency,
        },
        w.model_dump(),
    )


def adoption(
    *,
    tool_fluency: float | None,
    discoverability: float | None,
    weights: AdoptionWeights | None = None,
    baseline: bool = False,
) -> LayerScore:
    w = (weights or AdoptionWeights()).model_dump()
    components = {"tool_fluency": tool_fluency, "discoverability": discoverability}
    if baseline:
        na: dict[str, float | None] = dict.fromkeys(components)
        return LayerScore("adoption", None, BASELINE_LABEL, na, w, {}, (), structural_na=True)
    return combine("adoption", components, w)
