"""Exceptions raised by tinyq.

Every error derives from :class:`TinyQError` so applications can catch the library's failures
without catching their own task exceptions by accident.
"""

from __future__ import annotations


class TinyQError(Exception):
    """Base class of every error tinyq raises itself."""


class ConfigError(TinyQError):
    """A configuration file or environment variable holds an invalid value."""


class StorageError(TinyQError):
    """A storage backend could not read or write a job."""


class JobNotFound(StorageError):
    """No job with the given id exists in the backend."""

    def __init__(self, job_id: str) -> None:
        super().__init__(f"job {job_id!r} not found")
        self.job_id = job_id


class UnknownTask(TinyQError):
    """A job names a task that is not registered in the worker's registry."""

    def __init__(self, name: str) -> None:
        super().__init__(f"no task registered under {name!r}")
        self.name = name


class PermanentJobError(TinyQError):
    """Raised by a task to say that retrying cannot help; the job goes straight to dead."""


class RateLimited(TinyQError):
    """A rate limiter refused a request; ``retry_after`` says when to try again (seconds)."""

    def __init__(self, retry_after: float) -> None:
        super().__init__(f"rate limited, retry after {retry_after:.3f}s")
        self.retry_after = retry_after
