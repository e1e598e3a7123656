"""Resuming never leaves a finished trial unscored, keeps the run's own matrix, and refuses another suite."""

from __future__ import annotations

import shutil
import sqlite3
import sys
from pathlib import Path

import pytest
import yaml

from proctor.engine.runs.agent_loop import DEFAULT_SYSTEM_PROMPT
from proctor.engine.runs.options import RunError, RunOptions, check_resumable
from proctor.engine.runs.session import run_suite
from proctor.engine.runs.trial_seam import TrialContext
from proctor.scenarios.loader import load_suite
from proctor.store.events import AgentBrief, Judged, ServerConnected, TrialStarted
from proctor.store.operator_commands import enqueue_operator_command
from proctor.store.read.reader import StoreReader, TrialRecord
from proctor.store.write.writer import StoreWriter


def _suite(root: Path) -> Path:
    (root / "scenarios").mkdir(parents=True)
    suite = {
        "name": "weather",
        "mcpServers": {
            "weather": {"command": sys.executable, "args": ["-m", "proctor.scenarios.demo.servers.weather"]}
        },
        "arms": {"baseline": {"baseline": True}, "weather": {"servers": ["weather"]}},
        "models": ["offline:default"],
        "epochs": 1,
        "judge": {"passes": 2},
    }
    (root / "suite.yaml").write_text(yaml.safe_dump(suite))
    for sid in ("oslo", "lima"):
        (root / "scenarios" / f"{sid}.yaml").write_text(
            yaml.safe_dump(
                {  # a claim, so that the offline judge has something to judge (judges.base.can_judge)
                    "id": sid,
                    "prompt": f"What is the weather in {sid}?",
                    "keywords": {"required": [sid]},
                    "claims": [f"It gives the weather in {sid}."],
                }
            )
        )
    return root


def _passes(db: Path) -> dict[int, list[int]]:
    with StoreReader(db) as r:
        out: dict[int, list[int]] = {t.id: [] for t in r.trials()}
        for j in r.judgments():
            if j.judge == "offline:lexical":
                out[j.trial_id].append(j.pass_no)
    return {k: sorted(v) for k, v in out.items()}


async def test_resume_scores_every_finished_trial_an_interruption_left_unscored(tmp_path: Path) -> None:
    loaded = load_suite(_suite(tmp_path / "suite"))
    db = tmp_path / "run.db"
    assert await run_suite(loaded, RunOptions(db=db, epochs=2, arms=["baseline"]), score=False) == "finished"
    with StoreReader(db) as r:
        trials = r.trials()
        assert r.scores() == [] and len(trials) == 4
    first = trials[0]
    async with await StoreWriter.open(db) as w:  # the process died after the first of two judge passes
        w.emit("x", Judged(pass_no=1, judge="offline:lexical", verdict={"score": 0.5}), trial_id=first.id,
               attempt=first.attempt)  # fmt: skip

    assert await run_suite(loaded, RunOptions(db=db, resume=True)) == "finished"

    with StoreReader(db) as r:
        after = r.trials()
        passed = {s.trial_id for s in r.scores() if s.name == "passed"}
        config = r.run()
    assert [(t.id, t.attempt) for t in after] == [(t.id, t.attempt) for t in trials], "nothing ran again"
    assert passed == {t.id for t in trials}
    assert _passes(db) == {t.id: [1, 2] for t in trials}, "topped up to the suite's 2 passes, never a third"
    assert config is not None and config.config["arms"] == ["baseline"] and config.config["epochs"] == 2


async def test_resume_keeps_the_runs_arms_and_epochs_unless_overridden(tmp_path: Path) -> None:
    loaded = load_suite(_suite(tmp_path / "suite"))
    db = tmp_path / "run.db"
    await run_suite(loaded, RunOptions(db=db, epochs=2, arms=["baseline"], scenarios=["oslo"]), score=False)
    await run_suite(loaded, RunOptions(db=db, resume=True), score=False)
    with StoreReader(db) as r:
        assert sorted((t.arm, t.epoch) for t in r.trials()) == [("baseline", 0), ("baseline", 1)]
    await run_suite(loaded, RunOptions(db=db, resume=True, arms=["weather"]), score=False)
    with StoreReader(db) as r:
        assert sorted(t.arm for t in r.trials()) == ["baseline", "baseline", "weather", "weather"]


