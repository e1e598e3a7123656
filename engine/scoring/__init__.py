"""Scoring as pure functions over plain data (DESIGN §5): no I/O except through a ``RepoView``."""

from .adoption import AdoptionSignals, adoption_signals
from .citations import Citation, extract_citations
from .claims import ClaimsResult, ClaimVerdict, judge_claims
from .diagnosis import COGNITIVE_MODES, TOOL_CALL_MODES, Diagnosis, diagnose
from .efficiency import Efficiency, efficiency
from .grounding import (
    GroundingCheck,
    GroundingResult,
    PinnedView,
    RepoIndex,
    RepoView,
    check_citations,
    check_grounding,
    classify,
)
from .keypoints import KeyPointCheck, KeyPointsResult, judge_key_points
from .keywords import KeywordCoverage, keyword_coverage, mentions
from .layers import BASELINE_LABEL, LayerScore, adoption, combine, fairness
from .normalize import normalize_arguments
from .toolmatch import (
    CallKey,
    ToolMatch,
    UnsatisfiableGoldCall,
    match_tool_calls,
    tefs,
    tfs,
    unsatisfiable_gold_calls,
)
from .toolschema import argument_problems
from .trial_digest import ToolCallRecord, TrialDigest, partition

__all__ = [
    "BASELINE_LABEL",
    "COGNITIVE_MODES",
    "TOOL_CALL_MODES",
    "AdoptionSignals",
    "CallKey",
    "Citation",
    "ClaimVerdict",
    "ClaimsResult",
    "Diagnosis",
    "Efficiency",
    "GroundingCheck",
    "GroundingResult",
    "KeyPointCheck",
    "KeyPointsResult",
    "KeywordCoverage",
    "LayerScore",
    "PinnedView",
    "RepoIndex",
    "RepoView",
    "ToolCallRecord",
    "ToolMatch",
    "TrialDigest",
    "UnsatisfiableGoldCall",
    "adoption",
    "adoption_signals",
    "argument_problems",
    "check_citations",
    "check_grounding",
    "classify",
    "combine",
    "diagnose",
    "efficiency",
    "extract_citations",
    "fairness",
    "judge_claims",
    "judge_key_points",
    "keyword_coverage",
    "match_tool_calls",
    "mentions",
    "normalize_arguments",
    "partition",
    "tefs",
    "tfs",
    "unsatisfiable_gold_calls",
]
