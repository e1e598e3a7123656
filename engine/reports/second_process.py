"""A second process for part of a report, so that two cores share the work.

The part must be a function of the run database alone, in a module that can run as
``python -m MODULE DB UP_TO_ID PARENT_FILE`` and write its pickled result to standard output
(``run_as_child``). On Linux, from a process with no other thread, the child is forked: it has
every module this process imported, and starts at once. Anywhere else it is a fresh interpreter
(a fork with other threads running could deadlock on a lock one of them held). Either way the
result is plain data computed by the same code, so it cannot differ from computing it here; a
child that does not start, fails or runs another copy of proctor returns nothing, and the caller
computes the part itself.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

Part = Callable[[Path, int], object]
"""The part: (database, events up to this id) -> a picklable result."""


class Child(Protocol):
    def output(self) -> bytes | None:
        """The child's pickled result once it has exited, or None if it failed."""

    def stop(self) -> None:
        """Ends the child (its result is no longer wanted) and reaps it."""


def start(part: Part, module: str, module_file: str, db: Path, up_to_id: int) -> Child | None:
    """``part(db, up_to_id)`` started in a second process, or None if none could start."""
    if _may_fork():
        return _fork(part, db, up_to_id)
    return _spawn(module, module_file, db, up_to_id)


def result(child: Child) -> object | None:
    """The child's result, or None if it failed."""
    out = child.output()
    if out is None:
        return None
    try:
        got: object = pickle.loads(out)  # our own child's output
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError):
        return None
    return got


def run_as_child(part: Part, module_file: str, argv: list[str]) -> int:
    """``python -m MODULE DB UP_TO_ID PARENT_FILE``: writes ``part``'s result; exits 2, for the
    parent to compute it, when this is not the parent's copy of the module."""
    if len(argv) > 2 and Path(module_file).resolve() != Path(argv[2]):
        return 2
    sys.stdout.buffer.write(_pickled(part(Path(argv[0]), int(argv[1]))))
    sys.stdout.buffer.flush()
    return 0


def _pickled(value: object) -> bytes:
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def _may_fork() -> bool:
    """Linux, and no thread but this one: not in Python (``threading``), not in a library (numpy
    starts some when imported; the report imports it late for that reason)."""
    if sys.platform != "linux" or not hasattr(os, "fork") or threading.active_count() != 1:
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


class _Forked:
    def __init__(self, pid: int, fd: int) -> None:
        self._pid, self._fd = pid, fd  # each -1 once reaped or closed

    def output(self) -> bytes | None:
        fd, self._fd = self._fd, -1
        chunks = []
        with open(fd, "rb", closefd=True) as pipe:
            while chunk := pipe.read(1 << 20):
                chunks.append(chunk)
        pid, self._pid = self._pid, -1
        _pid, status = os.waitpid(pid, 0)
        return b"".join(chunks) if os.waitstatus_to_exitcode(status) == 0 else None

    def stop(self) -> None:
        pid, self._pid = self._pid, -1
        if pid > 0:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)


def _fork(part: Part, db: Path, up_to_id: int) -> Child | None:
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:  # the child: never returns into the caller's code
        code = 1
        try:
            os.close(read_end)
            with open(write_end, "wb", closefd=True) as pipe:
                pipe.write(_pickled(part(db, up_to_id)))
            code = 0
        finally:
            os._exit(code)  # no atexit, no flushing the parent's buffers; an error is code 1
    os.close(write_end)
    return _Forked(pid, read_end)


class _Spawned:
    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self._proc = proc

    def output(self) -> bytes | None:
        out, _ = self._proc.communicate()
        return out if self._proc.returncode == 0 else None

    def stop(self) -> None:
        self._proc.kill()
        with contextlib.suppress(ValueError, OSError):  # its pipe closed already, by ``output``
            self._proc.communicate()


def _spawn(module: str, module_file: str, db: Path, up_to_id: int) -> Child | None:
    if not sys.executable:
        return None
    # The child finds proctor where this process did, and checks that it did (``run_as_child``).
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", module, str(db), str(up_to_id), str(Path(module_file).resolve())],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # a failure is computed again, and reported, by the parent
            env=env,
        )
    except OSError:
        return None
    return _Spawned(proc)


__all__ = ["Child", "Part", "result", "run_as_child", "start"]
