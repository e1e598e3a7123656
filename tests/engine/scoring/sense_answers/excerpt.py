"""The real-answer excerpt (``make_excerpt.py``) read back: the answers, and one ``RepoView`` per
pinned commit that citation grounding checks them against.

``ExcerptRepo`` lists every path of its commit; it holds the contents of the files the answers
cite (and of every file in which a symbol they cite at a line occurs). Reading any other file
raises ``KeyError``, which grounding treats as a file it cannot read: a citation that needs one
shows the excerpt is stale (``missing_for`` names them) rather than a verdict on other text.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

HERE = Path(__file__).parent
REPOS = ("flask", "gin", "axum", "javalin")


@dataclass(frozen=True)
class Answer:
    tool: str
    repo: str
    source: str
    commit: str
    text: str

    @property
    def session(self) -> str:
        return f"{self.tool}/{self.repo}"


class ExcerptRepo:
    """A ``RepoView`` (and ``PinnedView``) over one commit of the excerpt."""

    def __init__(self, name: str) -> None:
        data = json.loads(gzip.decompress((HERE / f"{name}.json.gz").read_bytes()))
        self.name = name
        self.github: str = data["repo"]
        self.commit: str = data["commit"]
        self.licence: str = data["licence"]
        self.names: frozenset[str] = frozenset(data["names"])
        self.path = Path("/excerpt") / name
        self._paths: list[str] = data["paths"]
        self._known = frozenset(self._paths)
        self._files: dict[str, list[str]] = {p: t.splitlines() for p, t in data["files"].items()}

    def is_file(self, path: str) -> bool:
        return path in self._known

    def lines(self, path: str) -> list[str]:
        return self._files[path]

    def files(self) -> list[str]:
        return list(self._paths)

    def has_text(self, path: str) -> bool:
        return path in self._files


@cache
def repo(name: str) -> ExcerptRepo:
    return ExcerptRepo(name)


@cache
def answers() -> tuple[Answer, ...]:
    data = json.loads((HERE / "answers.json").read_text(encoding="utf-8"))
    return tuple(Answer(**a) for a in data["answers"])


__all__ = ["REPOS", "Answer", "ExcerptRepo", "answers", "repo"]
