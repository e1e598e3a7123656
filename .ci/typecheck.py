"""Run mypy --strict on the proctor packages.

The packages live in top-level folders mapped under ``proctor.*`` (pyproject's package-dir);
mypy cannot follow an editable install's import hook, so we point it at a tree of symlinks
that has the installed layout.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ["app", "widgets", "engine", "scenarios", "store"]


def main() -> int:
    shadow = ROOT / "build" / "typecheck" / "proctor"
    shadow.mkdir(parents=True, exist_ok=True)
    for name in PACKAGES:
        link = shadow / name
        if not link.is_symlink():
            link.symlink_to(ROOT / name, target_is_directory=True)
    args = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml")]
    for name in PACKAGES:
        args += ["-p", f"proctor.{name}"]
    return subprocess.call(args, cwd=shadow.parent)


if __name__ == "__main__":
    sys.exit(main())
