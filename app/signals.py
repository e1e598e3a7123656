"""Which signals stop a run the way Ctrl-C does, shared by the headless run and the console."""

from __future__ import annotations

import signal


def stop_signals() -> list[int]:
    """SIGTERM always; SIGHUP unless this process was started with it ignored (nohup keeps it so)."""
    hup = [] if signal.getsignal(signal.SIGHUP) == signal.SIG_IGN else [signal.SIGHUP]
    return [signal.SIGTERM, *hup]


__all__ = ["stop_signals"]
