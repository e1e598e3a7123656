"""The Markdown report's hallucinated citations: each with the line it points at and why.

Read from each trial's stored grounding details (the line's text at the pinned commit was kept
when the citation was judged), so the report needs no repository to say what the agent cited.
"""

from __future__ import annotations

from typing import Any

from proctor.engine.reports.md_format import cell, folded, table, who
from proctor.engine.reports.report_model import Report, TrialEntry, score_details
from proctor.store.scores import CitationDetails, GroundingDetails, ScoreName, UnreadableScore, parse_details

LINE_CELL_CHARS = 100


def _grounding(t: TrialEntry) -> GroundingDetails | None:
    stored = (t.get("scores") or {}).get(ScoreName.GROUNDING)
    details: Any = None if stored is None else score_details(stored)
    if not isinstance(details, dict):
        return None
    counts = details.get("counts")
    if isinstance(counts, dict) and not counts.get("hallucinated"):
        return GroundingDetails()  # nothing to list: skip validating every citation
    try:
        return parse_details(ScoreName.GROUNDING, details, GroundingDetails)
    except UnreadableScore:
        return None


def _line(c: CitationDetails) -> str:
    if c.line is None:
        return "–"
    if c.line_text is None:
        return f"{c.line}: –"
    text = " ".join(c.line_text.split())
    if len(text) > LINE_CELL_CHARS:
        text = text[: LINE_CELL_CHARS - 1] + "…"
    return f"{c.line}: {cell(text)}"


def hallucinated_citations_section(report: Report) -> list[str]:
    rows: list[list[str]] = []
    graded = 0
    rule = ""
    for t in report["trials"]:
        g = _grounding(t)
        if g is None:
            continue
        graded += 1
        rule = rule or g.count_rule
        for c in g.citations:
            if c.status == "hallucinated":
                path = c.path + (f":{c.line}" if c.line is not None else "")
                rows.append(
                    [
                        f"#{t['id']}",
                        who(t),
                        cell(t["scenario"]),
                        cell(c.raw),
                        cell(path),
                        _line(c),
                        cell(c.reason),
                    ]
                )
    if not graded:
        return []
    out = ["## Hallucinated citations", ""]
    if not rows:
        return [*out, "No citation was hallucinated."]
    counted = f" Citations counted by {cell(rule)}." if rule else ""
    header = ["trial", "arm · model", "scenario", "citation", "points at", "that line at the commit", "why"]
    return [
        *out,
        f"Each citation grounding called hallucinated, the line it points at as it reads at the pinned "
        f"commit, and why.{counted}",
        "",
        *folded(f"{len(rows)} hallucinated citations", table(header, rows)),
    ]


__all__ = ["hallucinated_citations_section"]
