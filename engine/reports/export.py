"""Export a run database's events and scores as JSON Lines or CSV, in one schema.

Every row has the columns of ``COLUMNS`` (schema ``proctor-export/1``):

* ``record`` is ``event`` (one per stored event, in id order, abandoned attempts included and
  flagged) or ``score`` (one per row of the scores table: the latest value of each score).
* ``run_id``; ``trial_id``, ``scenario``, ``arm``, ``model``, ``epoch`` (empty for run-level
  events); ``attempt``, ``event_id``, ``ts`` (events only), ``abandoned``.
* ``kind``: the event kind (``score`` for score rows). ``name``: the score's name, the judge of a
  judgment, or the tool of a tool call/result. ``value``: the score, or a judgment's verdict score.
* ``data``: the event's payload without ``kind``, or the score's details; a JSON object in
  JSONL, its JSON text in CSV.

Every string passes through ``engine.secrets.redact``, so a key echoed into a tool result or an
error message is not exported. In CSV, empty cells are nulls, booleans are ``true``/``false``,
and a text cell that a spreadsheet would read as a formula (``= + - @``, tab, CR) is prefixed
with ``'``.
"""

from __future__ import annotations

import csv
import json
import os
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, TextIO

from proctor.engine.reports.redacted_tree import redacted_batch
from proctor.store.display_text import escape_in_json, sanitize
from proctor.store.events import Judged, Scored, ToolCall, ToolResult
from proctor.store.read.reader import ScoreRecord, StoredEvent, StoreReader, TrialRecord, read_only_uri

SCHEMA = "proctor-export/1"
COLUMNS: tuple[str, ...] = (
    "schema",
    "record",
    "run_id",
    "trial_id",
    "scenario",
    "arm",
    "model",
    "epoch",
    "attempt",
    "event_id",
    "ts",
    "kind",
    "name",
    "value",
    "abandoned",
    "data",
)
Format = Literal["jsonl", "csv", "otel"]
_BATCH = 5000
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _name_and_value(stored: StoredEvent) -> tuple[str | None, float | None]:
    ev = stored.event
    if isinstance(ev, Scored):
        return ev.name, ev.value
    if isinstance(ev, Judged):
        score = (ev.verdict or {}).get("score")
        if isinstance(score, int | float) and not isinstance(score, bool):
            return ev.judge, float(score)
        return ev.judge, None
    if isinstance(ev, ToolCall | ToolResult):
        return ev.tool, None
    return None, None


def _trial_columns(trial: TrialRecord | None) -> dict[str, Any]:
    if trial is None:
        return {"trial_id": None, "scenario": None, "arm": None, "model": None, "epoch": None}
    return {
        "trial_id": trial.id,
        "scenario": trial.scenario,
        "arm": trial.arm,
        "model": trial.model,
        "epoch": trial.epoch,
    }


def _trial_columns_by_id(reader: StoreReader) -> dict[int, dict[str, Any]]:
    """Each trial's identifying columns, read row by row: never every trial's whole record
    (answers included) at once, which made the export's memory grow with the run."""
    conn = sqlite3.connect(read_only_uri(reader.path), uri=True)
    try:
        conn.execute("PRAGMA busy_timeout=5000")
        names: dict[str, str] = {}  # one copy of each scenario, arm and model name
        return {
            tid: {
                "trial_id": tid,
                "scenario": names.setdefault(scenario, scenario),
                "arm": names.setdefault(arm, arm),
                "model": names.setdefault(model, model),
                "epoch": epoch,
            }
            for tid, scenario, arm, model, epoch in conn.execute(
                "SELECT id, scenario, arm, model, epoch FROM trials ORDER BY id"
            )
        }
    finally:
        conn.close()


def export_rows(reader: StoreReader) -> Iterator[dict[str, Any]]:
    """Every export row of the database, events first (by id), then scores (by trial, name).

    Streams: events are read ``_BATCH`` at a time and scores one trial at a time, each chunk
    redacted and handed on before the next is read, so memory stays flat however large the run.
    Only the trials' few identifying columns are held for the whole export.
    """
    run = reader.run()
    run_id = run.id if run else ""
    trials = _trial_columns_by_id(reader)
    after = 0
    while True:
        batch = reader.events_after(after, _BATCH)
        yield from redacted_batch([_event_row(run_id, trials, stored) for stored in batch])
        if len(batch) < _BATCH:
            break
        after = batch[-1].id
    # The scores table references trials (foreign key), so walking the trials in id order and
    # reading each one's scores by name gives exactly the rows of ``ORDER BY trial_id, name``.
    pending: list[dict[str, Any]] = []
    for trial_id in sorted(trials):
        pending.extend(_score_row(run_id, trials[trial_id], score) for score in reader.scores(trial_id))
        if len(pending) >= _BATCH:
            yield from redacted_batch(pending)
            pending = []
    yield from redacted_batch(pending)


def _score_row(run_id: str, columns: dict[str, Any], score: ScoreRecord) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "record": "score",
        "run_id": run_id,
        **columns,
        "attempt": None,
        "event_id": None,
        "ts": None,
        "kind": "score",
        "name": score.name,
        "value": score.value,
        "abandoned": False,
        "data": score.details,
    }


_NO_TRIAL = _trial_columns(None)


def _event_row(run_id: str, trials: dict[int, dict[str, Any]], stored: StoredEvent) -> dict[str, Any]:
    name, value = _name_and_value(stored)
    return {
        "schema": SCHEMA,
        "record": "event",
        "run_id": run_id,
        **(trials.get(stored.trial_id, _NO_TRIAL) if stored.trial_id is not None else _NO_TRIAL),
        "attempt": stored.attempt,
        "event_id": stored.id,
        "ts": stored.ts,
        "kind": stored.kind,
        "name": name,
        "value": value,
        "abandoned": stored.abandoned,
        "data": stored.event.model_dump(mode="json", exclude={"kind"}),
    }


def write_jsonl(rows: Iterator[dict[str, Any]], out: TextIO) -> int:
    n = 0
    for row in rows:
        out.write(escape_in_json(json.dumps(row, ensure_ascii=False, sort_keys=False)) + "\n")
        n += 1
    return n


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return escape_in_json(json.dumps(value, ensure_ascii=False, sort_keys=True))
    if isinstance(value, str):  # names: cleaned as the console shows them (``cat`` must be safe)
        text = " ".join(sanitize(value).split("\n"))
        return "'" + text if text.startswith(_FORMULA_START) else text
    return str(value)


def write_csv(rows: Iterator[dict[str, Any]], out: TextIO) -> int:
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    n = 0
    for row in rows:
        writer.writerow([_csv_cell(row[c]) for c in COLUMNS])
        n += 1
    return n


def export_run(db: Path, fmt: Format, out: TextIO) -> int:
    """Write the export of ``db`` to ``out``; return the number of rows (traces for ``otel``)."""
    if fmt == "otel":
        from proctor.engine.reports.otel_export import export_otel

        return export_otel(db, out)
    with StoreReader(db) as reader:
        rows = export_rows(reader)
        return write_jsonl(rows, out) if fmt == "jsonl" else write_csv(rows, out)


def export_to_file(db: Path, fmt: Format, path: Path) -> int:
    """Export into ``path`` atomically: a failed export leaves no partial file behind."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            n = export_run(db, fmt, f)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return n


__all__ = [
    "COLUMNS",
    "SCHEMA",
    "export_rows",
    "export_run",
    "export_to_file",
    "write_csv",
    "write_jsonl",
]
