"""Connecting through Ray Client (``ray://``): a head whose per-driver server died as it started
is asked again, a bounded number of times; anything else is reported at once.

The head's answer is the text Ray 2.60's proxier sends (seen in CI: the server's gRPC poller
failed as it started, and the run exited 2 before playing a trial). Ray itself is stood in for by
an object with ``is_initialized`` and ``init``, the two calls the executor makes here; that a real
``ray.init("ray://…")`` can be called again after a refused one was checked by hand on the test
cluster (tests/engine/ray_cluster.py).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from proctor.engine.runs import ray_executor
from proctor.engine.runs.options import RunError
from proctor.engine.runs.ray_executor import CLIENT_CONNECT_ATTEMPTS, RayExecutor

SERVER_DIED = (
    "Initialization failure from server:\nTraceback (most recent call last):\n"
    '  File ".../ray/util/client/server/proxier.py", line 772, in Datapath\n    raise RuntimeError(\n'
    "RuntimeError: Starting Ray client server failed. See ray_client_server_23000.err for detailed logs.\n"
)
SERVER_ZOMBIE = (  # what Ray 2.60's proxier sent in another CI run (its ray_client_server_23000.err was empty)
    "Initialization failure from server:\nTraceback (most recent call last):\n"
    '  File ".../ray/util/client/server/proxier.py", line 765, in Datapath\n'
    "    if not self.proxy_manager.start_specific_server(\n"
    '  File ".../ray/util/client/server/proxier.py", line 396, in start_specific_server\n'
    "    cmd = psutil_proc.cmdline()\n"
    '  File ".../ray/thirdparty_files/psutil/_pslinux.py", line 1648, in _raise_if_zombie\n'
    "    raise ZombieProcess(self.pid, self._name, self._ppid)\n"
    "psutil.ZombieProcess: PID still exists but it's a zombie (pid=1689)\n"
)
RUNTIME_ENV_FAILED = (
    "Initialization failure from server:\nTraceback (most recent call last):\n"
    "RuntimeError: Failed to create runtime env: conda env no-such-env-xyz not found\n"
)


class HeadThatRefuses:
    """``ray`` as the executor sees it: ``init`` raises the queued errors, then connects."""

    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.inits: list[dict[str, Any]] = []
        self.connected = False

    def is_initialized(self) -> bool:
        return self.connected

    def init(self, **kwargs: Any) -> None:
        self.inits.append(kwargs)
        if self.errors:
            raise self.errors.pop(0)
        self.connected = True


def _connect(executor: RayExecutor, head: HeadThatRefuses, tmp_path: Path) -> list[str]:
    executor._placement_log = tmp_path / "ray-placements.log"
    asyncio.run(executor._connect(head))
    log = tmp_path / "ray-placements.log"
    return log.read_text().splitlines() if log.exists() else []


@pytest.fixture(autouse=True)
def _no_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ray_executor, "CLIENT_RETRY_PAUSE_S", 0.0)


@pytest.mark.parametrize("answer", [SERVER_DIED, SERVER_ZOMBIE], ids=["died", "zombie"])
def test_a_client_server_that_died_as_it_started_is_asked_for_again_and_the_run_goes_on(
    tmp_path: Path, answer: str
) -> None:
    head = HeadThatRefuses(ConnectionAbortedError(answer))
    notes = _connect(RayExecutor("ray://192.0.2.2:39187"), head, tmp_path)
    assert head.connected and len(head.inits) == 2
    assert head.inits[0] == head.inits[1] == {"address": "ray://192.0.2.2:39187"}
    assert notes == [
        f"Ray Client: the head's server for this driver did not start (attempt 1 of "
        f"{CLIENT_CONNECT_ATTEMPTS}); connecting again"
    ]


def test_a_head_that_keeps_refusing_stops_the_run_after_the_last_attempt_with_its_answer(
    tmp_path: Path,
) -> None:
    head = HeadThatRefuses(*(ConnectionAbortedError(SERVER_DIED) for _ in range(CLIENT_CONNECT_ATTEMPTS + 1)))
    with pytest.raises(RunError) as raised:
        _connect(RayExecutor("ray://192.0.2.2:39187"), head, tmp_path)
    assert len(head.inits) == CLIENT_CONNECT_ATTEMPTS and not head.connected
    said = str(raised.value)
    assert said.startswith("cannot start or reach the Ray cluster at ray://192.0.2.2:39187: ")
    assert "Starting Ray client server failed" in said


@pytest.mark.parametrize(
    ("address", "error"),
    [
        ("ray://192.0.2.2:39187", ConnectionAbortedError(RUNTIME_ENV_FAILED)),  # not a lost server
        ("ray://192.0.2.2:39187", ConnectionError("ray client connection timeout")),
        ("127.0.0.1:6379", ConnectionAbortedError(SERVER_DIED)),  # not Ray Client: no such server
    ],
)
def test_any_other_refusal_stops_the_run_at_once(address: str, error: BaseException, tmp_path: Path) -> None:
    head = HeadThatRefuses(error)
    with pytest.raises(RunError, match="cannot start or reach the Ray cluster"):
        _connect(RayExecutor(address), head, tmp_path)
    assert len(head.inits) == 1
