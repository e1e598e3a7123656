"""Which of a server's tools the model is offered: a config's ``include_tools`` and ``exclude_tools``.

Clients decide what the model sees (Gemini CLI's ``includeTools``/``excludeTools``, Windsurf's
``disabledTools``, Codex's ``enabled_tools``/``disabled_tools``, Goose's ``available_tools``); the
reader turns each into these two lists, and every arm, listing and gold check applies them here.
Names may be globs (``git_*``). Excluding wins over including, as in Gemini CLI and Codex.
"""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatchcase

from proctor.scenarios.schema import ServerConfig


def is_offered(config: ServerConfig, tool: str) -> bool:
    """Whether the model may see and call ``tool`` of a server configured as ``config``."""
    if config.include_tools and not any(fnmatchcase(tool, p) for p in config.include_tools):
        return False
    return not any(fnmatchcase(tool, p) for p in config.exclude_tools)


def hidden_tools(config: ServerConfig, tools: Iterable[str]) -> list[str]:
    """The server's tools its config keeps from the model, sorted."""
    return sorted(t for t in tools if not is_offered(config, t))


def hidden_note(config: ServerConfig, tools: Iterable[str]) -> str:
    """``"; 44 hidden by include_tools/exclude_tools: a, b, …"``, or nothing when none is hidden."""
    hidden = hidden_tools(config, tools)
    if not hidden:
        return ""
    fields = "/".join(
        f for f, v in (("include_tools", config.include_tools), ("exclude_tools", config.exclude_tools)) if v
    )
    shown = ", ".join(hidden[:12]) + (f", … ({len(hidden) - 12} more)" if len(hidden) > 12 else "")
    return f"; {len(hidden)} hidden by {fields}: {shown}"


__all__ = ["hidden_note", "hidden_tools", "is_offered"]
