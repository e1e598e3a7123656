"""The engine's side of operator commands: claim rows from ``commands``, act, record the outcome.

The console only inserts rows (store/operator_commands.py). While a run is live,
``consume_operator_commands`` claims pending rows about every half second and handles them one
at a time: ``rejudge`` ({trial_ids, passes, judge?}), ``rerun_trial`` ({trial_id}: a new attempt
through ``Run.run_trial``), ``lock_anchors``, ``verify_anchors``, ``cancel_run`` and ``call_tool``
({request_id, trial_id, server, tool, arguments}: see tool_recall.py). Each command
becomes OperatorCommand events (received, then done or failed with a message) and its row is
finished with the same outcome, so a console in another process sees what happened.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from proctor.engine.grading.anchors import lock_anchors, verify_anchors
from proctor.engine.grading.rejudge import (
    RejudgeError,
    RejudgeResult,
    RejudgeTarget,
    refuse_replay,
    rejudge_trials,
)
from proctor.engine.judges.registry import close_judges, make_suite_judges
from proctor.engine.runs.runner import Run
from proctor.engine.runs.tool_recall import RecallError, call_tool
from proctor.store.events import OperatorCommand
from proctor.store.operator_commands import OperatorCommandRow
from proctor.store.read.reader import StoreReader, TrialRecord
from proctor.store.redaction import redact

POLL_INTERVAL_S = 0.5
Cancel = Callable[[], object]
Handler = Callable[[Run, Mapping[str, Any], Cancel | None], Awaitable[str]]


class OperatorCommandFailed(Exception):
    """The command could not be carried out; the message is shown to the operator as is."""


def _int_list(value: object, name: str) -> list[int]:
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise OperatorCommandFailed(f"'{name}' must be a list of trial ids")
    return list(value)


def _positive_int(value: object, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise OperatorCommandFailed(f"'{name}' must be a whole number of at least 1")
    return value


def _summary(results: list[RejudgeResult]) -> str:
    done = [r for r in results if not r.skipped]
    passes = sorted({p for r in done for ps in r.new_passes.values() for p in ps})
    judges = sorted({j for r in done for j in r.new_passes})
    text = f"re-judged {len(done)} trial(s) with {', '.join(judges) or 'no judge'}"
    if passes:
        text += f", passes {passes[0]}–{passes[-1]}" if len(passes) > 1 else f", pass {passes[0]}"
    errors = sum(r.errors for r in done)
    if errors:
        text += f"; {errors} judge error(s) recorded"
    skipped = [f"#{r.trial_id} ({r.skipped})" for r in results if r.skipped]
    if skipped:
        text += "; skipped " + ", ".join(skipped)
    return text


async def _rejudge(run: Run, args: Mapping[str, Any], cancel: Cancel | None) -> str:
    ids = _int_list(args["trial_ids"], "trial_ids") if "trial_ids" in args else None
    passes = _positive_int(args.get("passes", 1), "passes")
    judge = args.get("judge")
    if judge is not None and not isinstance(judge, str):
        raise OperatorCommandFailed("'judge' must be a model id such as offline:lexical")
    with StoreReader(run.options.db) as reader:
        stored = reader.run()
    try:
        refuse_replay(run.options.db, stored.config if stored is not None else {})
    except RejudgeError as exc:  # the console's re-judge of a replay run, as ``proctor judge``'s
        raise OperatorCommandFailed(str(exc)) from None
    judges = make_suite_judges(run.loaded.suite, judge or None)
    try:
        await run.writer.flush()
        target = RejudgeTarget(run.options.db, run.writer, run.run_id, run.loaded, run.workspace)
        return _summary(await rejudge_trials(target, judges, passes=passes, trial_ids=ids))
    finally:
        await close_judges(judges)


def _trial(db: Path, trial_id: int) -> TrialRecord:
    with StoreReader(db) as reader:
        record = reader.trial(trial_id)
    if record is None:
        raise OperatorCommandFailed(f"no trial with id {trial_id}")
    return record


async def _rerun(run: Run, args: Mapping[str, Any], cancel: Cancel | None) -> str:
    trial_id = _positive_int(args.get("trial_id"), "trial_id")
    await run.writer.flush()
    record = await asyncio.to_thread(_trial, run.options.db, trial_id)
    if record.status == "running":
        raise OperatorCommandFailed(f"trial #{trial_id} is running; re-run it once it has finished")
    await run.run_trial(record)
    await run.writer.flush()
    after = await asyncio.to_thread(_trial, run.options.db, trial_id)
    verdict = {True: "passed", False: "failed", None: "not judged"}[after.passed]
    return f"trial #{trial_id} re-run as attempt {after.attempt}: {after.status}, {verdict}"


async def _lock(run: Run, args: Mapping[str, Any], cancel: Cancel | None) -> str:
    await run.writer.flush()
    result = await asyncio.to_thread(lock_anchors, run.loaded.root, run.options.db)
    return (
        f"locked {len(result.anchors)} anchor transcript(s) of {len(result.scenarios)} held-out "
        f"scenario(s) into {result.lock_path} ({len(result.files)} files hashed); "
        + (f"suite.yaml got {result.suite_line}" if result.suite_line else "suite.yaml unchanged")
    )


async def _verify(run: Run, args: Mapping[str, Any], cancel: Cancel | None) -> str:
    result = await verify_anchors(run.loaded.root)
    if not result.passed:
        raise OperatorCommandFailed(result.message())
    return result.message()


async def _cancel(run: Run, args: Mapping[str, Any], cancel: Cancel | None) -> str:
    if cancel is None:
        raise OperatorCommandFailed("this engine was started without a way to cancel the run")
    cancel()
    return "run cancelled by the operator; finished trials stay, the rest can be resumed"


async def _call_tool(run: Run, args: Mapping[str, Any], cancel: Cancel | None) -> str:
    trial_id = _positive_int(args.get("trial_id"), "trial_id")
    record = await asyncio.to_thread(_trial, run.options.db, trial_id)
    try:
        return await call_tool(run, args, record)
    except RecallError as exc:
        raise OperatorCommandFailed(str(exc)) from exc


HANDLERS: dict[str, Handler] = {
    "rejudge": _rejudge,
    "rerun_trial": _rerun,
    "lock_anchors": _lock,
    "verify_anchors": _verify,
    "cancel_run": _cancel,
    "call_tool": _call_tool,
}


async def handle_operator_command(run: Run, command: OperatorCommandRow, cancel: Cancel | None) -> bool:
    """Carry out one claimed command; record received/done/failed and finish its row."""

    def record(status: Literal["received", "done", "failed"], message: str = "") -> None:
        event = OperatorCommand(command=command.command, args=command.args, status=status, message=message)
        run.writer.emit(run.run_id, event)

    record("received")
    handler = HANDLERS.get(command.command)
    ok = False
    try:
        if handler is None:
            raise OperatorCommandFailed(f"unknown command {command.command!r}")
        message = await handler(run, command.args, cancel)
        ok = True
    except OperatorCommandFailed as exc:
        message = str(exc)
    except Exception as exc:
        message = f"{type(exc).__name__}: {redact(str(exc))}"
    record("done" if ok else "failed", message)
    await run.writer.finish_operator_command(command.id, ok, message)
    return ok


async def poll_operator_commands(run: Run, cancel: Cancel | None = None) -> list[OperatorCommandRow]:
    """Claim every pending command and handle them in order; return what was handled."""
    commands = await run.writer.claim_operator_commands()
    for command in commands:
        await handle_operator_command(run, command, cancel)
    return commands


async def consume_operator_commands(
    run: Run,
    *,
    interval_s: float = POLL_INTERVAL_S,
    cancel: Cancel | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    """Poll and handle commands until ``stop`` is set (or the task is cancelled)."""
    halt = stop or asyncio.Event()
    while not halt.is_set():
        await poll_operator_commands(run, cancel)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(halt.wait(), interval_s)
    await poll_operator_commands(
        run, cancel
    )  # answer what arrived since the last poll, never leave it pending


async def execute_with_operator_commands(
    run: Run, trials: list[TrialRecord], *, interval_s: float = POLL_INTERVAL_S
) -> str:
    """``run.execute(trials)`` with operator commands served while it runs; returns the run's status."""
    execution = asyncio.create_task(run.execute(trials))
    operator_cancelled = False

    def cancel() -> None:
        nonlocal operator_cancelled
        operator_cancelled = True
        run.cancel_status = "cancelled"
        execution.cancel()

    stop = asyncio.Event()
    consumer = asyncio.create_task(
        consume_operator_commands(run, interval_s=interval_s, cancel=cancel, stop=stop)
    )
    try:
        return await execution
    except asyncio.CancelledError:
        if operator_cancelled and execution.cancelled():
            return "cancelled"
        raise
    finally:
        stop.set()
        await consumer


__all__ = [
    "HANDLERS",
    "POLL_INTERVAL_S",
    "OperatorCommandFailed",
    "consume_operator_commands",
    "execute_with_operator_commands",
    "handle_operator_command",
    "poll_operator_commands",
]
