"""Headless runs: a progress bar while trials finish, then a summary table per arm × model."""

from __future__ import annotations

import shlex
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

from rich.cells import cell_len
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

from proctor.engine.reports.error_causes import MAX_CAUSE_CHARS, group_errors, run_stop_message
from proctor.engine.reports.report import OFFLINE_NOTE
from proctor.engine.runs.runner import Run
from proctor.store.events import ErrorEvent
from proctor.store.read.reader import StoreReader, TrialRecord
from proctor.store.scores import PassedDetails, ScoreName, UnreadableScore
from proctor.store.verdict_reason import verdict_reason
from proctor.widgets.sanitize import one_line

NAME_MAX = 30
FAILED_SHOWN = 10  # failed trials listed with their reason after the table; the report lists all


class HeadlessProgress:
    """A progress bar in a terminal; in a CI log (not a terminal) a plain line every few seconds,
    since a redrawn bar there prints nothing until the end or floods the log."""

    PLAIN_EVERY_S = 5.0

    def __init__(self, console: Console, clock: Callable[[], float] = time.monotonic) -> None:
        self._console = console
        self._plain = not console.is_terminal
        self._clock = clock
        self._progress = Progress(
            TextColumn("[bold]trials"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[errors]} errors"),
            TimeElapsedColumn(),
            _PhaseColumn(self),
            console=console,
            transient=False,
        )
        self._task = self._progress.add_task("trials", total=0, errors=0)
        self._errors = 0
        self._total = 0
        self._done = 0
        self._started = 0.0
        self._printed = 0.0
        self._running = False  # stop() before start() (the run failed to open) prints no line
        self._servers: set[str] = set()
        self._ready: Callable[[], set[str]] = set
        self._done_here = 0  # trials finished by this process: the ETA's rate (a resume skips the rest)

    def start(self, run: Run, todo: list[TrialRecord]) -> None:
        with StoreReader(run.options.db) as reader:
            total = len(reader.trials())
        self._total, self._done = total, total - len(todo)
        self._started = self._printed = self._clock()
        self._running = True
        self._servers, self._ready = _shared_servers(run)
        if self._plain:
            self._line()
            return
        self._progress.update(self._task, total=total, completed=self._done)
        self._progress.start()

    def advance(self, record: TrialRecord) -> None:
        if record.status == "error":
            self._errors += 1
        self._done += 1
        self._done_here += 1
        if not self._plain:
            self._progress.update(self._task, advance=1, errors=self._errors)
        elif self._clock() - self._printed >= self.PLAIN_EVERY_S:
            self._line()

    def stop(self) -> None:
        if self._plain:
            if self._running:
                self._line()
        else:
            self._progress.stop()

    def _line(self) -> None:
        now = self._clock()
        self._printed = now
        elapsed = now - self._started
        phase = self.phase()
        self._console.print(
            f"proctor: {self._done}/{self._total} trials done, {self._errors} errors, {elapsed:.0f}s elapsed"
            + (f"; {phase}" if phase else ""),
            markup=False,
            highlight=False,
        )

    def phase(self) -> str:
        """Servers starting until the first trial ends (a run's first seconds are spent there),
        then the estimated time left at this process's own pace; nothing once all are done."""
        if self._done >= self._total:
            return ""
        if self._done_here == 0:
            if not self._servers:
                return ""
            ready = len(self._servers & self._ready())
            return f"servers starting: {ready} of {len(self._servers)} ready"
        per_trial = (self._clock() - self._started) / self._done_here
        left = per_trial * (self._total - self._done)
        return f"ETA {_duration(left)}"


class _PhaseColumn(ProgressColumn):
    """The live bar's phase text, redrawn on every refresh so servers coming up are seen."""

    def __init__(self, owner: HeadlessProgress) -> None:
        super().__init__()
        self._owner = owner

    def render(self, task: Task) -> Text:
        return Text(self._owner.phase(), style="dim")


def _duration(seconds: float) -> str:
    s = max(0, round(seconds))
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


def _shared_servers(run: Run) -> tuple[set[str], Callable[[], set[str]]]:
    """The shared servers the selected arms start, and who says which are up (none: nothing to wait for)."""
    loaded, pool = getattr(run, "loaded", None), getattr(run, "pool", None)
    if loaded is None or pool is None:
        return set(), set
    arms = run.options.arms or list(loaded.suite.arms)
    names = {
        s
        for a in arms
        if a in loaded.suite.arms
        for s in [*loaded.suite.arms[a].servers, *loaded.suite.arms[a].distractors]
    }
    shared = {n for n in names if n in loaded.servers and loaded.servers[n].lifecycle != "per_trial"}
    return shared, pool.shared_started


