"""The JSON report writes each score's details as the store holds them, and says what it said
when it parsed them first: the same values, and the same md, html, csv and JUnit renderings.

The run is written by the real StoreWriter (a judged, scored run); the odd rows (NaN, a number
past 64 bits, bytes that are not UTF-8) are put in with sqlite3, as another writer could.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from proctor.engine.judges.offline import OfflineJudge
from proctor.engine.reports.junit import report_junit
from proctor.engine.reports.report import build_report, report_json
from proctor.engine.reports.report_csv import render_csv
from proctor.engine.reports.report_html import render_html
from proctor.engine.reports.report_markdown import render_markdown
from proctor.engine.reports.report_model import Report
from proctor.store.scores import UnreadableScore
from proctor.store.stored_json import StoredJson
from tests.engine.judging_fixture import build_run


@pytest.fixture(scope="module")
def scored_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    fx = asyncio.run(build_run(tmp_path_factory.mktemp("stored"), judges=[OfflineJudge()]))
    return fx.db


def _copy(db: Path, tmp_path: Path) -> Path:
    out = tmp_path / "run.db"
    shutil.copy(db, out)
    return out


def _score_rows(db: Path) -> list[tuple[int, str, str]]:
    with sqlite3.connect(db) as conn:
        return [
            (int(t), str(n), str(d)) for t, n, d in conn.execute("SELECT trial_id, name, details FROM scores")
        ]


def _parsed_first(report: Report) -> Report:
    """The report as it was built before: every score's details a dict."""
    for trial in report["trials"]:
        for stored in (trial.get("scores") or {}).values():
            if isinstance(stored["details"], StoredJson):
                stored["details"] = stored["details"].value()
    return report


def test_the_json_report_writes_each_scores_details_as_stored(scored_db: Path) -> None:
    rows = _score_rows(scored_db)
    assert len(rows) > 50
    out = report_json(build_report(scored_db)).decode()
    trials = {t["id"]: t for t in json.loads(out)["trials"]}
    for trial_id, name, text in rows:
        assert f'"details": {text}' in out, (trial_id, name)
        assert trials[trial_id]["scores"][name]["details"] == json.loads(text)


def test_every_format_says_what_it_said_with_the_details_parsed_first(scored_db: Path) -> None:
    stored, parsed = build_report(scored_db), _parsed_first(build_report(scored_db))
    assert any(
        isinstance(s["details"], StoredJson)
        for t in stored["trials"]
        for s in (t.get("scores") or {}).values()
    )
    assert json.loads(report_json(stored)) == json.loads(report_json(parsed))
    assert render_markdown(stored) == render_markdown(parsed)
    assert render_html(stored) == render_html(parsed)
    assert render_csv(stored) == render_csv(parsed)
    assert report_junit(stored) == report_junit(parsed)


def test_details_strict_json_refuses_are_parsed_and_the_report_stays_strict_json(
    scored_db: Path, tmp_path: Path
) -> None:
    db = _copy(scored_db, tmp_path)
    big = 2**70
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE scores SET details = ? WHERE name = 'efficiency' AND trial_id = 1",
            ('{"tokens": NaN, "wall_s": Infinity, "value": 0.5}',),
        )
        conn.execute(
            "UPDATE scores SET details = ? WHERE name = 'keywords' AND trial_id = 1", (f'{{"hits": {big}}}',)
        )

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in the report")

    report = json.loads(report_json(build_report(db)), parse_constant=refuse)
    scores = next(t for t in report["trials"] if t["id"] == 1)["scores"]
    assert scores["efficiency"]["details"] == {"tokens": None, "wall_s": None, "value": 0.5}
    assert scores["keywords"]["details"] == {"hits": big}  # written as stored, every digit


def test_details_that_are_not_utf8_make_the_score_unreadable_naming_it(
    scored_db: Path, tmp_path: Path
) -> None:
    db = _copy(scored_db, tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE scores SET details = CAST(X'7B2261223A2261FF227D' AS TEXT) "
            "WHERE name = 'claims' AND trial_id = 2"
        )
    with pytest.raises(UnreadableScore, match=r"trial 2: score claims: details are not UTF-8"):
        build_report(db)


def test_a_verdict_that_is_not_json_is_no_verdict_and_the_report_still_builds(
    scored_db: Path, tmp_path: Path
) -> None:
    db = _copy(scored_db, tmp_path)
    with sqlite3.connect(db) as conn:
        (first,) = conn.execute("SELECT min(id) FROM judgments").fetchone()
        conn.execute("UPDATE judgments SET verdict = '{not json' WHERE id = ?", (first,))
    report = json.loads(report_json(build_report(db)))  # it raised JSONDecodeError (exit 1) before
    passes = [p for t in report["trials"] for p in t["judgments"]]
    assert [p["verdict"] for p in passes].count("{not json") == 1
    assert render_markdown(build_report(db))


def test_unreadable_verdicts_are_counted_per_judge_in_a_note_naming_their_trials(
    scored_db: Path, tmp_path: Path
) -> None:
    intact = json.loads(report_json(build_report(scored_db)))
    assert not [n for n in intact["notes"] if "cannot be read" in n]
    db = _copy(scored_db, tmp_path)
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT id, trial_id, judge FROM judgments ORDER BY id LIMIT 2").fetchall()
        conn.execute("UPDATE judgments SET verdict = '{not json' WHERE id = ?", (rows[0][0],))
        conn.execute("UPDATE judgments SET verdict = '{\"score\": 7}' WHERE id = ?", (rows[1][0],))
    report = json.loads(report_json(build_report(db)))
    said = [n for n in report["notes"] if "cannot be read" in n]
    judges = sorted({judge for _id, _trial, judge in rows})
    assert len(said) == len(judges)
    for judge in judges:
        (note,) = [n for n in said if f"judge {judge} " in n]
        mine = [trial for _id, trial, j in rows if j == judge]
        assert note.startswith(f"{len(mine)} stored verdict(s) of judge {judge} cannot be read")
        assert f"on trial(s) {','.join(map(str, sorted(set(mine))))}:" in note
    assert all(n in render_markdown(build_report(db)) for n in said)
