"""Before the first trial, the run starts its shared servers and says how many are ready."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.engine.runs.options import RunOptions
from proctor.engine.runs.session import run_suite
from proctor.scenarios.demo import SUITE_DIR
from proctor.scenarios.loader import load_suite
from proctor.store.events import ServersStarting
from proctor.store.read.reader import StoreReader

pytestmark = pytest.mark.slow


async def test_shared_servers_start_before_the_first_trial_and_are_counted(tmp_path: Path) -> None:
    loaded = load_suite(SUITE_DIR)
    scenario = loaded.scenarios[0].id
    options = RunOptions(
        db=tmp_path / "run.db", arms=["baseline", "codeintel+distractors"], scenarios=[scenario]
    )
    assert await run_suite(loaded, options, score=False) == "finished"
    with StoreReader(options.db) as r:
        events = r.events_after(0, limit=100_000)
    kinds = [e.kind for e in events]
    startup = [e.event for e in events if isinstance(e.event, ServersStarting)]
    assert kinds.index("servers_starting") < kinds.index("trial_started")
    assert max(i for i, k in enumerate(kinds) if k == "servers_starting") < kinds.index("trial_started")
    assert [(s.ready, s.failed) for s in startup] == [(i, 0) for i in range(5)]
    assert all(s.total == 4 for s in startup)  # codeintel and its three distractors; the baseline has none
    assert sorted(startup[0].waiting) == ["codeintel", "handbook", "tickets", "weather"]
    assert startup[-1].waiting == []
    assert all(e.trial_id is None for e in events if e.kind == "servers_starting")
