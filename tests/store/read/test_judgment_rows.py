"""Judgment rows read back: a verdict stored again by the next pass is parsed once and shared."""

from __future__ import annotations

from pathlib import Path

from proctor.engine.reports.verdicts import Verdicts
from proctor.store.events import Judged
from proctor.store.read.reader import StoreReader
from proctor.store.write.writer import StoreWriter, TrialRow

AGREED = {"score": 0.5, "criteria": [{"name": "cap", "score": 0.5}], "rationale": "same"}
OTHER = {"score": 1.0, "rationale": "other"}


async def test_agreeing_passes_share_one_verdict_and_other_rows_keep_their_own(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    w = await StoreWriter.open(db, flush_interval_s=0.01)
    await w.create_run("r1", "suite", {})
    await w.add_trials("r1", [TrialRow("s", "a", "m", 0, 1)])
    for pass_no, verdict in enumerate([AGREED, AGREED, OTHER, AGREED, None, None], start=1):
        w.emit("r1", Judged(pass_no=pass_no, judge="offline:lexical", verdict=verdict), trial_id=1)
    await w.close()
    with StoreReader(db) as r:
        js = r.judgments()
    assert [j.verdict for j in js] == [AGREED, AGREED, OTHER, AGREED, None, None]
    assert js[0].verdict is js[1].verdict  # parsed once
    assert js[2].verdict is not js[1].verdict and js[3].verdict is not js[2].verdict
    verdicts = Verdicts()
    first = verdicts.of(js[0])
    assert first is not None and first.criteria[0].name == "cap"
    assert verdicts.of(js[1]) is first  # and checked once
    assert verdicts.of(js[4]) is None
