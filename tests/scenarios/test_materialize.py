"""A materialized snapshot depends on the source files only, not on caches beside them."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.scenarios.repo import PinnedRepo, RepoError, materialize


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


def test_a_deleted_file_leaves_the_cached_snapshot(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "keep.py").write_text("x = 1\n")
    (src / "gone.py").write_text("y = 2\n")
    first = materialize(src, tmp_path / "cache")
    (src / "gone.py").unlink()
    second = materialize(src, tmp_path / "cache")
    assert second != first and second == materialize(src, tmp_path / "fresh")
    assert PinnedRepo(tmp_path / "cache", second).files() == ["keep.py"]


def test_a_symlink_out_of_the_source_is_refused_and_one_inside_stays_a_link(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "real.py").write_text("secret = 'no'\n")
    (src / "alias.py").symlink_to("real.py")
    sha = materialize(src, tmp_path / "a")
    with pytest.raises(RepoError, match="is a symbolic link; links are not followed"):
        PinnedRepo(tmp_path / "a", sha).lines("alias.py")
    outside = tmp_path / "passwd"
    outside.write_text("root:x:0:0\n")
    (src / "leak.txt").symlink_to(outside)
    with pytest.raises(RepoError, match=r"leak\.txt: a symbolic link to .*outside the repository"):
        materialize(src, tmp_path / "b")
