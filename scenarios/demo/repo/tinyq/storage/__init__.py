"""Storage backends: where jobs live between being enqueued and finishing.

``MemoryStorage`` is for tests and single-process use; ``SqliteStorage`` survives restarts
and lets several worker processes on one machine share a queue.
"""

from .base import Storage
from .memory import MemoryStorage
from .sqlite import SqliteStorage

__all__ = ["MemoryStorage", "SqliteStorage", "Storage", "open_storage"]


def open_storage(url: str) -> Storage:
    """Open a backend from a URL: ``memory://`` or ``sqlite:///path/to/file.db``."""
    if url == "memory://":
        return MemoryStorage()
    if url.startswith("sqlite:///"):
        return SqliteStorage(url[len("sqlite:///") :])
    raise ValueError(f"unsupported storage URL {url!r} (use memory:// or sqlite:///PATH)")
