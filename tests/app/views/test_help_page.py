"""The help page lists the screen's keys first, then explains every symbol the screens draw and the concepts."""

from __future__ import annotations

from proctor.app.screens.dashboard import DashboardScreen
from proctor.app.screens.dialogs import HelpScreen
from proctor.app.views.help_page import help_lines
from proctor.app.views.key_names import KeyRow, key_label, key_rows
from proctor.widgets.lines_view import LinesView
from proctor.widgets.transcript_model import BADGE
from proctor.widgets.trial_matrix import STATUS_GLYPH
from tests.app.fixture_store import Fixture
from tests.app.helpers import console, screen_text, wait_until


def test_the_screens_keys_come_first_then_every_status_glyph_badge_and_concept() -> None:
    text = [line.plain for line in help_lines([KeyRow(("v",), "Claims & rubric", "open and show")])]
    sections = [text.index(h) for h in ("LEGEND", "CONCEPTS")]
    assert text[0].startswith("KEYS OF THIS SCREEN")
    assert text[1] == " open and show" and text[2].endswith("v  Claims & rubric")
    assert sections[0] < sections[1]
    for status, glyph in STATUS_GLYPH.items():
        assert any(line.startswith(f" {glyph} {status}") for line in text[sections[0] : sections[1]]), status
    for status, (glyph, _) in BADGE.items():
        assert any(f"{glyph}{status[0].upper()}" in line and status in line for line in text), status
    for concept in ("fairness", "adoption", "grounding", "TFS / TEFS", "pass, k/n", "judge σ"):
        assert any(line.startswith(f" {concept}") for line in text[sections[1] :]), concept


def test_keys_are_named_as_people_type_them() -> None:
    assert key_label("exclamation_mark") == "!"
    assert key_label("left_square_bracket") == "["
    assert key_label("right_square_bracket") == "]"
    assert key_label("question_mark") == "?"
    assert key_label("ctrl+d") == "ctrl+d"
    assert key_label("pagedown") == "page down"
    assert key_label("G") == "G"
    assert key_label("equals_sign") == "="
    assert key_label("slash") == "/" and key_label("colon") == ":"


def test_an_action_is_listed_once_with_all_its_keys_under_what_it_does() -> None:
    rows = key_rows(
        [
            ("up", "move(-1, 0)", "Up"),
            ("k", "move(-1, 0)", "Up"),
            ("exclamation_mark", "failures_only", "Failures only"),
            ("question_mark", "help", "Help"),
            ("right_square_bracket", "failure(1)", "Next failure"),
        ]
    )
    assert rows == [
        KeyRow(("↑", "k"), "Up", "move"),
        KeyRow(("]",), "Next failure", "move"),
        KeyRow(("!",), "Failures only", "find and filter"),
        KeyRow(("?",), "Help", "screens"),
    ]


async def test_help_on_the_dashboard_shows_typed_keys_grouped_once_and_covers_the_screen(fx: Fixture) -> None:
    async with console(fx.db, size=(100, 30)) as (app, pilot):
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="help")
        screen = app.screen
        assert isinstance(screen, HelpScreen)
        lines = [line.plain for line in screen.query_one("#help-body", LinesView).lines]
        assert lines[0].startswith("KEYS OF THIS SCREEN")
        keys = lines[: lines.index("LEGEND")]
        # This screen's keys are what ? is pressed for: on the first page, before any legend.
        shown = screen_text(app)
        assert "Open trial" in shown and "Next failure" in shown and "LEGEND" not in shown
        body = "\n".join(keys)
        for raw in ("exclamation_mark", "square_bracket", "question_mark", "Screen)", "(TrialMatrix)"):
            assert raw not in body, raw
        assert any(line.endswith("!  Failures only") for line in keys)
        assert any(line.endswith("]  Next failure") for line in keys)
        assert any(line.endswith("[  Prev failure") for line in keys)
        descriptions = [line.split("  ")[-1] for line in keys if "  " in line.strip()]
        assert len(descriptions) == len(set(descriptions)), descriptions
        groups = [line.strip() for line in keys if line.startswith("  ") is False and line.startswith(" ")]
        assert groups[:2] == ["move", "open and show"], groups
        # Nothing of the dashboard shows around or beside the help.
        assert "s1-intro" not in screen_text(app) and "trials done" not in screen_text(app)
        await pilot.press("escape")
        assert isinstance(app.screen, DashboardScreen)
