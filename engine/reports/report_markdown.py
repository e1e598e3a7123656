"""The report as Markdown that reads on its own (a PR comment): rendered from ``build_report``'s data.

The page opens with a verdict and its caveats (md_verdict.py), then the tables, the per-scenario,
per-tool and failure-mode tables (md_details.py), text charts (md_charts.py) and a legend
(md_legend.py). Names that came from suites, servers or models are escaped (md_format.py) so a
scenario, arm or tool name cannot break the layout or inject markup.
"""

from __future__ import annotations

from proctor.engine.reports.drift_section import drift_markdown
from proctor.engine.reports.md_charts import forest_chart, frontier_chart
from proctor.engine.reports.md_citations import hallucinated_citations_section
from proctor.engine.reports.md_details import failure_modes_section, scenarios_section, tools_section
from proctor.engine.reports.md_failed_trials import failed_trials_section
from proctor.engine.reports.md_format import cell, ci, money, pct, table
from proctor.engine.reports.md_format import who as _who
from proctor.engine.reports.md_legend import legend_section
from proctor.engine.reports.md_verdict import caveats_section, verdict_section
from proctor.engine.reports.report_model import (
    AgreementRow,
    AnchorsSection,
    ArmEntry,
    HumanAgreementRow,
    JudgesSection,
    LayerSD,
    RankingSection,
    Report,
    RunInfo,
    SuccessRow,
)
from proctor.engine.reports.run_progress import progress_lines
from proctor.engine.reports.tool_surface import tool_surface_markdown
from proctor.engine.stats import SD_TEXT


def _arms(arms: list[ArmEntry]) -> list[str]:
    rows = []
    for a in arms:
        g = a["grounding"]
        grounding = (
            "no citations"
            if g["rate"] is None
            else f"{g['grounded']}/{g['unresolved']}/{g['hallucinated']} ({pct(g['rate'])})"
        )
        claims = a["claims_pass_rate"]
        rows.append(
            [
                _who(a),
                f"{a['passed']}/{a['judged']}"
                + (f" ({a['errors']} errors)" if a["errors"] else "")
                + (f" ({a['not_judged']} not judged: no checks)" if a["not_judged"] else ""),
                ci(a["fairness"]),
                "n/a (baseline)" if a["baseline"] else ci(a["adoption"]),
                _misses(a),
                ci(a["llm_quality"]),
                grounding,
                f"{pct(claims.get('0.75'))} / {pct(claims.get('0.5'))}" if claims["trials"] else "–",
                f"{pct(a['tfs'])} / {pct(a['tefs'])}"
                + (f" ({cell(a['tool_match'])})" if a["tool_match"] else ""),
            ]
        )
    header = [
        "arm · model",
        "passed",
        "fairness [95% CI]",
        "adoption [95% CI]",
        "misses",
        "llm quality",
        "grounding g/u/h",
        "claims ≥0.75 / ≥0.5",
        "TFS / TEFS",
    ]
    legend = (
        "TFS / TEFS (MCPAgentBench): the share of gold tool calls in tasks whose calls matched the "
        "gold calls, ignoring / respecting their steps (parallel vs sequential); in brackets the "
        "tool-match mode that scored them."
    )
    tool_match = any(a["tfs"] is not None for a in arms)
    return ["## Arms × models", "", *table(header, rows), *(["", legend] if tool_match else [])]


def _misses(a: ArmEntry) -> str:
    """Built-in search/read calls beside the arm's MCP tools: in all, and per trial that counted them."""
    m = a["misses"]
    if a["baseline"]:
        return "n/a (baseline)"
    return "–" if m is None else f"{m['calls']} ({m['per_trial']:.1f}/trial)"


def _tool_match_epochs(arms: list[ArmEntry]) -> list[str]:
    rows = [
        [_who(a), str(e["epoch"]), pct(e["tfs"]), pct(e["tefs"])]
        for a in arms
        if len(a["tool_match_by_epoch"]) > 1
        for e in a["tool_match_by_epoch"]
    ]
    if not rows:
        return []
    return [
        "## TFS / TEFS by epoch",
        "",
        "An imported benchmark run is one epoch.",
        "",
        *table(["arm · model", "epoch", "TFS", "TEFS"], rows),
    ]


def _ranking(ranking: RankingSection) -> list[str]:
    out = [
        "## Ranking",
        "",
        f"By {ranking['metric']}; entries closer than the variance floor ({ranking['floor']:g}) share a rank.",
        "",
    ]
    for g in ranking["groups"]:
        names = ", ".join(
            f"{cell(e['arm'])} · {cell(e['model'])} (fairness {e['mean']:.3f})" for e in g["entries"]
        )
        out.append(f"{g['rank']}. {names}" + (" — tied" if len(g["entries"]) > 1 else ""))
    if ranking["excluded_scenarios"]:
        out.append(
            f"\nLeft out (not run by every entry): {', '.join(cell(s) for s in ranking['excluded_scenarios'])}"
        )
    if not ranking["groups"]:
        out.append("No fairness scores yet.")
    return out


