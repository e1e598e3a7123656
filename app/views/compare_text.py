"""The compare view's text, as ``rich`` Text built from plain data (no widgets): the head (trials,
scores, counts), one line per aligned call pair, and the selected pair in full.

Columns: a mark column (same / result ≠ / args ≠ / only left / only right), then the left and the
right call. A cell cut to fit its column ends in "…"; the detail of the row has it whole. Tool
text is untrusted: it is sanitized (``one_line``, ``sanitize``) and only ever placed in ``Text``,
never parsed as markup.
"""

from __future__ import annotations

from itertools import zip_longest

from rich.console import Console
from rich.text import Text

from proctor.app.views.call_alignment import argument_changes, effective, exact_alignment
from proctor.app.views.compare_model import MARKS, CompareRow, answering_server, count_marks, result_diff
from proctor.app.views.inline_diff import marked_pair, unified_diff_text
from proctor.app.views.state import ConsoleState
from proctor.app.views.transcript_state import CallView, TranscriptState
from proctor.engine.tools.retrieval import EXECUTE
from proctor.store.read.reader import TrialRecord
from proctor.store.scores import DISPLAY_ORDER
from proctor.widgets.lines_view import wrap_texts
from proctor.widgets.sanitize import one_line, sanitize

SEP = " │ "
GAP = "— no matching call —"
MARK_WIDTH = 10
ARGS_CHARS = 2000
PREVIEW_LINES = 40
MARK_STYLES = {
    "same": "green",
    "result": "yellow",
    "args": "bold yellow",
    "left": "bold red",
    "right": "bold cyan",
    "answer": "bold",
}

Side = tuple[TrialRecord | None, TranscriptState | None]


def _wrap(text: Text, console: Console, width: int) -> list[Text]:
    return list(text.wrap(console, max(4, width), overflow="fold")) or [Text("")]


