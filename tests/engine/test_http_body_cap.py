"""An endpoint that streams an endless body: the reply is cut at the cap, memory stays bounded.

The hostile server (``tests/fakes/endless_http_server.py``) is plain sockets. Each client runs
in a child process under a 2 GiB address-space limit, which reports its peak resident memory.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from proctor.engine.http_limits import MAX_RESPONSE_BYTES

FAKES = Path(__file__).resolve().parents[1] / "fakes"
ROOT = Path(__file__).resolve().parents[2]

CLIENT = """
import asyncio, json, sys
from proctor.engine.providers.base import ProviderError
from proctor.engine.providers.prices import PriceTable

async def provider_turn(kind, url):
    if kind == "openai":
        from proctor.engine.providers.openai_provider import OpenAIProvider as P
        made = P("m", api_key="k", base_url=url + "/v1", prices=PriceTable(), deadline_s=60, max_attempts=3)
    else:
        from proctor.engine.providers.anthropic_provider import AnthropicProvider as P
        made = P("m", api_key="k", base_url=url, prices=PriceTable(), deadline_s=60, max_attempts=3)
    try:
        await made.session(1).turn("sys", [{"role": "user", "content": "hi"}], [])
        return "answered"
    except ProviderError as exc:
        return str(exc)
    finally:
        await made.aclose()

async def mcp_start(url):
    from pathlib import Path
    import tempfile
    from proctor.engine.tools.mcp_toolbox import McpToolbox, ServerPool
    from proctor.scenarios.schema import HttpServer
    pool = ServerPool(Path(tempfile.mkdtemp()) / "logs")
    try:
        await McpToolbox.open(pool, {"endless": HttpServer(url=url + "/mcp", timeout_s=60)}, None)
        return "started"
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    finally:
        await pool.aclose()

kind, url = sys.argv[1], sys.argv[2]
out = asyncio.run(mcp_start(url) if kind == "mcp" else provider_turn(kind, url))
# VmHWM, not ru_maxrss: Linux keeps ru_maxrss across exec, so a child of a large pytest process
# would report the parent's peak; VmHWM belongs to this process's own address space.
hwm_kb = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(json.dumps({"outcome": out, "maxrss_mb": hwm_kb / 1024}))
"""


@pytest.fixture(params=["sse", "json", "gzip"])
def endless(request: pytest.FixtureRequest) -> Iterator[str]:
    server = subprocess.Popen(
        [sys.executable, str(FAKES / "endless_http_server.py"), "--shape", request.param],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        yield f"http://127.0.0.1:{server.stdout.readline().strip()}"
    finally:
        server.kill()
        server.wait(10)


def _limit_memory() -> None:
    cap = 2048 * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def _client(kind: str, url: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", CLIENT, kind, url],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limit_memory,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize("kind", ["openai", "anthropic", "mcp"])
def test_an_endless_response_body_is_cut_at_the_cap_with_a_clear_error(endless: str, kind: str) -> None:
    result = _client(kind, endless)
    outcome = str(result["outcome"])
    if "exceeded the 1048576 byte limit" in outcome:  # the mcp SDK's own cap on one SSE event
        assert kind == "mcp" and "endless" in outcome, outcome
    else:
        assert "was cut off" in outcome or "came compressed" in outcome, outcome
        assert "127.0.0.1" in outcome
    peak_mb = float(str(result["maxrss_mb"]))
    assert peak_mb < 200 + 3 * MAX_RESPONSE_BYTES / 2**20, f"peak resident {peak_mb:.0f} MB"
