"""The process exit codes every ``proctor`` command returns: stable, because CI scripts read them."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    """The command did what it was asked (a run completed, even with failed answers)."""
    DIFFERS = 1
    """``proctor tools diff``: the two tool surfaces differ (as diff(1) and ``git diff --exit-code``)."""
    BAD_INPUT = 2
    """Bad input: suite, config, database or flags; the message names the file, the field and the fix."""
    FAILED = 3
    """A run completed but some trials ended in error, a check failed, or the gate failed."""
    INTERRUPTED = 130
    """Ctrl-C (SIGINT): the run stays resumable with ``--resume``."""
    TERMINATED = 143
    """SIGTERM or SIGHUP: handled like Ctrl-C; the run stays resumable."""
