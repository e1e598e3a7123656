"""One engine per run database: an advisory lock held while a process runs or serves a run.

Two engines resuming the same run would run trials twice; a console serving commands for a
run that another process is executing would act behind its back. The lock is taken on the
database file itself (``flock`` on its inode), so every name that reaches the file, a symlink, a
hard link, a path with ``..`` or a relative one, meets the same lock; a lock file beside the
file's real path names the holder's pid. The operating system releases both when the process
dies, however it dies.

``flock`` locks are apart from the POSIX byte-range locks SQLite takes on the same file (on a
local filesystem; SQLite's WAL mode needs one anyway), so holding it costs SQLite nothing.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


def real_path(db: Path) -> Path:
    """The file ``db`` names, symlinks and ``..`` resolved; absolute even when it does not exist."""
    return Path(os.path.realpath(db))


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
        created: Path | None = None
        try:
            db_fd = os.open(real, os.O_RDONLY | os.O_CREAT | os.O_EXCL, 0o644)
            created = real
        except FileExistsError:
            db_fd = os.open(real, os.O_RDONLY)
        if not _try_flock(db_fd, fcntl.LOCK_EX):
            os.close(db_fd)
            return None
        path = _pid_file(db)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        if not _try_flock(fd, fcntl.LOCK_EX):  # an older proctor, which locks only this file
            os.close(fd)
            _close_db_fd(db_fd, created)
            return None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        return cls(path, fd, db_fd, created)

    @staticmethod
    def is_held(db: Path) -> bool:
        """Whether some live process (this one included) holds the run; never takes the lock."""
        for path in (real_path(db), _pid_file(db)):
            try:
                fd = os.open(path, os.O_RDONLY)
            except OSError:
                continue
            try:
                if not _try_flock(fd, fcntl.LOCK_SH):
                    return True
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)
        return False

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
            _close_db_fd(self._db_fd, self._created)
            self._db_fd = None


def _try_flock(fd: int, mode: int) -> bool:
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _close_db_fd(fd: int, created: Path | None) -> None:
    """Unlock and close; a database file the lock created and nobody wrote to goes again."""
    try:
        if created is not None and os.fstat(fd).st_size == 0:
            st = os.stat(created)
            mine = os.fstat(fd)
            if (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino) and st.st_size == 0:
                created.unlink()
    except OSError:
        pass
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


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
