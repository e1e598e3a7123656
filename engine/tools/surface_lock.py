"""The tool lock: a suite's reviewed tool surface, pinned by SHA-256 in ``SUITE/tools.lock.json``.

The file holds, per server, the hash of its whole surface and, per tool, the hash of its
definition and the definition itself (so a check can say how a tool changed, word by word, and a
reviewer can read in a pull request what was approved). A hand-edited definition whose hash no
longer matches is refused: the lock would otherwise approve something nobody listed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from proctor.engine.tools.surface import Surface, ToolDefinition, server_sha256, surface_of

LOCK_NAME = "tools.lock.json"
LOCK_VERSION = 1


class ToolLockError(ValueError):
    """A lock file that cannot be read or does not hold what its hashes say (bad input)."""


def lock_path(suite_dir: Path) -> Path:
    """Where a suite's lock lives: beside its ``suite.yaml``."""
    return (suite_dir.parent if suite_dir.name == "suite.yaml" else suite_dir) / LOCK_NAME


def lock_document(surface: Surface) -> dict[str, Any]:
    return {
        "version": LOCK_VERSION,
        "hash": "sha256 of canonical JSON (sorted keys, no spaces, UTF-8) of each tool's "
        "name, title, description, inputSchema, outputSchema and annotations; "
        "a server's hash is over [[name, sha256], ...] in name order",
        "servers": {
            server: {
                "sha256": server_sha256(tools),
                "tools": {
                    name: {"sha256": d.sha256(), "definition": d.pinned()} for name, d in tools.items()
                },
            }
            for server, tools in surface.items()
        },
    }


def write_lock(path: Path, surface: Surface) -> None:
    text = json.dumps(lock_document(surface), indent=2, ensure_ascii=False, sort_keys=False) + "\n"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def read_lock(path: Path) -> Surface:
    """The surface a lock approved; every recorded hash is checked against its definition."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ToolLockError(
            f"{path}: not a readable tool lock ({exc}); write it again with proctor tools lock"
        ) from exc
    if (
        not isinstance(doc, dict)
        or doc.get("version") != LOCK_VERSION
        or not isinstance(doc.get("servers"), dict)
    ):
        raise ToolLockError(
            f"{path}: field 'version' must be {LOCK_VERSION} with a 'servers' object; "
            "write it again with proctor tools lock"
        )
    definitions: list[ToolDefinition] = []
    for server, entry in doc["servers"].items():
        tools = entry.get("tools") if isinstance(entry, dict) else None
        if not isinstance(tools, dict):
            raise ToolLockError(f"{path}: servers.{server}.tools must be an object")
        for name, tool in tools.items():
            definitions.append(_definition(path, server, name, tool))
    surface = surface_of(definitions)
    for server, entry in doc["servers"].items():
        if entry.get("sha256") != server_sha256(surface.get(server, {})):
            raise ToolLockError(
                f"{path}: servers.{server}.sha256 does not match its tools; "
                "the file was edited by hand: write it again with proctor tools lock"
            )
    return surface


def _definition(path: Path, server: str, name: str, tool: Any) -> ToolDefinition:
    where = f"{path}: servers.{server}.tools.{name}"
    d = tool.get("definition") if isinstance(tool, dict) else None
    if not isinstance(d, dict) or not isinstance(d.get("inputSchema"), dict) or d.get("name") != name:
        raise ToolLockError(f"{where}.definition must hold the tool's name, description and inputSchema")
    definition = ToolDefinition(
        server=server,
        name=name,
        description=str(d.get("description", "")),
        input_schema=d["inputSchema"],
        title=d.get("title"),
        output_schema=d.get("outputSchema"),
        annotations=d.get("annotations"),
    )
    if tool.get("sha256") != definition.sha256():
        raise ToolLockError(
            f"{where}.sha256 does not match its definition; the file was edited by hand: "
            "write it again with proctor tools lock"
        )
    return definition


__all__ = ["LOCK_NAME", "ToolLockError", "lock_document", "lock_path", "read_lock", "write_lock"]
