"""The JSON report's shape, declared once: every format renders from these types.

``build_report`` returns a ``Report``; json, md, csv, junit, html and the gate's JUnit read it,
so a key renamed or dropped in one place is a mypy error in every renderer instead of a
``KeyError`` in one format at run time. Renderers subscript the keys a report always has:
mypy checks a subscript's key, not a ``.get``'s. tests/engine/reports/test_report_model.py holds
the model to real output: the JSON report of real runs has exactly these keys, in this order.

TypedDicts rather than classes: at run time a report is the plain dictionaries it always was
(score details stay their stored text, ``StoredJson``), built once by report.py and its section
builders, so ``orjson.dumps`` writes the same bytes at the same speed. Keys are listed in the
order the JSON report writes them. The tool sections' types are in tools_model.py and the drift
section's in drift_model.py.

A new section is one TypedDict here (a key of ``Report``), one function that builds it beside the
others (report_sections.py, tool_usage.py) and, in each format that shows it, one render function
that takes the TypedDict.
"""

# No ``from __future__ import annotations``: TypedDict reads NotRequired at run time only from
# evaluated annotations, and the model is introspected (tests/engine/reports/test_report_model.py).
from typing import Any, Literal, NotRequired, TypedDict, final

from proctor.engine.reports.drift_model import DriftSection, DriftUnavailable
from proctor.engine.reports.tools_model import ToolSurfaceSection, ToolUsageSection
from proctor.store.stored_json import StoredJson

JsonObject = dict[str, Any]
"""Free-form JSON the report passes through as stored: the run's config, a score's details, a
judge's verdict. Their own models (scenarios/schema.py, store/scores.py) say what is in them."""


class ArmModel(TypedDict):
    """What every per arm × model entry has (arms, tool usage, trials): ``md_format.who`` reads it."""

    arm: str
    model: str


# --- run, notes, errors -------------------------------------------------------------------


class RunInfo(TypedDict):
    id: str
    suite: str
    config: JsonObject
    status: str
    started: float | None
    finished: float | None


class RunProgress(TypedDict):
    """How much of the run was played (engine/reports/run_progress.py); read before any number."""

    trials: int
    done: int
    """Trials that finished or ended in error."""
    in_progress: bool
    """An engine is writing the run now."""
    left_out: list[str]
    """Arms or models ``--keep-going`` left out before the first trial, with why."""


class ErrorGroup(TypedDict):
    """``error_causes.ErrorCause`` as data: trials that ended in error for one reason."""

    cause: str
    trials: int
    arms: tuple[str, ...]
    first: str


# --- trials -------------------------------------------------------------------------------


class TrialTokens(TypedDict):
    input: int | None
    output: int | None
    cache_read: int | None
    cache_write: int | None
    estimated: bool


class StoredScore(TypedDict):
    """``details`` as the store holds them: the JSON report writes a ``StoredJson``'s text as it
    is (compact, keys sorted), so renderers read them through ``score_details``."""

    value: float | None
    details: JsonObject | StoredJson


def score_details(stored: StoredScore) -> Any:
    """A score's details as JSON values (a dict, unless the store holds something else)."""
    details = stored["details"]
    return details.value() if isinstance(details, StoredJson) else details


# "pass" is a Python keyword, hence the functional form.
JudgmentPass = TypedDict(
    "JudgmentPass",
    {"pass": int, "judge": str, "source": str, "verdict": JsonObject | None, "error": str | None},
)


class TrialEntry(TypedDict):
    id: int
    scenario: str
    arm: str
    model: str
    epoch: int
    seed: int
    attempt: int
    status: str
    stop: str | None
    passed: bool | None
    final_answer: str | None
    tool_calls: int | None
    tokens: TrialTokens
    cost_usd: float | None
    wall_s: float | None
    error: str | None
    scores: NotRequired[dict[str, StoredScore]]
    """By score name (``ScoreName``); absent when the trial has no score."""
    judgments: list[JudgmentPass]


# --- arms ---------------------------------------------------------------------------------


class MeanCIRow(TypedDict):
    mean: float
    low: float
    high: float
    n: int


class ArmMisses(TypedDict):
    """Built-in search/read calls made while the arm offered an MCP tool for the job
    (docs/scoring.md, "Misses"), over the trials that counted them."""

    calls: int
    trials: int
    per_trial: float


class ArmGrounding(TypedDict):
    grounded: int
    unresolved: int
    hallucinated: int
    rate: float | None


ClaimsPassRate = dict[str, float | None]
"""Share of trials at each claims threshold (keys ``f"{threshold:g}"``: "0.75", "0.5" and the
suite's own), and under ``"trials"`` the number of trials with a claims coverage."""


class ToolMatchEpoch(TypedDict):
    epoch: int
    tfs: float | None
    tefs: float | None


class ArmTokens(TypedDict):
    reasoning: int
    tool_io: int
    output: int
    judge: int
    estimated: bool


class PassK(TypedDict):
    k: int
    pass_at_k: float
    pass_hat_k: float
    tasks: int


class McNemarRow(TypedDict):
    arm_only_passes: int
    baseline_only_passes: int
    pairs_judged: int
    p_value: float | None
    reason: str


class FairnessDelta(TypedDict):
    mean: float
    low: float
    high: float
    n: int
    confidence: float


class VsBaseline(TypedDict):
    baseline: str
    pairs: int
    mcnemar: McNemarRow
    arm_tool_calls: int
    attributable: bool
    caveat: str | None
    fairness_delta: FairnessDelta | None
    tools_not_offered: int
    """Pairs left out of the Δ: one side cannot make the scenario's gold calls (its arm does not
    offer their tools), so it has no verdict and no fairness there."""


