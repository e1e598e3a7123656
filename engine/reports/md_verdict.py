"""The Markdown report's opening: a verdict computed from the report's own comparisons, and its caveats.

Nothing here computes a statistic: the fairness deltas, their paired-bootstrap intervals, the
McNemar tests, the notes and the attribution caveats are those ``build_report`` put in the report.
The verdict only reads them: it says what happened first (passes, the fairness Δ), then what
the tests can and cannot say, and calls a difference whose interval contains 0 "could be
chance", so it can never claim more than the numbers do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from proctor.engine.reports.error_causes import ErrorCause, group_errors
from proctor.engine.reports.md_format import cell, p_value, signed, who
from proctor.engine.reports.report_model import ArmEntry, FairnessDelta, RankingSection, Report, VsBaseline
from proctor.engine.reports.tools_model import NeverCalledEntry

Finding = Literal["higher", "lower", "no_difference", "too_few", "no_scores"]
ALPHA = 0.05
FEW_PAIRS = 20
"""Below this many pairs the caveats warn that a percentile bootstrap interval runs narrow."""
_MAX_NAMES = 8


@dataclass(frozen=True)
class Comparison:
    """One arm × model against its baseline, read from the report's ``vs_baseline``."""

    arm: ArmEntry
    versus: VsBaseline
    baseline: ArmEntry | None

    @property
    def finding(self) -> Finding:
        d = self.versus["fairness_delta"]
        if d is None:
            return "no_scores"
        if d["n"] < 2:
            return "too_few"
        if d["low"] > 0:
            return "higher"
        if d["high"] < 0:
            return "lower"
        return "no_difference"


def comparisons(arms: Sequence[ArmEntry]) -> list[Comparison]:
    out = []
    for a in arms:
        v = a["vs_baseline"]
        if v is None:
            continue
        base = next((b for b in arms if b["arm"] == v["baseline"] and b["model"] == a["model"]), None)
        out.append(Comparison(a, v, base))
    return out


def _passes(a: ArmEntry | None) -> str:
    if a is None or not a["judged"]:
        return "no pass/fail verdicts"
    return f"{a['passed']}/{a['judged']}"


def _ci(d: FairnessDelta) -> str:
    return f"{signed(d['low'])} to {signed(d['high'])}"


def _change(d: FairnessDelta) -> str:
    """What happened to fairness, in words first, the number after."""
    mean = d["mean"]
    word = "the same" if round(mean, 3) == 0 else ("higher" if mean > 0 else "lower")
    return f"scored {word} on fairness (Δ {signed(mean)} on the 0–1 scale)"


Says = tuple[Literal["real", "chance", "unknown"], str]
"""What a test can say of one difference: beyond chance, could be chance, or nothing; and why."""


def _fairness_says(c: Comparison, floor: float) -> Says:
    d = c.versus["fairness_delta"]
    assert d is not None
    if c.finding == "too_few":
        return "unknown", "one pair is too few to tell the fairness difference from chance"
    if c.finding == "no_difference":
        return "chance", f"the fairness 95% CI {_ci(d)} contains 0"
    evidence = f"the fairness 95% CI {_ci(d)} excludes 0"
    if abs(d["mean"]) < floor:
        evidence += (
            f", but by less than the variance floor ({floor:g}) below which this suite counts "
            "differences as judge noise"
        )
    return "real", evidence


def _passes_says(c: Comparison) -> Says | None:
    if c.baseline is None or not c.arm["judged"] or not c.baseline["judged"]:
        return None
    m = c.versus["mcnemar"]
    counts = (
        f"{m['arm_only_passes']} pair(s) passed only with the arm, {m['baseline_only_passes']} only with "
        "the baseline"
    )
    if m["p_value"] is None:
        return "unknown", f"McNemar's test has no discordant pair to weigh ({counts})"
    kind: Literal["real", "chance"] = "real" if m["p_value"] < ALPHA else "chance"
    return kind, f"McNemar's exact {p_value(m['p_value'])} ({counts})"


_ONE = {"real": "is beyond chance", "chance": "could be chance"}
_BOTH = {
    "real": "both differences are beyond chance",
    "chance": "this run cannot tell either difference from chance",
}


