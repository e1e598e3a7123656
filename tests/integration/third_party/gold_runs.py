"""Runs of the third-party suites with ``offline:gold`` through proctor's command line."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest

from proctor.app.cli import main

GOLD = "offline:gold"


@dataclass(frozen=True)
class Recording:
    db: Path
    cache: Path  # PROCTOR_CACHE during the run: where its pinned project was checked out


def proctor(*args: str | Path, cache: Path | None = None) -> tuple[int, str]:
    """``proctor ARGS...`` in this process: its exit code and its output (stdout, then stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp, redirect_stdout(out), redirect_stderr(err):
        if cache is not None:
            mp.setenv("PROCTOR_CACHE", str(cache))  # pinned checkouts go here, not to ~/.cache
        code = main([str(a) for a in args])
    return code, out.getvalue() + err.getvalue()


def run_gold(suite_dir: Path, recording: Recording, *args: str) -> None:
    code, output = proctor(
        "run", suite_dir, "--models", GOLD, "--headless", "--db", recording.db, *args, cache=recording.cache
    )
    assert code == 0, output
