"""Run one server process so that nothing it starts outlives proctor.

``python -m proctor.engine.tools.supervise --log FILE --log-bytes N -- COMMAND ARGS...`` is what
proctor starts instead of a server's own command. The supervisor leads a process group of its
own, asks Linux to signal it when proctor dies (even by ``kill -9``), becomes a child subreaper
(a server's descendant that double-forks and calls ``setsid`` is reparented to it, not to init),
and starts the server with the same stdin and stdout and a parent-death SIGKILL, so killing the
supervisor kills the server too. When the server exits, when proctor goes away, or on
SIGTERM/SIGINT/SIGHUP, it terminates the group and every descendant, then kills what ignored
SIGTERM and names in ``killed-processes.log`` (beside the log; the report's notes) every process
that outlived the server. The server's stderr (and with ``--stdout-to-log`` its stdout) passes
into a capped, rotated, redacted log.

Signal handlers do nothing: ``signal.set_wakeup_fd`` writes each signal's number to a pipe that
the main thread waits on, so no handler takes a lock (``threading.Event.set`` in a handler
deadlocked against the main thread's own wait on that event).

Only the standard library and proctor.store.redaction are imported: it starts once per server.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType

from proctor.engine.tools.proc_tree import descendants, describe, group_members, reap_children
from proctor.engine.tools.server_log import CappedLog, pump
from proctor.store.redaction import Redactor

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
GRACE_S = 2.0
LINGER_S = 0.05  # what other processes get after the server exits, before SIGKILL
PARENT_POLL_S = 0.5  # a backstop: the parent-death signal follows the thread that started us
DEFAULT_LOG_BYTES = 1_000_000
KILLED_LOG = "killed-processes.log"
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _prctl(option: int, value: int) -> None:
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def _nothing(signum: int, frame: FrameType | None) -> None:
    """The wakeup fd carries the signal to the main loop; a handler that takes a lock can deadlock."""
    del signum, frame


def _bound_to(supervisor: int) -> Callable[[], None]:
    """Runs in the server's process before exec: die with the supervisor, even by ``kill -9``."""
    prctl = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None

    def bind() -> None:
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != supervisor:  # it died between fork and the request
            os._exit(137)

    return bind


class Supervisor:
    """The server's process, its exit code, and every other process reaped on the way."""

    def __init__(self, log: CappedLog, parent: int, wake: int) -> None:
        self.log, self.parent, self.wake = log, parent, wake
        self.server = 0
        self.code: int | None = None
        self.pumps: list[threading.Thread] = []

    def start(self, command: Sequence[str], stdout_to_log: bool) -> None:
        child = subprocess.Popen(
            command,
            stdin=0,
            stdout=subprocess.PIPE if stdout_to_log else 1,
            stderr=subprocess.PIPE,
            preexec_fn=_bound_to(os.getpid()),  # no thread runs yet: safe
        )
        self.server = child.pid
        # The server alone holds proctor's pipes: proctor sees EOF when it exits.
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
        for stream in (child.stderr, child.stdout):
            if stream is not None:
                fd = os.dup(stream.fileno())
                stream.close()
                self.pumps.append(threading.Thread(target=pump, args=(fd, self.log), daemon=True))
                self.pumps[-1].start()
        child.returncode = 0  # reaped here with waitpid(-1); Popen must never wait for it

    def serve(self) -> None:
        """Until the server exits, a stop signal arrives, or proctor is gone."""
        while self.code is None and os.getppid() == self.parent:
            ready, _, _ = select.select([self.wake], [], [], PARENT_POLL_S)
            signals = _drain(self.wake) if ready else b""
            self._reap()
            if self.code is None and any(s in signals for s in STOP_SIGNALS):
                return

    def _reap(self) -> None:
        for pid, status in reap_children():
            if pid == self.server:
                self.code = os.waitstatus_to_exitcode(status)

    def teardown(self) -> list[str]:
        """Stop the group and every descendant; return what outlived the server, described."""
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the group signal reaches this process too
        me = os.getpid()
        escaped = [p for p in descendants(me) if p not in group_members(me)]
        noted = {p: describe(p, self.log.redactor) for p in escaped}
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(0, signal.SIGTERM)
        for pid in escaped:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + GRACE_S
        while self.code is None and time.monotonic() < deadline:
            time.sleep(0.02)
            self._reap()
        linger = time.monotonic() + LINGER_S
        while (left := self._others()) and time.monotonic() < linger:
            time.sleep(0.01)
            self._reap()
        deadline = time.monotonic() + GRACE_S
        while (left or self.code is None) and time.monotonic() < deadline:
            for pid in left:  # again each turn: one that forks while it is being killed
                noted.setdefault(pid, describe(pid, self.log.redactor))
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)
            self._reap()
            left = self._others()
        return [d for pid, d in noted.items() if pid != self.server and d]

    def _others(self) -> list[int]:
        me = os.getpid()
        alive = set(descendants(me)) | set(group_members(me))
        return sorted(alive - {me})


def _read_secrets(limit: int = 1 << 20) -> dict[str, str]:
    """The secrets proctor wrote to stdin before closing it; stdin is then /dev/null for the server."""
    data = b""
    with contextlib.suppress(OSError):
        while len(data) < limit and (chunk := os.read(0, 65536)):
            data += chunk
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return _secrets_of(data)


