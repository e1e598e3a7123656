"""Imported trajectories are re-judged even when their arm is not defined by the imported suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.engine.grading.rejudge import rejudge_db
from proctor.engine.reports.report import build_report
from proctor.engine.runs.imported_runs import save_import
from proctor.scenarios.importers.livemcpbench import read_livemcpbench
from proctor.store.read.reader import StoreReader
from proctor.store.scores import ScoreName, details_model

FIXTURES = Path(__file__).parents[3] / ".." / "shared" / "fixtures" / "livemcpbench"


async def test_imported_trials_without_their_arm_in_the_suite_are_rejudged(tmp_path: Path) -> None:
    if not FIXTURES.is_dir():
        pytest.skip(f"shared fixtures absent: {FIXTURES}")
    imported = read_livemcpbench(
        FIXTURES / "annotated_data" / "all_annotations.json",
        trajectories=[
            FIXTURES / "baseline" / "annotation" / "claude-sonnet-4-20250514_Qwen3-Embedding-0.6B.json"
        ],
    )
    saved = await _save(imported, tmp_path / "suite")
    assert saved is not None
    results = await rejudge_db(saved, passes=1)
    assert results and all(not r.skipped for r in results), [r.skipped for r in results]
    with StoreReader(saved) as r:
        offline = [j for j in r.judgments() if j.judge == "offline:lexical"]
        humans = [j for j in r.judgments() if "human" in j.source]
        scores = r.scores()
    assert len(offline) == len(results) and humans
    # Upstream's annotations become key points; every score of the re-judged import fits its model.
    assert ScoreName.KEY_POINTS in {s.name for s in scores}
    for s in scores:
        s.parsed(details_model(s.name))


async def test_proctors_judge_does_not_join_the_imported_panels_majority(tmp_path: Path) -> None:
    """Re-judging an imported LiveMCPBench run must keep upstream's majority of its 10 judges."""
    if not FIXTURES.is_dir():
        pytest.skip(f"shared fixtures absent: {FIXTURES}")
    db = await _save(read_livemcpbench(FIXTURES), tmp_path / "suite")
    assert db is not None
    await rejudge_db(db, passes=1)
    judges = build_report(db)["judges"]
    majority = judges["panel"]["majority"]
    assert majority["source"] == "livemcpbench" and len(majority["judges"]) == 10
    assert "offline:lexical" in judges["panel"]["judges"] and "offline:lexical" not in majority["judges"]
    agreement = {a["judge"]: a["percent"] for a in judges["human"]["agreement"]}
    assert agreement["panel majority"] == 83.33  # NOTE.md of the shared subset
    assert "offline:lexical" in agreement


async def _save(imported: object, out: Path) -> Path | None:
    import asyncio

    saved = await asyncio.to_thread(save_import, imported, out)  # type: ignore[arg-type]
    return saved.db
