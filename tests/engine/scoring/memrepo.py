"""An in-memory RepoView for scoring tests; records every path it is asked about."""

from __future__ import annotations

from collections.abc import Mapping


class MemoryRepo:
    def __init__(self, files: Mapping[str, str]) -> None:
        self._files = {p: text.splitlines() for p, text in files.items()}
        self.asked: list[str] = []
        self.read: list[str] = []

    def is_file(self, path: str) -> bool:
        self.asked.append(path)
        return path in self._files

    def lines(self, path: str) -> list[str]:
        self.read.append(path)
        return self._files[path]

    def files(self) -> list[str]:
        return sorted(self._files)


def numbered(n: int, marks: Mapping[int, str] | None = None) -> str:
    """``n`` lines ``line k``, with ``marks[k]`` replacing line k."""
    marks = marks or {}
    return "\n".join(marks.get(k, f"line {k}") for k in range(1, n + 1)) + "\n"
