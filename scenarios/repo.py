"""A git repository pinned at one commit, read from git objects only.

Everything that looks at a scenario's code (baseline tools, citation grounding, the demo MCP
servers) goes through ``PinnedRepo`` so that nothing ever reads the working tree or a path
outside the commit: the commit's tree listing is the whole universe of readable paths.
"""

from __future__ import annotations

import fcntl
import os
import posixpath
import subprocess
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

_GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
    "LC_ALL": "C",
}
_FIXED_IDENTITY = {
    "GIT_AUTHOR_NAME": "proctor",
    "GIT_AUTHOR_EMAIL": "proctor@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+00:00",
    "GIT_COMMITTER_NAME": "proctor",
    "GIT_COMMITTER_EMAIL": "proctor@example.invalid",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+00:00",
}


# Tool caches that appear in a source folder when someone works in it; never part of the snapshot.
_IGNORED_PARTS = frozenset(
    {"__pycache__", ".git", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis"}
)


class RepoError(Exception):
    """The repository or commit cannot be read."""


def _git(
    repo: Path, *args: str, input_: bytes | None = None, extra_env: dict[str, str] | None = None
) -> bytes:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/")}
    env |= _GIT_ENV | (extra_env or {})
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], input=input_, capture_output=True, env=env, check=False
    )
    if proc.returncode != 0:
        raise RepoError(f"git {' '.join(args)} in {repo}: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout


def safe_relpath(path: str) -> str | None:
    """Normalize an agent-supplied repository path, or return None if it could escape the repo."""
    if not path or "\x00" in path or "\\" in path:
        return None
    if path.startswith("/") or path.startswith("~"):
        return None
    norm = posixpath.normpath(path)
    if norm.startswith("../") or norm == ".." or norm.startswith("/"):
        return None
    return "" if norm == "." else norm


@dataclass(frozen=True)
class TreeEntry:
    path: str
    mode: str
    sha: str

    @property
    def is_symlink(self) -> bool:
        return self.mode == "120000"


class PinnedRepo:
    """Read-only view of ``path`` at ``commit``; thread-safe, caches blobs it has read."""

    def __init__(self, path: str | Path, commit: str) -> None:
        self.path = Path(path)
        try:
            full = _git(self.path, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}")
        except RepoError as exc:
            raise RepoError(f"{self.path}: commit {commit} not found ({exc})") from exc
        self.commit = full.decode().strip()
        raw = _git(self.path, "ls-tree", "-r", "-z", "--full-tree", self.commit)
        entries: dict[str, TreeEntry] = {}
        for item in raw.split(b"\x00"):
            if not item:
                continue
            meta, _, name = item.partition(b"\t")
            mode, kind, sha = meta.decode().split(" ")
            if kind != "blob":
                continue
            p = name.decode("utf-8", errors="surrogateescape")
            entries[p] = TreeEntry(p, mode, sha)
        self._entries = entries
        self._dirs = _directories(entries)
        self._blobs: dict[str, bytes] = {}
        self._lines: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    def files(self) -> list[str]:
        """Regular files at the commit (symlinks are listed by ``entry`` but never followed)."""
        return sorted(p for p, e in self._entries.items() if not e.is_symlink)

    def entry(self, path: str) -> TreeEntry | None:
        rel = safe_relpath(path)
        return None if rel is None else self._entries.get(rel)

    def is_file(self, path: str) -> bool:
        e = self.entry(path)
        return e is not None and not e.is_symlink

    def is_dir(self, path: str) -> bool:
        rel = safe_relpath(path)
        return rel is not None and rel in self._dirs

    def list_dir(self, path: str = "") -> list[str]:
        """Immediate children of a directory, directories with a trailing slash."""
        rel = safe_relpath(path)
        if rel is None or rel not in self._dirs:
            raise RepoError(f"{path!r} is not a directory at {self.commit[:12]}")
        prefix = f"{rel}/" if rel else ""
        out: set[str] = set()
        for p in self._entries:
            if p.startswith(prefix):
                head, sep, _ = p[len(prefix) :].partition("/")
                out.add(head + "/" if sep else head)
        return sorted(out)

    def read_bytes(self, path: str) -> bytes:
        e = self.entry(path)
        if e is None:
            raise RepoError(f"{path!r} is not a file at {self.commit[:12]}")
        if e.is_symlink:
            raise RepoError(f"{path!r} is a symbolic link; links are not followed")
        with self._lock:
            blob = self._blobs.get(e.path)
            if blob is None:
                blob = _git(self.path, "cat-file", "blob", e.sha)
                self._blobs[e.path] = blob
        return blob

    def lines(self, path: str) -> list[str]:
        """The file's lines without line endings (index 0 is line 1)."""
        e = self.entry(path)
        key = e.path if e is not None else path
        cached = self._lines.get(key)
        if cached is None:
            cached = self.read_bytes(path).decode("utf-8", errors="replace").splitlines()
            self._lines[key] = cached
        return cached

    def preload(self, paths: Iterable[str] | None = None) -> None:
        """Read many blobs with one git process (``cat-file --batch``)."""
        wanted = [self._entries[p] for p in (paths or self.files()) if p in self._entries]
        wanted = [e for e in wanted if not e.is_symlink and e.path not in self._blobs]
        if not wanted:
            return
        out = _git(self.path, "cat-file", "--batch", input_="".join(f"{e.sha}\n" for e in wanted).encode())
        pos = 0
        with self._lock:
            for e in wanted:
                header_end = out.index(b"\n", pos)
                size = int(out[pos:header_end].split(b" ")[2])
                start = header_end + 1
                self._blobs[e.path] = out[start : start + size]
                pos = start + size + 1


def _directories(entries: dict[str, TreeEntry]) -> set[str]:
    dirs = {""}
    for p in entries:
        parts = p.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            dirs.add("/".join(parts[:i]))
    return dirs


@contextmanager
def _exclusive(dest: Path) -> Iterator[None]:
    """Hold ``dest``'s lock while it is built: the cache is shared by every proctor process on the
    machine, and two runs preparing one pinned repo at once would collide in git's index."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(dest.with_name(dest.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def clean_checkout(source: Path, commit: str, dest: Path) -> str:
    """A checkout of ``commit`` at ``dest`` that shares ``source``'s objects but not its working tree.

    Servers are pointed here, never at the user's folder: a write-capable server edits this copy,
    and uncommitted changes in the user's tree are not what the run is pinned to. Reset to the
    commit (tracked files restored, untracked removed) every time it is prepared.
    """
    if not (source / ".git").exists() and not (source / "HEAD").exists():
        raise RepoError(f"{source}: not a git repository")
    try:
        full = _git(source, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}").decode().strip()
    except RepoError:  # --quiet: git says nothing, so say what is missing and how to find a real one
        raise RepoError(
            f"commit {commit} does not exist in {source}; pin one that does "
            f"(git -C {source} log --oneline lists them)"
        ) from None
    with _exclusive(dest):
        if not (dest / ".git").exists():
            _git(
                dest.parent, "clone", "--quiet", "--shared", "--no-checkout", str(source.resolve()), str(dest)
            )
        _git(dest, "checkout", "--quiet", "--force", "--detach", full)
        _git(dest, "clean", "--quiet", "-fdx")
    return full


def _inside(link: Path, root: Path) -> bool:
    target = (link.parent / os.readlink(link)).resolve()
    return target == root or root in target.parents


def materialize(source: Path, dest: Path) -> str:
    """Build a git repository at ``dest`` from the files under ``source``; return its commit.

    Author, committer, dates, message and file modes are fixed, so the same files give the
    same commit SHA on every machine. An existing ``dest`` with that commit is reused.
    """
    if not source.is_dir():
        raise RepoError(f"{source}: repository source folder not found")
    root = source.resolve()
    entries = sorted(
        p for p in source.rglob("*") if (p.is_symlink() or p.is_file()) and not _IGNORED_PARTS & set(p.parts)
    )
    for p in entries:
        if p.is_symlink() and not _inside(p, root):
            raise RepoError(
                f"{p}: a symbolic link to {os.readlink(p)}, outside the repository; replace it with the file "
                "or remove it (links are never followed out of a pinned repository)"
            )
    with _exclusive(dest):
        return _snapshot(entries, source, dest)


def _snapshot(entries: list[Path], source: Path, dest: Path) -> str:
    dest.mkdir(parents=True, exist_ok=True)
    if not (dest / ".git").exists():
        _git(dest, "init", "-q")
    wanted = {p.relative_to(source) for p in entries}
    for stale in [f for f in dest.rglob("*") if ".git" not in f.relative_to(dest).parts[:1]]:
        if (stale.is_file() or stale.is_symlink()) and stale.relative_to(dest) not in wanted:
            stale.unlink()  # deleted from the source since the last snapshot: the commit must not keep it
    for p in entries:
        target = dest / p.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        if p.is_symlink():  # kept as a link (git stores its target text), never read through
            if target.is_symlink() or target.exists():
                target.unlink()
            target.symlink_to(os.readlink(p))
            continue
        data = p.read_bytes()
        if target.is_symlink() or not target.exists() or target.read_bytes() != data:
            if target.is_symlink():
                target.unlink()
            target.write_bytes(data)
        target.chmod(0o644)
    _git(dest, "add", "-A")
    tree = _git(dest, "write-tree").decode().strip()
    commit = _git(dest, "commit-tree", tree, "-m", "proctor pinned snapshot", extra_env=_FIXED_IDENTITY)
    sha = commit.decode().strip()
    _git(dest, "update-ref", "refs/heads/proctor-pinned", sha)
    # HEAD on the pinned branch: otherwise it names the unborn default branch and a server that
    # asks git (mcp-server-git's git_log, git_show HEAD) sees "No commits yet".
    _git(dest, "symbolic-ref", "HEAD", "refs/heads/proctor-pinned")
    return sha