def _sentence(c: Comparison, floor: float) -> str:
    """One sentence a manager reads: what happened (passes, fairness), then what the tests can
    and cannot say of it. A difference whose interval contains 0 is never called one."""
    d = c.versus["fairness_delta"]
    name = f"**{who(c.arm)}**"
    lacking = c.versus["tools_not_offered"]
    left_out = (
        f" {lacking} of {c.versus['pairs']} pair(s) are left out: the baseline does not offer the tools of "
        "their scenario's gold calls, the only check there, so it has no verdict and no fairness on them."
        if lacking
        else ""
    )
    happened = f"{name} passed {_passes(c.arm)} against the baseline's {_passes(c.baseline)}"
    if d is None:  # finding "no_scores"
        return f"{happened}; no pair of trials has fairness scores on both sides yet, so nothing to compare.{left_out}"
    happened += f" and {_change(d)} over {d['n']} paired trial{'s' if d['n'] != 1 else ''}"
    fair = _fairness_says(c, floor)
    passes = _passes_says(c)
    if passes is not None and fair[0] == passes[0] and fair[0] in _BOTH:
        says = f"{_BOTH[fair[0]]}: {fair[1]}, and {passes[1]}"
    else:
        parts = [
            f"the fairness difference {_ONE[fair[0]]} ({fair[1]})" if fair[0] in _ONE else fair[1],
            *(
                [f"the pass difference {_ONE[passes[0]]} ({passes[1]})" if passes[0] in _ONE else passes[1]]
                if passes is not None
                else []
            ),
        ]
        says = ", and ".join(parts)
    warn = (
        ""
        if c.versus["attributable"]
        else " ⚠ Its MCP tools were never called: the difference is not the server's."
    )
    return f"{happened}; {says}.{warn}{left_out}"


def _lead(found: Sequence[Comparison], baseline: str) -> str:
    """What happened to every arm (passes, fairness Δ), then which differences are beyond chance."""
    base = "the baseline" if baseline == "baseline" else f"the baseline ({cell(baseline)})"
    happened = "; ".join(
        f"{who(c.arm)} passed {_passes(c.arm)} vs {_passes(c.baseline)}"
        + (f", fairness Δ {signed(d['mean'])}" if (d := c.versus["fairness_delta"]) is not None else "")
        for c in found
    )
    head = f"Against {base}: {happened}."
    better = [who(c.arm) for c in found if c.finding == "higher"]
    worse = [who(c.arm) for c in found if c.finding == "lower"]
    if all(c.finding == "no_scores" for c in found):
        return f"No arm could be compared with {base} on fairness: no pair of trials has a fairness score on both sides."
    if not better and not worse:
        few = any(c.finding in ("too_few", "no_scores") for c in found)
        return (
            f"{head} No fairness difference is beyond chance: "
            + (
                f"the 95% CI of the paired difference contains 0 for each of the {len(found)} arms compared."
                if len(found) > 1
                else "the 95% CI of the paired difference contains 0."
            )
            + (" (Some have too few pairs to tell.)" if few else "")
        )
    sentences = [head]
    if better:
        sentences.append(f"Better than {base} on fairness, beyond chance: {', '.join(better)}.")
    if worse:
        sentences.append(f"Worse than {base} on fairness, beyond chance: {', '.join(worse)}.")
    rest = len(found) - len(better) - len(worse)
    if rest:
        sentences.append(f"For {rest} other arm(s) the difference could be chance.")
    return " ".join(sentences) + " (Beyond chance: the 95% CI of the paired difference excludes 0.)"


def _top(ranking: RankingSection) -> str | None:
    groups = ranking["groups"]
    if not groups:
        return None
    first = groups[0]["entries"]
    names = ", ".join(f"{cell(e['arm'])} · {cell(e['model'])} ({e['mean']:.3f})" for e in first)
    if len(groups) == 1 and len(first) == 1:
        return f"Highest mean fairness (scenario means, 0–1): {names}, the only entry with fairness scores."
    if len(first) > 1:
        return (
            f"Highest mean fairness (scenario means, 0–1): a tie within the variance floor "
            f"({ranking['floor']:g}) between {names}. The ranking is not a significance test."
        )
    return (
        f"Highest mean fairness (scenario means, 0–1): {names}, ahead of the next entry by more than the "
        f"variance floor ({ranking['floor']:g}). The ranking is not a significance test."
    )


