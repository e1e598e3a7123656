"""One engine per run database: the lock excludes a second holder and dies with its process."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from proctor.store.lock import EngineLock

HOLD_SCRIPT = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from proctor.store.lock import EngineLock

    lock = EngineLock.try_acquire(Path(sys.argv[1]))
    print("held" if lock else "refused", flush=True)
    time.sleep(60)
    """
)


def test_a_second_holder_is_refused_until_the_first_releases(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    assert not EngineLock.is_held(db)
    first = EngineLock.try_acquire(db)
    assert first is not None
    assert EngineLock.is_held(db)
    assert EngineLock.try_acquire(db) is None
    first.release()
    assert not EngineLock.is_held(db)
    second = EngineLock.try_acquire(db)
    assert second is not None
    second.release()


def test_the_lock_names_its_holder_and_is_freed_when_the_holder_is_killed(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    proc = subprocess.Popen([sys.executable, "-c", HOLD_SCRIPT, str(db)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        assert EngineLock.is_held(db)
        assert EngineLock.holder(db) == str(proc.pid)
        assert EngineLock.try_acquire(db) is None
    finally:
        proc.kill()
        proc.wait(timeout=30)
    lock = EngineLock.try_acquire(db)
    assert lock is not None, "a killed holder must not keep the run locked"
    lock.release()
