"""The dashboard at the sizes people use: a compact matrix with every arm and its Δ at 100
columns, full cells across the width at 160, and nothing cut without an ellipsis."""

from __future__ import annotations

import re
from pathlib import Path

from proctor.widgets.trial_matrix import TrialMatrix
from tests.app.helpers import console, screen_text, wait_until
from tests.app.wide_fixture import ARMS, SCENARIOS

# A number cut at the right edge of a line: "-0.4" or "0." with nothing after it.
CUT_NUMBER = re.compile(r"(?<![\d.])[+\-±]?\d\.\d?$")


def matrix_lines(text: str) -> list[str]:
    lines = text.splitlines()
    return [line for line in lines if any(s[:10] in line for s in SCENARIOS) and " / " not in line]


async def test_at_100_columns_the_compact_matrix_shows_every_arm_and_its_delta(wide: Path) -> None:
    async with console(wide, size=(100, 30)) as (app, pilot):
        await wait_until(pilot, lambda: "worker-pool" in screen_text(app), what="matrix")
        matrix = app.screen.query_one(TrialMatrix)
        assert matrix.model.compact
        assert matrix.hidden_columns() == (0, 0)
        rows = matrix_lines(screen_text(app))
        assert len(rows) == len(SCENARIOS)
        for line in rows:
            assert len(re.findall(r"[✓✗] \d\.\d\d", line)) == len(ARMS), line
            assert len(re.findall(r"[+\-±]\d\.\d\d", line)) == len(ARMS) - 1, line
            assert not CUT_NUMBER.search(line.rstrip()), line
        text = screen_text(app)
        assert "±0.00" in text and "-0.00" not in text and "+0.00" not in text


async def test_a_cut_arm_name_ends_in_an_ellipsis_and_the_selected_line_names_it_whole(wide: Path) -> None:
    async with console(wide, size=(100, 30)) as (app, pilot):
        await pilot.press("l", "l")
        text = screen_text(app)
        header = next(line for line in text.splitlines() if "baseline" in line and "codeintel" in line)
        assert "codeintel+distractors" not in header and "codeintel+" in header and "…" in header
        assert "backoff-callers / codeintel+distractors / offline:default" in text


async def test_at_160_columns_the_matrix_takes_the_width_with_full_cells(wide: Path) -> None:
    async with console(wide, size=(160, 50)) as (app, pilot):
        await wait_until(pilot, lambda: "worker-pool" in screen_text(app), what="matrix")
        matrix = app.screen.query_one(TrialMatrix)
        assert not matrix.model.compact and matrix.size.width == 160
        assert matrix.hidden_columns() == (0, 0)
        header = next(
            line for line in screen_text(app).splitlines() if "baseline" in line and "codeintel" in line
        )
        for arm in ARMS:
            assert arm in header
        for line in matrix_lines(screen_text(app)):
            assert len(re.findall(r"[✓✗] (passed|failed)\s+\d\.\d\d", line)) == len(ARMS), line


async def test_too_narrow_for_every_arm_the_matrix_scrolls_by_whole_columns(wide: Path) -> None:
    async with console(wide, size=(60, 24)) as (app, pilot):
        matrix = app.screen.query_one(TrialMatrix)
        left, right = matrix.hidden_columns()
        assert left == 0 and right > 0
        assert f"{right}▶ more" in screen_text(app)
        for _ in ARMS:
            await pilot.press("l")
            for line in matrix_lines(screen_text(app)):
                assert not CUT_NUMBER.search(line.rstrip()), line
        assert matrix.hidden_columns()[1] == 0
        assert "codeintel_remote" in screen_text(app)


async def test_at_160x50_the_demo_uses_the_width_and_the_rows_below_the_matrix(demo: Path) -> None:
    """The demo at 160x50 drew its matrix in 100 of 160 columns and left ~22 rows empty."""
    async with console(demo, size=(160, 50)) as (app, pilot):
        await wait_until(pilot, lambda: "why trials failed" in screen_text(app), what="the tall panels")
        await pilot.press(*"jjjjjjj", *"lll")
        await wait_until(pilot, lambda: "trial #24 · scores" in screen_text(app), what="the selected trial")
        lines = screen_text(app).splitlines()
        rows = [line for line in lines if line.startswith((" sqlite-claim", " dead-letter"))]
        assert rows and all(len(line.rstrip()) >= 140 for line in rows), rows  # was 100
        text = "\n".join(lines)
        assert "why trials failed · 23 of 40" in text
        assert "17 failed on judged claims coverage" in text and "6 failed on grounding" in text
        assert "codeintel_stale 6" in text
        assert "citations ✓7 ?0 ✗20" in text and "checks: claims 3/3" in text
        blank = [i for i, line in enumerate(lines) if not line.strip()]
        assert len(blank) <= 12, f"{len(blank)} empty rows:\n{text}"
    async with console(demo, size=(100, 30)) as (app, pilot):  # no room: the extra panels stay out
        assert "why trials failed" not in screen_text(app)
