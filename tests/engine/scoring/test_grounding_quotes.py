"""A line citation that quotes code is grounded only if that code is at the cited lines."""

from __future__ import annotations

from proctor.engine.scoring import check_citations, extract_citations
from proctor.store.scores import GroundingCounts


class Repo:
    def __init__(self, files: dict[str, list[str]]) -> None:
        self._files = files

    def is_file(self, path: str) -> bool:
        return path in self._files

    def lines(self, path: str) -> list[str]:
        return self._files[path]

    def files(self) -> list[str]:
        return sorted(self._files)


REPO = Repo(
    {
        "pkg/retry.py": [f"# line {i}" for i in range(1, 30)]
        + ["    delay = min(cap, base * 2 ** n)"]
        + ["x"] * 20
    }
)


def test_quote_is_extracted_after_a_line_citation() -> None:
    (c,) = extract_citations("- `pkg/retry.py:30`: `delay = min(cap, base * 2 ** n)`")
    assert c.line == 30 and c.quote == "delay = min(cap, base * 2 ** n)"


def test_identifier_after_a_citation_is_a_hint_not_a_quote() -> None:
    (c,) = extract_citations("see `pkg/retry.py:30` `compute_backoff`")
    assert c.quote is None


def test_quote_at_the_cited_line_is_grounded_and_shifted_quote_is_hallucinated() -> None:
    good = "- `pkg/retry.py:30`: `delay = min(cap, base * 2 ** n)`"
    near = "- `pkg/retry.py:33`: `delay  =  min(cap, base * 2 ** n)`"
    stale = "- `pkg/retry.py:39`: `delay = min(cap, base * 2 ** n)`"
    assert [r.status for r in check_citations(good, REPO)] == ["grounded"]
    assert [r.status for r in check_citations(near, REPO)] == ["grounded"]
    (r,) = check_citations(stale, REPO)
    assert r.status == "hallucinated" and "quoted code" in r.reason
    report = GroundingCounts.of(r.status for r in check_citations("\n".join([good, stale]), REPO))
    assert (report.grounded, report.hallucinated, report.rate) == (1, 1, 0.5)
