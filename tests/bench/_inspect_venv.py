"""The Inspect AI venv shared by the interop tests and ``bench_vs_inspect.py``.

inspect-ai lives in a venv of its own (its dependencies stay out of proctor's), pinned by
``tests/reference_servers/requirements-inspect.txt``. ``make test`` builds it once (its stamp
says it is done); ``inspect_python`` builds it on first use for a benchmark run by hand.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

INSPECT_VERSION = "0.3.285"
REFERENCE = Path(__file__).resolve().parents[1] / "reference_servers"
REQUIREMENTS = REFERENCE / "requirements-inspect.txt"
DEFAULT_VENV = REFERENCE / ".venv-inspect"
STAMP = ".installed-stamp"  # what the Makefile touches when the venv is complete


def installed_python(venv: Path = DEFAULT_VENV) -> Path | None:
    """The venv's interpreter when the venv is complete, else None."""
    python = venv / "bin" / "python"
    return python if (venv / STAMP).exists() and python.exists() else None


def inspect_python(venv: Path = DEFAULT_VENV) -> Path:
    """The venv's interpreter, with the pinned inspect-ai installed into it on first use."""
    if (python := installed_python(venv)) is not None:
        return python
    print(f"installing inspect-ai=={INSPECT_VERSION} into {venv} (once)...", flush=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    python = venv / "bin" / "python"
    steps = [
        [sys.executable, "-m", "venv", "--clear", str(venv)],
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "-r",
            str(REQUIREMENTS),
        ],
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            tail = "\n".join(line for line in done.stderr.splitlines() if "WARNING: Location" not in line)
            raise SystemExit(
                f"cannot build the Inspect AI venv ({' '.join(step[:4])}... exited {done.returncode}). "
                f"Is PyPI reachable?\n{tail[-2000:]}"
            )
    (venv / STAMP).write_text(INSPECT_VERSION + "\n")
    return python


__all__ = ["DEFAULT_VENV", "INSPECT_VERSION", "REQUIREMENTS", "inspect_python", "installed_python"]
