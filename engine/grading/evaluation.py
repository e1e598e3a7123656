"""Turning one trial's events into scores: the deterministic checks, then the judge passes.

Used live (the runner calls it as each trial finishes) and later (re-judging reads the same
events back from the store), so a score never depends on which path produced it. The scoring
functions are pure; this module only gathers their inputs and names their outputs.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from proctor.engine.grading.gold_calls import (
    cannot_make_gold_calls,
    disguised_errors,
    gold_for_arm,
    has_verdict_check,
)
from proctor.engine.judges.base import NOT_JUDGED, NOTHING_TO_MATCH, JudgeOutcome, Verdict
from proctor.engine.scoring import (
    TrialDigest,
    adoption,
    adoption_signals,
    check_grounding,
    diagnose,
    efficiency,
    fairness,
    judge_claims,
    judge_key_points,
    keyword_coverage,
    match_tool_calls,
    partition,
)
from proctor.engine.scoring.misses import count_misses
from proctor.engine.scoring.trial_digest import ToolCallRecord
from proctor.engine.stats import DEFAULT_SD, SdConvention, majority_vote, standard_deviation
from proctor.engine.tools.retrieval import EXECUTE, ROUTE
from proctor.scenarios.repo import PinnedRepo
from proctor.scenarios.schema import ArmSpec, Scenario, Scoring
from proctor.store.events import (
    Event,
    Judged,
    ListedTool,
    Scored,
    ToolResult,
    ToolsListed,
    TrialFinished,
    TrialStarted,
)
from proctor.store.outcomes import NOT_A_COMPLETE_ANSWER, outcome_reason
from proctor.store.scores import (
    ADOPTION_BASELINE,
    AdoptionDetails,
    EfficiencyDetails,
    FailureModeDetails,
    FairnessDetails,
    GroundingDetails,
    LlmQualityDetails,
    PassedDetails,
    ScoreDetails,
    ScoreName,
    ToolMatchDetails,
)
from proctor.store.tool_origin import is_builtin

ROUTER_TOOL = EXECUTE.name


@dataclass(frozen=True)
class TrialInput:
    """A finished trial as the scorers need it."""

    scenario: Scenario
    arm_name: str
    arm: ArmSpec
    model: str
    events: Sequence[Event]
    repo: PinnedRepo | None
    scoring: Scoring
    tool_schemas: dict[str, dict[str, Any]]
    judge_sd: SdConvention = DEFAULT_SD
    """The suite's ``judge.sd``: the convention of llm_quality's σ across passes."""


ERRORED = "the trial ended in error: it counts in the error rate, not in means, pass rates or rankings"


def ended_in_error(events: Sequence[Event]) -> bool:
    return any(isinstance(e, TrialFinished) and e.status == "error" for e in events)


NO_ANSWER = (
    "no answer: the trial ended without a final answer (an imported reference trajectory that "
    "stops on a tool result); nothing to judge, so neither a pass nor a fail"
)
NO_CHECK_TOOLS_NA = (
    "no verdict from a check: the only check is the tool-call match, and this arm does not offer "
    "the gold calls' tools"
)
TOOLS_NOT_OFFERED = (
    "no verdict and no fairness: the scenario's only check is its gold calls and this arm does not "
    "offer their tools, so it is compared with no arm on this scenario (no delta)"
)
NO_CHECK_KEYWORDS = (
    "no verdict from a check: the scenario has keywords but no claims, key points, rubric or gold "
    "calls, and a quality judge's opinion alone never passes a trial"
)


def has_no_answer(trial: TrialInput) -> bool:
    """An imported trial that finished without a final answer: MCP-Atlas's and MCPAgentBench's
    reference trajectories end on a tool result. A judge would fail the empty answer; there is
    no answer to fail."""
    imported = trial.model.startswith("imported:")
    for e in trial.events:
        if isinstance(e, TrialFinished) and e.status == "finished" and not e.final_answer.strip():
            return e.stop == "no_answer" or imported
    return False


def answer_outcome(events: Sequence[Event]) -> str | None:
    """``truncated`` or ``refused`` when the trial's answer is not a complete one, else None."""
    for e in events:
        if isinstance(e, TrialFinished) and e.status == "finished" and e.stop in NOT_A_COMPLETE_ANSWER:
            return e.stop
    return None


def is_judged(trial: TrialInput) -> bool:
    """Whether judges run on this trial: its scenario has a check, it did not end in error, and
    it has an answer to judge."""
    return (
        trial.scenario.has_checks
        and not ended_in_error(trial.events)
        and not has_no_answer(trial)
        and answer_outcome(trial.events) is None
    )


