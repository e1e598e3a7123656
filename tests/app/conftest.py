from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from tests.app.fixture_store import Fixture, build
from tests.app.wide_fixture import build_wide


@pytest.fixture(scope="session")
def fixture_template(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    root = tmp_path_factory.mktemp("fixture")
    return asyncio.run(build(root))


@pytest.fixture
def fx(fixture_template: Fixture, tmp_path: Path) -> Fixture:
    """A private copy of the fixture database (tests enqueue commands and append events)."""
    db = tmp_path / "run.db"
    shutil.copy(fixture_template.db, db)
    return Fixture(db, fixture_template.repo, fixture_template.commit)


@pytest.fixture(scope="session")
def wide_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return asyncio.run(build_wide(tmp_path_factory.mktemp("wide")))


@pytest.fixture
def wide(wide_template: Path, tmp_path: Path) -> Path:
    """A private copy of the finished five-arm run (the shape of ``make demo``)."""
    db = tmp_path / "wide.db"
    shutil.copy(wide_template, db)
    return db


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo as a new user's first run makes it (offline agent and judge, every arm)."""
    from proctor.engine.runs.options import RunOptions
    from proctor.engine.runs.session import run_suite
    from proctor.engine.suites import load_suite
    from proctor.scenarios.demo import SUITE_DIR

    db = tmp_path_factory.mktemp("demo") / "demo.db"
    assert asyncio.run(run_suite(load_suite(SUITE_DIR), RunOptions(db=db))) == "finished"
    return db


@pytest.fixture
def demo(demo_template: Path, tmp_path: Path) -> Path:
    """A private copy of the finished demo run."""
    db = tmp_path / "demo.db"
    shutil.copy(demo_template, db)
    return db
