"""``proctor report DB --format html``: one self-contained page to share with people who do not
use a terminal.

The page is the Markdown report (engine/reports/report_markdown.py, itself made from
``build_report``'s data) turned into HTML, so every figure is the same in the three formats; its
two text charts are replaced by matplotlib SVGs drawn from the same data (html_charts.py), and
each failed trial gets an excerpt of its events folded in a ``<details>``. No script, no
stylesheet or font from the network: the file opens offline. Every name from a suite, server or model is escaped
(``html.escape`` after control and bidi characters are removed), never interpreted as markup.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from pathlib import Path

from proctor.engine.reports.html_charts import forest_svg, frontier_svg
from proctor.engine.reports.md_charts import _axis
from proctor.engine.reports.md_failed_trials import failed_trials, trial_reason
from proctor.engine.reports.report_markdown import render_markdown
from proctor.engine.reports.report_model import (
    ArmModel,
    JsonObject,
    Report,
    RunInfo,
    TrialEntry,
    score_details,
)
from proctor.engine.stats import CostScorePoint, pareto_frontier

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_MD_ESCAPE = re.compile(r"\\([\\`*_{}\[\]<>|#!~()+\-.])")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_CODE = re.compile(r"`([^`]+)`")
_LIST = re.compile(r"^(\d+\.|-) (.*)$")
_HELD = re.compile(r"\x00(\d+)\x01")
EXCERPT_CHARS = 4000

_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:78rem;
 padding:0 1rem;color:#1f2328;line-height:1.45}
h1{font-size:1.5rem}h2{font-size:1.2rem;border-bottom:1px solid #d0d7de;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.85rem;display:block;overflow-x:auto}
th,td{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f6f8fa}tr:nth-child(even) td{background:#fbfcfd}
code{background:#f6f8fa;padding:0 .2rem;border-radius:3px}
pre{background:#f6f8fa;padding:.6rem;overflow-x:auto;font-size:.8rem;white-space:pre-wrap}
details{margin:.4rem 0;border:1px solid #d0d7de;border-radius:4px;padding:.3rem .6rem}
summary{cursor:pointer;font-weight:600}.chart svg{max-width:100%;height:auto}
.call{color:#0550ae}.err{color:#cf222e}
"""


def clean(text: object) -> str:
    """Untrusted text as HTML: control and bidi characters dropped (OSC sequences included), escaped."""
    return html.escape(_CONTROL.sub("", str(text)), quote=True)


def _inline(md: str) -> str:
    """One line of the Markdown report's own subset (escapes, ``**bold**``, ``code``) as HTML.

    A backslash-escaped character (how ``md_format.cell`` writes untrusted text's ``<``, ``*`` or
    backtick) stands for itself: it is set aside before markup is read, so it never opens code or
    bold, and it is shown without its backslash."""
    escaped: list[str] = []

    def hold(m: re.Match[str]) -> str:
        escaped.append(m.group(1))
        return f"\x00{len(escaped) - 1}\x01"  # control characters: none is left in the text

    out = html.escape(_MD_ESCAPE.sub(hold, _CONTROL.sub("", md)), quote=True)
    out = _BOLD.sub(r"<strong>\1</strong>", out)
    out = _CODE.sub(r"<code>\1</code>", out)
    return _HELD.sub(lambda m: html.escape(escaped[int(m.group(1))], quote=True), out)


def _row(line: str) -> list[str]:
    """A table row's cells, split on pipes the Markdown escaping left unescaped."""
    cells = re.split(r"(?<!\\)\|", line.strip())
    return [c.strip() for c in cells[1:-1]]


def markdown_to_html(md: str, charts: dict[str, str]) -> list[str]:
    """The report's Markdown as HTML; a fenced chart whose first line names a key of ``charts``
    is replaced by that chart (the same figure, drawn)."""
    lines = md.splitlines()
    out: list[str] = []
    para: list[str] = []
    i = 0

    def flush() -> None:
        if para:
            out.append("<p>" + " ".join(_inline(p) for p in para) + "</p>")
            para.clear()

    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            flush()
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), len(lines))
            body = lines[i + 1 : end]
            key = next((k for k in charts if body and body[0].startswith(k)), None)
            if key is not None:
                out.append(charts[key])
            else:
                out.append("<pre>" + clean("\n".join(body)) + "</pre>")
            i = end + 1
            continue
        if line.startswith("|"):
            flush()
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(_row(lines[i]))
                i += 1
            out.append(_table(rows))
            continue
        if m := re.match(r"^(#{1,3}) (.*)$", line):
            flush()
            level = len(m.group(1))
            out.append(f"<h{level}>{_inline(m.group(2))}</h{level}>")
        elif line in ("<details>", "</details>"):
            flush()
            out.append(line)
        elif line.startswith("<summary>") and line.endswith("</summary>"):
            out.append(f"<summary>{_inline(line[9:-10])}</summary>")
        elif m := _LIST.match(line):
            flush()
            tag = "ol" if m.group(1)[0].isdigit() else "ul"
            items = []
            while i < len(lines) and (m := _LIST.match(lines[i])):
                items.append(f"<li>{_inline(m.group(2))}</li>")
                i += 1
            out.append(f"<{tag}>{''.join(items)}</{tag}>")
            continue
        elif not line.strip():
            flush()
        else:
            para.append(line)
        i += 1
    flush()
    return out


