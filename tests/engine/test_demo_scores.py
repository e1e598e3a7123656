"""The bundled demo tells a good MCP server from a stale one and from the baseline."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from proctor.engine.runs.options import RunOptions
from proctor.engine.runs.session import run_suite
from proctor.scenarios.demo import SUITE_DIR
from proctor.scenarios.loader import load_suite
from proctor.store.reader import StoreReader
from proctor.store.scores import (
    ADOPTION_BASELINE,
    DETAILS_MODEL,
    AdoptionDetails,
    FailureModeDetails,
    GroundingDetails,
    ScoreName,
)

pytestmark = pytest.mark.slow


async def test_demo_scores_separate_good_stale_and_baseline(tmp_path: Path) -> None:
    loaded = load_suite(SUITE_DIR)
    options = RunOptions(db=tmp_path / "demo.db", arms=["baseline", "codeintel", "codeintel_stale"])
    status = await run_suite(loaded, options)
    assert status == "finished"
    with StoreReader(options.db) as r:
        arm_of = {t.id: t.arm for t in r.trials()}
        scores = r.scores()
        judgments = r.judgments()
    fairness: dict[str, list[float]] = defaultdict(list)
    hallucinated: dict[str, int] = defaultdict(int)
    for s in scores:
        if s.name == ScoreName.FAIRNESS and s.value is not None:
            fairness[arm_of[s.trial_id]].append(s.value)
        if s.name == ScoreName.GROUNDING:
            hallucinated[arm_of[s.trial_id]] += s.parsed(GroundingDetails).counts.hallucinated
    mean = {arm: sum(v) / len(v) for arm, v in fairness.items()}
    assert len({round(v, 3) for v in mean.values()}) == 3, mean
    assert mean["codeintel"] > mean["baseline"] > mean["codeintel_stale"], mean
    assert hallucinated["codeintel_stale"] > 10 and hallucinated["codeintel"] == 0
    assert len(judgments) == 2 * len(arm_of)
    assert all(j.judge == "offline:lexical" and j.prompt_version and j.rubric_hash for j in judgments)
    modes = [
        s.parsed(FailureModeDetails).mode
        for s in scores
        if s.name == ScoreName.FAILURE_MODE and arm_of[s.trial_id] == "baseline"
    ]
    assert modes and "wrong_tool" not in modes, modes  # the baseline does not offer the gold tools
    adoption = {s.trial_id: s for s in scores if s.name == ScoreName.ADOPTION}
    for tid, arm in arm_of.items():
        if arm == "baseline":
            assert (
                adoption[tid].value is None and adoption[tid].parsed(AdoptionDetails).na == ADOPTION_BASELINE
            )
        else:
            assert adoption[tid].value is not None
    # Every score of a real run fits its score's details model, and the run writes each kind.
    for s in scores:
        s.parsed(DETAILS_MODEL[s.name])
    assert {s.name for s in scores} == set(ScoreName) - {ScoreName.KEY_POINTS}
