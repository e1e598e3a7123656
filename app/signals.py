"""Which signals stop a run the way Ctrl-C does, shared by the headless run and the console."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


def stop_signals() -> list[int]:
    """SIGTERM always; SIGHUP unless this process was started with it ignored (nohup keeps it so)."""
    hup = [] if signal.getsignal(signal.SIGHUP) == signal.SIG_IGN else [signal.SIGHUP]
    return [signal.SIGTERM, *hup]


async def until_stop_signal(work: Awaitable[T], received: list[int]) -> T:
    """Await ``work``; a stop signal cancels it as Ctrl-C would, and is appended to ``received``
    (so the caller can tell a terminal's SIGTERM from a user's Ctrl-C in its exit code)."""
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    for sig in stop_signals():

        def stop(sig: int = sig) -> None:
            received.append(sig)
            task.cancel()

        loop.add_signal_handler(sig, stop)
    return await work


__all__ = ["stop_signals", "until_stop_signal"]