async def test_a_run_resumes_only_with_its_own_suite(tmp_path: Path) -> None:
    root = _suite(tmp_path / "suite")
    loaded = load_suite(root)
    db = tmp_path / "run.db"
    await run_suite(loaded, RunOptions(db=db, arms=["baseline"], scenarios=["oslo"]), score=False)
    with StoreReader(db) as r:
        run = r.run()
    assert run is not None and run.config["suite_dir"] == str(root.resolve())

    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    assert check_resumable(db, load_suite(copy), resume=True) is not None, (
        "same content elsewhere is the same suite"
    )

    other = tmp_path / "other"
    shutil.copytree(root, other)
    (other / "scenarios" / "oslo.yaml").write_text(
        yaml.safe_dump({"id": "oslo", "prompt": "x", "keywords": {"required": ["y"]}})
    )
    with pytest.raises(RunError, match="is not the suite the run used"):
        check_resumable(db, load_suite(other), resume=True)
    with pytest.raises(RunError, match="pass --resume"):
        check_resumable(db, loaded, resume=False)

    (root / "scenarios" / "lima.yaml").write_text(
        yaml.safe_dump({"id": "lima", "prompt": "z", "keywords": {"required": ["z"]}})
    )
    with pytest.raises(RunError, match="has changed since the run started"):
        await run_suite(load_suite(root), RunOptions(db=db, resume=True), score=False)


def test_a_relative_suite_path_is_recorded_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _suite(tmp_path / "suite")
    monkeypatch.chdir(tmp_path)
    assert load_suite("suite").root == (tmp_path / "suite").resolve()


async def test_a_new_attempt_starts_with_no_judgments_and_no_scores(tmp_path: Path) -> None:
    loaded = load_suite(_suite(tmp_path / "suite"))
    db = tmp_path / "run.db"
    await run_suite(loaded, RunOptions(db=db, arms=["baseline"], scenarios=["oslo"]))
    with StoreReader(db) as r:
        (t,) = r.trials()
        assert len(r.judgments(t.id)) == 2 and r.scores(t.id)
    async with await StoreWriter.open(db) as w:
        w.emit("x", TrialStarted(scenario=t.scenario, arm=t.arm, model=t.model, epoch=t.epoch, seed=t.seed,
                                 attempt=t.attempt + 1), trial_id=t.id, attempt=t.attempt + 1)  # fmt: skip
    with StoreReader(db) as r:
        assert r.judgments(t.id) == [] and r.scores(t.id) == []
    conn = sqlite3.connect(db)
    try:
        stored = conn.execute("SELECT attempt FROM judgments WHERE trial_id = ?", (t.id,)).fetchall()
    finally:
        conn.close()
    assert stored == [(t.attempt,), (t.attempt,)], "the old attempt's verdicts stay stored, out of view"


async def test_a_command_sent_as_the_run_ends_is_answered_never_left_pending(tmp_path: Path) -> None:
    loaded = load_suite(_suite(tmp_path / "suite"))
    db = tmp_path / "run.db"

    async def ask_at_the_end(ctx: TrialContext, record: TrialRecord) -> None:
        enqueue_operator_command(db, "rejudge", {"trial_ids": [record.id], "passes": 1})

    options = RunOptions(db=db, arms=["baseline"], scenarios=["oslo"])
    assert await run_suite(loaded, options, extra_hooks=[ask_at_the_end]) == "finished"
    conn = sqlite3.connect(db)
    try:
        statuses = [r[0] for r in conn.execute("SELECT status FROM commands")]
    finally:
        conn.close()
    assert statuses == ["done"]


async def test_a_trial_is_on_disk_before_the_engine_counts_it_finished(tmp_path: Path) -> None:
    loaded = load_suite(_suite(tmp_path / "suite"))
    db = tmp_path / "run.db"
    on_disk: list[str] = []

    def counted(record: TrialRecord) -> None:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            on_disk.append(conn.execute("SELECT status FROM trials WHERE id = ?", (record.id,)).fetchone()[0])
        finally:
            conn.close()

    await run_suite(loaded, RunOptions(db=db, epochs=3), score=False, on_progress=counted)
    assert on_disk == ["finished"] * 12, "a kill -9 at that moment would lose a trial already counted"


async def test_each_trial_records_what_the_agent_was_given_with_the_system_prompt_stored_once(
    tmp_path: Path,
) -> None:
    loaded = load_suite(_suite(tmp_path / "suite"))
    db = tmp_path / "run.db"
    await run_suite(loaded, RunOptions(db=db, epochs=2), score=False)
    with StoreReader(db) as r:
        briefs = [e.event for e in r.events_after(0, limit=100_000) if isinstance(e.event, AgentBrief)]
        servers = [e.event for e in r.events_after(0, limit=100_000) if isinstance(e.event, ServerConnected)]
        assert len(briefs) == len(r.trials()) == 8  # 2 scenarios x 2 arms x 2 epochs
        assert {b.model for b in briefs} == {"offline:default"}
        assert all(b.parameters == {"policy": "default", "deterministic": True} for b in briefs)
        assert {tuple(b.prompts) for b in briefs} == {tuple(s.prompts()) for s in loaded.scenarios}
        (sha,) = {b.system_prompt_sha256 for b in briefs}
        stored = r.blob(sha)
        assert stored is not None and stored[1].decode() == DEFAULT_SYSTEM_PROMPT
    assert sqlite3.connect(db).execute("SELECT count(*) FROM blobs").fetchone() == (1,)
    assert len(servers) == 4 and {s.server for s in servers} == {"weather"}, (
        "one per trial of the weather arm"
    )