def digest_of(events: Sequence[Event]) -> TrialDigest:
    """The trial's digest as the scorers see it: ``route`` lookups dropped (they are the
    router's, not the agent's use of the server) and ``execute`` unwrapped to the tool called."""
    t = partition(events)
    answered = {e.call_id: (e.server, is_builtin(e)) for e in events if isinstance(e, ToolResult)}
    calls = tuple(
        _unwrap(c, *answered.get(c.call_id, (c.server, c.builtin)))
        for c in t.tool_calls
        if not (c.tool == ROUTE.name and c.server == ROUTE.server)
    )
    return replace(t, tool_calls=calls)


def _unwrap(c: ToolCallRecord, server: str, builtin: bool) -> ToolCallRecord:
    """An ``execute`` as the call it made: the server that answered, and its marker (the
    router's own call is built-in, the MCP call it wraps is not)."""
    inner = c.arguments.get("tool")
    args = c.arguments.get("arguments")
    if c.tool != ROUTER_TOOL or not isinstance(inner, str) or not isinstance(args, dict):
        return c
    return replace(c, server=server, tool=inner, arguments=args, builtin=builtin)


Scores = dict[ScoreName, Scored]


def deterministic_scores(trial: TrialInput, digest: TrialDigest) -> Scores:
    """Grounding, keywords, claims (lexical), key points, tool-call match, efficiency."""
    sc, cfg = trial.scenario, trial.scoring
    out: Scores = {}

    def put(name: ScoreName, value: float | None, details: ScoreDetails) -> None:
        out[name] = Scored.of(name, value, details)

    if trial.repo is not None:
        grounding = check_grounding(
            digest.answer_text, trial.repo, cfg.symbol_tolerance_lines, cfg.citation_count
        )
        put(ScoreName.GROUNDING, grounding.value, grounding.to_details())
    kw = keyword_coverage(digest.answer_text, sc.keywords.required, sc.keywords.bonus, cfg.keyword_count)
    put(ScoreName.KEYWORDS, kw.value, kw.to_details())
    if sc.claims:
        claims = judge_claims(sc.claims, digest.answer_text, cfg.claims_pass_threshold)
        put(ScoreName.CLAIMS, claims.coverage, claims.to_details())
    if sc.key_points:
        kp = judge_key_points(sc.key_points, digest.answer_text, digest.audit_text)
        put(ScoreName.KEY_POINTS, None if kp.success is None else float(kp.success), kp.to_details())
    if sc.gold_tool_calls:
        gold = gold_for_arm(trial)
        if gold is None:
            na = ToolMatchDetails(na="the arm does not offer the gold calls' tools")
            put(ScoreName.TFS, None, na)
            put(ScoreName.TEFS, None, na)
        else:
            m = match_tool_calls(
                gold,
                digest.mcp_call_steps(),
                mode=cfg.tool_match,
                names_only=cfg.names_only_tools,
                tool_schemas=trial.tool_schemas,
            )
            details = m.to_details().model_copy(update={"disguised_errors": disguised_errors(digest)})
            put(ScoreName.TFS, float(m.finished), details)
            put(ScoreName.TEFS, float(m.efficiently_finished), details)
    if not digest.wall_s or digest.tokens is None:
        # Imported trajectories carry no wall clock: a 0 would read as perfectly efficient.
        put(ScoreName.EFFICIENCY, None, EfficiencyDetails(na="wall time or tokens not recorded"))
    else:
        eff = efficiency(digest.tokens, digest.wall_s, cfg.token_ceiling, cfg.time_ceiling_s)
        put(ScoreName.EFFICIENCY, eff.value, eff.to_details())
    return out


def judged_event(outcome: JudgeOutcome, pass_no: int, judge_id: str) -> Judged:
    verdict = outcome.verdict.model_dump() if outcome.verdict is not None else None
    spent = outcome.usage.input_tokens + outcome.usage.output_tokens > 0
    return Judged(
        pass_no=pass_no,
        judge=judge_id,
        verdict=verdict,
        error=outcome.error,
        usage=outcome.usage if spent else None,
        cost_usd=outcome.cost_usd if spent else None,
    )


def _quality_na(*, errored: bool, no_answer: bool, judged: bool, no_judge: bool) -> str | None:
    """Why a trial has no llm_quality, or None when its judges' passes give it one."""
    if errored:
        return ERRORED
    if not judged:
        return NOT_JUDGED
    if no_answer:
        return NO_ANSWER
    return NOTHING_TO_MATCH if no_judge else None


