"""The Markdown report's detail tables: per scenario, per tool, and failure modes.

Read from the report's own data (``trials`` with their scores, ``tool_usage``), so they agree
with the JSON report line for line.
"""

from __future__ import annotations

import statistics

from proctor.engine.reports.md_format import cell, column, folded, one_model, pct, seconds, size, table, who
from proctor.engine.reports.md_verdict import tool_names
from proctor.engine.reports.report_model import ArmModel, Report, TrialEntry, score_details
from proctor.engine.reports.tools_model import ToolEntry
from proctor.engine.scoring.diagnosis import COGNITIVE_MODES, TOOL_CALL_MODES
from proctor.store.scores import FailureModeDetails, ScoreName, UnreadableScore, parse_details

NOT_DIAGNOSED = "not diagnosed"
UNREADABLE = "unreadable"
_MODE_MEANING = {
    **{m: f"tool call: {d}" for m, d in TOOL_CALL_MODES.items()},
    **{m: f"cognitive: {d}" for m, d in COGNITIVE_MODES.items()},
    NOT_DIAGNOSED: "the trace proves no tool-call failure; the cognitive modes need an LLM judge",
    UNREADABLE: "the failure_mode score's details do not fit its model",
}

Key = tuple[str, str]


def _key(d: ArmModel) -> Key:
    return (str(d["arm"]), str(d["model"]))


def _fairness(t: TrialEntry) -> float | None:
    s = (t.get("scores") or {}).get(ScoreName.FAIRNESS)
    v = None if s is None else s["value"]
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _scenario_cell(trials: list[TrialEntry]) -> str:
    if not trials:
        return "–"
    judged = [t for t in trials if t["passed"] is not None]
    passed = sum(t["passed"] is True for t in judged)
    verdict = f"{passed}/{len(judged)}" if judged else "no verdict"
    fair = [v for t in trials if (v := _fairness(t)) is not None]
    mean = f"{statistics.fmean(fair):.3f}" if fair else "–"
    errors = sum(t["status"] == "error" for t in trials)
    return f"{verdict} · {mean}" + (f" ({errors} error{'s' if errors > 1 else ''})" if errors else "")


def scenarios_section(report: Report) -> list[str]:
    arms = report["arms"]
    trials = report["trials"]
    if not arms or not trials:
        return []
    cells: dict[str, dict[Key, list[TrialEntry]]] = {}
    for t in trials:
        cells.setdefault(str(t["scenario"]), {}).setdefault(_key(t), []).append(t)
    keys = [_key(a) for a in arms]
    rows = [[cell(s), *(_scenario_cell(by.get(k, [])) for k in keys)] for s, by in cells.items()]
    single = one_model(arms)
    body = table(["scenario", *(f"{column(a, single)}: passed · fairness" for a in arms)], rows)
    model = f" All with model {cell(arms[0]['model'])}." if single else ""
    return [
        "## Per scenario",
        "",
        "Each cell: trials passed / trials with a pass-fail verdict · mean fairness (0–1) over epochs; "
        f"– when there is none.{model}",
        "",
        *folded(f"{len(rows)} scenarios", body),
    ]


def _errors(s: ToolEntry) -> str:
    if not s["results"]:
        return "–"
    return f"{s['errors']} ({pct(s['error_rate'])})"


def _calls(s: ToolEntry) -> str:
    out = f"{s['calls']:,}"
    if s["no_result"]:
        out += f" ({s['no_result']} without result)"
    return out


def _tool(s: ToolEntry, listed: bool) -> str:
    return cell(s["tool"]) + ("" if s["offered"] or not listed else " (not offered)")


def _latency(v: float | None, recorded: bool) -> str:
    return seconds(v) if recorded else "not recorded"


