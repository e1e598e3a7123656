"""The one error type for files a user wrote: suites, scenarios and MCP client configurations."""

from __future__ import annotations


class SuiteError(Exception):
    """A suite, scenario or server file is invalid; the message says where and how to fix it."""


__all__ = ["SuiteError"]