JUDGE_ERROR_CHARS = 300
JUDGE_FAILED_RULE = "no judge verdict: "
"""Heads ``passed``'s rule when every judge pass failed; store/verdict_reason.py (the console's
"no verdict: REASON") reads what follows as the reason."""


def judge_failure(errors: Sequence[str], total: int) -> str:
    """``judge failed on 2 of 2 passes: REASON``: what a reader is told instead of a blank."""
    reasons = list(dict.fromkeys(e[:JUDGE_ERROR_CHARS] for e in errors if e)) or ["no reason recorded"]
    return f"judge failed on {len(errors)} of {total} passes: {'; '.join(reasons)}"


def layer_scores(
    trial: TrialInput,
    digest: TrialDigest,
    deterministic: Scores,
    verdicts: Sequence[Verdict],
    by_judge: Mapping[str, Sequence[Verdict]] | None = None,
    judge_errors: Sequence[str] = (),
) -> Scores:
    """llm_quality from the judge passes, then fairness, adoption, passed and the failure mode.

    With ``by_judge`` naming two or more judges (a panel), ``passed`` is their majority vote. An
    empty ``by_judge`` means no judge could grade this scenario (``judges.base.can_judge``).
    ``judge_errors`` are the errors of the passes that gave no verdict: when no pass gave one,
    llm_quality is "not judged (judge failed on N of N passes: …)", fairness is not computed
    from the other components, and ``passed`` says why it has no verdict.
    """
    cfg = trial.scoring
    out: Scores = {}

    def put(name: ScoreName, value: float | None, details: ScoreDetails) -> None:
        out[name] = Scored.of(name, value, details)

    judged = trial.scenario.has_checks
    errored = ended_in_error(trial.events)
    no_answer = has_no_answer(trial)
    cut = answer_outcome(trial.events)
    not_an_answer = f"not judged: {outcome_reason(cut)}" if cut is not None and judged else None
    if errored or no_answer or cut is not None:
        verdicts = []
        judge_errors = ()
    quality = statistics.fmean(v.score for v in verdicts) if verdicts else None
    failed = len(judge_errors) if judged else 0
    failure = judge_failure(judge_errors, failed + len(verdicts)) if failed else None
    unjudged = f"not judged ({failure})" if failure and not verdicts else None
    put(
        ScoreName.LLM_QUALITY,
        quality,
        LlmQualityDetails(
            passes=len(verdicts),
            scores=[v.score for v in verdicts],
            sd=standard_deviation([v.score for v in verdicts], trial.judge_sd),
            sd_convention=trial.judge_sd if len(verdicts) > 1 else None,
            na=not_an_answer
            or unjudged
            or _quality_na(errored=errored, no_answer=no_answer, judged=judged, no_judge=by_judge == {}),
            failed_passes=failed,
            judge_errors=list(dict.fromkeys(e[:JUDGE_ERROR_CHARS] for e in judge_errors)) if failed else [],
        ),
    )

    def value(name: ScoreName) -> float | None:
        s = deterministic.get(name)
        return None if s is None else s.value

    fair = fairness(
        keyword_coverage=value(ScoreName.KEYWORDS),
        llm_quality=quality,
        citation_grounding=value(ScoreName.GROUNDING),
        efficiency=value(ScoreName.EFFICIENCY),
        weights=cfg.fairness,
    )
    if errored:
        put(ScoreName.FAIRNESS, None, FairnessDetails(na=ERRORED))
    elif judged and cannot_make_gold_calls(trial):
        put(ScoreName.FAIRNESS, None, FairnessDetails(na=TOOLS_NOT_OFFERED))
    elif no_answer and judged:
        put(ScoreName.FAIRNESS, None, FairnessDetails(na=NO_ANSWER))
    elif not_an_answer is not None:
        put(ScoreName.FAIRNESS, None, FairnessDetails(na=not_an_answer))
    elif unjudged is not None:  # never recomputed from the other components in silence
        put(ScoreName.FAIRNESS, None, FairnessDetails(na=f"no fairness: llm_quality {unjudged}"))
    elif judged:
        put(ScoreName.FAIRNESS, fair.value, fair.to_details(FairnessDetails))
    else:
        put(ScoreName.FAIRNESS, None, FairnessDetails(na=NOT_JUDGED))
    if trial.arm.baseline:
        adopt = adoption(tool_fluency=None, discoverability=None, weights=cfg.adoption, baseline=True)
        put(
            ScoreName.ADOPTION,
            None,
            adopt.to_details(AdoptionDetails).model_copy(update={"na": ADOPTION_BASELINE}),
        )
    else:
        relevant = [g.tool for step in trial.scenario.gold_tool_calls for g in step]
        signals = adoption_signals(
            digest.tool_calls,
            arm_servers=trial.arm.servers,
            relevant_tools=relevant,
            prompt="\n".join(trial.scenario.prompts()),
            tool_schemas=trial.tool_schemas,
        )
        adopt = adoption(
            tool_fluency=signals.tool_fluency, discoverability=signals.discoverability, weights=cfg.adoption
        )
        misses = count_misses(digest.tool_calls, _listed(trial.events), arm_servers=trial.arm.servers)
        layer = signals.to_details(adopt.to_details(AdoptionDetails))
        put(
            ScoreName.ADOPTION,
            adopt.value,
            layer.model_copy(update={"misses": misses.count, "missed": list(misses.missed)}),
        )
    if errored:
        passed = None
        put(ScoreName.PASSED, None, PassedDetails(rule=ERRORED, errored=True))
    elif not judged:
        passed = None
        put(ScoreName.PASSED, None, PassedDetails(rule=NOT_JUDGED, not_judged=True))
    elif not_an_answer is not None and cut is not None:
        passed = None  # neither a pass nor a fail: counted apart, in the report and the gate
        put(ScoreName.PASSED, None, PassedDetails(rule=not_an_answer, outcome=cut))
    elif (checked := _checked_without_judge(trial, deterministic, no_answer)) is not None:
        passed, details = checked
        put(ScoreName.PASSED, None if passed is None else float(passed), details)
    elif by_judge is not None and len(by_judge) > 1:
        passed, panel = _panel_passed(trial, deterministic, by_judge)
        put(ScoreName.PASSED, None if passed is None else float(passed), panel)
    else:
        passed, rule = _passed(trial, deterministic, verdicts, quality)
        put(ScoreName.PASSED, None if passed is None else float(passed), PassedDetails(rule=rule))
    if passed is None and unjudged is not None and failure is not None:
        details = out[ScoreName.PASSED].parsed(PassedDetails)
        put(
            ScoreName.PASSED,
            None,
            details.model_copy(update={"rule": f"{JUDGE_FAILED_RULE}{failure}", "judge_failed": True}),
        )
    if passed and (blocked := _grounding_block(trial, deterministic)) is not None:
        passed = False
        details = out[ScoreName.PASSED].parsed(PassedDetails)
        put(
            ScoreName.PASSED,
            0.0,
            details.model_copy(update={"rule": f"{details.rule}; {blocked}", "ungrounded": True}),
        )
    if passed is False:
        out[ScoreName.FAILURE_MODE] = Scored.of(
            ScoreName.FAILURE_MODE, None, _failure_mode(trial, digest, verdicts)
        )
    return out


