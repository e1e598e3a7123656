"""What a tall dashboard adds under the matrix: why trials failed, by the check that failed them,
and every score of the selected trial. Pure text from the console state, so a 160x50 terminal
uses its rows for the question the console is for (why did it fail?) instead of leaving them
empty.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from rich.text import Text

from proctor.app.views.score_views import citations_of, failure_of
from proctor.app.views.state import ConsoleState
from proctor.app.views.trial_checks import checks_summary
from proctor.store.scores import DISPLAY_ORDER, ScoreName
from proctor.store.verdict_reason import NO_VERDICT, failed_check
from proctor.widgets.sanitize import one_line
from proctor.widgets.transcript_model import BADGE

SCORE_COLUMN = 22  # "llm_quality     0.762  ": two scores abreast in a third of 160 columns


def why_failed_text(state: ConsoleState) -> Text:
    """Failed trials counted by the check that failed them (and by arm), then the trials without
    a verdict by why; ``]`` on the matrix walks through them."""
    checks: dict[str, Counter[str]] = defaultdict(Counter)
    unjudged: Counter[str] = Counter()
    for trial_id, status in state.statuses.items():
        if status not in ("failed", "not judged"):
            continue
        line = state.verdict_line(trial_id) or ""
        if status == "failed":
            checks[failed_check(line)][state.trials[trial_id].arm] += 1
        else:
            unjudged[line.removeprefix(NO_VERDICT)] += 1
    failed = sum(sum(c.values()) for c in checks.values())
    text = Text(f"why trials failed · {failed} of {len(state.statuses)}", style="bold", end="")
    text.append("  (] next failure)\n", style="dim")
    for check, arms in sorted(checks.items(), key=lambda kv: (-sum(kv[1].values()), kv[0])):
        text.append(f"{sum(arms.values()):>4} ", style="bold red")
        text.append(f"failed on {one_line(check, 60)}\n")
        by_arm = ", ".join(f"{one_line(arm, 24)} {n}" for arm, n in sorted(arms.items()))
        text.append(f"     {by_arm}\n", style="dim")
    for why, n in unjudged.most_common(3):
        text.append(f"{n:>4} ", style="bold magenta")
        text.append(f"no verdict: {one_line(why, 160)}\n")
    if not checks and not unjudged:
        text.append("no trial failed or lacks a verdict\n", style="dim")
    return text


def selected_scores_text(state: ConsoleState, trial_id: int | None) -> Text:
    """Every score of the trial under the cursor, two abreast, and its failure mode."""
    scores = state.scores.get(trial_id, {}) if trial_id is not None else {}
    text = Text(
        "the selected trial's scores" if trial_id is None else f"trial #{trial_id} · scores",
        style="bold",
        end="",
    )
    text.append("  (⏎ opens it)\n", style="dim")
    names = [n for n in DISPLAY_ORDER if n in scores] + sorted(
        n for n in scores if n not in DISPLAY_ORDER and n != ScoreName.FAILURE_MODE
    )
    if not names:
        text.append("not scored yet\n" if trial_id is not None else "no trial selected\n", style="dim")
    for i, name in enumerate(names):
        value = scores[name].value
        cell = f"{one_line(name, 12):<12} {'n/a' if value is None else f'{value:.3f}'}"
        text.append(f"{cell:<{SCORE_COLUMN}}" if i % 2 == 0 else f"{cell}\n")
    if len(names) % 2:
        text.append("\n")
    for bad in sorted(state.unreadable.get(trial_id, {}) if trial_id is not None else ()):
        text.append(f"{one_line(bad, 12):<12} unreadable\n", style="bold red")
    grounding = citations_of(scores)
    if grounding is not None and grounding.citations:
        counts: Counter[str] = Counter(c.status for c in grounding.citations)
        text.append("citations ")
        for status, (glyph, style) in BADGE.items():
            text.append(f"{glyph}{counts[status]} ", style=style)
        text.append("\n")
    if trial_id is not None:
        verdicts = state.judgments.verdicts(trial_id)
        passes = ", ".join(
            f"{one_line(v.judge, 20)} "
            + ("error" if v.error else "—" if v.score is None else f"{v.score:.3f}")
            for v in verdicts[:4]
        )
        if passes:
            text.append(f"judge passes: {passes}\n")
        text.append(f"checks: {checks_summary(scores, verdicts)}\n")
    failure = failure_of(scores)
    if failure is not None:
        text.append(f"failure mode {one_line(failure.mode, 40)}", style="bold")
        text.append(f": {one_line(failure.evidence, 120)}\n")
    return text


__all__ = ["selected_scores_text", "why_failed_text"]
