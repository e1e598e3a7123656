"""The engine in a process of its own while the console is open (``proctor run`` / ``proctor demo``).

The console and the engine shared one event loop: digesting a 30 MB tool result or a burst of
events delayed key presses. Now the console starts ``proctor engine-process`` (a hidden
command) and is only a reader of the database and a writer of operator commands, which the
child serves after its last trial. Stopping the console sends the child SIGTERM (flushed,
marked interrupted, resumable, as with Ctrl-C); the child also stops when its parent is gone,
so a console killed with ``kill -9`` leaves no engine behind.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import signal
import stat
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from proctor.app.exit_codes import ExitCode
from proctor.app.signals import stop_signals
from proctor.engine.runs.options import RunOptions
from proctor.engine.tools.proc_tree import children
from proctor.store.run_files import logs_dir

STOP_GRACE_S = 8.0
PARENT_CHECK_S = 1.0


class EngineExited(RuntimeError):
    """The engine process ended on its own with a failure; the message ends with its stderr."""


def options_json(options: RunOptions) -> str:
    """Every field of the options, so the engine process runs exactly what the user asked for."""
    fields: dict[str, Any] = asdict(options)
    fields["db"] = str(options.db)
    return json.dumps(fields)


def options_from_json(text: str) -> RunOptions:
    """The options ``options_json`` wrote, as they were (JSON gives lists where they were tuples)."""
    fields = json.loads(text)
    return RunOptions(**{**fields, "db": Path(fields["db"]), "left_out": tuple(fields.get("left_out", ()))})


def log_path(db: Path) -> Path:
    folder = logs_dir(db)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "engine.stderr.log"


async def run_engine_process(suite_dir: Path, options: RunOptions) -> None:
    """Run the suite in a child process until it fails or this task is cancelled."""
    log = log_path(options.db)
    with open(log, "ab") as err:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "proctor.app.cli",
            "engine-process",
            str(suite_dir),
            "--options",
            options_json(options),
            stdin=asyncio.subprocess.PIPE,  # never written: its end-of-file says the console is gone
            stdout=err,
            stderr=err,
            start_new_session=True,  # the terminal's Ctrl-C goes to the console, which stops it
        )
    try:
        code = await proc.wait()
    except asyncio.CancelledError:
        await _stop(proc)
        raise
    if code != 0:
        raise EngineExited(f"the engine process exited with status {code}: {_tail(log)}")


async def _stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGTERM)
    try:
        await asyncio.wait_for(asyncio.shield(proc.wait()), STOP_GRACE_S)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()


def _tail(log: Path, lines: int = 6) -> str:
    try:
        text = log.read_bytes()[-4000:].decode("utf-8", errors="replace")
    except OSError:
        return "(no log)"
    return " | ".join(text.strip().splitlines()[-lines:]) or "(nothing on stderr)"


async def _end_of_file(fd: int) -> None:
    """Wait until ``fd`` (a pipe nobody writes to) reports end-of-file."""
    loop = asyncio.get_running_loop()
    closed = loop.create_future()

    def readable() -> None:
        try:
            data = os.read(fd, 4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data and not closed.done():
            closed.set_result(None)

    os.set_blocking(fd, False)
    loop.add_reader(fd, readable)
    try:
        await closed
    finally:
        loop.remove_reader(fd)


def _stop_children() -> None:
    """SIGTERM to every child (server supervisors), so closing a session does not wait out the
    SDK's 2 s grace for a server that has not yet read its end of input."""
    for child in children(os.getpid()):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(child, signal.SIGTERM)


def engine_process_command(args: argparse.Namespace) -> int:
    """The child: run the suite and serve operator commands until told to stop."""
    from proctor.engine.runs.session import run_suite
    from proctor.engine.suites import load_suite

    loaded = load_suite(args.suite)
    options = options_from_json(args.options)
    parent = os.getppid()

    async def main() -> str:
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        for sig in stop_signals():
            loop.add_signal_handler(sig, task.cancel)

        async def watch_parent() -> None:
            # The console holds the write end of our stdin: the kernel closes it when the console
            # dies (even kill -9), which wakes this at once. Without that pipe, poll the parent.
            if stat.S_ISFIFO(os.fstat(0).st_mode):
                await _end_of_file(0)
            else:
                while os.getppid() == parent:  # noqa: ASYNC110
                    await asyncio.sleep(PARENT_CHECK_S)
            _stop_children()  # the console is gone: stop, flushed and resumable
            task.cancel()

        watcher = asyncio.create_task(watch_parent())
        try:
            return await run_suite(loaded, options, check_anchors=False, serve_after=True)
        finally:
            watcher.cancel()
            _stop_children()  # whatever stopped the run: no session waits out its server's grace

    try:
        status = asyncio.run(main())
    except (asyncio.CancelledError, KeyboardInterrupt):
        return ExitCode.OK  # asked to stop: the run is interrupted and resumable, not failed
    finally:
        gc.freeze()  # the run is flushed: no collection of the whole heap on the way out (~1 s loaded)
    return ExitCode.OK if status in ("finished", "cancelled") else ExitCode.FAILED


__all__ = [
    "EngineExited",
    "engine_process_command",
    "options_from_json",
    "options_json",
    "run_engine_process",
]
