"""The grounding panel shows each arm's summed counts and their rate, never a rate of 0 for no citations."""

from __future__ import annotations

from proctor.store.scores import GroundingCounts
from proctor.widgets.grounding_panel import GroundingRow, grounding_text


def test_an_arm_shows_its_rate_and_counts_and_an_uncited_arm_a_dash() -> None:
    rows = [
        GroundingRow("mcp", GroundingCounts(grounded=3, unresolved=1), trials_scored=2, without_citations=0),
        GroundingRow("baseline", GroundingCounts(), trials_scored=1, without_citations=1, unreadable=1),
    ]
    lines = grounding_text(rows).plain.splitlines()
    assert lines[1].split() == ["mcp", "75%", "✓3", "?1", "✗0", "0/2", "uncited"]
    assert lines[2].split()[:2] == ["baseline", "—"] and "1 unreadable" in lines[2]


def test_no_rows_says_so() -> None:
    assert "no grounding scores yet" in grounding_text([]).plain
