"""The help page's text: the keys of the screen underneath first (what ``?`` is pressed for),
then a legend of every symbol and colour and the concepts behind the numbers. Built from the
widgets' own symbol tables, so the legend cannot drift from what the screens draw."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from proctor.app.views.key_names import KeyRow
from proctor.widgets.transcript_model import BADGE
from proctor.widgets.trial_matrix import STATUS_GLYPH, STATUS_STYLE, STATUSES

_STATUS_MEANING = {
    "queued": "waiting to run",
    "running": "the agent is working",
    "scoring": "finished, scores being computed",
    "passed": "the answer passed its checks (claims, else key points, else the gold tool calls)",
    "failed": "the answer did not pass: the line under the matrix and the trial header name the rule "
    "that failed it, with its numbers (failed on grounding: 7 of 27 citations grounded …)",
    "not judged": "finished without a verdict: the line under the matrix says why (no verdict: no checks, "
    "every judge pass failed, scoring failed …)",
    "error": "the trial broke (model, server or timeout): see its error",
}
_BADGE_MEANING = {
    "grounded": "grounded: the cited file and lines exist at the pinned commit and hold what is claimed",
    "unresolved": "unresolved: no such file, ambiguous, outside the repository, or no line to check",
    "hallucinated": "hallucinated: the file exists but the named symbol or quoted code is not there",
}
_MARKS = (
    ("⚓", "an anchor scenario: held out and locked by hash (screen 3)"),
    ("▸ / ▾", "a collapsed / expanded entry: tool calls and results, what the agent was given"),
    ("◀ first failing call", "the tool call the failure diagnosis points to (F jumps to it)"),
    ("~", "token counts estimated (offline agent or imported data), not reported by an API"),
    ("n/a (baseline)", "adoption does not apply to the baseline arm: it has no MCP tools"),
    ("[image …] [resource …]", "binary tool output, stored once by hash; the label gives type and size"),
    (
        "same / result ≠ / args ≠",
        "compare: the two trials made this call alike / got other results / other args",
    ),
    ("only left / only right", "compare: a call with no match on the other side (— no matching call —)"),
    ("◀2 3▶ more", "matrix: arms scrolled out of view on each side (h / l to scroll)"),
    (
        "Δ +0.10",
        "matrix: fairness minus the baseline arm's on the same scenario and model, paired by epoch "
        "(green higher, red lower)",
    ),
    (
        "✗ 2/3 0.71",
        "matrix with epochs folded (e): 2 of 3 epochs passed, mean fairness 0.71, "
        "under the most urgent status; enter opens that epoch",
    ),
)
_CONCEPTS = (
    ("fairness", "answer quality on equal terms for every arm: 0.10 keywords + 0.55 judge quality + "
     "0.15 citation grounding + 0.20 efficiency (missing parts are left out and the rest renormalized)"),
    ("adoption", "how well the agent used the MCP server: 0.60 tool fluency + 0.40 discoverability"),
    ("grounding", "grounded citations / all citations, checked against git objects at the pinned commit"),
    ("claims", "facts a correct answer must state: fulfilled 1, partially ½, not 0; pass at coverage ≥ 0.75"),
    ("TFS / TEFS", "the set of (tool, arguments) called equals the gold calls; TEFS also the serial / "
     "parallel step structure (MCPAgentBench)"),
    ("pass, k/n", "a trial passes or fails; k/n counts passing epochs; pass@k is the chance one of k passes"),
    ("judge σ", "spread of a judge's scores over repeated passes on one trial; above the floor it is noise "
     "worth knowing"),
    ("Δ vs baseline", "paired by scenario and epoch; a 95 % interval containing 0 is not a difference"),
)  # fmt: skip


MARK_WIDTH = 26
CONCEPT_WIDTH = 15
KEY_WIDTH = 20


def help_rows(keys: Sequence[KeyRow]) -> list[tuple[Text, int]]:
    """Each line of the page with the indent its wrapped continuation lines take."""
    out: list[tuple[Text, int]] = [
        (Text("KEYS OF THIS SCREEN (ctrl+p: palette with every action)", style="bold underline"), 0)
    ]
    group = None
    for row in keys:
        if row.group != group:
            group = row.group
            out.append((Text(f" {group}", style="bold"), 0))
        line = Text(f" {' / '.join(row.keys):>{KEY_WIDTH}}  ", style="bold cyan", end="")
        line.append(row.description)
        out.append((line, KEY_WIDTH + 3))
    out += [
        (Text(" vim keys: j/k down/up, h/l left/right, g/G top/bottom, ctrl+d/ctrl+u page", style="dim"), 1),
        (
            Text(
                " escape goes back from a sub-screen and never quits; q and ctrl+c quit, asking first "
                "on a live run",
                style="dim",
            ),
            1,
        ),
        (Text(""), 0),
        (Text("LEGEND", style="bold underline"), 0),
    ]
    for status in STATUSES:
        line = Text(f" {STATUS_GLYPH[status]} {status:<11}", style=STATUS_STYLE.get(status, ""), end="")
        line.append(f" {_STATUS_MEANING[status]}")
        out.append((line, 15))
    for status, (glyph, style) in BADGE.items():
        line = Text(" ", end="")
        line.append(f" {glyph}{status[0].upper()} ", style=style)
        line.append(f"  {_BADGE_MEANING[status]}")
        out.append((line, 8))
    for mark, meaning in _MARKS:
        out.append(
            (Text(f" {mark:<{MARK_WIDTH - 1}} ", style="bold", end="") + Text(meaning), MARK_WIDTH + 1)
        )
    out += [(Text(""), 0), (Text("CONCEPTS", style="bold underline"), 0)]
    for name, meaning in _CONCEPTS:
        out.append(
            (Text(f" {name:<{CONCEPT_WIDTH - 1}} ", style="bold", end="") + Text(meaning), CONCEPT_WIDTH + 1)
        )
    return out


def help_lines(keys: Sequence[KeyRow]) -> list[Text]:
    return [text for text, _ in help_rows(keys)]


def wrap_hanging(rows: Sequence[tuple[Text, int]], console: Console, width: int) -> list[Text]:
    """Wrap each line to ``width``; continuation lines start under the text they continue."""
    out: list[Text] = []
    width = max(8, width)
    for text, indent in rows:
        indent = min(indent, width // 2)
        first = text.wrap(console, width, overflow="fold")[0] if text.plain else Text("")
        out.append(first)
        rest = text[len(first.plain) :]
        rest = rest[len(rest.plain) - len(rest.plain.lstrip()) :]
        if rest.plain:
            for line in rest.wrap(console, width - indent, overflow="fold"):
                out.append(Text(" " * indent, end="") + line)
    for line in out:
        line.no_wrap, line.end = True, ""
    return out


__all__ = ["help_lines", "help_rows", "wrap_hanging"]