def _listed(events: Sequence[Event]) -> list[ListedTool] | None:
    """The tools the trial's last attempt was offered; None when it recorded no list."""
    listed: list[ListedTool] | None = None
    for e in events:
        if isinstance(e, TrialStarted):
            listed = None
        elif isinstance(e, ToolsListed):
            listed = list(e.tools)
    return listed


def _grounding_block(trial: TrialInput, deterministic: Scores) -> str | None:
    """Why a trial the checks passed still fails under ``scoring.pass_requires_grounding``, or
    None when it does not: the option is off, there is no pinned repo, or the answer cites
    nothing (no citation, nothing hallucinated) or cites well enough."""
    minimum = trial.scoring.pass_requires_grounding
    grounding = deterministic.get(ScoreName.GROUNDING)
    if minimum is None or grounding is None or grounding.value is None or grounding.value >= minimum:
        return None
    counts = grounding.parsed(GroundingDetails).counts
    return (
        f"failed on grounding: {counts.grounded} of {counts.total} citations grounded "
        f"({grounding.value:.0%}) < scoring.pass_requires_grounding {minimum:.0%}"
    )


def _checked_without_judge(
    trial: TrialInput, deterministic: Scores, no_answer: bool
) -> tuple[bool | None, PassedDetails] | None:
    """The verdict when no judge may give it, or None when the judges decide.

    A scenario without claims, key points or a rubric gives a judge nothing to check: where it
    has gold calls, their match decides (TEFS when the gold has ordered steps, else TFS), as in
    MCPAgentBench; where it has only keywords, nothing does. A trial with no answer is judged by
    its tool calls alone, or not at all.
    """
    sc = trial.scenario
    if has_verdict_check(sc):
        return (None, PassedDetails(rule=NO_ANSWER, no_answer=True)) if no_answer else None
    if not sc.gold_tool_calls:
        return None, PassedDetails(rule=NO_CHECK_KEYWORDS, no_check=True, no_answer=no_answer)
    ordered = len([step for step in sc.gold_tool_calls if step]) > 1
    name = ScoreName.TEFS if ordered else ScoreName.TFS
    match = deterministic.get(name)
    if match is None or match.value is None:
        unmakeable = cannot_make_gold_calls(trial)
        details = PassedDetails(
            rule=NO_CHECK_TOOLS_NA, no_check=True, no_answer=no_answer, tools_not_offered=unmakeable
        )
        return None, details
    mode = match.parsed(ToolMatchDetails).mode
    expects = any(g.expect is not None and g.expect.checks for step in sc.gold_tool_calls for g in step)
    rule = (
        f"tool-call match ({name.value.upper()}, {mode}) {match.value:.2f} >= 1.00: the only check is "
        "the gold calls"
        + (", made in their order" if ordered else "")
        + (", their results holding what they expect" if expects else "")
    )
    return match.value >= 1.0, PassedDetails(rule=rule, no_answer=no_answer)


