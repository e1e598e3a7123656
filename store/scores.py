"""The score vocabulary: every score's name and the shape of its details.

Scoring writes these, the store keeps them as JSON, and reports, export and the console read
them back through ``parse_details``. A renamed score or a reshaped field is then a type error
at the writer and a named validation error at the reader, never a blank panel.

The models ignore keys they do not know so that a database written by a later patch release
still reads; constructing one with an unknown keyword is a mypy error (pydantic's plugin).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any, ClassVar, Literal, Protocol, TypeVar, assert_never

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class ScoreName(StrEnum):
    GROUNDING = "grounding"
    KEYWORDS = "keywords"
    CLAIMS = "claims"
    KEY_POINTS = "key_points"
    TFS = "tfs"
    TEFS = "tefs"
    EFFICIENCY = "efficiency"
    LLM_QUALITY = "llm_quality"
    FAIRNESS = "fairness"
    ADOPTION = "adoption"
    PASSED = "passed"
    FAILURE_MODE = "failure_mode"


DETERMINISTIC: frozenset[ScoreName] = frozenset(
    {
        ScoreName.GROUNDING,
        ScoreName.KEYWORDS,
        ScoreName.CLAIMS,
        ScoreName.KEY_POINTS,
        ScoreName.TFS,
        ScoreName.TEFS,
        ScoreName.EFFICIENCY,
    }
)
"""Scores computed from the transcript alone; re-judging keeps them and recomputes the rest."""

DISPLAY_ORDER: tuple[ScoreName, ...] = (
    ScoreName.PASSED,
    ScoreName.FAIRNESS,
    ScoreName.ADOPTION,
    ScoreName.GROUNDING,
    ScoreName.CLAIMS,
    ScoreName.KEYWORDS,
    ScoreName.EFFICIENCY,
    ScoreName.TFS,
    ScoreName.TEFS,
)
"""How screens list a trial's scores: the verdict first, then the layers, then their inputs."""

ADOPTION_BASELINE = "baseline"
"""adoption's ``na`` on a baseline arm: it offers no tools, so adoption does not apply."""

CitationStatus = Literal["grounded", "unresolved", "hallucinated"]
ClaimVerdictKind = Literal["fulfilled", "partially", "not"]


