"""The report's "drift" section: a replay run's calls against its recording (``engine.drift``).

Present only in the report of a replay run (``proctor replay``). JSON holds the source, the
counts per server and in total, and every call with its status and, when it drifted, what
changed (paths of changed JSON leaves with both values, or a bounded unified text diff).
Markdown shows the counts and the calls that did not stay identical; CSV one row per call;
JUnit one test case per call (a failure when it changed or newly erred, with its diff). When
the recording is gone the section says so instead of counting nothing.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from proctor.engine.drift import REPLAY_KEY, Status
from proctor.engine.reports.drift_model import (
    DriftCall,
    DriftSection,
    DriftServer,
    DriftTotals,
    DriftUnavailable,
)
from proctor.engine.reports.md_format import cell, code_text, folded, table
from proctor.engine.reports.report_model import Report
from proctor.store.display_text import sanitize

if TYPE_CHECKING:  # the diffing modules load only for a replay run's report
    from proctor.engine.drift.runs_diff import CallDrift, Drift, ServerDrift

KEY: Final = "drift"
MD_CALLS = 50
CSV_COLUMNS = (
    "scenario",
    "arm",
    "model",
    "epoch",
    "call",
    "call_id",
    "server",
    "tool",
    "arguments",
    "status",
    "summary",
)


def drift_section(db: Path, config: Mapping[str, Any]) -> DriftSection | DriftUnavailable | None:
    """The section for the run in ``db`` (None when it is not a replay run)."""
    if REPLAY_KEY not in config:
        return None
    from proctor.engine.drift.runs_diff import DriftError, replay_drift

    try:
        drift = replay_drift(db)
    except DriftError as exc:
        return {"error": str(exc)}
    return None if drift is None else _json(drift)


def _json(drift: Drift) -> DriftSection:
    return {
        "source": {"db": drift.source_db, "run": drift.source_run},
        "totals": _counts(drift.totals),
        "drifted": drift.drifted,
        "servers": [_server(s) for s in drift.servers],
        "calls": [_call(c) for c in drift.calls],
        "notes": list(drift.notes),
    }


def _counts(c: Mapping[Status, int]) -> DriftTotals:
    return {
        "identical": c["identical"],
        "changed": c["changed"],
        "new_error": c["new_error"],
        "fixed_error": c["fixed_error"],
        "missing": c["missing"],
        "skipped": c["skipped"],
    }


def _server(s: ServerDrift) -> DriftServer:
    return {"server": s.server, "calls": s.calls, **_counts(s.counts)}


def _call(c: CallDrift) -> DriftCall:
    scenario, arm, model, epoch = c.key
    row: DriftCall = {
        "scenario": scenario,
        "arm": arm,
        "model": model,
        "epoch": epoch,
        "trial": c.new_trial,
        "recorded_trial": c.old_trial,
        "call": c.index + 1,
        "call_id": c.call_id,
        "server": c.server,
        "tool": c.tool,
        "arguments": c.arguments_text,
        "status": c.diff.status,
    }
    if c.diff.status != "identical" or c.diff.notes:
        row["summary"] = c.diff.summary()
        row["changes"] = [{"path": x.path, "op": x.op, "old": x.old, "new": x.new} for x in c.diff.changes]
        row["more_changes"] = c.diff.more_changes
        row["text_diff"] = list(c.diff.text_diff)
        row["more_lines"] = c.diff.more_lines
        row["notes"] = list(c.diff.notes)
    return row


def _name(call: DriftCall) -> str:
    return (
        f"{call['scenario']}/{call['arm']}/{call['model']}/e{call['epoch']} "
        f"#{call['call']} {call['server']}.{call['tool']}"
    )


def _summary(call: DriftCall) -> str:
    return call["summary"] if "summary" in call else call["status"]


def call_lines(call: DriftCall) -> list[str]:
    """A drifted call's explanation: its notes, changed paths and text diff, as plain lines."""
    # Subscripts, not ``.get``: mypy checks a subscript's key. The detail keys come together.
    if "summary" not in call:  # identical, without notes: nothing to explain
        return []
    lines = [*call["notes"]]
    for x in call["changes"]:
        if x["op"] == "~":
            lines.append(f"~ {x['path']}: {x['old']} -> {x['new']}")
        else:
            lines.append(f"{x['op']} {x['path']}: {x['new'] if x['op'] == '+' else x['old']}")
    if call["more_changes"]:
        lines.append(f"… {call['more_changes']} more changed paths")
    lines += call["text_diff"]
    if call["more_lines"]:
        lines.append(f"… {call['more_lines']} more diff lines")
    return lines