def verdict_section(report: Report) -> list[str]:
    arms = report["arms"]
    ranking = report["ranking"]
    floor = float(ranking["floor"])
    found = comparisons(arms)
    out = ["## Verdict", ""]
    if not arms:
        return [*out, "No trials yet: nothing to conclude."]
    progress = report["progress"]
    if progress["done"] == 0:
        return [*out, f"Nothing to conclude: none of the {progress['trials']} trials ran."]
    top = _top(ranking)
    if not found:
        out.append(
            "No arm was compared with a baseline: the run has no baseline arm, or no scenario and epoch "
            "ran on both sides."
        )
        return [*out, *(["", top] if top else [])]
    out += [_lead(found, found[0].versus["baseline"]), ""]
    out += [f"- {_sentence(c, floor)}" for c in found]
    return [*out, *(["", top] if top else [])]


def tool_names(items: Sequence[NeverCalledEntry], limit: int | None = None) -> str:
    """``tool, tool (server); tool (server)`` for never-called tools, grouped by server."""
    by_server: dict[str, list[str]] = {}
    for n in items[:limit]:
        by_server.setdefault(str(n["server"]), []).append(cell(n["tool"]))
    text = "; ".join(f"{', '.join(tools)} ({cell(server)})" for server, tools in by_server.items())
    more = len(items) - len(items[:limit])
    return text + (f"; and {more} more" if more > 0 else "")


def _never_called(report: Report) -> list[str]:
    baselines = {(a["arm"], a["model"]) for a in report["arms"] if a["baseline"]}
    out = []
    for a in report["tool_usage"]["arms"]:
        never = a["never_called"]
        if not never or (a["arm"], a["model"]) in baselines:
            continue
        offered = a["offered_tools"]
        out.append(
            f"{who(a)}: {len(never)} of {offered} offered tools were never called, so this run says "
            f"nothing about them: {tool_names(never, _MAX_NAMES)}."
        )
    return out


def _error_causes(report: Report) -> dict[tuple[str, str], list[ErrorCause]]:
    """Per arm × model, why its trials ended in error, grouped by cause."""
    errored: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for t in report["trials"]:
        if t["status"] == "error":
            errored.setdefault((t["arm"], t["model"]), []).append((t["arm"], t["error"] or ""))
    return {key: group_errors(rows) for key, rows in errored.items()}


def caveats_section(report: Report) -> list[str]:
    """The report's notes, then what limits the verdict: attribution, errors, prices, tools, sample size."""
    notes = [str(n) for n in report["notes"]]
    items = [cell(n) for n in notes if n]
    arms = report["arms"]
    found = comparisons(arms)
    items += [f"⚠ {cell(c.versus['caveat'])}." for c in found if not c.versus["attributable"]]
    imported = any(n.startswith("imported from") for n in notes)
    why = _error_causes(report) if any(a["errors"] for a in arms) else {}
    for a in arms:
        if a["errors"]:
            causes = why.get((a["arm"], a["model"]), [])
            items.append(
                f"{who(a)}: {a['errors']} of {a['trials']} trials ended in error; they have no pass/fail verdict."
                + (f" Why: {'; '.join(cell(c.line()) for c in causes)}." if causes else "")
            )
        if a["cost_usd"] is None and a["finished"]:
            items.append(
                f"{who(a)}: agent cost unknown (neither the suite's prices nor genai-prices price the model): shown as "
                "n/a, never $0, and left off the cost axis."
            )
        if a["judge_cost_usd"] is None:
            items.append(f"{who(a)}: judge cost unknown (a judge model has no price).")
        if a["tokens"]["estimated"] and not str(a["model"]).startswith("offline:") and not imported:
            items.append(f"{who(a)}: token counts are estimates (the provider reported no usage).")
    items += _never_called(report)
    claimed = [c for c in found if c.finding in ("higher", "lower")]
    if len(found) > 1 and claimed:
        items.append(
            f"{len(found)} arms were compared with the baseline; each 95% interval holds for its own "
            "comparison, not for all of them at once (no correction for multiple comparisons)."
        )
    few = sorted({c.versus["fairness_delta"]["n"] for c in found if c.versus["fairness_delta"] is not None})
    if few and few[0] < FEW_PAIRS:
        items.append(
            f"Comparisons rest on {', '.join(map(str, few))} paired trial(s): percentile bootstrap intervals "
            f"over fewer than {FEW_PAIRS} pairs tend to be narrower than they should be; more scenarios or "
            "epochs tighten them honestly."
        )
    return ["## Caveats", "", *([f"- {i}" for i in items] or ["- None found."])]


__all__ = ["Comparison", "caveats_section", "comparisons", "tool_names", "verdict_section"]