def _versus(arms: list[ArmEntry]) -> list[str]:
    rows: list[list[str]] = []
    caveats: list[str] = []
    for a in arms:
        v = a["vs_baseline"]
        if v is None:
            continue
        m, d = v["mcnemar"], v["fairness_delta"]
        delta = "–" if d is None else f"{d['mean']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}]"
        p = "–" if m["p_value"] is None else f"{m['p_value']:.3f}"
        if not v["attributable"]:
            p, delta = f"{p} ⚠", f"{delta} ⚠"
            caveats.append(f"⚠ {cell(v['caveat'])} ({_who(a)}).")
        rows.append(
            [
                _who(a),
                cell(v["baseline"]),
                str(v["pairs"]),
                str(v["arm_tool_calls"]),
                f"{m['arm_only_passes']} / {m['baseline_only_passes']}",
                p,
                delta,
            ]
        )
    if not rows:
        return ["## Against the baseline", "", "No baseline arm to compare with."]
    header = [
        "arm · model",
        "baseline",
        "pairs",
        "MCP calls",
        "arm-only / baseline-only passes",
        "McNemar exact p",
        "Δ fairness [95% CI]",
    ]
    chart = forest_chart(arms)
    return [
        "## Against the baseline",
        "",
        "Paired by scenario and epoch (same seed). A Δ whose interval contains 0 is no evidence of a difference.",
        "",
        *table(header, rows),
        *(["", *caveats] if caveats else []),
        *(["", *chart] if chart else []),
    ]


def _pass_k(arms: list[ArmEntry]) -> list[str]:
    rows = [
        [_who(a), str(p["k"]), pct(p["pass_at_k"]), pct(p["pass_hat_k"]), str(p["tasks"])]
        for a in arms
        for p in a["pass_k"]
    ]
    if not rows:
        return []
    return [
        "## pass@k and pass^k over epochs",
        "",
        *table(["arm · model", "k", "pass@k", "pass^k", "scenarios"], rows),
    ]


def _cost(arms: list[ArmEntry]) -> list[str]:
    rows = []
    for a in arms:
        t = a["tokens"]
        mark = "~" if t["estimated"] else ""
        rows.append(
            [
                _who(a),
                f"{mark}{t['reasoning']:,}",
                f"{mark}{t['tool_io']:,}",
                f"{mark}{t['output']:,}",
                f"{t['judge']:,}",
                money(a["cost_usd"]),
                money(a["judge_cost_usd"]),
                cell(a["pareto"] or "–"),
            ]
        )
    header = [
        "arm · model",
        "reasoning in",
        "tool I/O in",
        "output",
        "judge",
        "agent cost",
        "judge cost",
        "cost/fairness Pareto",
    ]
    out = ["## Tokens and cost", "", *table(header, rows)]
    if any(a["tokens"]["estimated"] for a in arms):
        out += ["", "~ estimated token counts (offline agent)."]
    return out


def _sd(layer: LayerSD) -> str:
    if layer["mean_sd"] is None:
        return "– (1 pass)"
    return f"{layer['mean_sd']:.3f} / {layer['max_sd']:.3f}"


def _variance(arms: list[ArmEntry], judges: JudgesSection) -> list[str]:
    rows = []
    for a in arms:
        for v in a["judge_variance"]:
            verdict = {None: "–", True: "**above floor**", False: "below floor"}[v["above_floor"]]
            if str(v["judge"]).startswith("offline:"):
                verdict = "0 by construction (offline judge)"
            rows.append(
                [cell(v["judge"]), _who(a), _sd(v["criterion"]), _sd(v["step"]), _sd(v["scenario"]), verdict]
            )
    sd = judges["variance_sd"]
    out = [
        "## Judge variance by layer",
        "",
        f"σ: the {SD_TEXT[sd]} across judge passes of a criterion's score, of the "
        "judge's overall score of a trial (step: the score llm_quality and fairness are made of) and of "
        f"its scenario mean; mean / max over cells. Floor {judges['variance_floor']:g}, compared with σ "
        f"in the same convention (`judge.sd: {sd}`). Rankings use scenario-level means only.",
        "",
    ]
    return out + (
        table(["judge", "arm · model", "σ criterion", "σ step", "σ scenario", "scenario σ vs floor"], rows)
        if rows
        else ["No judge passes recorded."]
    )


def _rate(d: AgreementRow | HumanAgreementRow | SuccessRow | None) -> str:
    if d is None or d["percent"] is None:
        return "–"
    count = d["agreed"] if "agreed" in d else d["passed"]
    return f"{d['percent']:.2f} % ({count}/{d['n']})"


def _kappa(k: float | None) -> str:
    return "–" if k is None else f"{k:.2f}"


