"""Runs of the third-party suites with ``offline:gold``, made once per session and shared: the
end-to-end tests check them, the drift tests replay them."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.integration.third_party.gold_runs import Recording, run_gold
from tests.integration.third_party.servers import SUITES, require_installed


@pytest.fixture(scope="session")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], Recording]]:
    """Each suite run once with offline:gold, on first use."""
    made: dict[str, Recording] = {}

    def recording(suite: str) -> Recording:
        require_installed(suite)
        if suite not in made:
            root = tmp_path_factory.mktemp(f"gold-{suite}")
            made[suite] = Recording(root / "run.db", root / "cache")
            run_gold(SUITES / suite, made[suite])
        return made[suite]

    yield recording
