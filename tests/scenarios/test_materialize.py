"""A materialized snapshot depends on the source files only, not on caches beside them."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from proctor.scenarios.loader import load_suite
from proctor.scenarios.repo import PinnedRepo, RepoError, clean_checkout, materialize
from proctor.scenarios.schema import StdioServer
from proctor.scenarios.workspace import Workspace


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


def test_a_materialized_repository_has_its_commit_checked_out(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.py").write_text("x = 1\n")
    sha = materialize(src, tmp_path / "repo")

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(tmp_path / "repo"), *args], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout

    # Found by mcp-server-git: HEAD named an unborn branch, so git_log said the ref did not exist.
    assert git("rev-parse", "HEAD").strip() == sha
    assert git("status", "--porcelain") == ""
    (src / "a.py").write_text("x = 2\n")
    again = materialize(src, tmp_path / "repo")
    assert git("rev-parse", "HEAD").strip() == again != sha and git("status", "--porcelain") == ""


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


def _git_repo(root: Path) -> str:
    root.mkdir()
    for args in (["init", "-q"], ["config", "user.email", "t@example.com"], ["config", "user.name", "t"]):
        subprocess.run(["git", "-C", str(root), *args], check=True)
    (root / "app.py").write_text("VERSION = 1\n")
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "one"], check=True)
    out = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    )
    return out.stdout.strip()


def test_a_path_repository_is_served_from_a_clean_checkout_never_the_users_tree(tmp_path: Path) -> None:
    user = tmp_path / "my-repo"
    commit = _git_repo(user)
    (user / "app.py").write_text("VERSION = 2  # uncommitted\n")
    (user / "notes.txt").write_text("untracked\n")
    dest = tmp_path / "cache" / "checkout"
    assert clean_checkout(user, commit[:10], dest) == commit
    assert (dest / "app.py").read_text() == "VERSION = 1\n" and not (dest / "notes.txt").exists()
    (dest / "app.py").write_text("edited by a server\n")
    (dest / "scratch.txt").write_text("written by a server\n")
    assert clean_checkout(user, commit, dest) == commit
    assert (dest / "app.py").read_text() == "VERSION = 1\n" and not (dest / "scratch.txt").exists()
    assert (user / "app.py").read_text() == "VERSION = 2  # uncommitted\n", "the user's tree is never written"
    assert PinnedRepo(dest, commit).lines("app.py") == ["VERSION = 1"]


def test_servers_get_the_clean_checkout_as_proctor_repo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROCTOR_CACHE", str(tmp_path / "cache"))
    user = tmp_path / "my-repo"
    commit = _git_repo(user)
    suite = tmp_path / "suite"
    (suite / "scenarios").mkdir(parents=True)
    (suite / "suite.yaml").write_text(
        "name: t\nrepo: {path: ../my-repo, commit: " + commit + "}\n"
        "mcpServers:\n  fs: {command: server, args: ['${PROCTOR_REPO}']}\n"
        "arms:\n  fs: {servers: [fs]}\n"
    )
    (suite / "scenarios" / "one.yaml").write_text("id: one\nprompt: hi\n")
    loaded = load_suite(suite)
    workspace = Workspace.prepare(loaded)
    served = workspace.servers_for(["fs"], loaded.scenarios[0])["fs"]
    assert isinstance(served, StdioServer)
    (repo_arg,) = served.args
    assert Path(repo_arg).is_relative_to(tmp_path / "cache") and Path(repo_arg) != user.resolve()
    assert (Path(repo_arg) / "app.py").read_text() == "VERSION = 1\n"


def test_processes_materializing_one_repo_at_once_all_get_its_commit(tmp_path: Path) -> None:
    """The cache is shared by every proctor process: runs started together must not collide in
    git's index (``index.lock: File exists``)."""
    import subprocess
    import sys

    source = tmp_path / "src"
    for i in range(40):
        (source / f"pkg{i % 4}").mkdir(parents=True, exist_ok=True)
        (source / f"pkg{i % 4}" / f"m{i}.py").write_text(f"VALUE = {i}\n" * 50)
    dest = tmp_path / "cache" / "repo"
    code = "import sys; from pathlib import Path; from proctor.scenarios.repo import materialize; print(materialize(Path(sys.argv[1]), Path(sys.argv[2])))"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(source), str(dest)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(6)
    ]
    results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 6, [err for _, err in results]
    assert len({out.strip() for out, _ in results}) == 1
