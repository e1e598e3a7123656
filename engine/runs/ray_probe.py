"""What one Ray node has of what a run needs, asked before any trial is placed there.

``probe`` runs as a plain Ray task pinned to each node. It imports only the standard library and
is shipped by value (the executor registers this module with Ray's pickler), so it answers even
on a node where proctor is missing or another version: exactly the node that would otherwise
crash the driver with a raw ``ActorDiedError … No module named 'proctor'``. It reports names,
never values: whether each variable is set, whether each command is found.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import shutil
import socket
from dataclasses import dataclass


@dataclass(frozen=True)
class NodeView:
    """One node's answer; ``proctor`` is its version, or "" when it is not installed there."""

    host: str
    python: str
    proctor: str
    ray: str
    missing_variables: tuple[str, ...]
    missing_commands: tuple[str, ...]

    @classmethod
    def of(cls, answer: dict[str, object]) -> NodeView:
        """The view from ``probe``'s plain answer."""
        text = {k: str(answer.get(k, "")) for k in ("host", "python", "proctor", "ray")}
        return cls(
            **text,
            missing_variables=_names(answer.get("missing_variables")),
            missing_commands=_names(answer.get("missing_commands")),
        )


def probe(variables: list[str], commands: list[str]) -> dict[str, object]:
    """This node's view (the fields of ``NodeView``; a plain dict, so no proctor class crosses)."""
    return {
        "host": socket.gethostname(),
        "python": platform.python_version(),
        "proctor": _version("proctor"),
        "ray": _version("ray"),
        "missing_variables": tuple(n for n in variables if not os.environ.get(n)),
        "missing_commands": tuple(c for c in commands if shutil.which(c) is None),
    }


def _names(value: object) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, (list, tuple)) else ()


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return ""


def problems(node: str, here: NodeView, there: NodeView) -> list[str]:
    """What differs on ``there`` (a node) from ``here`` (the driver), as sentences naming the fix."""
    out = []
    if there.proctor != here.proctor:
        have = f"proctor {there.proctor}" if there.proctor else "no proctor"
        out.append(
            f"{have} (the driver has {here.proctor}): pip install 'proctor[ray]=={here.proctor}' there"
        )
    if there.ray != here.ray:
        out.append(f"Ray {there.ray or 'missing'} (the driver has {here.ray})")
    if there.python.rsplit(".", 1)[0] != here.python.rsplit(".", 1)[0]:
        out.append(f"Python {there.python} (the driver has {here.python})")
    variables = [n for n in there.missing_variables if n not in here.missing_variables]
    if variables:
        out.append(
            f"not set there: {', '.join(variables)} (set on the driver; export them before that node's 'ray start')"
        )
    commands = [c for c in there.missing_commands if c not in here.missing_commands]
    if commands:
        out.append(f"server commands not found there: {', '.join(commands)}")
    return [f"node {node}: {p}" for p in out]


__all__ = ["NodeView", "probe", "problems"]
