"""Console responsiveness measured in a real terminal: ``proctor watch`` inside tmux, under load.

Not a test: it prints figures, each next to a reference measured in the same run (these
machines are noisy). Exit code 1 when a goal is missed. Issue 13's goals:

* event-to-screen p95 <= 150 ms at 10k events/s. A writer *process* emits ~10,000 events/s
  through the real StoreWriter; every 100-200 ms it also emits a marker that changes the screen
  (a trial finishes: the dashboard's "K/N done" counts up; or, with a trial open, a tool call
  ``#mkNNNN`` joins its transcript) and notes the wall-clock time of that ``emit()``. The bench
  reads the tmux pane (``capture-pane`` over one control-mode client, every ``--poll-ms``) and
  notes when each marker is first on screen. Reference: when the same marker is first readable
  from the store by a bare SQL poll at the same cadence (the floor for any reader).
* a 30 MB tool result or a 10k events/s burst never delays a key press by more than 100 ms.
  Keys go in with ``tmux send-keys`` and the latency is send -> first capture showing the key's
  effect: j/k on the dashboard (the selected trial ``#N`` changes), PgUp and t in the trial
  view (its tail status flips between paused and following), / and enter there (its search
  box opens and closes; unlike PgUp they act while a transcript is still loading), enter on
  the dashboard (the trial view's title shows). Delay = the worst latency under load minus the
  median latency of the same key on the same screen while idle, measured in the same run; a
  bare Textual app in the same kind of pane gives the floor. The 30 MB cases: the result
  arrives for a trial while the dashboard is shown; it arrives in the trial view that is open;
  the trial holding it is opened (enter). Keys keep coming throughout.

    python tests/bench/bench_console_terminal.py [--rate 10000] [--seconds 8] [--size 160x50]
        [--mb 30] [--poll-ms 5] [--py-spy /tmp/pyspy-venv/bin/py-spy] [--flush-interval 0.05]

Each tmux server has a private socket (``tmux -L proctor-bench-PID-N``, no user config).
``--py-spy`` samples the console during the 30 MB phases (figures are then perturbed) and
prints where its threads spent that time; ``--flush-interval`` runs ``ProctorApp`` with another
flush cadence instead of ``proctor watch``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

ROOT = Path(__file__).resolve().parents[2]
EVENT_TO_SCREEN_P95_GOAL_MS = 150.0
KEY_DELAY_GOAL_MS = 100.0
RUN = "bench"
ARMS = ["baseline", "mcp"]
MODELS = [f"offline:m{i}" for i in range(5)]
KEY_TIMEOUT_S = 10.0
DONE_RE = re.compile(r"(\d+)/(\d+) done")
SELECTED_RE = re.compile(r"^ ?#(\d+) ", re.MULTILINE)
MARK_RE = re.compile(r"#(mk\d{4})\b")
BIG_TITLE = "result fs/ls #big"
FOLLOWING = "● following the tail"
SEARCH_HINT = "search the transcript"
PAUSED_RE = re.compile(r"⏸ paused · (\d+) new events")


# -- child: the engine side (a StoreWriter in its own process) ------------------------------------


def big_listing(mib: int) -> str:
    """``mib`` MiB of a recursive file listing: realistic tool output, no control characters."""
    rng = random.Random(13)
    lines: list[str] = []
    size, i = 0, 0
    while size < mib * 2**20:
        d = i // 200
        line = (
            f"-rw-r--r--  1 dev  staff  {rng.randint(100, 999_999):>8}  2024-{1 + i % 12:02d}-{1 + i % 28:02d} "
            f"12:{i % 60:02d}  src/pkg_{d // 50:03d}/module_{d:05d}/file_{i:07d}.py"
        )
        lines.append(line)
        size += len(line) + 1
        i += 1
    return "\n".join(lines)


def child_writer(db: str, n_trials: int, mib: int) -> None:
    """Create the run, then serve JSON commands from stdin (one reply line each): burst, big, quit."""
    from proctor.store.events import (
        Event,
        ModelRequest,
        ModelResponse,
        Scored,
        ToolCall,
        ToolResult,
        TrialFinished,
        TrialStarted,
        Usage,
    )
    from proctor.store.lock import EngineLock
    from proctor.store.write.writer import StoreWriter, TrialRow

    lock = EngineLock.try_acquire(Path(db))  # like a real engine: `watch` then serves no commands
    usage = Usage(input_tokens=500, output_tokens=20, estimated=True)
    big = big_listing(mib)

    def reply(obj: dict[str, Any]) -> None:
        print(json.dumps(obj), flush=True)

    async def burst(w: StoreWriter, cmd: dict[str, Any]) -> dict[str, Any]:
        rate, seconds, marker, trial = cmd["rate"], cmd["seconds"], cmd["marker"], cmd.get("trial")
        avoid = set(cmd.get("avoid", []))
        to_finish = [t for t in range(n_trials, 0, -1) if t not in avoid and t != trial]
        # The open trial gets only the markers (a live trial adds a few events a second, not 25).
        noise = [t for t in range(1, n_trials + 1) if t != trial]
        rng = random.Random(5)
        tick = 0.01
        per_tick = max(1, int(rate * tick))
        markers: list[tuple[str, float]] = []
        begin = time.perf_counter()
        t_begin = time.time()
        next_marker = begin + rng.uniform(0.1, 0.2)
        sent = step = 0
        while time.perf_counter() - begin < seconds:
            for _ in range(per_tick):
                tid = noise[step % len(noise)]
                ev: Event
                if step % 7 == 0:
                    ev = ModelResponse(turn=step // n_trials, model="m", text="thinking", tool_calls=[],
                                       stop_reason="tool_use", usage=usage, tool_io_tokens=100,
                                       cost_usd=0.0001, latency_s=0.01)  # fmt: skip
                elif step % 2:
                    ev = ToolCall(call_id=f"c{step}", server="s", tool="grep", arguments={"q": step})
                else:
                    ev = ToolResult(call_id=f"c{step}", server="s", tool="grep", content="hit\n" * 8,
                                    is_error=False, latency_s=0.001)  # fmt: skip
                w.emit(RUN, ev, trial_id=tid, attempt=1)
                step += 1
                sent += 1
            now = time.perf_counter()
            if now >= next_marker:
                next_marker = now + rng.uniform(0.1, 0.2)
                i = len(markers)
                if marker == "finish":
                    tid = to_finish[i]
                    markers.append((str(tid), time.time()))
                    w.emit(RUN, TrialFinished(status="finished", stop="answer", final_answer="done",
                                              tool_calls=3, usage=usage, cost_usd=0.01, wall_s=1.0),
                           trial_id=tid, attempt=1)  # fmt: skip
                    w.emit(RUN, Scored(name="passed", value=1.0, details={}), trial_id=tid, attempt=1)
                else:
                    label = f"mk{i:04d}"
                    markers.append((label, time.time()))
                    w.emit(RUN, ToolCall(call_id=label, server="s", tool="grep", arguments={"q": label}),
                           trial_id=trial, attempt=1)  # fmt: skip
            target = begin + sent / rate
            await asyncio.sleep(max(0.0, target - time.perf_counter()))
        elapsed = time.perf_counter() - begin
        await w.flush()
        return {"sent": sent, "rate": sent / elapsed, "begin": t_begin, "end": t_begin + elapsed,
                "markers": markers}  # fmt: skip

    async def big_result(w: StoreWriter, cmd: dict[str, Any]) -> dict[str, Any]:
        trial = cmd["trial"]
        t_emit = time.time()
        w.emit(RUN, ToolCall(call_id="big", server="fs", tool="ls", arguments={"path": "/", "recursive": True}),
               trial_id=trial, attempt=1)  # fmt: skip
        w.emit(RUN, ToolResult(call_id="big", server="fs", tool="ls", content=big, is_error=False, latency_s=0.8),
               trial_id=trial, attempt=1)  # fmt: skip
        t_emitted = time.time()
        await w.flush()
        return {"t_emit": t_emit, "t_emitted": t_emitted, "t_committed": time.time(), "bytes": len(big)}

    async def main() -> None:
        w = await StoreWriter.open(db)
        await w.create_run(RUN, "bench", {"held_out": []})
        rows = [TrialRow(f"s{i // 10:03d}", ARMS[i // 5 % 2], MODELS[i % 5], 0, i) for i in range(n_trials)]
        await w.add_trials(RUN, rows)
        for i, row in enumerate(rows):
            tid = i + 1
            w.emit(RUN, TrialStarted(scenario=row.scenario, arm=row.arm, model=row.model, epoch=0, seed=i,
                                     attempt=1), trial_id=tid, attempt=1)  # fmt: skip
            w.emit(RUN, ModelRequest(turn=1, messages=2, tools=3), trial_id=tid, attempt=1)
            w.emit(RUN, ToolCall(call_id=f"setup{tid}", server="s", tool="grep", arguments={"q": "x"}),
                   trial_id=tid, attempt=1)  # fmt: skip
            w.emit(RUN, ToolResult(call_id=f"setup{tid}", server="s", tool="grep", content="a.py:1: x\n" * 5,
                                   is_error=False, latency_s=0.002), trial_id=tid, attempt=1)  # fmt: skip
        await w.flush()
        reply({"ready": True, "pid": os.getpid(), "locked": lock is not None})
        loop = asyncio.get_running_loop()
        while True:
            line = await loop.run_in_executor(None, sys.stdin.readline)
            if not line:
                break
            cmd = json.loads(line)
            if cmd["op"] == "burst":
                reply(await burst(w, cmd))
            elif cmd["op"] == "big":
                reply(await big_result(w, cmd))
            else:
                break
        await w.close()

    asyncio.run(main())


class Writer:
    """The bench's handle on the child writer process."""

    def __init__(self, db: Path, n_trials: int, mib: int) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--child-writer", str(db), str(n_trials), str(mib)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        hello = self.read()
        self.pid = int(hello["pid"])
        self.locked = bool(hello["locked"])

    def send(self, cmd: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()

    def read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the writer process ended (exit code {self.proc.wait()})")
        result: dict[str, Any] = json.loads(line)
        return result

    def close(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                self.send({"op": "quit"})
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# -- the terminal ---------------------------------------------------------------------------------


_SOCKETS = itertools.count()


class Tmux:
    """A private tmux server (its own socket) running one command in a W x H pane, read and driven
    through one control-mode client (a capture costs ~1-2 ms instead of a process spawn)."""

    def __init__(self, command: list[str], width: int, height: int, workdir: Path) -> None:
        self.socket = f"proctor-bench-{os.getpid()}-{next(_SOCKETS)}"
        self.base = ["tmux", "-u", "-L", self.socket]
        conf = workdir / "tmux.conf"
        terminal = "tmux-256color" if _has_terminfo("tmux-256color") else "screen-256color"
        conf.write_text(
            f'set -g default-terminal "{terminal}"\nset -g status off\nset -g remain-on-exit on\n'
            "set -g history-limit 0\nset -g exit-empty on\n"
        )
        env = {**os.environ, "TERM": os.environ.get("TERM") or "xterm-256color", "LANG": "C.UTF-8"}
        subprocess.run(
            [*self.base, "-f", str(conf), "new-session", "-d", "-s", "bench", "-x", str(width), "-y", str(height),
             "-c", str(ROOT), "-e", "COLORTERM=truecolor", "-e", "LANG=C.UTF-8", *command],
            check=True, env=env,
        )  # fmt: skip
        self.client = subprocess.Popen(
            [*self.base, "-C", "attach-session", "-t", "bench", "-f", "ignore-size,no-output"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        try:
            self._sync()
            self.server_pid = int(self.cmd("display-message -p '#{pid}'")[0])
            self.socket_path = Path(self.cmd("display-message -p '#{socket_path}'")[0])
            self.pane_pid = int(self.cmd("display-message -p -t bench '#{pane_pid}'")[0])
            size = self.cmd("display-message -p -t bench '#{pane_width}x#{pane_height}'")[0]
            if size != f"{width}x{height}":
                raise RuntimeError(f"the pane is {size}, not {width}x{height}")
        except BaseException:
            self.close()
            raise

    def _sync(self) -> None:
        assert self.client.stdin is not None and self.client.stdout is not None
        self.client.stdin.write(b"display-message -p BENCH-SYNC\n")
        self.client.stdin.flush()
        while True:
            line = self.client.stdout.readline()
            if not line:
                raise RuntimeError("the tmux control client ended")
            if line.rstrip(b"\n") == b"BENCH-SYNC":
                self.client.stdout.readline()  # its %end
                return

    def cmd(self, command: str) -> list[str]:
        assert self.client.stdin is not None and self.client.stdout is not None
        self.client.stdin.write(command.encode() + b"\n")
        self.client.stdin.flush()
        lines: list[bytes] = []
        inside = False
        while True:
            line = self.client.stdout.readline()
            if not line:
                raise RuntimeError("the tmux control client ended")
            if not inside:
                # Blocks flagged 0 answer commands this client did not send (the attach itself).
                inside = line.startswith(b"%begin ") and line.split()[-1] == b"1"
                continue
            if line.startswith((b"%end ", b"%error ")):
                text = [x.decode("utf-8", "replace").rstrip("\n") for x in lines]
                if line.startswith(b"%error "):
                    raise RuntimeError(f"tmux {command!r}: {' '.join(text)}")
                return text
            lines.append(line)

    def capture(self) -> str:
        return "\n".join(self.cmd("capture-pane -p -t bench"))

    def send(self, key: str) -> None:
        self.cmd(f"send-keys -t bench {key}")

    def close(self) -> None:
        with contextlib.suppress(Exception):
            assert self.client.stdin is not None
            self.client.stdin.write(b"kill-server\n")
            self.client.stdin.flush()
            self.client.stdin.close()
        try:
            self.client.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.client.kill()
            self.client.wait()
        subprocess.run([*self.base, "kill-server"], capture_output=True, check=False)
        if hasattr(self, "socket_path"):
            self.socket_path.unlink(missing_ok=True)  # tmux leaves it behind


BARE_APP = """
from textual.app import App
from textual.widgets import Static
class Bare(App[None]):
    BINDINGS = [("j", "move(1)", ""), ("k", "move(-1)", "")]
    row = 1
    def compose(self):
        yield Static("#1 bare textual app", id="selected")
    def action_move(self, step):
        self.row += step
        self.query_one("#selected", Static).update(f"#{self.row} bare textual app")
Bare().run()
"""


def bare_textual_keys(width: int, height: int, workdir: Path, count: int, period: float) -> list[KeyProbe]:
    """The floor: j/k in a bare Textual app that prints one line, in the same kind of tmux pane."""
    term = Tmux([sys.executable, "-c", BARE_APP], width, height, workdir)
    try:
        wait_screen(term, lambda t: "bare textual app" in t)
        time.sleep(0.5)
        return run_keys(term, KeyDriver(term, jk_probe(set())), count, period)
    finally:
        term.close()


def _has_terminfo(name: str) -> bool:
    return subprocess.run(["infocmp", name], capture_output=True, check=False).returncode == 0


# -- what the bench watches on screen -------------------------------------------------------------


def cpu_ticks(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])  # utime + stime, all threads


def machine_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs."""
    parts = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = parts[3] + parts[4]
    return sum(parts) - idle, sum(parts)


class CpuMeter:
    """CPU share of each process of interest over a phase (100 = one core)."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids
        self.hz = os.sysconf("SC_CLK_TCK")
        self.start()

    def start(self) -> None:
        self.t0 = time.perf_counter()
        self.ticks = {name: cpu_ticks(pid) for name, pid in self.pids.items()}
        self.machine = machine_ticks()

    def report(self) -> str:
        dt = time.perf_counter() - self.t0
        parts = [
            f"{name} {100 * (cpu_ticks(pid) - self.ticks[name]) / self.hz / dt:.0f}%"
            for name, pid in self.pids.items()
        ]
        ours = sum(cpu_ticks(pid) - self.ticks[name] for name, pid in self.pids.items()) / self.hz / dt
        busy, total = machine_ticks()
        cores = os.cpu_count() or 1
        machine = cores * (busy - self.machine[0]) / max(1, total - self.machine[1])
        return (
            f"CPU (100% = one core): {', '.join(parts)}; the machine's {cores} cores {machine / cores:.0%} "
            f"busy, other processes {100 * max(0.0, machine - ours):.0f}%"
        )


class Watcher(Protocol):
    def step(self, text: str, now: float) -> None: ...


@dataclass
class KeyProbe:
    kind: str
    key: str
    check: Callable[[str], bool]
    sent: float = 0.0
    latency: float | None = None  # None: never seen within KEY_TIMEOUT_S


def selected_id(text: str) -> int | None:
    m = SELECTED_RE.search(text)
    return int(m.group(1)) if m else None


def jk_probe(selected: set[int]) -> Callable[[str], KeyProbe]:
    """j and k in turn on the dashboard: the selected trial (``#N ...`` line) changes.
    ``selected`` collects the trials the cursor visits (markers must not finish those)."""
    presses = [0]

    def make(text: str) -> KeyProbe:
        before = selected_id(text)
        if before is not None:
            selected.add(before)
        presses[0] += 1
        key = "j" if presses[0] % 2 else "k"
        return KeyProbe("j/k", key, lambda t: selected_id(t) not in (None, before))

    return make


def tail_probe(text: str) -> KeyProbe:
    """In the trial view, PgUp leaves the tail (the status line says paused) and t follows it
    again. Cheap keys that move no focus: a focus change (/ for search, ? for help) rebuilds the
    footer, which alone costs the console ~50-100 ms of CPU per press."""
    if FOLLOWING in text:
        return KeyProbe("PgUp/t", "PPage", lambda t: PAUSED_RE.search(t) is not None)
    return KeyProbe("PgUp/t", "t", lambda t: FOLLOWING in t)


class KeyDriver:
    """Presses one key at a time: the next goes in a short random gap after the last one showed."""

    def __init__(self, term: Tmux, make: Callable[[str], KeyProbe], gap: tuple[float, float] = (0.02, 0.06)):
        self.term = term
        self.make = make
        self.gap = gap
        self.active = True
        self.pending: KeyProbe | None = None
        self.next_at = 0.0
        self.done: list[KeyProbe] = []
        self.rng = random.Random(11)

    def step(self, text: str, now: float) -> None:
        if self.pending is not None:
            if self.pending.check(text):
                self.pending.latency = now - self.pending.sent
            elif now - self.pending.sent < KEY_TIMEOUT_S:
                return
            self.done.append(self.pending)
            self.pending = None
            self.next_at = now + self.rng.uniform(*self.gap)
            return
        if self.active and now >= self.next_at:
            probe = self.make(text)
            probe.sent = time.time()
            self.term.send(probe.key)
            self.pending = probe

    @property
    def idle(self) -> bool:
        return self.pending is None


@dataclass
class Markers:
    """When each marker first showed on screen (``finish``: the done count; ``call``: ``#mkNNNN``)."""

    kind: str
    done0: int = 0
    seen: dict[str, float] = field(default_factory=dict)
    finished_seen: list[float] = field(default_factory=list)

    def step(self, text: str, now: float) -> None:
        if self.kind == "finish":
            m = DONE_RE.search(text)
            if m:
                while len(self.finished_seen) < int(m.group(1)) - self.done0:
                    self.finished_seen.append(now)
        else:
            for label in MARK_RE.findall(text):
                self.seen.setdefault(label, now)

    def seen_at(self, emitted: list[tuple[str, float]]) -> list[float | None]:
        if self.kind == "finish":
            return [
                self.finished_seen[i] if i < len(self.finished_seen) else None for i in range(len(emitted))
            ]
        return [self.seen.get(label) for label, _ in emitted]


class StoreMarkers:
    """The reference: when each marker is first readable from the store (bare SQL, no decoding of the noise)."""

    def __init__(self, db: Path, kind: str, trial: int | None) -> None:
        self.conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, isolation_level=None)
        self.kind = kind
        self.trial = trial
        self.after = int(self.conn.execute("SELECT COALESCE(MAX(id), 0) FROM events").fetchone()[0])
        self.seen: dict[str, float] = {}
        self.finished_seen: list[float] = []

    def step(self, text: str, now: float) -> None:
        del text
        if self.kind == "finish":
            rows = self.conn.execute(
                "SELECT id FROM events WHERE kind = 'trial_finished' AND id > ? ORDER BY id", (self.after,)
            ).fetchall()
            self.finished_seen.extend(now for _ in rows)
        else:
            rows = self.conn.execute(
                "SELECT id, payload FROM events WHERE kind = 'tool_call' AND id > ? AND trial_id = ? ORDER BY id",
                (self.after, self.trial),
            ).fetchall()
            for _, payload in rows:
                label = json.loads(payload).get("call_id", "")
                if label.startswith("mk"):
                    self.seen.setdefault(label, now)
        if rows:
            self.after = rows[-1][0]

    def seen_at(self, emitted: list[tuple[str, float]]) -> list[float | None]:
        if self.kind == "finish":
            return [
                self.finished_seen[i] if i < len(self.finished_seen) else None for i in range(len(emitted))
            ]
        return [self.seen.get(label) for label, _ in emitted]

    def close(self) -> None:
        self.conn.close()


class ScreenChanges:
    """When the screen's text changed: the console's visible refresh cadence."""

    def __init__(self) -> None:
        self.last = ""
        self.times: list[float] = []

    def step(self, text: str, now: float) -> None:
        if text != self.last:
            self.last = text
            self.times.append(now)

    def gaps(self) -> list[float]:
        return [b - a for a, b in zip(self.times, self.times[1:], strict=False)]


def marker_latencies(emitted: list[tuple[str, float]], seen: list[float | None]) -> tuple[list[float], int]:
    """Emit -> first seen, per marker. A marker never seen (it scrolled past between two screen
    reads) counts until the next marker that was seen: it was on screen no earlier."""
    out, missed = [], 0
    for i, (_, t) in enumerate(emitted):
        at = seen[i]
        if at is None:
            missed += 1
            at = next((x for x in seen[i + 1 :] if x is not None), None)
        out.append(float("inf") if at is None else at - t)
    return out, missed


@dataclass
class PollStats:
    captures: list[float] = field(default_factory=list)
    gaps: list[float] = field(default_factory=list)

    def describe(self) -> str:
        return (
            f"tmux poll: a capture-pane takes p50 {ms(pct(self.captures, 50))}, screen read every "
            f"p50 {ms(pct(self.gaps, 50))} / p95 {ms(pct(self.gaps, 95))} ({len(self.gaps):,} reads)"
        )


def poll(
    term: Tmux,
    watchers: list[Watcher],
    until: Callable[[str, float], bool],
    period: float,
    stats: PollStats | None = None,
    timeout: float = 60.0,
) -> str:
    """Read the screen every ``period`` and hand it to each watcher until ``until`` holds."""
    start = last = time.time()
    next_at = start
    while True:
        t0 = time.time()
        text = term.capture()
        now = time.time()
        if stats is not None:
            stats.captures.append(now - t0)
            stats.gaps.append(now - last)
        last = now
        for w in watchers:
            w.step(text, now)
        if until(text, now):
            return text
        if now - start > timeout:
            raise RuntimeError(f"timed out; the screen shows:\n{text}")
        next_at = max(next_at + period, time.time())
        time.sleep(max(0.0, next_at - time.time()))


def wait_screen(term: Tmux, predicate: Callable[[str], bool], timeout: float = 30.0) -> str:
    return poll(term, [], lambda text, _: predicate(text), 0.01, timeout=timeout)


def wait_quiet(term: Tmux, pid: int, timeout: float = 15.0) -> None:
    """Until the console spends < 10% of a core over 0.5 s (it has caught up with the store)."""
    hz = os.sysconf("SC_CLK_TCK")
    deadline = time.time() + timeout
    while time.time() < deadline:
        before = cpu_ticks(pid)
        time.sleep(0.5)
        if (cpu_ticks(pid) - before) / hz < 0.05:
            return
    print(f"  (note: the console did not go quiet within {timeout:.0f}s)")


def search_probe(text: str) -> KeyProbe:
    """In the trial view, / opens the search box and enter (nothing typed) closes it. Unlike
    PgUp, they act while the transcript is still loading (PgUp then has nothing to page)."""
    shown = SEARCH_HINT in text
    return KeyProbe("/ or enter", "Enter" if shown else "/", lambda t: (SEARCH_HINT in t) != shown)


def follow_tail(term: Tmux) -> None:
    if FOLLOWING not in wait_screen(term, lambda _: True):
        term.send("t")
        wait_screen(term, lambda t: FOLLOWING in t)


def run_keys(
    term: Tmux, driver: KeyDriver, count: int, period: float, stats: PollStats | None = None
) -> list[KeyProbe]:
    poll(term, [driver], lambda _t, _n: len(driver.done) >= count, period, stats)
    return driver.done


# -- figures --------------------------------------------------------------------------------------


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=1000, method="inclusive")[int(q * 10) - 1]


def ms(x: float) -> str:
    return f"{x * 1000:.1f} ms"


def latencies_of(probes: list[KeyProbe]) -> list[float]:
    return [p.latency if p.latency is not None else float("inf") for p in probes]


def describe_keys(label: str, probes: list[KeyProbe]) -> str:
    lat = latencies_of(probes)
    lost = sum(1 for p in probes if p.latency is None)
    extra = f", {lost} never showed within {KEY_TIMEOUT_S:.0f}s" if lost else ""
    return (
        f"{label}: key-to-screen p50 {ms(pct(lat, 50))}, p95 {ms(pct(lat, 95))}, "
        f"max {ms(max(lat, default=float('nan')))} (n={len(lat)}{extra})"
    )


class Report:
    def __init__(self) -> None:
        self.ok = True

    def bench(self, name: str, value_ms: float, goal_ms: float) -> None:
        passed = value_ms <= goal_ms  # nan and inf fail
        self.ok &= passed
        print(f"BENCH {name} {value_ms:.1f} ms goal <={goal_ms:g} {'PASS' if passed else 'FAIL'}", flush=True)


def key_delay(probes: list[KeyProbe], idle_median: dict[str, float]) -> float:
    """The worst extra latency of a key press over the same key's idle median (ms)."""
    delays = [(lat - idle_median[p.kind]) * 1000 for p, lat in zip(probes, latencies_of(probes), strict=True)]
    return max(delays, default=float("nan"))


# -- py-spy (optional) ----------------------------------------------------------------------------


OUR_FRAME = re.compile(rf"\((?:{re.escape(str(ROOT))}/)?(?:app|widgets|store|engine|scenarios)/[^:]*:\d+\)")


class Profiler:
    """``py-spy record`` of the console while a 30 MB phase runs; summarized per thread."""

    def __init__(self, py_spy: str | None, pid: int, workdir: Path) -> None:
        self.py_spy, self.pid, self.workdir = py_spy, pid, workdir
        self.proc: subprocess.Popen[bytes] | None = None
        self.out = workdir / "profile.txt"
        self.lines: list[str] = []

    def start(self, name: str) -> None:
        if not self.py_spy:
            return
        self.out = self.workdir / f"profile-{name}.txt"
        self.proc = subprocess.Popen(
            [self.py_spy, "record", "--pid", str(self.pid), "--rate", "200", "--format", "raw",
             "--output", str(self.out), "--threads", "--nonblocking"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        time.sleep(0.5)  # py-spy attaches

    def stop(self, title: str) -> None:
        if self.proc is None:
            return
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None
        if not self.out.exists():
            self.lines.append(f"  profile ({title}): py-spy wrote nothing")
            return
        threads: Counter[str] = Counter()
        frames: dict[str, Counter[str]] = {}
        inclusive: Counter[str] = Counter()
        for line in self.out.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            n = int(count)
            parts = stack.split(";")
            thread = parts[0].partition(": ")[2] or parts[0]
            threads[thread] += n
            ours = [f for f in parts[1:] if OUR_FRAME.search(f)]
            key = f"{ours[-1] if ours else '-'} -> {parts[-1]}"
            frames.setdefault(thread, Counter())[key] += n
            if thread == "MainThread":
                for frame in set(ours):
                    inclusive[frame] += n
        self.lines.append(
            f"  profile ({title}; raw stacks in {self.out}): py-spy at 200 Hz, busy samples per thread"
        )
        self.lines.append("  as 'innermost proctor frame -> leaf frame':")
        for thread, total in threads.most_common(4):
            self.lines.append(f"    {thread}: {total} samples ({total / 200:.2f} s)")
            for key, samples in frames[thread].most_common(6):
                self.lines.append(f"      {samples / 200 * 1000:7.0f} ms  {key}")
        self.lines.append("    MainThread, inclusive time per proctor frame (below the entry point):")
        main_total = threads.get("MainThread", 0)
        below = [(f, samples) for f, samples in inclusive.most_common() if samples < main_total]
        for frame, samples in below[:8]:
            self.lines.append(f"      {samples / 200 * 1000:7.0f} ms  {frame}")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


# -- the bench ------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rate", type=int, default=10_000, help="events/s of the burst")
    parser.add_argument("--seconds", type=float, default=8.0, help="length of each burst")
    parser.add_argument("--size", default="160x50", help="terminal size, WxH")
    parser.add_argument("--trials", type=int, default=400)
    parser.add_argument("--mb", type=int, default=30, help="MiB of the big tool result")
    parser.add_argument("--poll-ms", type=float, default=5.0, help="how often the screen is read")
    parser.add_argument("--idle-keys", type=int, default=16, help="key presses per idle reference")
    parser.add_argument("--py-spy", default=None, help="path of py-spy: profile the 30 MB phases")
    parser.add_argument(
        "--flush-interval",
        type=float,
        default=None,
        help="run ProctorApp(db, flush_interval=S) instead of `proctor watch` (to try another cadence)",
    )
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        print("BENCH console_event_to_screen_p95_terminal nan ms goal <=150 FAIL (tmux is not installed)")
        return 1
    width, height = (int(x) for x in args.size.lower().split("x"))
    period = args.poll_ms / 1000
    with tempfile.TemporaryDirectory(prefix="proctor-bench-term-") as tmp:
        workdir = Path(tmp)
        db = workdir / "run.db"
        print(
            f"console in a real terminal: proctor watch in tmux {width}x{height}, {args.trials} trials, "
            f"bursts of {args.rate:,} events/s for {args.seconds:g}s, a {args.mb} MiB tool result",
            flush=True,
        )
        bare = bare_textual_keys(width, height, workdir, args.idle_keys, period)
        writer = Writer(db, args.trials, args.mb)
        term: Tmux | None = None
        profiler: Profiler | None = None
        try:
            command = [sys.executable, "-m", "proctor.app.cli", "watch", str(db)]
            if args.flush_interval is not None:
                print(
                    f"  (console: ProctorApp(db, flush_interval={args.flush_interval:g}), not proctor watch)"
                )
                launcher = "import sys; from proctor.app.tui import ProctorApp; "
                launcher += "ProctorApp(sys.argv[1], flush_interval=float(sys.argv[2])).run()"
                command = [sys.executable, "-c", launcher, str(db), str(args.flush_interval)]
            term = Tmux(command, width, height, workdir)
            keep = Path(tempfile.mkdtemp(prefix="proctor-bench-profile-")) if args.py_spy else workdir
            profiler = Profiler(args.py_spy, term.pane_pid, keep)
            ok = measure(args, term, writer, db, period, profiler, bare)
        finally:
            if profiler is not None:
                profiler.kill()
            if term is not None:
                term.close()
            writer.close()
            if term is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(term.pane_pid, signal.SIGKILL)  # only if SIGHUP from tmux did not end it
    print(
        "\nall terminal console figures within goal"
        if ok
        else "\nsome terminal console figures missed their goal"
    )
    return 0 if ok else 1


def event_to_screen(
    report: Report,
    name: str,
    res: dict[str, Any],
    screen: Markers,
    store: StoreMarkers,
    changes: ScreenChanges,
) -> None:
    emitted = [(str(label), float(t)) for label, t in res["markers"]]
    on_screen, missed = marker_latencies(emitted, screen.seen_at(emitted))
    in_store, _ = marker_latencies(emitted, store.seen_at(emitted))
    share = [a - b for a, b in zip(on_screen, in_store, strict=True)]
    report.bench(name, pct(on_screen, 95) * 1000, EVENT_TO_SCREEN_P95_GOAL_MS)
    gaps = [
        g for t, g in zip(changes.times[1:], changes.gaps(), strict=True) if res["begin"] <= t <= res["end"]
    ]
    scrolled = f", {missed} scrolled past unseen (timed by the next one shown)" if missed else ""
    print(
        f"reference: the same {len(emitted)} markers were readable from the store (bare SQL poll, same cadence) "
        f"after p50 {ms(pct(in_store, 50))}, p95 {ms(pct(in_store, 95))}"
    )
    print(
        f"  on screen p50 {ms(pct(on_screen, 50))}, max {ms(max(on_screen, default=float('nan')))}{scrolled}; "
        f"the console's own share (screen - store) p50 {ms(pct(share, 50))}, p95 {ms(pct(share, 95))}; "
        f"the screen changed every p50 {ms(pct(gaps, 50))} / p95 {ms(pct(gaps, 95))}"
    )


def measure(
    args: argparse.Namespace,
    term: Tmux,
    writer: Writer,
    db: Path,
    period: float,
    profiler: Profiler,
    bare: list[KeyProbe],
) -> bool:
    report = Report()
    console_pid = term.pane_pid
    cpu = CpuMeter(
        {"console": console_pid, "writer": writer.pid, "tmux": term.server_pid, "bench": os.getpid()}
    )
    wait_screen(term, lambda t: DONE_RE.search(t) is not None and selected_id(t) is not None)
    if not writer.locked:
        print("  (note: the writer could not take the run's engine lock)")
    wait_quiet(term, console_pid)

    # 1. idle reference on the dashboard: j/k.
    visited: set[int] = set()
    idle_jk = run_keys(term, KeyDriver(term, jk_probe(visited)), args.idle_keys, period)
    idle_med = {"j/k": pct(latencies_of(idle_jk), 50)}
    print("  " + describe_keys("idle dashboard, j/k", idle_jk))
    print("  " + describe_keys("a bare Textual app in the same tmux, j/k (the floor)", bare))

    # 2. 10k events/s burst on the dashboard: markers finish trials; j/k pressed throughout.
    print(f"\n10k burst on the dashboard ({args.seconds:g}s)", flush=True)
    m = DONE_RE.search(term.capture())
    assert m is not None
    markers = Markers("finish", done0=int(m.group(1)))
    store = StoreMarkers(db, "finish", None)
    keys = KeyDriver(term, jk_probe(visited))
    stats = PollStats()
    cpu.start()
    burst = {"op": "burst", "rate": args.rate, "seconds": args.seconds, "marker": "finish"}
    writer.send({**burst, "avoid": sorted(visited)})
    t_stop = time.time() + args.seconds + 0.2
    t_end = t_stop + 1.5

    def burst_over(_: str, now: float) -> bool:
        keys.active = now < t_stop
        return now >= t_end and keys.idle

    changes = ScreenChanges()
    poll(term, [markers, store, keys, changes], burst_over, period, stats)
    cpu_line = cpu.report()
    res = writer.read()
    store.close()
    event_to_screen(report, "console_event_to_screen_p95_terminal", res, markers, store, changes)
    under = [p for p in keys.done if res["begin"] <= p.sent <= res["end"]]
    report.bench("console_key_delay_10k_burst", key_delay(under, idle_med), KEY_DELAY_GOAL_MS)
    print("reference: " + describe_keys("idle dashboard, j/k", idle_jk))
    print("  " + describe_keys("during the burst, j/k", under))
    print(f"  writer achieved {res['rate']:,.0f} events/s; {stats.describe()}")
    print(f"  {cpu_line}", flush=True)
    wait_quiet(term, console_pid)

    # 3. a 30 MB tool result arrives (for a running trial on screen) while the dashboard is shown.
    other = min(set(range(1, args.trials + 1)) - visited)
    keys = KeyDriver(term, jk_probe(visited))
    on_dash, cpu_line, big = big_result(term, writer, keys, other, period, cpu, profiler, "dashboard", None)
    wait_quiet(term, console_pid)

    # 4. idle references in the trial view: opening it (enter), PgUp / t.
    trial = selected_id(term.capture())  # the trial the cursor is on (markers left it running)
    assert trial is not None
    title_re = re.compile(rf"^ ?trial #{trial} ", re.MULTILINE)

    def on_dashboard(t: str) -> bool:
        return selected_id(t) == trial and title_re.search(t) is None

    opens: list[KeyProbe] = []
    for _ in range(5):
        probe = KeyProbe("enter", "Enter", lambda t: title_re.search(t) is not None)
        probe.sent = time.time()
        term.send("Enter")
        wait_screen(term, probe.check)
        probe.latency = time.time() - probe.sent
        opens.append(probe)
        time.sleep(0.3)
        term.send("1")
        wait_screen(term, on_dashboard)
        time.sleep(0.2)
    idle_med["enter"] = pct(latencies_of(opens), 50)
    term.send("Enter")
    wait_screen(term, lambda t: title_re.search(t) is not None and "loading" not in t)
    wait_quiet(term, console_pid)

    # 5. 10k events/s burst with the trial view open: markers are tool calls in its transcript.
    print(f"\n10k burst with trial #{trial}'s view open ({args.seconds:g}s)", flush=True)
    markers = Markers("call")
    store = StoreMarkers(db, "call", trial)
    stats = PollStats()
    cpu.start()
    writer.send({**burst, "marker": "call", "trial": trial})
    t_end = time.time() + args.seconds + 1.7
    changes = ScreenChanges()
    poll(term, [markers, store, changes], lambda _t, now: now >= t_end, period, stats)
    cpu_line_burst = cpu.report()
    res = writer.read()
    store.close()
    event_to_screen(report, "console_event_to_screen_p95_terminal_trial_view", res, markers, store, changes)
    print(f"  writer achieved {res['rate']:,.0f} events/s; {stats.describe()}")
    print(f"  {cpu_line_burst}", flush=True)
    wait_quiet(term, console_pid)
    idle_tail = run_keys(term, KeyDriver(term, tail_probe), args.idle_keys, period)
    idle_med["PgUp/t"] = pct(latencies_of(idle_tail), 50)
    follow_tail(term)
    idle_search = run_keys(term, KeyDriver(term, search_probe), args.idle_keys, period)
    idle_med["/ or enter"] = pct(latencies_of(idle_search), 50)
    wait_quiet(term, console_pid)

    # 6. a 30 MB tool result arrives in the open trial view.
    keys = KeyDriver(term, tail_probe)
    in_view, cpu_line_view, big_view = big_result(
        term, writer, keys, trial, period, cpu, profiler, "open trial view", big_on_screen
    )
    follow_tail(term)
    wait_quiet(term, console_pid)

    # 7. open the trial holding it (enter from the dashboard), then keys.
    term.send("1")
    wait_screen(term, on_dashboard)
    wait_quiet(term, console_pid)
    keys = KeyDriver(term, search_probe)
    # Keys go in once enter showed: a key typed earlier is handled before the trial view opens
    # (? then opens the help page *under* the trial view).
    keys.active = False
    enter = KeyProbe("enter", "Enter", lambda t: title_re.search(t) is not None)
    loaded: dict[str, float] = {}

    def opened(text: str, now: float) -> bool:
        if enter.latency is None and enter.check(text):
            enter.latency = now - enter.sent
            keys.active = True
        title = next((line for line in text.splitlines() if title_re.match(line)), None)
        if title is not None and "loading" not in title:
            loaded.setdefault("t", now)
        if "t" in loaded and now - loaded["t"] > 1.5:
            keys.active = False
        return ("t" in loaded and not keys.active and keys.idle) or now - enter.sent > 60

    cpu.start()
    profiler.start("opening")
    enter.sent = time.time()
    term.send("Enter")
    poll(term, [keys], opened, period)
    profiler.stop("opening the trial that holds the 30 MB result")
    cpu_line_open = cpu.report()
    opening = [enter, *keys.done]
    load_s = loaded.get("t", float("nan")) - enter.sent

    print(
        f"\na {args.mb} MiB tool result: arriving on the dashboard, in the open trial view; opening its trial"
    )
    delays = {
        "arriving_dashboard": key_delay(on_dash, idle_med),
        "arriving_trial_view": key_delay(in_view, idle_med),
        "opening": key_delay(opening, idle_med),
    }
    report.bench("console_key_delay_30mb_result", max(delays.values()), KEY_DELAY_GOAL_MS)
    print(
        "reference: " + describe_keys("idle dashboard, j/k", idle_jk) + "; "
        + describe_keys("idle trial view, PgUp/t", idle_tail) + "; "
        + describe_keys("idle trial view, / and enter", idle_search) + "; "
        + describe_keys("idle open (enter -> trial title)", opens)
    )  # fmt: skip
    for (name, probes, cpu_text, written), label in zip(
        [("arriving_dashboard", on_dash, cpu_line, big), ("arriving_trial_view", in_view, cpu_line_view, big_view)],
        ["while it arrives for a trial on the dashboard, j/k", "while it arrives in the open trial view, PgUp/t"],
        strict=True,
    ):  # fmt: skip
        report.bench(f"console_key_delay_30mb_result_{name}", delays[name], KEY_DELAY_GOAL_MS)
        print("  " + describe_keys(label, probes))
        shown = (
            f"; on screen {written['shown'] - written['t_emit']:.2f} s after emit()"
            if "shown" in written
            else ""
        )
        print(
            f"  the writer's emit() took {written['t_emitted'] - written['t_emit']:.2f} s, committed after "
            f"{written['t_committed'] - written['t_emit']:.2f} s{shown}"
        )
        print(f"  {cpu_text}")
    report.bench("console_key_delay_30mb_result_opening", delays["opening"], KEY_DELAY_GOAL_MS)
    print("  " + describe_keys("opening it, enter then / and enter", opening))
    print(f"  enter -> title {ms(enter.latency or float('inf'))}; enter -> transcript loaded {load_s:.2f} s")
    slowest = max(opening, key=lambda p: float("inf") if p.latency is None else p.latency)
    print(
        f"  slowest: {slowest.kind} sent {slowest.sent - enter.sent:+.2f} s after enter, "
        f"shown after {ms(slowest.latency or float('inf'))}"
    )
    print(f"  {cpu_line_open}")
    if profiler.lines:
        print("\n".join(profiler.lines))
    return report.ok


def big_on_screen(text: str) -> bool:
    """The big result is in the open transcript: its entry shows, or the paused tail counts it."""
    if BIG_TITLE in text:
        return True
    m = PAUSED_RE.search(text)
    return m is not None and int(m.group(1)) >= 2


def big_result(
    term: Tmux,
    writer: Writer,
    keys: KeyDriver,
    trial: int,
    period: float,
    cpu: CpuMeter,
    profiler: Profiler,
    where: str,
    shown: Callable[[str], bool] | None,
) -> tuple[list[KeyProbe], str, dict[str, Any]]:
    """The writer emits the big result for ``trial`` while keys keep coming; they stop 2 s after
    it is on screen (``shown``) or, when nothing shows it, 2.5 s after it is committed."""
    run_keys(term, keys, 3, period)  # pressing already when it lands
    reply: dict[str, Any] = {}
    reader = threading.Thread(target=lambda: reply.update(writer.read()), daemon=True)
    cpu.start()
    profiler.start(where.replace(" ", "-"))
    t_sent = time.time()
    writer.send({"op": "big", "trial": trial})
    reader.start()

    def done(text: str, now: float) -> bool:
        if shown is not None and "shown" not in reply and shown(text):
            reply["shown"] = now
        t_ready = (
            reply.get("shown", float("inf")) if shown is not None else reply.get("t_committed", float("inf"))
        )
        if now - t_ready > (2.0 if shown is not None else 2.5):
            keys.active = False
        return (not keys.active and keys.idle) or now - t_sent > 60

    poll(term, [keys], done, period)
    profiler.stop(f"30 MB result arriving, {where}")
    cpu_line = cpu.report()
    reader.join(timeout=60)
    return [p for p in keys.done if p.sent >= t_sent], cpu_line, reply


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child-writer":
        child_writer(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit(main())