def summary_table(db: Path) -> Table:
    with StoreReader(db) as reader:
        trials = reader.trials()
        scores = reader.scores()
    fairness = {s.trial_id: s.value for s in scores if s.name == ScoreName.FAIRNESS}
    groups: dict[tuple[str, str], list[TrialRecord]] = defaultdict(list)
    for t in trials:
        groups[(t.arm, t.model)].append(t)
    # A narrow terminal squeezes the figures, never the names: "codei…" three times told the arms
    # apart by nothing. One model is named in the title, not in a column of the same name on each
    # row; a name longer than NAME_MAX folds onto a second line.
    models = sorted({m for _, m in groups})
    single = len(models) == 1
    title = f"proctor run summary · model {one_line(models[0], 60)}" if single else "proctor run summary"
    table = Table(title=Text(title), title_justify="left")
    names = ["arm"] if single else ["arm", "model"]
    for i, col in enumerate(names):
        widest = max((cell_len(one_line(key[i])) for key in groups), default=0)
        # no_wrap: rich squeezes the widest column that may wrap first, and that was the arm's.
        table.add_column(col, justify="left", no_wrap=widest <= NAME_MAX, overflow="fold")
    for col in ("trials", "done", "errors", "passed", "fairness", "tool calls", "tokens", "cost $", "wall s"):
        table.add_column(col, justify="right")
    for (arm, model), ts in sorted(groups.items()):
        done = [t for t in ts if t.status in ("finished", "error")]
        scored = [t.passed for t in ts if t.passed is not None]
        fair = [v for t in ts if (v := fairness.get(t.id)) is not None]
        # Names come from the suite: no escape sequence reaches the terminal.
        who = [Text(one_line(arm))] + ([] if single else [Text(one_line(model))])
        table.add_row(
            *who,
            str(len(ts)),
            str(len(done)),
            str(sum(t.status == "error" for t in ts)),
            f"{sum(scored)}/{len(scored)}" if scored else "-",
            f"{sum(fair) / len(fair):.3f}" if fair else "-",
            _mean([t.tool_calls for t in done]),
            _mean([(t.input_tokens or 0) + (t.output_tokens or 0) for t in done], "{:.0f}")
            + ("~" if any(t.tokens_estimated for t in done) else ""),
            "n/a" if any(t.cost_usd is None for t in done) else f"{sum(t.cost_usd or 0 for t in done):.4f}",
            _mean([t.wall_s for t in done], "{:.2f}"),
        )
    if any(t.model.startswith("offline:") for t in trials):
        table.caption = f"~ {OFFLINE_NOTE}; tokens and tool calls are means per trial"
    return table


def verdict_summary(db: Path) -> Text | None:
    """Why trials failed (the first ``FAILED_SHOWN``, each with its rule and numbers) and why
    others have no verdict (grouped by reason); None when every judged trial passed.

    A pass count says a trial failed, not why; "failed on grounding: 7 of 27 citations grounded
    (26%) < …" does. The words are store/verdict_reason.py's, as in the console and the reports."""
    with StoreReader(db) as reader:
        trials = reader.trials()
        passed = {s.trial_id: s for s in reader.scores(name=ScoreName.PASSED)}
        judge_errors: dict[int, list[str]] = defaultdict(list)
        for j in reader.judgments():
            if j.error:
                judge_errors[j.trial_id].append(j.error)
        scoring_errors: dict[int, str] = {}
        after = 0
        while chunk := reader.events_of_kind("error", after_id=after):
            after = chunk[-1].id
            for e in chunk:
                if isinstance(e.event, ErrorEvent) and e.event.where == "scoring" and e.trial_id is not None:
                    scoring_errors[e.trial_id] = f"{e.event.error_type}: {e.event.message}"

    def reason(t: TrialRecord) -> str:
        record = passed.get(t.id)
        try:
            details = None if record is None else record.parsed(PassedDetails)
        except UnreadableScore as err:
            return f"the passed score is unreadable ({err})"
        return verdict_reason(
            t.passed, details, judge_errors=judge_errors.get(t.id, ()), scoring_error=scoring_errors.get(t.id)
        )

    failed = [t for t in trials if t.passed is False]
    unjudged = Counter(reason(t) for t in trials if t.status == "finished" and t.passed is None)
    if not failed and not unjudged:
        return None
    text = Text()
    if failed:
        shown = failed[:FAILED_SHOWN]
        listed = f"; proctor report {shlex.quote(str(db))} --format md lists all {len(failed)}"
        more = listed if len(failed) > len(shown) else ""
        text.append(f"why trials failed ({len(shown)} of {len(failed)}{more})\n", style="bold")
        for t in shown:
            text.append(f"  #{t.id} {one_line(t.scenario, 40)} / {one_line(t.arm, 30)}: ", style="bold")
            text.append(f"{one_line(reason(t), 300)}\n", style="red")
    for why, n in unjudged.most_common():
        text.append(f"{n} trial{'s' if n != 1 else ''} ", style="bold magenta")
        text.append(f"with {one_line(why, 400)}\n")
    text.rstrip()
    return text


def error_summary(db: Path) -> Text | None:
    """Why trials ended in error, one line per cause with its first message; None without errors.

    A count of errors in the table says nothing a user can act on; "server 'fs' did not start:
    No such file or directory: …/server-filesytem" does. Sanitized: it quotes servers' stderr.
    """
    with StoreReader(db) as reader:
        trials = reader.trials()
        stopped = run_stop_message(reader)
    causes = group_errors((t.arm, t.error) for t in trials if t.status == "error")
    if not causes and stopped is None:
        return None
    text = Text()
    if stopped is not None:
        text.append("the run stopped with an error: ", style="bold red")
        text.append(one_line(stopped or "no message recorded", 300) + "\n")
    if causes:
        text.append("errors by cause\n", style="bold")
    for c in causes:
        text.append(f"  {c.trials} trial{'s' if c.trials != 1 else ''} ", style="bold red")
        text.append(f"({one_line(', '.join(c.arms), 80)}): {one_line(c.cause, MAX_CAUSE_CHARS)}\n")
        text.append(f"    first message: {one_line(c.first, 300)}\n", style="dim")
    text.rstrip()
    return text


def _mean(values: list[int | float | None], fmt: str = "{:.1f}") -> str:
    xs = [v for v in values if v is not None]
    return fmt.format(sum(xs) / len(xs)) if xs else "-"
