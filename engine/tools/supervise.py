"""Run one server process so that nothing it starts outlives proctor.

``python -m proctor.engine.tools.supervise --log FILE --log-bytes N -- COMMAND ARGS...`` is what
proctor starts instead of a server's own command. The supervisor leads a process group of its
own, asks Linux to signal it when proctor dies (even by ``kill -9``), and starts the server
inside that group with the same stdin and stdout. When the server exits, when proctor goes away,
or on SIGTERM/SIGINT/SIGHUP, it terminates the whole group (the server and every grandchild
that did not start a session of its own), then kills what ignored SIGTERM. The server's stderr
passes through it into a capped, rotated, redacted log.

Only the standard library and proctor.store.redaction are imported: it starts once per server.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import BinaryIO

from proctor.store.redaction import Redactor

PR_SET_PDEATHSIG = 1
GRACE_S = 2.0
LINGER_S = 0.05  # what grandchildren get after the server exits, before SIGKILL
DEFAULT_LOG_BYTES = 1_000_000
_stop = threading.Event()


def _die_with_parent(parent: int) -> None:
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # proctor died before the request took effect
        _stop.set()


def _on_signal(signum: int, frame: FrameType | None) -> None:
    del signum, frame
    _stop.set()


class CappedLog:
    """Appends to ``path`` until it holds ``limit`` bytes, then rotates it to ``path.1`` once more."""

    def __init__(self, path: Path, limit: int, redactor: Redactor) -> None:
        self.path, self.limit, self.redactor = path, max(1024, limit), redactor
        self._file: BinaryIO = open(path, "ab")  # noqa: SIM115 - closed in close()
        self._size = self._file.tell()
        self._in_key = False

    def write(self, line: bytes) -> None:
        decoded = line.decode("utf-8", errors="replace")
        if self._in_key:  # a private key block spans lines; each line alone matches no shape
            self._in_key = "END" not in decoded or "PRIVATE KEY-----" not in decoded
            return
        if "PRIVATE KEY-----" in decoded and "BEGIN" in decoded and "END" not in decoded:
            self._in_key = True
        text = self.redactor.redact(decoded).encode()
        if len(text) > self.limit // 4:
            text = text[: self.limit // 4] + f"…[line cut: {len(line)} bytes]\n".encode()
        if self._size + len(text) > self.limit:
            self._rotate()
        self._file.write(text)
        self._file.flush()
        self._size += len(text)

    def _rotate(self) -> None:
        self._file.close()
        os.replace(self.path, self.path.with_name(self.path.name + ".1"))
        self._file = open(self.path, "ab")  # noqa: SIM115
        self._size = 0
        self._file.write(b"[log rotated: the previous part is in the .1 file; older output was dropped]\n")

    def close(self) -> None:
        self._file.close()


def _wait_then_stop(child: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        child.wait()
    _stop.set()


def _pump(stream: BinaryIO, log: CappedLog) -> None:
    with contextlib.suppress(OSError, ValueError):
        for line in iter(lambda: stream.readline(65536), b""):
            log.write(line)


def _terminate_group(child: subprocess.Popen[bytes]) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the group signal reaches this process too
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(0, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    while child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    # Grandchildren get LINGER_S after the server to leave on their own; an empty group ends it now.
    pid, pgid = os.getpid(), os.getpgid(0)
    linger = time.monotonic() + LINGER_S
    while (others := [m for m in _group_members(pgid) if m != pid]) and time.monotonic() < linger:
        time.sleep(0.01)
    for member in others:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(member, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        child.wait(timeout=GRACE_S)


def _group_members(pgid: int) -> list[int]:
    """Processes in the group (from /proc), so the supervisor can SIGKILL them and survive itself."""
    out = []
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid:
                out.append(int(entry.name))
    return out


def supervised(command: str, args: Sequence[str], log: Path, log_bytes: int) -> list[str]:
    """Arguments for ``sys.executable`` that run ``command args`` under the supervisor."""
    return [
        "-m", __name__, "--parent", str(os.getpid()), "--log", str(log), "--log-bytes", str(log_bytes),
        "--", command, *args,
    ]  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="proctor-supervise")
    parser.add_argument("--parent", type=int, required=True, help="proctor's pid: gone means stop")
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--log-bytes", type=int, default=DEFAULT_LOG_BYTES)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no server command after --")
    parent = args.parent  # not getppid(): proctor may already have died while this interpreter started
    if os.getpgid(0) != os.getpid():
        os.setpgid(0, 0)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, _on_signal)
    _die_with_parent(parent)
    log = CappedLog(args.log, args.log_bytes, Redactor.from_environment(os.environ))
    try:
        child = subprocess.Popen(command, stdin=0, stdout=1, stderr=subprocess.PIPE)
    except OSError as exc:
        log.write(f"proctor: could not start {command[0]!r}: {exc}\n".encode())
        log.close()
        return 127
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)  # the server alone holds the pipes: proctor sees EOF when it exits
    os.dup2(devnull, 1)
    assert child.stderr is not None
    pump = threading.Thread(target=_pump, args=(child.stderr, log), daemon=True)
    pump.start()
    # The server's exit wakes the wait at once (a poll every 0.1 s made every close ~0.1 s slower).
    threading.Thread(target=_wait_then_stop, args=(child,), daemon=True).start()
    while child.returncode is None and not _stop.wait(0.5):
        pass
    code = child.returncode
    _terminate_group(child)
    pump.join(timeout=1.0)
    log.close()
    return 0 if code is None else (code if code >= 0 else 128 - code)


if __name__ == "__main__":
    sys.exit(main())
