"""The report as CSV: one row per arm × model, for spreadsheets and CI artefacts.

Every row carries ``agent`` and ``judges`` labels, so a row copied out of context still says
whether it came from the offline agent or the offline judge. A cell that a spreadsheet would
run as a formula (leading ``=``, ``+``, ``-``, ``@``) is prefixed with a quote, and escape
sequences and control characters are removed as the console removes them (``cat`` of the file
must not retitle or clear a terminal).
"""

from __future__ import annotations

import csv
import io
from typing import Literal

from proctor.engine.reports.drift_section import drift_csv
from proctor.engine.reports.report_model import ArmEntry, MeanCIRow, Report
from proctor.store.display_text import sanitize

COLUMNS = [
    "arm",
    "model",
    "baseline",
    "agent",
    "judges",
    "trials",
    "finished",
    "errors",
    "judged",
    "not_judged",
    "passed",
    "pass_rate",
    "fairness_mean",
    "fairness_low",
    "fairness_high",
    "adoption_mean",
    "adoption_low",
    "adoption_high",
    "misses",
    "misses_per_trial",
    "llm_quality_mean",
    "grounded",
    "unresolved",
    "hallucinated",
    "grounding_rate",
    "claims_pass_0.75",
    "claims_pass_0.5",
    "tfs",
    "tefs",
    "tokens_reasoning",
    "tokens_tool_io",
    "tokens_output",
    "tokens_judge",
    "tokens_estimated",
    "cost_usd",
    "judge_cost_usd",
    "rank",
    "pareto",
    "vs_baseline_mcnemar_p",
    "vs_baseline_fairness_delta",
    "vs_baseline_delta_low",
    "vs_baseline_delta_high",
    "vs_baseline_attributable",
    "judge_sd_scenario",
    "judge_sd_above_floor",
    "pass_at_k",
    "pass_hat_k",
    "k",
]


def _safe(v: object) -> object:
    if isinstance(v, str):
        v = " ".join(sanitize(v).split("\n"))
    if isinstance(v, str) and v[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + v
    return "" if v is None else v


def _ci(m: MeanCIRow | None, key: Literal["mean", "low", "high"]) -> object:
    return None if m is None else m[key]


def row(a: ArmEntry) -> dict[str, object]:
    v = a["vs_baseline"]
    delta = None if v is None else v["fairness_delta"]
    sds = [x["scenario"]["mean_sd"] for x in a["judge_variance"] if x["scenario"]["mean_sd"] is not None]
    above = [x["above_floor"] for x in a["judge_variance"] if x["above_floor"] is not None]
    top = a["pass_k"][-1] if a["pass_k"] else None
    g, t, c = a["grounding"], a["tokens"], a["claims_pass_rate"]
    values: dict[str, object] = {
        "arm": a["arm"],
        "model": a["model"],
        "baseline": a["baseline"],
        "agent": a["agent"],
        "judges": "; ".join(a["judges"]),
        "trials": a["trials"],
        "finished": a["finished"],
        "errors": a["errors"],
        "judged": a["judged"],
        "not_judged": a["not_judged"],
        "passed": a["passed"],
        "pass_rate": a["pass_rate"],
        "fairness_mean": _ci(a["fairness"], "mean"),
        "fairness_low": _ci(a["fairness"], "low"),
        "fairness_high": _ci(a["fairness"], "high"),
        "adoption_mean": "n/a (baseline)" if a["baseline"] else _ci(a["adoption"], "mean"),
        "adoption_low": _ci(a["adoption"], "low"),
        "adoption_high": _ci(a["adoption"], "high"),
        "misses": None if a["misses"] is None else a["misses"]["calls"],
        "misses_per_trial": None if a["misses"] is None else a["misses"]["per_trial"],
        "llm_quality_mean": _ci(a["llm_quality"], "mean"),
        "grounded": g["grounded"],
        "unresolved": g["unresolved"],
        "hallucinated": g["hallucinated"],
        "grounding_rate": g["rate"],
        "claims_pass_0.75": c.get("0.75"),
        "claims_pass_0.5": c.get("0.5"),
        "tfs": a["tfs"],
        "tefs": a["tefs"],
        "tokens_reasoning": t["reasoning"],
        "tokens_tool_io": t["tool_io"],
        "tokens_output": t["output"],
        "tokens_judge": t["judge"],
        "tokens_estimated": t["estimated"],
        "cost_usd": a["cost_usd"],
        "judge_cost_usd": a["judge_cost_usd"],
        "rank": a["rank"],
        "pareto": a["pareto"],
        "vs_baseline_mcnemar_p": None if v is None else v["mcnemar"]["p_value"],
        "vs_baseline_fairness_delta": None if delta is None else delta["mean"],
        "vs_baseline_delta_low": None if delta is None else delta["low"],
        "vs_baseline_delta_high": None if delta is None else delta["high"],
        "vs_baseline_attributable": None if v is None else v["attributable"],
        "judge_sd_scenario": max(sds) if sds else None,
        "judge_sd_above_floor": any(above) if above else None,
        "pass_at_k": None if top is None else top["pass_at_k"],
        "pass_hat_k": None if top is None else top["pass_hat_k"],
        "k": None if top is None else top["k"],
    }
    return {k: _safe(values[k]) for k in COLUMNS}


def render_csv(report: Report) -> str:
    if report.get("drift"):  # a replay run: one row per call
        return drift_csv(report)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for a in report["arms"]:
        writer.writerow(row(a))
    return out.getvalue()


__all__ = ["COLUMNS", "render_csv"]
