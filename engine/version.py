"""proctor's own version, as installed: what it calls itself to servers and in exported logs."""

from __future__ import annotations

from functools import cache
from importlib.metadata import PackageNotFoundError, version


@cache
def proctor_version() -> str:
    try:
        return version("proctor")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


__all__ = ["proctor_version"]
