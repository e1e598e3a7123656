"""What a headless run prints at its end: the table per arm, then why trials failed.

The run is the real demo (``proctor demo --headless``), offline, as a new user's first command.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from proctor.app.cli import main
from proctor.app.headless import FAILED_SHOWN, summary_table

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    db = tmp_path_factory.mktemp("headless") / "demo.db"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["demo", "--headless", "--db", str(db)])
    assert code == 0
    return db, out.getvalue()


def test_at_100_columns_every_arm_name_is_whole(demo: tuple[Path, str]) -> None:
    db, _ = demo
    console = Console(width=100, record=True, file=io.StringIO())
    console.print(summary_table(db))
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 100
    for arm in ("baseline", "codeintel", "codeintel+distractors", "codeintel_stale"):
        assert re.search(rf"│ {re.escape(arm)} +│", text), f"{arm} is cut:\n{text}"
    assert "codei…" not in text
    assert "model offline:default" in text.splitlines()[0]  # one model: named once, not on every row


def test_the_summary_says_why_trials_failed_with_the_rule_and_its_numbers(demo: tuple[Path, str]) -> None:
    db, out = demo
    assert f"why trials failed ({FAILED_SHOWN} of 23; proctor report {db} --format md lists all 23)" in out
    lines = [line for line in out.splitlines() if line.startswith("  #")]
    assert len(lines) == FAILED_SHOWN
    assert "  #1 retry-delay-cap / baseline: failed on judged claims coverage 0.50 < 0.75" in lines
    assert any(
        "/ codeintel_stale: failed on grounding: 2 of 36 citations grounded (6%) < "
        "scoring.pass_requires_grounding 80%" in line
        for line in lines
    )