class ScoreDetails(BaseModel):
    """Common to every score: ``na`` says why its value is None when it does not apply."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    OMITTED_WHEN_DEFAULT: ClassVar[frozenset[str]] = frozenset()
    """Fields added after databases were written: left out of the stored JSON at their default,
    so a trial they do not concern is stored (and reported) byte for byte as before."""

    na: str | None = None


class CitationCounts(Protocol):
    """Grounding counts as any reader holds them: a ``GroundingCounts``, or the Struct a report
    reads them into (store/details_structs.py), summed without building a model per trial."""

    @property
    def grounded(self) -> int: ...

    @property
    def unresolved(self) -> int: ...

    @property
    def hallucinated(self) -> int: ...


class GroundingCounts(BaseModel):
    """How many citations were grounded, unresolved or hallucinated: of one trial (its grounding
    score's details) or summed over several (an arm in the report and the console). The one
    grounding count from scoring to screen; the rate and the sums are computed here only."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    grounded: int = 0
    unresolved: int = 0
    hallucinated: int = 0

    @classmethod
    def of(cls, statuses: Iterable[CitationStatus]) -> GroundingCounts:
        """The counts of classified citations, one status each."""
        tally = Counter(statuses)
        return cls(
            grounded=tally["grounded"], unresolved=tally["unresolved"], hallucinated=tally["hallucinated"]
        )

    @classmethod
    def summed(cls, counts: Iterable[CitationCounts]) -> GroundingCounts:
        """Several trials' counts as one: citations add up, rates do not."""
        grounded = unresolved = hallucinated = 0
        for c in counts:
            grounded += c.grounded
            unresolved += c.unresolved
            hallucinated += c.hallucinated
        return cls(grounded=grounded, unresolved=unresolved, hallucinated=hallucinated)

    @property
    def total(self) -> int:
        return self.grounded + self.unresolved + self.hallucinated

    @property
    def rate(self) -> float | None:
        """grounded / all citations; None where there were none (no rate, rather than 0)."""
        total = self.total
        return self.grounded / total if total else None

    @property
    def label(self) -> str:
        rate = self.rate
        return "no citations" if rate is None else f"{rate:.1%} grounded"


class CitationDetails(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    raw: str
    path: str
    line: int | None = None
    line_end: int | None = None
    symbol: str | None = None
    status: CitationStatus
    reason: str = ""
    line_text: str | None = None
    """A hallucinated citation's first cited line as it reads at the commit (cut at 240 chars)."""


class GroundingDetails(ScoreDetails):
    counts: GroundingCounts = GroundingCounts()
    label: str = ""
    commit: str = ""
    repo: str = ""
    tolerance: int = 0
    count_rule: str = ""
    """How citations were counted (``file_line`` or ``mention``, and what that means)."""
    citations: list[CitationDetails] = []


class KeywordsDetails(ScoreDetails):
    value: float | None = None
    required_hits: list[str] = []
    required_missed: list[str] = []
    bonus_hits: list[str] = []
    bonus_missed: list[str] = []


class ClaimDetails(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    claim: str
    verdict: ClaimVerdictKind
    score: float
    justification: str = ""


class ClaimsDetails(ScoreDetails):
    judge: str = ""
    coverage: float | None = None
    threshold: float = 0.0
    passed: bool | None = None
    passed_at_half: bool | None = Field(default=None, alias="passed_at_0.5")
    verdicts: list[ClaimDetails] = []


class KeyPointDetails(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    key_point: str
    satisfied: bool
    in_answer: bool
    in_trajectory: bool
    justification: str = ""


class KeyPointsDetails(ScoreDetails):
    judge: str = ""
    success: bool | None = None
    satisfied: int = 0
    total: int = 0
    reason: str = ""
    checks: list[KeyPointDetails] = []


class ToolMatchDetails(ScoreDetails):
    """tfs and tefs share one match; ``mode`` names the rule set that produced it."""

    gold_calls: int | None = None
    finished: bool | None = None
    efficiently_finished: bool | None = None
    missing: list[str] = []
    unexpected: list[str] = []
    gold_steps: int | None = None
    agent_steps: int | None = None
    mode: str = "strict"
    failed_calls: list[str] = []
    """Calls whose result was an error: never a match, even with the gold tool and arguments."""
    unmet_expectations: list[str] = []
    """Calls whose result does not hold what their gold call's ``expect`` asks, and what it lacks."""
    review: list[str] = []
    """Gold calls whose ``expect`` is a note for a person (``proctor init``'s): nothing checks them."""
    disguised_errors: list[str] = []
    """Calls the server did not flag as errors whose results read like one (``Database error: ...``)."""

    OMITTED_WHEN_DEFAULT = frozenset({"failed_calls", "unmet_expectations", "review", "disguised_errors"})


class EfficiencyDetails(ScoreDetails):
    value: float | None = None
    token_part: float | None = None
    time_part: float | None = None
    tokens: int | None = None
    wall_s: float | None = None
    token_ceiling: int | None = None
    time_ceiling_s: float | None = None


class LlmQualityDetails(ScoreDetails):
    passes: int = 0
    scores: list[float] = []
    sd: float | None = None
    sd_convention: Literal["sample", "population"] | None = None
    """How ``sd`` was taken (the suite's ``judge.sd``); None in rows written before the option."""
    failed_passes: int = 0
    """Judge passes that gave no verdict (a refused request, an unreadable reply): never silent."""
    judge_errors: list[str] = []
    """Why they failed, each distinct reason once."""

    OMITTED_WHEN_DEFAULT = frozenset({"sd_convention", "failed_passes", "judge_errors"})


class LayerDetails(ScoreDetails):
    """A fairness or adoption layer: components, the weights asked for and those used."""

    layer: Literal["fairness", "adoption"] | None = None
    value: float | None = None
    label: str = ""
    components: dict[str, float | None] = {}
    weights: dict[str, float] = {}
    effective_weights: dict[str, float] = {}
    missing: list[str] = []
    structural_na: bool = False


class FairnessDetails(LayerDetails):
    pass


class AdoptionDetails(LayerDetails):
    """The layer plus the signals behind it (absent on a baseline arm, which offers no tools)."""

    tool_fluency: float | None = None
    discoverability: float | None = None
    arm_calls: int | None = None
    fluent_calls: int | None = None
    discovered: list[str] = []
    undiscovered: list[str] = []
    told: list[str] = []
    misses: int | None = None
    """Built-in search/read calls made while the arm offered an MCP tool for that job
    (engine/scoring/misses.py); None where not counted (a baseline, an older run, no tool list)."""
    missed: list[str] = []
    """Each miss as ``TOOL (job)``, in call order."""


class PassedDetails(ScoreDetails):
    rule: str = ""
    errored: bool = False
    not_judged: bool = False
    votes: dict[str, bool | None] | None = None
    tied: bool | None = None
    abstained: int | None = None
    no_check: bool = False
    """No check decided: the scenario has none a verdict can rest on (a quality judge's opinion
    of the prose is not one), or the one it has does not apply to this arm. No pass, no fail."""
    no_answer: bool = False
    """The trial ended without a final answer (an imported reference trajectory that stops on a
    tool result): there is no answer to pass or fail."""
    ungrounded: bool = False
    """The checks passed it, but its citations' grounding rate fell below the suite's
    ``scoring.pass_requires_grounding``, so it failed: an answer citing lines that are not there."""
    tools_not_offered: bool = False
    """The only check is the gold calls, and this arm does not offer their tools: no verdict and
    no fairness, so it is compared with no arm on this scenario."""

    judge_failed: bool = False
    """No verdict because every judge pass failed (``rule`` says why): not a pass, not a fail,
    and never left for a reader to guess."""
    outcome: str = ""
    """``truncated`` or ``refused`` (store/outcomes.py): the answer is not a complete one, so it
    was not judged; no pass, no fail."""

    OMITTED_WHEN_DEFAULT = frozenset(
        {"no_check", "no_answer", "ungrounded", "tools_not_offered", "judge_failed", "outcome"}
    )


class FailureModeDetails(ScoreDetails):
    mode: str | None = None
    category: str | None = None
    rule: str | None = None
    explanation: str | None = None
    call_ids: list[str] = []
    evidence: str = ""
    first_failing_call_id: str | None = None


def details_model(name: ScoreName) -> type[ScoreDetails]:
    """The details model of score ``name``: a new score that is not given one here fails mypy."""
    match name:
        case ScoreName.GROUNDING:
            return GroundingDetails
        case ScoreName.KEYWORDS:
            return KeywordsDetails
        case ScoreName.CLAIMS:
            return ClaimsDetails
        case ScoreName.KEY_POINTS:
            return KeyPointsDetails
        case ScoreName.TFS | ScoreName.TEFS:
            return ToolMatchDetails
        case ScoreName.EFFICIENCY:
            return EfficiencyDetails
        case ScoreName.LLM_QUALITY:
            return LlmQualityDetails
        case ScoreName.FAIRNESS:
            return FairnessDetails
        case ScoreName.ADOPTION:
            return AdoptionDetails
        case ScoreName.PASSED:
            return PassedDetails
        case ScoreName.FAILURE_MODE:
            return FailureModeDetails
        case _:
            assert_never(name)


D = TypeVar("D", bound=ScoreDetails)


class UnreadableScore(ValueError):
    """Stored details that do not fit their score's model; the message names score and field."""


def dump_details(name: ScoreName, details: ScoreDetails) -> dict[str, Any]:
    """The JSON form stored for ``name``; refuses a details model that belongs to another score."""
    expected = details_model(name)
    if type(details) is not expected:
        raise TypeError(f"score {name.value} takes {expected.__name__}, not {type(details).__name__}")
    omit = {
        f
        for f in details.OMITTED_WHEN_DEFAULT
        if getattr(details, f) == type(details).model_fields[f].default
    }
    if details.na is None:
        omit.add("na")
    return details.model_dump(mode="json", by_alias=True, exclude=omit or None)


def parse_details(name: ScoreName, raw: Mapping[str, Any], model: type[D]) -> D:
    """Details of score ``name`` validated by its own model, which must be ``model`` or derive from it.

    Asking for a base (``ScoreDetails`` for ``na``, ``LayerDetails`` for either layer) reads any
    score that has those fields; asking a score for another score's model is a programming error.
    """
    own = details_model(name)
    if not issubclass(own, model):
        raise TypeError(f"score {name.value} has {own.__name__} details, not {model.__name__}")
    try:
        parsed = own.model_validate(raw)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "details"
        raise UnreadableScore(f"score {name.value}: details field {where}: {first['msg']}") from err
    assert isinstance(parsed, model)
    return parsed


__all__ = [
    "ADOPTION_BASELINE",
    "DETERMINISTIC",
    "DISPLAY_ORDER",
    "AdoptionDetails",
    "CitationCounts",
    "CitationDetails",
    "ClaimDetails",
    "ClaimsDetails",
    "EfficiencyDetails",
    "FailureModeDetails",
    "FairnessDetails",
    "GroundingCounts",
    "GroundingDetails",
    "KeyPointDetails",
    "KeyPointsDetails",
    "KeywordsDetails",
    "LayerDetails",
    "LlmQualityDetails",
    "PassedDetails",
    "ScoreDetails",
    "ScoreName",
    "ToolMatchDetails",
    "UnreadableScore",
    "details_model",
    "dump_details",
    "parse_details",
]