def _secrets_of(data: bytes) -> dict[str, str]:
    """``{value: name}`` from proctor's JSON; anything else is no secrets, never a failed start."""
    try:
        loaded = json.loads(data or b"{}")
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in loaded.items()} if isinstance(loaded, dict) else {}


def _take_secrets_file(path: Path, limit: int = 1 << 20) -> dict[str, str]:
    """The secrets proctor wrote to a private file for a stdio server's supervisor (whose stdin is
    the protocol); the file is removed at once, so no later process finds it."""
    try:
        with open(path, "rb") as f:
            data = f.read(limit)
    except OSError:
        return {}
    finally:
        with contextlib.suppress(OSError):
            path.unlink()
    return _secrets_of(data)


def _drain(fd: int) -> bytes:
    got = b""
    with contextlib.suppress(BlockingIOError, InterruptedError):
        while chunk := os.read(fd, 512):
            got += chunk
    return got


def note_killed(log: Path, killed: Sequence[str]) -> None:
    """Name each process that had to be killed, in the server's log and the run's notes file."""
    server = log.name.removesuffix(".stderr.log")
    lines = "".join(f"{server}: killed {d}, which outlived the server\n" for d in killed)
    with contextlib.suppress(OSError), open(log.parent / KILLED_LOG, "a", encoding="utf-8") as out:
        out.write(lines)


def kill_group(pid_file: Path) -> None:
    """After the supervisor has exited: SIGKILL what is left of its group, in case it was killed
    itself (``kill -9``) before it could stop its server's other processes."""
    with contextlib.suppress(OSError, ValueError):
        pgid = int(pid_file.read_text())
        if pgid > 1:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        pid_file.unlink()


def killed_notes(log_dir: Path, limit: int = 20) -> list[str]:
    """The report's note on processes the supervisors had to kill in the run behind ``log_dir``."""
    try:
        lines = (log_dir / KILLED_LOG).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    if not lines:
        return []
    more = f"; and {len(lines) - limit} more (see {KILLED_LOG})" if len(lines) > limit else ""
    return [
        f"{len(lines)} server process(es) outlived their server and were killed: "
        + "; ".join(lines[:limit])
        + more
    ]


def supervised(
    command: str,
    args: Sequence[str],
    log: Path,
    log_bytes: int,
    *,
    stdout_to_log: bool = False,
    pid_file: Path | None = None,
    secrets_on_stdin: bool = False,
    secrets_file: Path | None = None,
) -> list[str]:
    """Arguments for ``sys.executable`` that run ``command args`` under the supervisor."""
    extra = ["--stdout-to-log"] if stdout_to_log else []
    extra += ["--pid-file", str(pid_file)] if pid_file is not None else []
    extra += ["--secrets-on-stdin"] if secrets_on_stdin else []
    extra += ["--secrets-file", str(secrets_file)] if secrets_file is not None else []
    return [
        "-m", __name__, "--parent", str(os.getpid()), "--log", str(log), "--log-bytes", str(log_bytes),
        *extra, "--", command, *args,
    ]  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="proctor-supervise")
    parser.add_argument("--parent", type=int, required=True, help="proctor's pid: gone means stop")
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--log-bytes", type=int, default=DEFAULT_LOG_BYTES)
    parser.add_argument("--stdout-to-log", action="store_true", help="the server's stdout is a log too")
    parser.add_argument("--pid-file", type=Path, help="where to write this pid (its process group's id)")
    parser.add_argument(
        "--secrets-on-stdin", action="store_true", help="read {value: name} JSON to redact, then EOF"
    )
    parser.add_argument(
        "--secrets-file", type=Path, help="read {value: name} JSON to redact from this file, then remove it"
    )
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no server command after --")
    if os.getpgid(0) != os.getpid():
        os.setpgid(0, 0)
    if args.pid_file is not None:
        args.pid_file.write_text(str(os.getpid()))
    wake, wake_w = os.pipe()
    os.set_blocking(wake, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    for sig in (*STOP_SIGNALS, signal.SIGCHLD):
        signal.signal(sig, _nothing)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    # --parent, not getppid(): proctor may already have died while this interpreter started.
    redactor = Redactor.from_environment(os.environ)
    if args.secrets_on_stdin:  # values the server's environment must not carry (a suite's headers:)
        for value, name in _read_secrets().items():
            redactor.add(value, name)
    if args.secrets_file is not None:  # a stdio server's stdin is the protocol: the file stands in
        for value, name in _take_secrets_file(args.secrets_file).items():
            redactor.add(value, name)
    log = CappedLog(args.log, args.log_bytes, redactor)
    sup = Supervisor(log, args.parent, wake)
    try:
        sup.start(command, args.stdout_to_log)
    except OSError as exc:
        log.write(f"proctor: could not start {command[0]!r}: {exc}\n".encode())
        log.close()
        return 127
    sup.serve()
    killed = sup.teardown()
    for thread in sup.pumps:  # what the server wrote last is in the log before it closes
        thread.join(timeout=1.0)
    if killed:
        note_killed(args.log, killed)
        for d in killed:
            log.write(f"proctor: killed {d}, which outlived the server\n".encode())
    log.close()
    code = sup.code
    return 0 if code is None else (code if code >= 0 else 128 - code)


if __name__ == "__main__":
    sys.exit(main())
