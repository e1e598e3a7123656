"""A 30 MB single-line tool result through proctor's call path, against the least anyone can do.

The reference, measured in the same run: a child process writes 30 MB of JSON on one line to a
pipe (it serializes it when asked, as the server does) and we read and parse it. The figure is
the ratio of proctor's call (``McpConnection.call`` on the hostile server's ``dump`` tool) to
that reference; each side takes the best of a few tries so a busy machine hurts both alike.
Before proctor read stdio itself, the SDK's reader re-split its growing buffer per 64 KiB chunk.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from _bench_line import bench_line  # noqa: E402

from proctor.engine.tools.mcp_connection import McpConnection  # noqa: E402
from proctor.scenarios.schema import StdioServer  # noqa: E402

SERVER = ROOT / "tests" / "fakes" / "hostile_mcp_server.py"
SIZE = 30_000_000
TRIES = 3
MAX_RATIO = 3.0

# Waits for a byte, then serializes and writes one line of SIZE characters of text in JSON.
_WRITER = (
    "import json,sys\n"
    "words='the quick brown fox jumps over the lazy dog '\n"
    f"text=(words*({SIZE}//len(words)+1))[:{SIZE}]\n"
    "sys.stdin.buffer.read(1)\n"
    "sys.stdout.buffer.write(json.dumps({'jsonrpc':'2.0','id':1,'result':{'content':"
    "[{'type':'text','text':text}]}}).encode()+b'\\n')\n"
    "sys.stdout.flush()\n"
)


def _pipe_seconds() -> float:
    """Ask a ready child for the line; read it whole from the pipe and parse it."""
    child = subprocess.Popen([sys.executable, "-c", _WRITER], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    try:
        time.sleep(0.5)  # the child builds its text before the clock starts, as a running server would have
        start = time.perf_counter()
        child.stdin.write(b"x")
        child.stdin.flush()
        parsed = json.loads(child.stdout.readline())
        took = time.perf_counter() - start
        assert len(parsed["result"]["content"][0]["text"]) == SIZE
        return took
    finally:
        child.kill()
        child.wait(timeout=10)


async def _proctor_seconds(tmp: Path) -> list[float]:
    args = [str(SERVER), "--pidfile", str(tmp / "pids"), "--huge-bytes", str(SIZE), "--stderr-bytes", "0"]
    conn = McpConnection("hostile", StdioServer(command=sys.executable, args=args), tmp / "logs")
    await conn.start()
    try:
        times = []
        for _ in range(TRIES):
            outcome = await conn.call("dump", {"query": "all"}, timeout_s=300)
            assert not outcome.is_error, outcome.content[:300]
            times.append(outcome.latency_s)
        return times
    finally:
        await conn.aclose()


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="proctor-stdio-") as d:
        proctor = min(asyncio.run(_proctor_seconds(Path(d))))
    pipe = min(_pipe_seconds() for _ in range(TRIES))
    print(f"30 MB line: proctor call {proctor:.2f}s, pipe read+parse {pipe:.2f}s", flush=True)
    ok = bench_line("stdio_30mb_line_ratio", proctor / pipe, "x", "<=", MAX_RATIO)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
