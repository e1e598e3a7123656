from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from tests.app.fixture_store import Fixture, build


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