def tools_section(report: Report) -> list[str]:
    usage = report["tool_usage"]
    if not usage["arms"]:
        return []
    rows = []
    recorded = bool(usage["latency_recorded"])
    for a in usage["arms"]:
        for s in a["tools"]:
            lat, total = s["latency_s"], s["result_bytes"]
            rows.append(
                [
                    who(a),
                    cell(s["server"]),
                    _tool(s, a["offered_tools"] > 0),
                    _calls(s),
                    _errors(s),
                    _latency(lat["p50"], recorded),
                    _latency(lat["p95"], recorded),
                    size(total["total"]),
                    size(total["mean"]),
                    f"{s['trials']} of {a['trials']}",
                ]
            )
    header = [
        "arm · model",
        "server",
        "tool",
        "calls",
        "errors (rate)",
        "p50 latency",
        "p95 latency",
        "result size, total",
        "result size, mean",
        "trials calling it",
    ]
    out = ["## Tools", ""]
    out += folded(f"{len(rows)} tool rows", table(header, rows)) if rows else ["No tool was called."]
    truncated = sum(s["truncated_results"] for a in usage["arms"] for s in a["tools"])
    if truncated:
        out += [
            "",
            f"{truncated} result(s) were longer than the stored cap (tool_result_store_chars); their size "
            "counts what was kept.",
        ]
    unlisted = [who(a) for a in usage["arms"] if not a["offered_tools"] and a["tools"]]
    if unlisted:
        out += [
            "",
            f"No list of offered tools was recorded for {', '.join(unlisted)} (imported transcripts), so "
            "tools it never called are unknown.",
        ]
    never = [a for a in usage["arms"] if a["never_called"]]
    if not never:
        listed = any(a["offered_tools"] for a in usage["arms"])
        return [*out, "", "Every offered tool was called at least once."] if listed else out
    out += ["", "Offered but never called (the run says nothing about these):", ""]
    for a in never:
        out.append(f"- {who(a)}: {tool_names(a['never_called'])}")
    return out


def _mode(t: TrialEntry) -> str:
    stored = (t.get("scores") or {}).get(ScoreName.FAILURE_MODE)
    details = None if stored is None else score_details(stored)
    if not isinstance(details, dict):
        return NOT_DIAGNOSED
    try:
        mode = parse_details(ScoreName.FAILURE_MODE, details, FailureModeDetails).mode
    except UnreadableScore:
        return UNREADABLE
    return mode or NOT_DIAGNOSED


def failure_modes_section(report: Report) -> list[str]:
    arms = report["arms"]
    trials = report["trials"]
    failed = [t for t in trials if t["passed"] is False]
    out = ["## Failure modes", ""]
    if not arms:
        return []
    if not any(t["passed"] is not None for t in trials):
        return [*out, "No trial has a pass/fail verdict yet, so none has failed."]
    if not failed:
        return [*out, "No trial failed."]
    counts: dict[str, dict[Key, int]] = {}
    for t in failed:
        by = counts.setdefault(_mode(t), {})
        by[_key(t)] = by.get(_key(t), 0) + 1
    keys = [_key(a) for a in arms]
    order = sorted(counts, key=lambda m: (m == NOT_DIAGNOSED, -sum(counts[m].values()), m))
    rows = [
        [
            cell(m),
            cell(_MODE_MEANING.get(m, "a mode this proctor does not describe")),
            *(str(counts[m].get(k, 0)) for k in keys),
        ]
        for m in order
    ]
    totals = {k: sum(c.get(k, 0) for c in counts.values()) for k in keys}
    rows.append(["**failed trials**", "", *(f"**{totals[k]}**" for k in keys)])
    single = one_model(arms)
    header = ["primary failure mode", "meaning", *(column(a, single) for a in arms)]
    return [
        *out,
        "Each cell: failed trials of that arm"
        + ("" if single else " · model")
        + " with this primary mode (MCP-Atlas taxonomy, read from the trace).",
        "",
        *table(header, rows),
    ]


__all__ = ["failure_modes_section", "scenarios_section", "tools_section"]