def _passed(
    trial: TrialInput, deterministic: Scores, verdicts: Sequence[Verdict], quality: float | None
) -> tuple[bool | None, str]:
    """Claims decide where a scenario has them, then key points, then the judges' mean score.

    The rule names the check with its measured value and threshold (``X >= T``), so the stored
    verdict says why it is what it is (store/verdict_reason.py shows a failed one as ``X < T``)."""
    if not verdicts:
        return None, "no judge verdict: every judge pass was an error, which is neither a pass nor a fail"
    threshold = trial.scoring.claims_pass_threshold
    if trial.scenario.claims and verdicts and any(v.claims for v in verdicts):
        per_pass = [
            statistics.fmean({"fulfilled": 1.0, "partially": 0.5, "not": 0.0}[c.verdict] for c in v.claims)
            for v in verdicts
            if v.claims
        ]
        coverage = statistics.fmean(per_pass)
        return coverage >= threshold, f"judged claims coverage {coverage:.2f} >= {threshold}"
    if trial.scenario.claims and ScoreName.CLAIMS in deterministic:
        cov = deterministic[ScoreName.CLAIMS].value
        shown = "n/a" if cov is None else f"{cov:.2f}"
        return (cov is not None and cov >= threshold), f"lexical claims coverage {shown} >= {threshold}"
    if trial.scenario.key_points:
        kp = [v.key_points_success for v in verdicts if v.key_points_success is not None]
        if kp:
            return sum(kp) * 2 >= len(kp), f"key points: met in {sum(kp)} of {len(kp)} judge passes >= half"
    if quality is None:
        return None, "no judge verdict"
    return quality >= 0.5, f"judge mean score {quality:.2f} >= 0.5"


def _panel_passed(
    trial: TrialInput, deterministic: Scores, by_judge: Mapping[str, Sequence[Verdict]]
) -> tuple[bool | None, PassedDetails]:
    votes: dict[str, bool | None] = {}
    for judge, verdicts in by_judge.items():
        quality = statistics.fmean(v.score for v in verdicts) if verdicts else None
        votes[judge] = _passed(trial, deterministic, verdicts, quality)[0] if verdicts else None
    vote = majority_vote(list(votes.values()))
    return vote.verdict, PassedDetails(
        rule=f"panel majority of {len(votes)} judges (an even split passes; judge errors abstain)",
        votes=votes,
        tied=vote.tied,
        abstained=vote.abstained,
    )


def _failure_mode(trial: TrialInput, digest: TrialDigest, verdicts: Sequence[Verdict]) -> FailureModeDetails:
    diagnosis = diagnose(
        digest,
        tools_available=not trial.arm.baseline,
        gold=gold_for_arm(trial) or [],
        tool_schemas=trial.tool_schemas,
        names_only=trial.scoring.names_only_tools,
    )
    if diagnosis is not None:
        return diagnosis.to_details()
    modes = [v.failure_mode for v in verdicts if v.failure_mode]
    if modes:
        mode = max(set(modes), key=modes.count)
        return FailureModeDetails(mode=mode, category="cognitive", evidence="judge")
    return FailureModeDetails(
        evidence="the trace proves no tool-call failure; no LLM judge for cognitive modes"
    )
