"""Temporary alias of ``proctor.store.events`` while the engine's imports move there."""

from proctor.store.events import *  # noqa: F403