def drift_markdown(report: Report) -> list[str]:
    section = report.get(KEY)
    if not section:
        return []
    from proctor.engine.drift.result_diff import DRIFTED, STATUSES

    out = ["## Drift (replay against the recording)", ""]
    if "error" in section:
        return [*out, f"Not compared: {cell(section['error'])}"]
    source = section["source"]
    totals = section["totals"]
    calls = sum(totals[x] for x in STATUSES)
    out.append(
        f"Recording: run {cell(source['run'])} in `{code_text(source['db'])}`. "
        f"**{section['drifted']}** of {calls} call(s) changed or newly erred."
    )
    out.append("")
    header = ["server", "calls", *(s.replace("_", " ") for s in STATUSES)]
    rows = [[cell(s["server"]), str(s["calls"]), *(str(s[x]) for x in STATUSES)] for s in section["servers"]]
    rows.append(["**all**", str(calls), *(str(totals[x]) for x in STATUSES)])
    out += table(header, rows)
    shown = [c for c in section["calls"] if c["status"] in DRIFTED or c["status"] == "fixed_error"]
    if shown:
        body: list[str] = []
        for c in shown[:MD_CALLS]:
            body += [
                "",
                f"- **{cell(c['status'].replace('_', ' '))}** {cell(_name(c))} `{code_text(c['arguments'], 120)}`",
            ]
            lines = [code_text(x, 300) for x in call_lines(c)]
            if lines:
                body += ["", "```diff", *lines, "```"]
        if len(shown) > MD_CALLS:
            body += ["", f"… {len(shown) - MD_CALLS} more; `--format json` lists every call."]
        out += ["", *folded(f"{len(shown)} call(s) that differ", body, over=40)]
    for note in section["notes"]:
        out += ["", f"Note: {cell(note)}."]
    return out


def _calls(report: Report) -> list[DriftCall]:
    """The section's calls; none when the section is absent or says why it could not compare."""
    section = report.get(KEY)
    return [] if section is None or "error" in section else section["calls"]


def drift_csv(report: Report) -> str:
    """One row per call (the report of a replay run is about its calls, not its arms)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for c in _calls(report):
        row = (
            c["scenario"],
            c["arm"],
            c["model"],
            c["epoch"],
            c["call"],
            c["call_id"],
            c["server"],
            c["tool"],
            c["arguments"],
            c["status"],
            _summary(c),
        )  # in the order of CSV_COLUMNS
        writer.writerow([_safe(v) for v in row])
    return out.getvalue()


def _safe(v: object) -> object:
    if isinstance(v, str):
        v = " ".join(sanitize(v).split("\n"))
        if v[:1] in ("=", "+", "-", "@", "\t", "\r"):
            return "'" + v
    return "" if v is None else v


def junit_cases(report: Report) -> dict[str, list[tuple[str, str, str, str]]]:
    """Per server: (case name, outcome, message, text) of each call; outcome ``failure`` for a
    call that changed or newly erred, ``skipped`` when it was not compared, else ``passed``."""
    from proctor.engine.drift.result_diff import DRIFTED

    by_server: dict[str, list[tuple[str, str, str, str]]] = {}
    for c in _calls(report):
        status = c["status"]
        if status in DRIFTED:
            outcome = "failure"
        elif status in ("missing", "skipped"):
            outcome = "skipped"
        else:
            outcome = "passed"
        text = "\n".join([f"arguments: {c['arguments']}", *call_lines(c)])
        by_server.setdefault(c["server"], []).append((_name(c), outcome, _summary(c), text))
    return by_server


__all__ = ["KEY", "call_lines", "drift_csv", "drift_markdown", "drift_section", "junit_cases"]
