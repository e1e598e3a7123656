"""The Markdown report's legend: what every column, score and test on the page means."""

from __future__ import annotations

from proctor.engine.reports.aggregate import BOOTSTRAP_RESAMPLES
from proctor.engine.reports.report_model import Report

_SCORES = (
    (
        "fairness",
        "0–1, higher is better: how good the answer is, whatever tools produced it; the layer a "
        "baseline can win. A weighted mean of keyword coverage, LLM quality, citation grounding and "
        "efficiency (weights from the suite, by default 0.10 / 0.55 / 0.15 / 0.20; a missing "
        "component is left out and the rest renormalized).",
    ),
    (
        "adoption",
        "0–1: how well the agent used the arm's MCP tools (0.60 tool fluency + 0.40 discoverability). "
        "Never merged with fairness; n/a for the baseline, which offers no MCP tools.",
    ),
    (
        "misses",
        "the agent's own (built-in) search or read calls made while the arm offered an MCP tool for "
        "that job (a Grep beside an MCP search tool), in all and per trial; – where no trial could count "
        "them (no tool list and no MCP call recorded), n/a for the baseline, which offers no MCP tools.",
    ),
    ("llm quality", "0–1: the mean judge score over judge passes."),
    (
        "grounding g/u/h",
        "citations in the answer checked against the pinned commit: grounded (the lines exist and "
        "show what the answer says: quoted code is there, a symbol named next to them is within ±5 "
        "lines or encloses them), unresolved (no such file, ambiguous, outside the repository), "
        "hallucinated (the line contradicts the answer: past the end of the file, the quoted code "
        "is elsewhere, the named symbol neither near nor around it); each (file, line range) counted "
        "once unless the suite says otherwise; the percentage is grounded / all citations.",
    ),
    (
        "claims ≥0.75 / ≥0.5",
        "share of trials whose claims coverage (fulfilled 1, partially ½, not 0, averaged) reaches "
        "0.75 / 0.5 (MCP-Atlas).",
    ),
    (
        "TFS / TEFS",
        "MCPAgentBench tool-call match: the agent's set of (tool, normalized arguments) equals the "
        "gold set; TEFS also requires the gold serial/parallel steps. Weighted by gold calls.",
    ),
    (
        "passed",
        "trials passed / trials with a pass-fail verdict: claims decide, else key points, else the "
        "judges' mean score ≥ 0.5; where the suite sets scoring.pass_requires_grounding, an answer "
        "whose citations are grounded below that rate fails. Errored trials and scenarios without "
        "checks have no verdict.",
    ),
)
_TESTS = (
    (
        "Δ fairness [95% CI]",
        "mean of (arm − baseline) fairness over trials paired by scenario and epoch (same seed), with "
        f"a percentile bootstrap interval ({BOOTSTRAP_RESAMPLES:,} resamples of the pairs, seed 0). "
        "An interval that contains 0 is no evidence of a difference.",
    ),
    (
        "McNemar exact p",
        "two-sided exact binomial test on the discordant pairs (passed with only one of the two "
        "arms): the chance of a split at least this uneven if both arms passed equally often. "
        "Undefined when no pair is discordant.",
    ),
    (
        "arm-only / baseline-only passes",
        "pairs that passed with the arm but not the baseline, and the reverse.",
    ),
    (
        "MCP calls",
        "calls to the arm's own MCP servers over its trials; 0 means its difference is not the server's.",
    ),
    (
        "rank",
        "by mean scenario-level fairness; entries closer than the variance floor share a rank. Not a "
        "significance test.",
    ),
    ("pass@k / pass^k", "share of scenarios passed in at least one / in all of k epochs."),
    (
        "variance floor, σ",
        "σ is the standard deviation of judge scores across passes (per criterion, step, scenario); "
        "differences smaller than the floor are treated as judge noise.",
    ),
)
_COLUMNS = (
    (
        "tokens",
        "reasoning in = model input that was not tool output; tool I/O in = tool results fed back to "
        "the model; output = model output; judge = the judges' tokens. ~ marks estimates.",
    ),
    (
        "agent cost / judge cost",
        "US$ reported by the response, else from the suite's prices or genai-prices; n/a (unpriced) when a model has no price, never $0.",
    ),
    (
        "Pareto",
        "frontier: no other arm × model is at least as cheap and as good on fairness; dominated: one "
        "is; unpriced: no cost to place it.",
    ),
    (
        "tools",
        "calls (under the tool that ran, so calls through a router's execute count for the real tool), "
        "errors = results flagged is_error (rate = errors / results), p50 / p95 latency of the calls that "
        "returned (linear interpolation between ranks, numpy's default), result size = UTF-8 bytes of "
        "the stored result text plus binary blocks (kB = 1,000 B), trials calling it = trials with at least "
        "one call, of the arm's trials.",
    ),
    (
        "failure modes",
        "one primary MCP-Atlas mode per failed trial, read from the trace: no_tool_use, wrong_tool, "
        "malformed_call, err_recovery; 'not diagnosed' when the trace proves none (the cognitive modes "
        "need an LLM judge).",
    ),
    ("– and n/a", "– means no value (nothing to measure); n/a means the measure does not apply."),
)


def legend_section(report: Report) -> list[str]:
    floor = report["ranking"]["floor"]
    out = ["## Legend", ""]
    for group in (_SCORES, _TESTS, _COLUMNS):
        out += [f"- **{name}**: {text}" for name, text in group]
    if floor is not None:
        out.append(f"- This run's variance floor: {floor:g} (fairness points on the 0–1 scale).")
    return out


__all__ = ["legend_section"]
