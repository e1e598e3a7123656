"""The baseline's grep runs the agent's pattern in a linear-time engine: no pattern stalls a run."""

from __future__ import annotations

from pathlib import Path

from proctor.engine.tools.baseline import BaselineToolbox
from proctor.scenarios.repo import PinnedRepo, materialize


def _repo(tmp_path: Path) -> PinnedRepo:
    src = tmp_path / "src"
    src.mkdir()
    (src / "evil.txt").write_text("a" * 50_000 + "!\n")  # (a+)+$ backtracks exponentially on this in `re`
    (src / "ok.py").write_text("def compute_backoff(attempt):\n    return attempt\n")
    return PinnedRepo(tmp_path / "git", materialize(src, tmp_path / "git"))


async def test_a_catastrophic_pattern_answers_instead_of_stalling(tmp_path: Path) -> None:
    box = BaselineToolbox(_repo(tmp_path))
    outcome = await box.call("grep", {"pattern": "(a+)+$", "regex": True})
    assert not outcome.is_error and outcome.content == "no matches"
    found = await box.call("grep", {"pattern": "COMPUTE_back", "regex": False})
    assert found.content.startswith("ok.py:1:")


async def test_a_pattern_re2_cannot_run_is_a_tool_error_that_says_why(tmp_path: Path) -> None:
    box = BaselineToolbox(_repo(tmp_path))
    outcome = await box.call("grep", {"pattern": r"(a)\1", "regex": True})
    assert outcome.is_error and "invalid regex" in outcome.content and "no backreferences" in outcome.content
