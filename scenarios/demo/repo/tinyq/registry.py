"""Task registry: maps the task names stored in jobs to Python callables.

Jobs store a task's *name*, never a pickled function, so a job written by one version of an
application can be run by another as long as the name is still registered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from .errors import UnknownTask

TaskFn = Callable[..., Any]
F = TypeVar("F", bound=TaskFn)


class TaskRegistry:
    """Names to callables; one registry per application (or the module-level default)."""

    def __init__(self) -> None:
        self._tasks: dict[str, TaskFn] = {}

    def register(self, fn: TaskFn, name: str | None = None) -> str:
        """Register ``fn`` under ``name`` (default: ``module.qualname``) and return the name."""
        key = name or f"{fn.__module__}.{fn.__qualname__}"
        existing = self._tasks.get(key)
        if existing is not None and existing is not fn:
            raise ValueError(f"task name {key!r} is already registered to another function")
        self._tasks[key] = fn
        return key

    def resolve(self, name: str) -> TaskFn:
        """The callable registered under ``name``; raises :class:`UnknownTask` otherwise."""
        try:
            return self._tasks[name]
        except KeyError:
            raise UnknownTask(name) from None

    def names(self) -> list[str]:
        return sorted(self._tasks)

    def __contains__(self, name: object) -> bool:
        return name in self._tasks

    def __len__(self) -> int:
        return len(self._tasks)


default_registry = TaskRegistry()


def task(name: str | None = None, registry: TaskRegistry | None = None) -> Callable[[F], F]:
    """Decorator that registers a function as a task and returns it unchanged.

    Example::

        @task("emails.send")
        def send_email(to: str, subject: str) -> None: ...
    """

    def decorate(fn: F) -> F:
        (registry or default_registry).register(fn, name)
        return fn

    return decorate
