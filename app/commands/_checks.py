"""Checks shared by the commands that open an existing run database."""

from __future__ import annotations

from pathlib import Path


def need_db(db: Path) -> None:
    if not db.is_file():
        raise FileNotFoundError(f"{db}: no such run database")