def two_columns(left: Text, right: Text, console: Console, width: int) -> list[Text]:
    half = max(10, (width - len(SEP)) // 2)
    out: list[Text] = []
    for a, b in zip_longest(_wrap(left, console, half), _wrap(right, console, half), fillvalue=Text("")):
        a = a.copy()
        a.truncate(half, pad=True)
        line = a + Text(SEP, style="dim") + b
        line.no_wrap, line.end = True, ""
        out.append(line)
    return out


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… {len(text) - limit:,} more chars"


def _label(trial: TrialRecord | None, state: ConsoleState, recorded_in: str = "") -> Text:
    if trial is None:
        return Text("(no such trial)", style="dim")
    if recorded_in:  # a replay run's recording: a trial of another database, shown as such
        text = Text(
            f"recorded #{trial.id} {one_line(trial.arm, 24)} / {one_line(trial.model, 28)}",
            style="bold",
            end="",
        )
        text.append(f"  {trial.status} in {one_line(recorded_in, 40)}", style="dim")
        return text
    text = Text(f"#{trial.id} {one_line(trial.arm, 24)} / {one_line(trial.model, 28)}", style="bold", end="")
    text.append(f"  {state.statuses.get(trial.id, '?')}")
    return text


def _scores(state: ConsoleState, left: TrialRecord | None, right: TrialRecord | None, width: int) -> Text:
    """Both trials' scores in two columns, one "name value" item never split across lines; the
    better of two values in bold green."""
    ls = state.scores.get(left.id, {}) if left else {}
    rs = state.scores.get(right.id, {}) if right else {}
    half = _half(width)
    items: tuple[list[Text], list[Text]] = ([], [])
    for name in DISPLAY_ORDER:
        if name not in ls and name not in rs:
            continue
        lv, rv = (s[name].value if name in s else None for s in (ls, rs))
        for k, v in enumerate((lv, rv)):
            other = rv if k == 0 else lv
            better = v is not None and other is not None and v > other
            item = Text(f"{name} ", end="")
            item.append("—" if v is None else f"{v:.3f}", style="bold green" if better else "")
            items[k].append(item)
    columns = [_pack(side, half) for side in items]
    out: list[Text] = []
    for k, (a, b) in enumerate(zip_longest(*columns, fillvalue=Text(""))):
        out.append(_line(Text("scores" if k == 0 else "", style="bold"), a, b, width))
    return Text("\n").join(out)


def _pack(items: list[Text], width: int) -> list[Text]:
    lines: list[Text] = []
    for item in items:
        if lines and lines[-1].cell_len + 2 + item.cell_len <= width:
            lines[-1].append("  ")
            lines[-1].append_text(item)
        else:
            lines.append(item.copy())
    return lines


def _summary(rows: list[CompareRow], left: Side, right: Side) -> Text:
    n_left = len(left[1].calls) if left[1] else 0
    n_right = len(right[1].calls) if right[1] else 0
    text = Text(f"{n_left} left, {n_right} right → ", style="bold", end="")
    counts = count_marks(rows)
    for k, (mark, label) in enumerate(MARKS.items()):
        if k:
            text.append(" · ", style="dim")
        text.append(f"{counts[mark]} {label}", style=MARK_STYLES[mark] if counts[mark] else "dim")
    across = sum(1 for r in rows if r.servers_differ)
    if across:
        text.append(f" · {across} {'pair' if across == 1 else 'pairs'} across servers", style="dim")
    if not exact_alignment(n_left, n_right):
        text.append(" · aligned block by block (too many calls for the full table)", style="yellow")
    loading = [
        s for s, (t, tr) in (("left", left), ("right", right)) if t is not None and not (tr and tr.loaded)
    ]
    if loading:
        text.append(f" · loading the {' and '.join(loading)} transcript…", style="dim italic")
    return text


def _cell(call: CallView | None, index: int | None, twin: int | None, other: str) -> Text:
    if call is None or index is None:
        text = Text(GAP, style="dim italic", end="")
        if twin is not None:
            text.append(f" (same call as the {other}'s at row {twin + 1}: reordered)", style="dim")
        return text
    eff = effective(call)
    text = Text(f"{index + 1:>3} ", style="dim", end="")
    if eff.via_router:
        text.append("execute→", style="dim")
    text.append(one_line(eff.tool, 40), style="bold magenta")
    if call.result is None:
        text.append(" (no result yet)", style="dim")
    elif call.is_error:
        text.append(" ERROR", style="bold red")
    text.append(f" {one_line(eff.arguments_text, 300)}")
    return text


def _fit(text: Text, width: int) -> Text:
    text = text.copy()
    text.truncate(max(1, width), overflow="ellipsis", pad=True)
    return text


def _half(width: int) -> int:
    """The width of each side's column after the mark column and the separator."""
    return max(8, (width - MARK_WIDTH - 1 - len(SEP)) // 2)


def _line(mark: Text, left: Text, right: Text, width: int) -> Text:
    """Mark, left and right cells on one line, each cut with "…" to its column."""
    half = _half(width)
    line = _fit(mark, MARK_WIDTH + 1)
    line.append_text(_fit(left, half))
    line.append(SEP, style="dim")
    line.append_text(_fit(right, half))
    line.no_wrap, line.end = True, ""
    return line


def row_line(row: CompareRow, width: int) -> Text:
    """One aligned pair on one line: mark, left call, right call (cut with "…" to fit)."""
    return _line(
        Text(MARKS[row.mark], style=MARK_STYLES[row.mark]),
        _cell(row.left, row.pair.left, row.pair.twin, "right"),
        _cell(row.right, row.pair.right, row.pair.twin, "left"),
        width,
    )


def head_lines(mark: str, left: Text, right: Text, console: Console, width: int) -> list[Text]:
    """Two cells wrapped (never cut) in the rows' columns, under a mark column label."""
    half = _half(width)
    pairs = zip_longest(_wrap(left, console, half), _wrap(right, console, half), fillvalue=Text(""))
    return [_line(Text(mark if k == 0 else "", style="bold"), a, b, width) for k, (a, b) in enumerate(pairs)]


def answer_of(t: TranscriptState | None) -> str | None:
    return t.final_answer if t is not None and t.final_answer else None


def answer_line(left: Side, right: Side, width: int) -> Text:
    """The last row: both final answers, cut to their columns."""
    la, ra = answer_of(left[1]), answer_of(right[1])
    cells = [
        Text(one_line(a, 300), end="") if a else Text("(no answer yet)", style="dim", end="")
        for a in (la, ra)
    ]
    mark = Text("answer =" if la == ra else "answer ≠", style=MARK_STYLES["answer"])
    return _line(mark, cells[0], cells[1], width)


def head_text(
    state: ConsoleState,
    rows: list[CompareRow],
    left: Side,
    right: Side,
    console: Console,
    width: int,
    recorded: tuple[str, str] = ("", ""),
) -> Text:
    """Over the rows, in their columns: the two trials, their scores, and what the alignment found.

    ``recorded`` names, per side, the database a side's trial comes from when it is not the
    console's (a replay run's recording); such a side has no scores here."""
    lines = head_lines(
        "trials", _label(left[0], state, recorded[0]), _label(right[0], state, recorded[1]), console, width
    )
    scores = _scores(state, None if recorded[0] else left[0], None if recorded[1] else right[0], width)
    if scores.plain:
        lines.append(scores)
    summary = wrap_texts([_summary(rows, left, right)], console, width - MARK_WIDTH - 1)
    lines += [
        Text(f"{'calls' if k == 0 else '':<{MARK_WIDTH}} ", style="bold") + x for k, x in enumerate(summary)
    ]
    return Text("\n").join(lines)


# -- the lower pane ------------------------------------------------------------------------------


def _call_block(side: str, call: CallView | None, index: int | None) -> list[Text]:
    head = Text(f"{side:<6}", style="bold", end="")
    if call is None or index is None:
        head.append("no matching call", style="dim italic")
        return [head]
    eff = effective(call)
    head.append(f"call {index + 1} · ", style="dim")
    if eff.via_router:
        head.append(f"{one_line(call.server, 40)}/{EXECUTE.name} → ", style="dim")
        ran = answering_server(call)
        head.append(f"{one_line(ran, 40)}/" if ran else "", style="bold magenta")
        head.append(one_line(eff.tool, 60), style="bold magenta")
    else:
        head.append(f"{one_line(call.server, 40)}/{one_line(call.tool, 60)}", style="bold magenta")
    if call.result is None:
        head.append(" · no result yet", style="dim")
    else:
        head.append(f" · {_count(len(call.result.splitlines()), 'result line')}", style="dim")
    if call.is_error:
        head.append(" · ERROR", style="bold red")
    return [head, Text(f"  args {_cut(sanitize(eff.arguments_text), ARGS_CHARS)}")]


def _preview(title: str, result: str) -> list[Text]:
    lines = result.splitlines()
    out = [Text(f"{title} · {_count(len(lines), 'line')}", style="bold")]
    out.extend(Text("  " + _cut(sanitize(x), 400)) for x in lines[:PREVIEW_LINES])
    if len(lines) > PREVIEW_LINES:
        out.append(Text(f"  … {_count(len(lines) - PREVIEW_LINES, 'more line')}", style="dim italic"))
    return out


def row_detail(row: CompareRow) -> list[Text]:
    """The selected row in full: both calls, what differs in their arguments and results."""
    out = [*_call_block("left", row.left, row.pair.left), *_call_block("right", row.right, row.pair.right)]
    if row.pair.twin is not None:
        other = "right" if row.left is not None else "left"
        out.append(
            Text(f"the {other} made this same call at row {row.pair.twin + 1} (reordered)", style="yellow")
        )
    if row.left is None or row.right is None:
        call = row.left or row.right
        if call is not None and call.result is not None:
            out.extend(_preview(f"{'left' if row.left else 'right'} result", call.result))
        return out
    if row.servers_differ:
        out.append(
            Text(
                f"servers differ ({one_line(answering_server(row.left), 40)} vs "
                f"{one_line(answering_server(row.right), 40)}): paired by tool name",
                style="dim",
            )
        )
    routed = [s for s, c in (("left", row.left), ("right", row.right)) if effective(c).via_router]
    if len(routed) == 1:
        out.append(Text(f"the {routed[0]} called it through the router's {EXECUTE.name}", style="dim"))
    changes = argument_changes(row.left, row.right)
    if changes:
        out.append(Text(f"arguments differ ({len(changes)})", style="bold yellow"))
        for c in changes:
            key = one_line(c.key, 80)
            if c.op == "~":
                left, right = marked_pair(
                    _cut(sanitize(c.left), ARGS_CHARS), _cut(sanitize(c.right), ARGS_CHARS), "red", "green"
                )
                line = Text.assemble(f"  ~ {key}: ", left, " → ", right, end="")
            elif c.op == "-":
                line = Text(f"  - {key}: {_cut(sanitize(c.left), ARGS_CHARS)} (left only)", style="red")
            else:
                line = Text(f"  + {key}: {_cut(sanitize(c.right), ARGS_CHARS)} (right only)", style="green")
            out.append(line)
    elif effective(row.left).arguments_text != effective(row.right).arguments_text:
        out.append(Text("arguments equal once normalized (key order, whitespace, number form)", style="dim"))
    diff = result_diff(
        row.left.result, row.right.result, left_error=row.left.is_error, right_error=row.right.is_error
    )
    if diff.same:
        assert row.left.result is not None
        out.extend(_preview("same result", row.left.result))
        return out
    out.append(Text("results differ (- left, + right)", style="bold yellow"))
    out.extend(Text(f"  {note}", style="yellow") for note in diff.notes)
    out.extend(unified_diff_text(diff.lines))
    if diff.more:
        out.append(Text(f"… {diff.more:,} more diff lines", style="dim italic"))
    if not diff.lines and row.left.result is not None and row.left.result == row.right.result:
        out.extend(_preview("identical text", row.left.result))
    return out


def answers_detail(left: Side, right: Side, console: Console, width: int) -> list[Text]:
    cells = [
        Text(sanitize(a)) if a else Text("(no answer yet)", style="dim")
        for a in map(answer_of, (left[1], right[1]))
    ]
    return [*two_columns(Text("left", style="bold"), Text("right", style="bold"), console, width),
            *two_columns(cells[0], cells[1], console, width)]  # fmt: skip


__all__ = [
    "GAP",
    "MARK_STYLES",
    "MARK_WIDTH",
    "Side",
    "answer_line",
    "answer_of",
    "answers_detail",
    "head_lines",
    "head_text",
    "row_detail",
    "row_line",
    "two_columns",
]