def _judges(judges: JudgesSection) -> list[str]:
    out = ["## Judges", ""]
    out += [f"- {cell(label)}" for label in judges["labels"].values()] or ["- none"]
    panel, human = judges["panel"], judges["human"]
    agreement = {h["judge"]: h for h in human["agreement"]}
    if panel["judges"]:
        out += [
            "",
            "Success rate: trials the judge passed, of those it judged. Agreement: same pass/fail as the "
            "human label; κ: Cohen's κ against the human labels (agreement beyond chance).",
            "",
        ]
        rows = [
            [
                cell(s["judge"]),
                _rate(s),
                _rate(agreement.get(s["judge"])),
                _kappa(None if (h := agreement.get(s["judge"])) is None else h["kappa"]),
            ]
            for s in panel["success"]
        ]
        if human["success"] is not None:
            rows.append(["human labels", _rate(human["success"]), "100.00 %", "–"])
        out += table(["judge", "success rate", "agreement with humans", "κ vs humans"], rows)
    if len(panel["judges"]) > 1:
        m = panel["majority"]
        majority = agreement.get("panel majority")
        who = (
            f"{len(m['judges'])} judges of {m['source']}" if m["judges"] != panel["judges"] else "all judges"
        )
        out += [
            "",
            f"Panel majority of {cell(who)} ({cell(m['rule'])}): {m['passed']} passed, {m['failed']} failed "
            f"({m['tied']} even splits, {m['no_verdict']} without verdict)"
            + (
                f"; agreement with humans {_rate(majority)}, κ {_kappa(majority['kappa'])}."
                if majority
                else "."
            ),
        ]
        if human["any_judge"] is not None:
            out.append(f"Any judge of that panel agrees with the human label: {_rate(human['any_judge'])}.")
        out += ["", "Judge pairs: Kendall τ-b over their scores, Cohen's κ over their pass/fail.", ""]
        pair_rows = [
            [
                cell(p["first"]),
                cell(p["second"]),
                "undefined" if p["tau_b"] is None else f"{p['tau_b']:.3f}",
                _kappa(p["kappa"]),
                str(p["n"]),
            ]
            for p in panel["pairs"]
        ]
        out += table(["judge", "judge", "τ-b", "κ", "trials"], pair_rows)
    if human["labelled_trials"]:
        out += [
            "",
            f"{human['labelled_trials']} trials carry a human label ({', '.join(map(cell, human['imported_from'])) or 'suite labels'}).",
        ]
    return out


def _anchors(anchors: AnchorsSection) -> list[str]:
    out = ["## Anchors", "", f"Status: **{cell(anchors['status'])}**"]
    if anchors["held_out"]:
        out.append(f"- held out: {', '.join(cell(h) for h in anchors['held_out'])}")
    if anchors["unlocked"]:
        out.append(f"- not locked: {', '.join(cell(h) for h in anchors['unlocked'])}")
    for f in anchors["lock_files"]:
        out.append(f"- lock file {cell(f['path'])}: {cell(f['status'])}")
    last = anchors["last_verification"]
    if last is not None:
        out.append(f"- last verification ({cell(last['status'])}): {cell(last['message'])}")
    return out


def _run_line(report: Report) -> str:
    run: RunInfo | dict[str, object] = report["run"] or {}
    trials = report["trials"]
    done = sum(t["status"] in ("finished", "error") for t in trials)
    shape = [
        (len({t["scenario"] for t in trials}), "scenario"),
        (len({t["arm"] for t in trials}), "arm"),
        (len({t["model"] for t in trials}), "model"),
        (len({t["epoch"] for t in trials}), "epoch"),
    ]
    matrix = " × ".join(f"{n} {word}{'s' if n != 1 else ''}" for n, word in shape)
    return (
        f"{len(trials)} trials ({matrix}), {done} done; run status {cell(run.get('status', '?'))}."
        if trials
        else f"No trials; run status {cell(run.get('status', '?'))}."
    )


def render_markdown(report: Report, *, failed_list: bool = True) -> str:
    """The whole page; ``failed_list`` False leaves out the failed trials' table (the HTML page
    shows them as folds whose titles carry the same reasons)."""
    run: RunInfo | dict[str, object] = report["run"] or {}
    title = f"# proctor report: {cell(run.get('suite', '?'))} (run {cell(run.get('id', '?'))})"
    arms = report["arms"]
    sections = [
        verdict_section(report),
        caveats_section(report),
        _arms(arms),
        _versus(arms),
        _ranking(report["ranking"]),
        scenarios_section(report),
        failure_modes_section(report),
        failed_trials_section(report) if failed_list else [],
        hallucinated_citations_section(report),
        tools_section(report),
        tool_surface_markdown(report),
        _cost(arms),
        frontier_chart(report),
        _pass_k(arms),
        _tool_match_epochs(arms),
        _variance(arms, report["judges"]),
        _judges(report["judges"]),
        _anchors(report["anchors"]),
        legend_section(report),
    ]
    if report.get("drift"):  # a replay run: nothing was judged; its calls against the recording are all
        sections = [drift_markdown(report)]
    out = [title, ""]
    out += [f"**{cell(line)}**\n" for line in progress_lines(report["progress"], str(run.get("status", "")))]
    out.append(_run_line(report))
    for section in sections:
        if section:
            out += ["", *section]
    return "\n".join(out) + "\n"


__all__ = ["cell", "render_markdown"]
