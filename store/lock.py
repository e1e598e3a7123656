"""One engine per run database: an advisory lock held while a process runs or serves a run.

Two engines resuming the same run would run trials twice; a console serving commands for a
run that another process is executing would act behind its back. The lock is taken on the
database file itself (``flock`` on its inode), so every name that reaches the file, a symlink, a
hard link, a path with ``..`` or a relative one, meets the same lock; a lock file beside the
file's real path names the holder's pid. The operating system releases both when the process
dies, however it dies.

``flock`` locks are apart from the POSIX byte-range locks SQLite takes on the same file (on a
local filesystem; SQLite's WAL mode needs one anyway), so holding it costs SQLite nothing. But
closing *any* descriptor of a file drops every POSIX lock the process holds on it, SQLite's
included (measured: after an ``os.open``/``os.close`` of the database beside an open reader,
another process could switch the database out of WAL mode under it). So a descriptor this
module opens on a database file is never closed: it goes back to a small per-file pool.
"""

from __future__ import annotations

import fcntl
import os
import shlex
import threading
from pathlib import Path

# Descriptors open on database files and holding no lock, by (st_dev, st_ino); see above.
_idle: dict[tuple[int, int], list[int]] = {}
_idle_guard = threading.Lock()


def _borrow(path: Path) -> int:
    """A descriptor on the database file at ``path`` (created empty if missing), lock-free."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)
    with _idle_guard:
        spare = _idle.get((st.st_dev, st.st_ino))
        if spare:
            return spare.pop()
    return os.open(path, os.O_RDONLY)


def _give_back(fd: int) -> None:
    """Unlock ``fd`` and keep it open for the next borrower (closing it would drop SQLite's locks)."""
    fcntl.flock(fd, fcntl.LOCK_UN)
    st = os.fstat(fd)
    with _idle_guard:
        _idle.setdefault((st.st_dev, st.st_ino), []).append(fd)


def real_path(db: Path) -> Path:
    """The file ``db`` names, symlinks and ``..`` resolved; absolute even when it does not exist."""
    return Path(os.path.realpath(db))


def resume_command(db: Path) -> str:
    """The whole command that continues the run in ``db`` (it finds the suite the run recorded)."""
    return f"proctor run --resume --db {shlex.quote(str(db))}"


def _pid_file(db: Path) -> Path:
    real = real_path(db)
    return real.with_name(real.name + ".lock")


class EngineLock:
    def __init__(self, path: Path, fd: int, db_fd: int | None, created: Path | None) -> None:
        self.path = path
        self._fd: int | None = fd
        self._db_fd = db_fd
        self._created = created  # a database file this lock made, removed again if left empty

    @classmethod
    def try_acquire(cls, db: Path) -> EngineLock | None:
        """The lock, or None if another live process holds it.

        A database that does not exist yet is created empty (an empty file is an empty SQLite
        database), so the lock is on its inode from the start: a hard link made to it later still
        meets the lock.
        """
        real = real_path(db)
        real.parent.mkdir(parents=True, exist_ok=True)
        created = None if real.exists() else real
        db_fd = _borrow(real)
        if not _try_flock(db_fd, fcntl.LOCK_EX):
            _give_back(db_fd)
            return None
        path = _pid_file(db)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        if not _try_flock(fd, fcntl.LOCK_EX):  # an older proctor, which locks only this file
            os.close(fd)
            _unlock_db(db_fd, created)
            return None
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        except OSError:
            pass  # a full disk: the lock holds all the same, and /proc/locks still names the pid
        return cls(path, fd, db_fd, created)

    @staticmethod
    def is_held(db: Path) -> bool:
        """Whether some live process (this one included) holds the run; never takes the lock."""
        real = real_path(db)
        if real.is_file():
            fd = _borrow(real)
            try:
                if not _try_flock(fd, fcntl.LOCK_SH):
                    return True
            finally:
                _give_back(fd)
        try:
            fd = os.open(_pid_file(db), os.O_RDONLY)  # not the database: closing it is harmless
        except OSError:
            return False
        try:
            if not _try_flock(fd, fcntl.LOCK_SH):
                return True
            fcntl.flock(fd, fcntl.LOCK_UN)
            return False
        finally:
            os.close(fd)

    @staticmethod
    def holder(db: Path) -> str:
        """The holder's pid: the one the system lists for the file's lock, else the pid file's."""
        pid = _flock_holder(real_path(db))
        if pid is not None:
            return pid
        try:
            return _pid_file(db).read_text().strip() or "unknown"
        except OSError:
            return "unknown"

    @staticmethod
    def held_message(db: Path) -> str:
        """Who holds ``db``, naming the real file and, for a hard link, the name the holder used."""
        real = real_path(db)
        where = f"{db}" if str(db) == str(real) else f"{db} (the file {real})"
        pid = EngineLock.holder(db)
        opened = _opened_as(pid, real)
        also = f", which opened it as {opened}" if opened is not None and opened != real else ""
        return f"{where} is being run by another proctor process (pid {pid}{also})"

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
        if self._db_fd is not None:
            _unlock_db(self._db_fd, self._created)
            self._db_fd = None


def _try_flock(fd: int, mode: int) -> bool:
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _unlock_db(fd: int, created: Path | None) -> None:
    """Unlock; a database file the lock created and nobody wrote to goes again."""
    try:
        if created is not None:
            st, mine = os.stat(created), os.fstat(fd)
            if (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino) and st.st_size == 0:
                created.unlink()
    except OSError:
        pass
    _give_back(fd)


def _flock_holder(path: Path) -> str | None:
    """The pid Linux lists in /proc/locks as holding a write ``flock`` on ``path``'s inode."""
    try:
        st = os.stat(path)
        table = Path("/proc/locks").read_text()
    except OSError:
        return None
    inode = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in table.splitlines():
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 9306 fe:00:2149855 0 EOF"; waiters carry a "->" field.
        if len(fields) >= 6 and fields[1:4] == ["FLOCK", "ADVISORY", "WRITE"] and fields[5] == inode:
            return fields[4]
    return None


def _opened_as(pid: str, real: Path) -> Path | None:
    """The name under which process ``pid`` opened ``real``'s inode (another hard link), if Linux says."""
    try:
        st = os.stat(real)
        fds = list(Path(f"/proc/{int(pid)}/fd").iterdir())
    except (OSError, ValueError):
        return None
    for fd in fds:
        try:
            target = os.stat(fd)
            if (target.st_dev, target.st_ino) == (st.st_dev, st.st_ino):
                return Path(os.readlink(fd))
        except OSError:
            continue
    return None
