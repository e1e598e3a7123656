"""Anchors: lock held-out scenarios from a run, verify hashes and the Spearman gate."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import sqlite3
from pathlib import Path

import pytest
import yaml

from proctor.engine.grading.anchor_files import AnchorError, sha256_file
from proctor.engine.grading.anchor_plan import configured_lock, plan_lock
from proctor.engine.grading.anchors import check_before_run, lock_anchors, verify_anchors, verify_before_run
from proctor.scenarios.loader import load_suite
from proctor.store.read.reader import StoreReader
from tests.engine.judging_fixture import HELD_OUT, Fixture, build_run, scenario_doc


@pytest.fixture
async def locked(tmp_path: Path) -> Fixture:
    fx = await build_run(tmp_path)
    lock_anchors(fx.suite_dir, fx.db)
    return fx


def _lock(fx: Fixture) -> dict[str, object]:
    return json.loads((fx.suite_dir / "anchors" / "held-out.lock").read_text())


async def test_lock_freezes_transcripts_rubrics_and_gold_scores(locked: Fixture) -> None:
    lock = _lock(locked)
    files = lock["files"]
    assert isinstance(files, dict)
    anchors_dir = locked.suite_dir / "anchors"
    for rel, sha in files.items():
        assert sha256_file(anchors_dir / rel) == sha
    assert sorted({rel.split("/")[0] for rel in files}) == list(HELD_OUT)
    assert "s3/rubric.json" in files and "s3/gold.json" in files
    assert "s3/transcripts/baseline__offline_default__e0.json" in files
    assert lock["schema_version"] == 1 and lock["source_run"] == "fixture-run"
    assert lock["spearman_threshold"] == 0.85 and lock["judges"] == ["offline:lexical"]
    assert len(lock["anchors"]) == 8  # type: ignore[arg-type]

    gold = json.loads((anchors_dir / "s3" / "gold.json").read_text())
    with StoreReader(locked.db) as r:
        trial = next(t for t in r.trials() if (t.scenario, t.arm, t.epoch) == ("s3", "mcp", 1))
        quality = next(s.value for s in r.scores(trial.id) if s.name == "llm_quality")
        anchor_rows = r.anchors()
    assert gold["trials"]["s3/mcp/offline:default/1"]["llm_quality"] == quality
    transcript = json.loads((anchors_dir / "s3/transcripts/mcp__offline_default__e1.json").read_text())
    kinds = [e["kind"] for e in transcript["events"]]
    assert "final_answer" in kinds and "score" not in kinds and "judgment" not in kinds

    loaded = load_suite(locked.suite_dir)
    assert loaded.suite.anchors_lock is None  # suite.yaml is left alone: the lock is where it looks
    assert configured_lock(loaded) == locked.suite_dir / "anchors" / "held-out.lock"
    assert [a.scenario for a in anchor_rows] == list(HELD_OUT)
    assert all(len(a.sha256) == 64 and a.source_run == "fixture-run" for a in anchor_rows)


async def test_verify_passes_on_an_untouched_lock(locked: Fixture) -> None:
    result = await verify_anchors(locked.suite_dir)
    assert result.passed, result.message()
    assert result.gate is not None and result.gate.rho == pytest.approx(1.0)
    assert len(result.current) == 8
    await check_before_run(load_suite(locked.suite_dir))


async def test_tampering_any_locked_file_fails_and_names_it(locked: Fixture) -> None:
    files = _lock(locked)["files"]
    assert isinstance(files, dict)
    base = locked.suite_dir / "anchors"
    for rel, sha in files.items():
        path = base / rel
        original = path.read_bytes()
        flipped = bytes([original[0] ^ 0x01]) + original[1:]
        path.write_bytes(flipped)
        try:
            result = await verify_anchors(locked.suite_dir)
        finally:
            path.write_bytes(original)
        assert not result.passed
        assert [m.path for m in result.mismatches] == [rel]
        message = result.message()
        assert rel in message and sha in message and sha256_file_bytes(flipped) in message
    removed = base / next(iter(files))
    removed.unlink()
    result = await verify_anchors(locked.suite_dir)
    assert not result.passed and "missing" in result.message()


def sha256_file_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


async def test_a_rubric_change_that_moves_scores_fails_the_gate_with_rho(locked: Fixture) -> None:
    for s in HELD_OUT:
        doc = scenario_doc(s, rubric_terms=[f"delta_{s}"])
        (locked.suite_dir / "scenarios" / f"{s}.yaml").write_text(yaml.safe_dump(doc))
    result = await verify_anchors(locked.suite_dir)
    assert not result.mismatches
    assert result.gate is not None and result.gate.rho is not None and result.gate.rho < 0.85
    assert not result.passed
    assert f"ρ = {result.gate.rho:.4f}" in result.message()
    with pytest.raises(AnchorError) as refused:
        await check_before_run(load_suite(locked.suite_dir))
    assert "refusing to run" in str(refused.value) and "re-lock" in str(refused.value)
    assert f"{result.gate.rho:.4f}" in str(refused.value)
    lenient = await verify_anchors(locked.suite_dir, threshold=-1.0)
    assert lenient.passed


def test_verify_before_run_is_a_no_op_without_a_lock_and_sync(tmp_path: Path) -> None:
    fx = asyncio.run(build_run(tmp_path))
    verify_before_run(fx.loaded)  # no anchors_lock: nothing to check
    lock_anchors(fx.suite_dir, fx.db)
    (fx.suite_dir / "anchors" / "s4" / "gold.json").write_text("{}\n")
    with pytest.raises(AnchorError, match=re.escape("s4/gold.json: changed")):
        verify_before_run(load_suite(fx.suite_dir))


async def test_lock_needs_judged_trials_of_every_held_out_scenario(tmp_path: Path) -> None:
    fx = await build_run(tmp_path)
    conn = sqlite3.connect(fx.db)
    conn.execute(
        "DELETE FROM scores WHERE name = 'llm_quality' AND trial_id IN (SELECT id FROM trials WHERE scenario = 's4')"
    )
    conn.commit()
    conn.close()
    with pytest.raises(AnchorError, match="held-out scenario\\(s\\) s4"):
        lock_anchors(fx.suite_dir, fx.db)
    with pytest.raises(AnchorError, match="no anchors lock file"):
        await verify_anchors(fx.suite_dir)


async def test_lock_refuses_to_overwrite_a_folder_it_did_not_write(tmp_path: Path) -> None:
    fx = await build_run(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "s3").mkdir(parents=True)
    (elsewhere / "s3" / "notes.txt").write_text("mine")
    with pytest.raises(AnchorError, match="not an anchor folder"):
        lock_anchors(fx.suite_dir, fx.db, lock_path=elsewhere / "held-out.lock")
    assert (elsewhere / "s3" / "notes.txt").read_text() == "mine"


async def test_anchor_entries_must_point_at_locked_files(locked: Fixture) -> None:
    path = locked.suite_dir / "anchors" / "held-out.lock"
    lock = json.loads(path.read_text())
    first = next(iter(lock["anchors"]))
    lock["anchors"][first]["transcript"] = "../../run.db"
    path.write_text(json.dumps(lock))
    with pytest.raises(AnchorError, match="names a file the lock does not hash"):
        await verify_anchors(locked.suite_dir)


async def test_locking_writes_exactly_what_its_plan_says_and_leaves_the_suite_hash_alone(
    tmp_path: Path,
) -> None:
    fx = await build_run(tmp_path)
    suite_file = fx.suite_dir / "suite.yaml"
    before = (suite_file.read_bytes(), load_suite(fx.suite_dir).content_hash)
    plan = plan_lock(load_suite(fx.suite_dir), fx.db)
    said = "\n".join(plan.describe())
    assert f"writes 13 files under {fx.suite_dir / 'anchors'}/:" in said
    assert "suite.yaml is not changed: the suite finds anchors/held-out.lock by itself" in said
    assert plan.suite_line is None
    result = lock_anchors(fx.suite_dir, fx.db)
    written = sorted(
        p.relative_to(fx.suite_dir / "anchors").as_posix()
        for p in (fx.suite_dir / "anchors").rglob("*")
        if p.is_file()
    )
    assert written == sorted(plan.files()) and result.suite_line is None
    assert (suite_file.read_bytes(), load_suite(fx.suite_dir).content_hash) == before
    # Locked again, the earlier lock's folders are named as replaced, and still nothing else moves.
    again = plan_lock(load_suite(fx.suite_dir), fx.db)
    assert again.replaced == tuple(f"{s}/" for s in HELD_OUT) and "replaces the anchor folders" in "\n".join(
        again.describe()
    )


async def test_a_lock_written_elsewhere_says_it_points_suite_yaml_at_it(tmp_path: Path) -> None:
    fx = await build_run(tmp_path)
    elsewhere = tmp_path / "elsewhere" / "held-out.lock"
    plan = plan_lock(load_suite(fx.suite_dir), fx.db, elsewhere)
    line = plan.suite_line
    assert line is not None and line.startswith("anchors_lock: ") and "elsewhere/held-out.lock" in line
    assert f"suite.yaml gets the line  {line}  ({fx.suite_dir / 'suite.yaml'})" in plan.describe()
    lock_anchors(fx.suite_dir, fx.db, lock_path=elsewhere)
    assert line in (fx.suite_dir / "suite.yaml").read_text()
    assert configured_lock(load_suite(fx.suite_dir)) == fx.suite_dir / json.loads(line.split(": ", 1)[1])
