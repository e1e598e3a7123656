"""A materialized snapshot depends on the source files only, not on caches beside them."""

from __future__ import annotations

from pathlib import Path

from proctor.scenarios.repo import PinnedRepo, materialize


def test_tool_caches_in_the_source_do_not_change_the_commit(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "mod.py").write_text("def f():\n    return 1\n")
    clean = materialize(src, tmp_path / "a")
    for cache in (".mypy_cache", ".pytest_cache", "__pycache__", ".ruff_cache"):
        (src / "pkg" / cache).mkdir()
        (src / "pkg" / cache / "junk").write_text("x")
    assert materialize(src, tmp_path / "b") == clean
    assert PinnedRepo(tmp_path / "b", clean).files() == ["pkg/mod.py"]
    (src / "pkg" / "mod.py").write_text("def f():\n    return 2\n")
    assert materialize(src, tmp_path / "c") != clean
