"""The report's sections as JSON-ready dictionaries (arms, ranking, judges, anchors).

Kept apart from the reading in engine/reports/report.py so that every format renders the same numbers:
Markdown and CSV are made from these dictionaries, never from the records directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from proctor.engine.grading.anchor_files import AnchorError, check_hashes, read_lock
from proctor.engine.judges.panel import PanelSummary, SuccessRate
from proctor.engine.reports.aggregate import ArmModelSummary, MeanCI
from proctor.engine.reports.arm_comparisons import BaselineComparison, JudgeVariance
from proctor.engine.reports.report_model import (
    AgreementRow,
    AnchorsSection,
    ArmEntry,
    JsonObject,
    JudgesSection,
    JudgeVarianceRow,
    LastCommand,
    LayerSD,
    LockFile,
    MeanCIRow,
    RankingSection,
    SuccessRow,
    VsBaseline,
)
from proctor.engine.stats import DEFAULT_SD, Agreement, LayerVariance, ParetoFrontier, Ranking, SdConvention
from proctor.store.events import OperatorCommand
from proctor.store.read.reader import AnchorRecord, StoredEvent

OFFLINE_AGENT_LABEL = "offline agent (estimated tokens, no cost)"


def judge_label(judge: str) -> str:
    if judge.startswith("offline:"):
        return f"{judge} (offline lexical judge, no model)"
    return f"{judge} (LLM judge)"


def agent_label(model: str) -> str:
    return OFFLINE_AGENT_LABEL if model.startswith("offline:") else f"{model} (LLM agent)"


def _ci(m: MeanCI | None) -> MeanCIRow | None:
    return None if m is None else {"mean": m.mean, "low": m.low, "high": m.high, "n": m.n}


def _layer(layer: LayerVariance) -> LayerSD:
    return {"mean_sd": layer.mean_sd, "max_sd": layer.max_sd}


def _comparison(c: BaselineComparison | None) -> VsBaseline | None:
    if c is None:
        return None
    d = c.fairness_delta
    return {
        "baseline": c.baseline,
        "pairs": c.pairs,
        "mcnemar": {
            "arm_only_passes": c.mcnemar.c,
            "baseline_only_passes": c.mcnemar.b,
            "pairs_judged": c.mcnemar.n_pairs,
            "p_value": c.mcnemar.p_value,
            "reason": c.mcnemar.reason,
        },
        "arm_tool_calls": c.attribution.tool_calls,
        "attributable": c.attribution.attributable,
        "caveat": c.attribution.caveat,
        "fairness_delta": None
        if d is None
        else {"mean": d.mean_delta, "low": d.low, "high": d.high, "n": d.n, "confidence": d.confidence},
        "tools_not_offered": c.tools_not_offered,
    }


def _pareto(frontier: ParetoFrontier, arm: str, model: str) -> str | None:
    for name, points in (
        ("frontier", frontier.frontier),
        ("dominated", frontier.dominated),
        ("unpriced", frontier.unpriced),
    ):
        if any(p.arm == arm and p.model == model for p in points):
            return name
    return None


def _variance(variances: Sequence[JudgeVariance], arm: str, model: str) -> list[JudgeVarianceRow]:
    out: list[JudgeVarianceRow] = []
    for jv in variances:
        for v in jv.by_arm_model:
            if v.arm != arm or v.model != model:
                continue
            scenario_sd = v.scenario.mean_sd
            out.append(
                {
                    "judge": jv.judge,
                    "criterion": _layer(v.criterion),
                    "step": _layer(v.step),
                    "scenario": _layer(v.scenario),
                    "floor": jv.floor,
                    "above_floor": None if scenario_sd is None else scenario_sd >= jv.floor,
                    "sd": jv.sd,
                }
            )
    return out


def arm_rows(
    summaries: Sequence[ArmModelSummary],
    ranking: Ranking,
    comparisons: Sequence[BaselineComparison],
    frontier: ParetoFrontier,
    variances: Sequence[JudgeVariance],
    judges: Sequence[str],
) -> list[ArmEntry]:
    ranks = {(e.arm, e.model): g.rank for g in ranking.groups for e in g.entries}
    ties = {(e.arm, e.model): len(g.entries) for g in ranking.groups for e in g.entries}
    versus = {(c.arm, c.model): c for c in comparisons}
    rows: list[ArmEntry] = []
    for s in summaries:
        key = (s.arm, s.model)
        rows.append(
            {
                "arm": s.arm,
                "model": s.model,
                "baseline": s.baseline,
                "agent": agent_label(s.model),
                "judges": [judge_label(j) for j in judges],
                "trials": s.trials,
                "finished": s.finished,
                "errors": s.errors,
                "judged": s.judged,
                "not_judged": s.not_judged,
                "passed": s.passed,
                "pass_rate": s.pass_rate,
                "fairness": _ci(s.fairness),
                "adoption": _ci(s.adoption),
                "adoption_na": "baseline: no MCP tools, adoption is structurally n/a" if s.baseline else None,
                "misses": None
                if s.misses is None or s.baseline
                else {"calls": s.misses, "trials": s.misses_trials, "per_trial": s.misses / s.misses_trials},
                "llm_quality": _ci(s.llm_quality),
                "grounding": {
                    "grounded": s.grounding.grounded,
                    "unresolved": s.grounding.unresolved,
                    "hallucinated": s.grounding.hallucinated,
                    "rate": s.grounding.rate,
                },
                "claims_pass_rate": {f"{th:g}": rate for th, rate in s.claims_pass.items()}
                | {"trials": s.claims_trials},
                "tfs": s.tfs,
                "tefs": s.tefs,
                "tool_match": s.tool_match,
                "tool_match_by_epoch": [
                    {"epoch": e, "tfs": tfs, "tefs": tefs} for e, tfs, tefs in s.tool_match_by_epoch
                ],
                "tokens": {
                    "reasoning": s.tokens.reasoning,
                    "tool_io": s.tokens.tool_io,
                    "output": s.tokens.output,
                    "judge": s.tokens.judge,
                    "estimated": s.tokens.estimated,
                },
                "cost_usd": s.cost_usd,
                "judge_cost_usd": s.judge_cost_usd,
                "pass_k": [
                    {"k": p.k, "pass_at_k": p.pass_at_k, "pass_hat_k": p.pass_hat_k, "tasks": p.n_tasks}
                    for p in s.pass_k
                ],
                "rank": ranks.get(key),
                "tied_with": ties.get(key, 1) - 1 if key in ties else None,
                "pareto": _pareto(frontier, s.arm, s.model),
                "vs_baseline": _comparison(versus.get(key)),
                "judge_variance": _variance(variances, s.arm, s.model),
            }
        )
    return rows


def ranking_section(ranking: Ranking) -> RankingSection:
    return {
        "metric": "fairness (scenario means over epochs)",
        "floor": ranking.floor,
        "scenarios": list(ranking.scenarios),
        "excluded_scenarios": list(ranking.excluded_scenarios),
        "groups": [
            {"rank": g.rank, "entries": [{"arm": e.arm, "model": e.model, "mean": e.mean} for e in g.entries]}
            for g in ranking.groups
        ],
    }


def percent(rate: float | None) -> float | None:
    """A rate as a percentage with two decimals, as LiveMCPBench publishes its figures."""
    return None if rate is None else round(100 * rate, 2)


def _agreement(a: Agreement) -> AgreementRow:
    return {"n": a.n, "agreed": a.agreed, "rate": a.rate, "percent": percent(a.rate), "kappa": a.kappa}


def _success(s: SuccessRate) -> SuccessRow:
    return {"judge": s.judge, "passed": s.passed, "n": s.n, "rate": s.rate, "percent": percent(s.rate)}


def judges_section(
    judges: Sequence[str], panel: PanelSummary, floor: float, threshold: float, sd: SdConvention = DEFAULT_SD
) -> JudgesSection:
    votes = list(panel.majority.values())
    return {
        "models": list(judges),
        "labels": {j: judge_label(j) for j in judges},
        "variance_floor": floor,
        "variance_sd": sd,
        "claims_pass_threshold": threshold,
        "panel": {
            "judges": list(panel.judges),
            "majority": {
                "judges": list(panel.panel),
                "source": panel.panel_source,
                "rule": "at least half of these judges pass it; an even split passes, as in LiveMCPBench",
                "passed": sum(v.verdict is True for v in votes),
                "failed": sum(v.verdict is False for v in votes),
                "tied": sum(v.tied for v in votes),
                "no_verdict": sum(v.verdict is None for v in votes),
            },
            "success": [_success(s) for s in panel.success],
            "pairs": [
                {
                    "first": p.first,
                    "second": p.second,
                    "tau_b": p.tau_b.value,
                    "n": p.tau_b.n,
                    "reason": p.tau_b.reason,
                    "kappa": p.agreement.kappa,
                    "agreement": _agreement(p.agreement),
                }
                for p in panel.pairs
            ],
        },
        "human": {
            "labelled_trials": panel.human_labelled,
            "imported_from": list(panel.human_judges),
            "success": _success(panel.human_success) if panel.human_success else None,
            "agreement": [{"judge": h.judge, **_agreement(h.agreement)} for h in panel.human],
            "any_judge": _agreement(panel.any_judge) if panel.any_judge else None,
        },
    }


def _lock_status(lock_file: str) -> str:
    path = Path(lock_file)
    try:
        data = read_lock(path)
    except AnchorError:
        return "lock file not found or unreadable"
    changed = check_hashes(path, {str(k): str(v) for k, v in data["files"].items()})
    if not changed:
        return f"all {len(data['files'])} locked files match their SHA-256"
    return f"{len(changed)} locked file(s) changed: " + "; ".join(m.describe() for m in changed)


def _last(commands: Sequence[StoredEvent], name: str) -> LastCommand | None:
    for e in reversed(commands):
        ev = e.event
        if isinstance(ev, OperatorCommand) and ev.command == name and ev.status != "received":
            return {"status": ev.status, "message": ev.message, "event_id": e.id}
    return None


def anchors_section(
    config: JsonObject, rows: Sequence[AnchorRecord], commands: Sequence[StoredEvent]
) -> AnchorsSection:
    held = [str(h) for h in config.get("held_out", []) or []]
    locked = {r.scenario for r in rows}
    files = sorted({r.lock_file for r in rows})
    lock_files: list[LockFile] = [{"path": f, "status": _lock_status(f)} for f in files]
    verification = _last(commands, "verify_anchors")
    if not held and not rows:
        status = "no held-out scenarios"
    elif not rows:
        status = "held-out scenarios are not locked"
    elif any("changed" in f["status"] or "not found" in f["status"] for f in lock_files):
        status = "locked, but the locked files changed: verification would fail"
    elif verification is None:
        status = "locked; not verified from this run"
    else:
        status = f"locked; last verification {'passed' if verification['status'] == 'done' else 'FAILED'}"
    return {
        "status": status,
        "held_out": held,
        "unlocked": [h for h in held if h not in locked],
        "locked": [
            {
                "scenario": r.scenario,
                "lock_file": r.lock_file,
                "sha256": r.sha256,
                "source_run": r.source_run,
                "locked_at": r.locked_at,
            }
            for r in rows
        ],
        "lock_files": lock_files,
        "last_lock": _last(commands, "lock_anchors"),
        "last_verification": verification,
    }


__all__ = ["agent_label", "anchors_section", "arm_rows", "judge_label", "judges_section", "ranking_section"]
