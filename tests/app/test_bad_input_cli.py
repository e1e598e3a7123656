"""Bad input on the command line: exit 2, one message naming the file and the fix, no traceback, no hang."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from proctor.app.cli import main
from proctor.store.schema import init_db

DEMO = Path(__file__).resolve().parents[2] / "scenarios" / "demo"


@pytest.mark.parametrize("flag", ["--concurrency", "--epochs"])
@pytest.mark.parametrize("value", ["0", "-3", "two"])
def test_run_counts_below_one_are_refused_by_the_parser(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["run", str(DEMO), "--headless", "--db", str(tmp_path / "r.db"), flag, value])
    assert info.value.code == 2
    assert f"argument {flag}" in capsys.readouterr().err and not (tmp_path / "r.db").exists()


def _garbage(tmp_path: Path) -> Path:
    db = tmp_path / "garbage.db"
    db.write_bytes(b"this is not sqlite at all\n" * 100)
    return db


def _truncated(tmp_path: Path) -> Path:
    good = tmp_path / "good.db"
    init_db(good)
    conn = sqlite3.connect(good)
    conn.execute("INSERT INTO runs (id, suite, config, created_at) VALUES ('r', 's', ?, 0)", ("x" * 50_000,))
    conn.commit()
    conn.close()
    db = tmp_path / "truncated.db"
    db.write_bytes(good.read_bytes()[:6000])
    return db


def _newer(tmp_path: Path) -> Path:
    db = tmp_path / "newer.db"
    init_db(db)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    return db


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (_garbage, "not a SQLite database"),
        (_truncated, "run database"),
        (_newer, "upgrade proctor"),
    ],
)
@pytest.mark.parametrize("command", ["report", "judge", "export", "watch", "gate"])
def test_a_bad_database_is_named_with_a_fix_by_every_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: object, needle: str, command: str
) -> None:
    assert callable(make)
    db = make(tmp_path)
    extra = ["--baseline", "baseline", "--min-delta", "0"] if command == "gate" else []
    assert main([command, str(db), *extra]) == 2
    err = capsys.readouterr().err
    assert str(db) in err and needle in err and "Traceback" not in err, err


def test_resuming_into_a_bad_database_or_a_directory_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    garbage = _garbage(tmp_path)
    before = garbage.read_bytes()
    assert main(["run", str(DEMO), "--headless", "--db", str(garbage), "--resume"]) == 2
    assert "not a SQLite database" in capsys.readouterr().err and garbage.read_bytes() == before
    assert main(["run", str(DEMO), "--headless", "--db", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_a_file_where_the_suite_folder_belongs_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    not_a_folder = tmp_path / "suite.txt"
    not_a_folder.write_text("hello")
    assert main(["run", str(not_a_folder / "x"), "--headless", "--db", str(tmp_path / "r.db")]) == 2
    assert "suite file not found" in capsys.readouterr().err


def test_a_read_only_database_can_be_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "demo"
    shutil.copytree(DEMO, suite, ignore=shutil.ignore_patterns("__pycache__"))
    db = tmp_path / "r.db"
    assert main(["run", str(suite), "--headless", "--db", str(db), "--arms", "baseline", "--scenarios",
                 "retry-delay-cap"]) == 0  # fmt: skip
    capsys.readouterr()
    db.chmod(0o444)
    try:
        assert main(["report", str(db), "--format", "json"]) == 0
        assert '"arms"' in capsys.readouterr().out
    finally:
        db.chmod(0o644)


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (_garbage, "not a SQLite database"),
        (lambda tmp: tmp / "missing.db", "no such file or folder"),
        (
            lambda tmp: (tmp / "tools.lock.json").write_text("{}") and tmp / "tools.lock.json",
            "field 'version'",
        ),
    ],
)
def test_tools_diff_names_a_side_it_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: object, needle: str
) -> None:
    assert callable(make)
    bad = make(tmp_path)
    assert main(["tools", "diff", str(bad), str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and needle in err and "Traceback" not in err, err
