"""The help page explains every symbol the screens draw, the concepts, then the screen's keys."""

from __future__ import annotations

from proctor.app.help_page import help_lines
from proctor.widgets.transcript_model import BADGE
from proctor.widgets.trial_matrix import STATUS_GLYPH


def test_every_status_glyph_and_citation_badge_is_explained_before_the_keys() -> None:
    text = [line.plain for line in help_lines([("v", "Claims & rubric", "TrialScreen")])]
    sections = [text.index(h) for h in ("LEGEND", "CONCEPTS")]
    keys = next(i for i, line in enumerate(text) if line.startswith("KEYS OF THIS SCREEN"))
    assert sections[0] < sections[1] < keys
    for status, glyph in STATUS_GLYPH.items():
        assert any(line.startswith(f" {glyph} {status}") for line in text[: sections[1]]), status
    for status, (glyph, _) in BADGE.items():
        assert any(f"{glyph}{status[0].upper()}" in line and status in line for line in text), status
    for concept in ("fairness", "adoption", "grounding", "TFS / TEFS", "pass, k/n", "judge σ"):
        assert any(line.startswith(f" {concept}") for line in text[sections[1] : keys]), concept
    assert any("v  Claims & rubric  (TrialScreen)" in line for line in text[keys:])
