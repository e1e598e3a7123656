"""The report's hallucinated-citation table: escaped, and only where grounding was scored."""

from __future__ import annotations

from typing import Any, cast

from proctor.engine.reports.md_citations import hallucinated_citations_section
from proctor.engine.reports.report_html import markdown_to_html
from proctor.engine.reports.report_model import Report
from proctor.store.scores import CitationDetails, GroundingCounts, GroundingDetails


def _report(*citations: CitationDetails, grounding: bool = True) -> Report:
    details = GroundingDetails(
        counts=GroundingCounts.of(c.status for c in citations),
        count_rule="file_line: once",
        citations=list(citations),
    )
    scores: dict[str, Any] = (
        {"grounding": {"value": 0.0, "details": details.model_dump()}} if grounding else {}
    )
    trial = {"id": 7, "scenario": "s|1", "arm": "a", "model": "m", "scores": scores}
    return cast(Report, {"trials": [trial]})


def test_a_hostile_cited_line_is_escaped_in_markdown_and_html() -> None:
    bad = CitationDetails(
        raw="x.py:3",
        path="x.py",
        line=3,
        status="hallucinated",
        reason="Foo is 9 lines from the cited line",
        line_text="a | b `c` [x](javascript:y) \x1b]8;;http://e\x07<script>",
    )
    md = hallucinated_citations_section(_report(bad))
    (row,) = [line for line in md if line.startswith("| #7")]
    assert "a \\| b \\`c\\` \\[x\\](javascript:y)" in row and "\x1b" not in row and "\\<script\\>" in row
    assert row.count(" | ") == 6  # seven cells: the line's pipe is escaped
    html = "\n".join(markdown_to_html("\n".join(md), {}))
    assert "<script" not in html and "&lt;script" in html and "\x1b" not in html


def test_no_section_without_grounding_and_a_sentence_when_nothing_was_hallucinated() -> None:
    assert hallucinated_citations_section(_report(grounding=False)) == []
    ok = CitationDetails(raw="x.py:3", path="x.py", line=3, status="grounded")
    assert hallucinated_citations_section(_report(ok))[-1] == "No citation was hallucinated."


def test_a_line_past_the_end_shows_no_text() -> None:
    past = CitationDetails(
        raw="x.py:99", path="x.py", line=99, status="hallucinated", reason="line 99 is past the end"
    )
    (row,) = [line for line in hallucinated_citations_section(_report(past)) if line.startswith("| #7")]
    assert "| 99: – | line 99 is past the end |" in row
