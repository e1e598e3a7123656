"""efficiency(), fairness/adoption layers and the adoption signals, with hand-computed vectors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.engine.scoring import (
    BASELINE_LABEL,
    ToolCallRecord,
    adoption,
    adoption_signals,
    efficiency,
    fairness,
)
from proctor.scenarios.schema import AdoptionWeights, FairnessWeights
from proctor.store.scores import FairnessDetails


def test_efficiency_formula() -> None:
    # ½·(1 − 10000/50000) + ½·(1 − 30/120) = ½·0.8 + ½·0.75 = 0.775
    e = efficiency(10_000, 30.0, 50_000, 120.0)
    assert e.value == pytest.approx(0.775)
    assert (e.token_part, e.time_part) == (pytest.approx(0.8), pytest.approx(0.75))


def test_efficiency_clamps_each_half_at_zero() -> None:
    # tokens over the ceiling: ½·0 + ½·(1 − 60/120) = 0.25
    assert efficiency(80_000, 60.0, 50_000, 120.0).value == pytest.approx(0.25)
    assert efficiency(0, 0.0, 1, 1.0).value == 1.0
    assert efficiency(10**9, 10**6, 50_000, 120.0).value == 0.0


def test_efficiency_rejects_bad_inputs() -> None:
    for args in [(1, 1.0, 0, 1.0), (1, 1.0, 1, 0.0), (-1, 1.0, 1, 1.0), (1, -1.0, 1, 1.0)]:
        with pytest.raises(ValueError):
            efficiency(*args)  # type: ignore[arg-type]


def test_fairness_with_default_weights() -> None:
    # 0.10·0.5 + 0.55·0.8 + 0.15·0.9 + 0.20·0.775 = 0.05 + 0.44 + 0.135 + 0.155 = 0.78
    s = fairness(keyword_coverage=0.5, llm_quality=0.8, citation_grounding=0.9, efficiency=0.775)
    assert s.value == pytest.approx(0.78)
    assert s.weights == {
        "keyword_coverage": 0.10,
        "llm_quality": 0.55,
        "citation_grounding": 0.15,
        "efficiency": 0.20,
    }
    assert s.missing == () and s.effective_weights["llm_quality"] == pytest.approx(0.55)


def test_fairness_renormalizes_over_present_components() -> None:
    # no citations, no keywords: (0.55·0.8 + 0.20·0.5) / (0.55 + 0.20) = 0.54 / 0.75 = 0.72
    s = fairness(keyword_coverage=None, llm_quality=0.8, citation_grounding=None, efficiency=0.5)
    assert s.value == pytest.approx(0.72)
    assert s.missing == ("keyword_coverage", "citation_grounding")
    assert s.effective_weights == {
        "llm_quality": pytest.approx(0.55 / 0.75),
        "efficiency": pytest.approx(0.2 / 0.75),
    }
    assert s.label == "0.720 (without keyword_coverage, citation_grounding)"
    details = s.to_details(FairnessDetails)
    assert details.weights["citation_grounding"] == 0.15 and details.components["keyword_coverage"] is None


def test_fairness_custom_weights_and_nothing_present() -> None:
    w = FairnessWeights(keyword_coverage=0.5, llm_quality=0.0, citation_grounding=0.5, efficiency=0.0)
    # (0.5·1.0 + 0.5·0.0) / 1.0 = 0.5
    assert (
        fairness(
            keyword_coverage=1.0, llm_quality=0.2, citation_grounding=0.0, efficiency=0.3, weights=w
        ).value
        == 0.5
    )
    none = fairness(keyword_coverage=None, llm_quality=None, citation_grounding=None, efficiency=None)
    assert none.value is None and none.label == "n/a (no components)"
    with pytest.raises(ValueError):
        fairness(keyword_coverage=1.5, llm_quality=None, citation_grounding=None, efficiency=None)


def test_adoption_formula_and_baseline() -> None:
    # 0.60·0.75 + 0.40·0.5 = 0.45 + 0.2 = 0.65
    assert adoption(tool_fluency=0.75, discoverability=0.5).value == pytest.approx(0.65)
    # discoverability not measurable: fluency alone, weight renormalized to 1
    assert adoption(tool_fluency=0.75, discoverability=None).value == pytest.approx(0.75)
    base = adoption(tool_fluency=0.0, discoverability=0.0, baseline=True)
    assert base.value is None and base.label == BASELINE_LABEL and base.structural_na
    assert base.weights == {"tool_fluency": 0.6, "discoverability": 0.4}
    w = AdoptionWeights(tool_fluency=1.0, discoverability=0.0)
    assert adoption(tool_fluency=0.3, discoverability=1.0, weights=w).value == pytest.approx(0.3)


def _rec(
    tool: str, server: str = "arm", ok: bool = True, result: bool = True, **args: object
) -> ToolCallRecord:
    return ToolCallRecord(
        call_id=tool,
        server=server,
        tool=tool,
        arguments=dict(args),
        step=0,
        has_result=result,
        is_error=not ok,
    )


def test_tool_fluency_counts_only_arm_calls_that_succeeded_and_were_well_formed() -> None:
    calls = [
        _rec("search", q="x"),
        _rec("search", ok=False, q="x"),  # error
        _rec("read", result=False, path="a"),  # no result
        _rec("read", bogus=1),  # schema rejects: unknown argument, missing path
        _rec("distract", server="noise", ok=False),  # not the arm's server: ignored
    ]
    schemas = {"read": {"properties": {"path": {"type": "string"}}, "required": ["path"]}}
    sig = adoption_signals(calls, arm_servers={"arm"}, tool_schemas=schemas)
    # 1 fluent out of 4 arm calls
    assert (sig.arm_calls, sig.fluent_calls, sig.tool_fluency) == (4, 1, 0.25)


def test_discoverability_against_relevant_tools_excludes_told_ones() -> None:
    calls = [_rec("find_symbol"), _rec("read_file")]
    relevant = ["find_symbol", "read_file", "list_refs", "grep"]
    # prompt names grep -> told; untold = find_symbol, read_file, list_refs; used 2 of 3
    sig = adoption_signals(
        calls, arm_servers={"arm"}, relevant_tools=relevant, prompt="Use `grep` to find it"
    )
    assert sig.told == ("grep",)
    assert sig.discoverability == pytest.approx(2 / 3)
    assert sig.undiscovered == ("list_refs",)
    everything_told = adoption_signals(calls, arm_servers={"arm"}, relevant_tools=["grep"], prompt="grep it")
    assert everything_told.discoverability is None


def test_discoverability_without_relevant_tools() -> None:
    assert adoption_signals([], arm_servers={"arm"}).discoverability == 0.0
    assert adoption_signals([], arm_servers={"arm"}).tool_fluency == 0.0
    assert adoption_signals([_rec("grep")], arm_servers={"arm"}, prompt="x").discoverability == 1.0
    assert adoption_signals([_rec("grep")], arm_servers={"arm"}, prompt="run grep").discoverability is None
    assert adoption_signals([_rec("grep", server="other")], arm_servers={"arm"}).discoverability == 0.0


_UNIT = st.floats(min_value=0, max_value=1) | st.none()


@settings(deadline=None, derandomize=True)
@given(_UNIT, _UNIT, _UNIT, _UNIT)
def test_fairness_is_a_convex_combination(
    k: float | None, q: float | None, g: float | None, e: float | None
) -> None:
    s = fairness(keyword_coverage=k, llm_quality=q, citation_grounding=g, efficiency=e)
    present = [x for x in (k, q, g, e) if x is not None]
    if not present:
        assert s.value is None
    else:
        assert s.value is not None
        assert min(present) - 1e-9 <= s.value <= max(present) + 1e-9
        assert sum(s.effective_weights.values()) == pytest.approx(1.0)
