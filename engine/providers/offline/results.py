"""What the offline agent learns from a general server's results and errors.

A filesystem server answers ``list_allowed_directories`` with the folders it may touch; a git
server refuses a path "outside the allowed repository '/srv/repo'"; ``list_directory`` prints
``[FILE] committed.txt``; ``directory_tree`` returns JSON; ``search_files`` prints absolute
paths. These parsers turn such text into roots (where paths must go) and listed paths (what a
later call may take: "list the files and read the first one"), without knowing the server.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote

_ABSOLUTE = re.compile(r"(?<![^\s'\"`(\[=:,])(/(?:[\w.@+~-]+/?)*|[A-Za-z]:\\[^\s'\"`,;)\]]*)")
_FILE_URI = re.compile(r"\bfile://(?:localhost)?(/[^\s'\"`<>)\]]*)")
_HINT = re.compile(r"allow|outside|not in|permit|denied|root|must be (?:in|under|within)", re.IGNORECASE)
_MARKED = re.compile(r"^\s*\[(FILE|DIR)\]\s+(.+?)(?:\s{2,}\S.*)?$")
_RELATIVE = re.compile(r"^\s*((?:[\w.@+-]+/)*[\w@+-][\w.@+-]*(?:\.[A-Za-z0-9]{1,8}|/))\s*$")


def absolute_paths(text: str) -> list[str]:
    """Absolute paths written in ``text`` (``file://`` URIs first), in order, without trailing punctuation."""
    found = [unquote(m.group(1)) for m in _FILE_URI.finditer(text)]
    found += [m.group(1).rstrip(".,;:'\"") for m in _ABSOLUTE.finditer(_FILE_URI.sub(" ", text))]
    out: list[str] = []
    for path in found:
        path = path.rstrip("/") or "/"
        if len(path) > 1 and path not in out:
            out.append(path)
    return out


def roots_from(text: str) -> list[str]:
    """The folders a discovery tool's answer names ("Allowed directories:\\n/srv/repo")."""
    return absolute_paths(text)


def root_hint(error: str, sent: Iterable[str]) -> str:
    """The allowed root an error reveals ("... outside the allowed repository '/srv/repo'"), or ""."""
    if not _HINT.search(error):
        return ""
    mine = {s.rstrip("/") for s in sent}
    return next((path for path in absolute_paths(error) if path not in mine), "")


def listed_paths(text: str, base: str) -> tuple[list[str], list[str]]:
    """(files, folders) a listing names, joined to ``base`` when it lists them relatively."""
    files: list[str] = []
    dirs: list[str] = []
    tree = _json(text)
    if isinstance(tree, list | dict):
        _walk(tree, "", files, dirs)
    else:
        for line in text.splitlines():
            if m := _MARKED.match(line):
                (dirs if m.group(1) == "DIR" else files).append(m.group(2).strip())
            elif (abs_paths := absolute_paths(line.strip())) and line.strip() == abs_paths[0]:
                path = abs_paths[0]
                (files if "." in posixpath.basename(path) else dirs).append(path)
            elif m := _RELATIVE.match(line):
                entry = m.group(1)
                (dirs if entry.endswith("/") else files).append(entry.rstrip("/"))
    return _joined(files, base), _joined(dirs, base)


def content_lines(text: str) -> list[tuple[int, str]]:
    """A file's text as (line number, line), for citing what was read."""
    return [(i, line) for i, line in enumerate(text.splitlines(), start=1)]


def relative_to(path: str, root: str) -> str:
    """``path`` as the repository knows it (``committed.txt``), when it lies under ``root``."""
    if root and path.startswith(root.rstrip("/") + "/"):
        return path[len(root.rstrip("/")) + 1 :]
    return path


def _json(text: str) -> Any:
    stripped = text.strip()
    if not stripped.startswith(("[", "{")):
        return None
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        return None


def _walk(node: Any, prefix: str, files: list[str], dirs: list[str]) -> None:
    """A JSON tree of ``{name, type, children}`` entries (``directory_tree``)."""
    if isinstance(node, list):
        for child in node:
            _walk(child, prefix, files, dirs)
        return
    if not isinstance(node, dict) or not isinstance(node.get("name"), str):
        return
    path = posixpath.join(prefix, node["name"]) if prefix else node["name"]
    kind = str(node.get("type", "")).lower()
    if kind.startswith("dir") or isinstance(node.get("children"), list):
        dirs.append(path)
        for child in node.get("children") or []:
            _walk(child, path, files, dirs)
    elif kind.startswith("file") or not kind:
        files.append(path)


def _joined(entries: list[str], base: str) -> list[str]:
    out = []
    for e in entries:
        if e.startswith("/") or not base or base == ".":
            out.append(e)
        else:
            out.append(posixpath.normpath(posixpath.join(base, e)))
    return list(dict.fromkeys(out))