def _table(rows: list[list[str]]) -> str:
    if len(rows) >= 2 and all(re.fullmatch(r":?-+:?", c) for c in rows[1]):
        head, body = rows[0], rows[2:]
    else:
        head, body = [], rows
    parts = ["<table>"]
    if head:
        parts.append("<thead><tr>" + "".join(f"<th>{_inline(c)}</th>" for c in head) + "</tr></thead>")
    parts.append("<tbody>")
    parts += ["<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in r) + "</tr>" for r in body]
    parts.append("</tbody></table>")
    return "".join(parts)


def _who(a: ArmModel) -> str:
    """A chart label: matplotlib escapes it for the SVG's XML, but control characters are ours to drop."""
    return _CONTROL.sub("", f"{a['arm']} · {a['model']}")


def _charts(report: Report) -> dict[str, str]:
    """The drawn charts, keyed by the first line of the text chart each replaces."""
    arms = report["arms"]
    charts: dict[str, str] = {}
    forest = [
        (_who(a), float(d["mean"]), float(d["low"]), float(d["high"]))
        for a in arms
        if (v := a["vs_baseline"]) and (d := v["fairness_delta"]) and d["low"] is not None
    ]
    if forest:
        charts["Δ fairness (arm − baseline"] = forest_svg(forest)
    placed = [(a, f["mean"]) for a in arms if (f := a["fairness"]) is not None]
    if placed:
        title, _, xs = _axis([a for a, _ in placed])
        points = [(a, x, y) for (a, y), x in zip(placed, xs, strict=True) if x is not None]
        split = pareto_frontier(CostScorePoint(_who(a), "", x, float(y)) for a, x, y in points)
        front = {p.arm for p in split.frontier}
        drawn = [(_who(a), float(x), float(y), _who(a) in front) for a, x, y in points]
        if drawn:
            charts["mean fairness (0–1, up is better) against"] = frontier_svg(drawn, title)
    return charts


def _trial_excerpt(events: Sequence[JsonObject]) -> str:
    """A trial's calls, results and answer as escaped preformatted text, long results cut."""
    parts: list[str] = []
    for e in events:
        kind = e.get("kind")
        if kind == "tool_call":
            parts.append(
                f'<span class="call">→ {clean(e["server"])}.{clean(e["tool"])}({clean(e["arguments"])})</span>'
            )
        elif kind == "tool_result":
            text = str(e.get("content", ""))
            cut = text[:EXCERPT_CHARS] + (
                f"… ({len(text):,} characters)" if len(text) > EXCERPT_CHARS else ""
            )
            css = ' class="err"' if e.get("is_error") else ""
            parts.append(f"<span{css}>← {clean(cut)}</span>")
        elif kind == "assistant_message" and e.get("text"):
            parts.append(f"assistant: {clean(e['text'])}")
        elif kind == "final_answer":
            parts.append(f"<strong>answer:</strong>\n{clean(e.get('text', ''))}")
        elif kind == "error":
            parts.append(f'<span class="err">error: {clean(e.get("message", e))}</span>')
    return "<pre>" + "\n".join(parts) + "</pre>"


def _claims(t: TrialEntry) -> str:
    stored = (t.get("scores") or {}).get("claims")
    claims = (None if stored is None else score_details(stored)) or {}
    verdicts = claims.get("verdicts") or []
    if not verdicts:
        return ""
    rows = "".join(
        f"<tr><td>{clean(v.get('claim', ''))}</td><td>{clean(v.get('verdict', ''))}</td>"
        f"<td>{clean(v.get('justification', ''))}</td></tr>"
        for v in verdicts
    )
    return f"<table><thead><tr><th>claim</th><th>verdict</th><th>why</th></tr></thead><tbody>{rows}</tbody></table>"


def failed_trials_section(report: Report, failed_events: dict[int, list[JsonObject]]) -> list[str]:
    failed = failed_trials(report)
    if not failed:
        return []
    out = [
        "<h2>Failed trials</h2>",
        f"<p>{len(failed)} trial(s) failed or errored, each with why; open one to read its claims and "
        "transcript.</p>",
    ]
    for t in failed:
        summary = (
            f"#{int(t['id'])} {clean(t['scenario'])} · {clean(t['arm'])} · {clean(t['model'])} · "
            f"epoch {int(t['epoch'])} — {clean(trial_reason(t))}"
        )
        body = _claims(t) + _trial_excerpt(failed_events.get(int(t["id"]), []))
        out.append(f'<details class="trial"><summary>{summary}</summary>{body}</details>')
    return out


def render_html(report: Report, failed_events: dict[int, list[JsonObject]] | None = None) -> str:
    """The whole page; ``failed_events`` maps a failed trial's id to its events (JSON-like dicts)."""
    run: RunInfo | dict[str, object] = report["run"] or {}
    title = f"proctor report: {run.get('suite', '?')} (run {run.get('id', '?')})"
    body = markdown_to_html(render_markdown(report, failed_list=False), _charts(report))
    body += failed_trials_section(report, failed_events or {})
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            # Nothing may load from elsewhere: the page is shared as a file and opened offline.
            '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
            "style-src 'unsafe-inline'; img-src data:\">",
            f"<title>{clean(title)}</title>",
            f"<style>{_STYLE}</style></head><body>",
            *body,
            "</body></html>",
            "",
        ]
    )


def failed_trial_events(db: Path, report: Report) -> dict[int, list[JsonObject]]:
    """Each failed trial's events (its current attempt), read from the store for the page's folds."""
    from proctor.store.read.reader import StoreReader

    ids = [int(t["id"]) for t in failed_trials(report)]
    with StoreReader(db) as reader:
        return {i: [e.event.model_dump(mode="json") for e in reader.trial_events(i)] for i in ids}


__all__ = ["clean", "failed_trial_events", "markdown_to_html", "render_html"]