class LayerSD(TypedDict):
    mean_sd: float | None
    max_sd: float | None


class JudgeVarianceRow(TypedDict):
    judge: str
    criterion: LayerSD
    step: LayerSD
    scenario: LayerSD
    floor: float
    above_floor: bool | None
    sd: Literal["sample", "population"]
    """The convention σ is in (``judge.sd``); the floor is compared in it."""


class ArmEntry(TypedDict):
    arm: str
    model: str
    baseline: bool
    agent: str
    judges: list[str]
    trials: int
    finished: int
    errors: int
    judged: int
    not_judged: int
    passed: int
    pass_rate: float | None
    fairness: MeanCIRow | None
    adoption: MeanCIRow | None
    adoption_na: str | None
    misses: ArmMisses | None
    llm_quality: MeanCIRow | None
    grounding: ArmGrounding
    claims_pass_rate: ClaimsPassRate
    tfs: float | None
    tefs: float | None
    tool_match: str | None
    tool_match_by_epoch: list[ToolMatchEpoch]
    tokens: ArmTokens
    cost_usd: float | None
    judge_cost_usd: float | None
    pass_k: list[PassK]
    rank: int | None
    tied_with: int | None
    pareto: str | None
    vs_baseline: VsBaseline | None
    judge_variance: list[JudgeVarianceRow]


# --- ranking ------------------------------------------------------------------------------


class RankEntry(TypedDict):
    arm: str
    model: str
    mean: float


class RankGroup(TypedDict):
    rank: int
    entries: list[RankEntry]


class RankingSection(TypedDict):
    metric: str
    floor: float
    scenarios: list[str]
    excluded_scenarios: list[str]
    groups: list[RankGroup]


# --- judges -------------------------------------------------------------------------------


# @final: the Markdown report tells these three apart by key (``"agreed" in row``), which mypy
# narrows only over final TypedDicts.
@final
class AgreementRow(TypedDict):
    n: int
    agreed: int
    rate: float | None
    percent: float | None
    kappa: float | None


@final
class HumanAgreementRow(TypedDict):
    judge: str
    n: int
    agreed: int
    rate: float | None
    percent: float | None
    kappa: float | None


@final
class SuccessRow(TypedDict):
    judge: str
    passed: int
    n: int
    rate: float | None
    percent: float | None


class Majority(TypedDict):
    judges: list[str]
    source: str
    rule: str
    passed: int
    failed: int
    tied: int
    no_verdict: int


class JudgePairRow(TypedDict):
    first: str
    second: str
    tau_b: float | None
    n: int
    reason: str | None
    kappa: float | None
    agreement: AgreementRow


class Panel(TypedDict):
    judges: list[str]
    majority: Majority
    success: list[SuccessRow]
    pairs: list[JudgePairRow]


class Human(TypedDict):
    labelled_trials: int
    imported_from: list[str]
    success: SuccessRow | None
    agreement: list[HumanAgreementRow]
    any_judge: AgreementRow | None


class JudgesSection(TypedDict):
    models: list[str]
    labels: dict[str, str]
    variance_floor: float
    variance_sd: Literal["sample", "population"]
    claims_pass_threshold: float
    panel: Panel
    human: Human


# --- anchors ------------------------------------------------------------------------------


class LockedAnchor(TypedDict):
    scenario: str
    lock_file: str
    sha256: str
    source_run: str | None
    locked_at: float


class LockFile(TypedDict):
    path: str
    status: str


class LastCommand(TypedDict):
    """The last operator command of a kind (lock or verify the anchors) and how it ended."""

    status: str
    message: str
    event_id: int


class AnchorsSection(TypedDict):
    status: str
    held_out: list[str]
    unlocked: list[str]
    locked: list[LockedAnchor]
    lock_files: list[LockFile]
    last_lock: LastCommand | None
    last_verification: LastCommand | None


# --- the report ---------------------------------------------------------------------------


class Report(TypedDict):
    run: RunInfo | None
    progress: RunProgress
    notes: list[str]
    errors: NotRequired[list[ErrorGroup]]
    """Only when trials ended in error, so a report without errors reads as it always did."""
    trials: list[TrialEntry]
    arms: list[ArmEntry]
    ranking: RankingSection
    judges: JudgesSection
    anchors: AnchorsSection
    tool_usage: ToolUsageSection
    tool_surface: ToolSurfaceSection
    drift: NotRequired[DriftSection | DriftUnavailable]
    """Only on a replay run: its calls diffed against the recording (engine/reports/drift_section)."""


__all__ = [
    "AgreementRow",
    "AnchorsSection",
    "ArmEntry",
    "ArmGrounding",
    "ArmModel",
    "ArmTokens",
    "ClaimsPassRate",
    "ErrorGroup",
    "FairnessDelta",
    "Human",
    "HumanAgreementRow",
    "JsonObject",
    "JudgePairRow",
    "JudgeVarianceRow",
    "JudgesSection",
    "JudgmentPass",
    "LastCommand",
    "LayerSD",
    "LockFile",
    "LockedAnchor",
    "Majority",
    "McNemarRow",
    "MeanCIRow",
    "Panel",
    "PassK",
    "RankEntry",
    "RankGroup",
    "RankingSection",
    "Report",
    "RunInfo",
    "RunProgress",
    "StoredScore",
    "SuccessRow",
    "ToolMatchEpoch",
    "TrialEntry",
    "TrialTokens",
    "VsBaseline",
    "score_details",
]
