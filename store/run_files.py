"""The files a run database keeps beside it, named in one place and made absolute once.

A server's supervisor runs in the server's own working directory (a config's ``cwd``), so any
path derived from the database and handed to a child must not depend on proctor's own working
directory: ``runs/x.db`` becomes ``/abs/runs/x.db.logs``.
"""

from __future__ import annotations

import os
from pathlib import Path


def absolute(path: Path) -> Path:
    """``path`` made absolute against this process's working directory, symlinks kept."""
    return Path(os.path.abspath(path))


def logs_dir(db: Path) -> Path:
    """``DB.logs``: server stderr logs, pid files, killed-processes.log, the engine's own log."""
    db = absolute(db)
    return db.with_name(db.name + ".logs")


__all__ = ["absolute", "logs_dir"]
