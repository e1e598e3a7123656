"""Play a third-party suite's gold calls against its real server and print what it answered.

This is how the expectations in this folder's tests were produced: run it, read the answers,
and write them into the test module (with patterns where a value is a clock or today's date).
After a version bump in tests/reference_servers, run it again and compare.

    .venv/bin/python -m tests.integration.third_party.observe time [memory ...]
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from tests.integration.third_party.servers import SERVERS, SUITES, installed_version, play_gold


def observe(suite: str) -> None:
    with tempfile.TemporaryDirectory(prefix="proctor-observe-") as cache:
        played = play_gold(SUITES / suite, Path(cache))
        repo = str(played.checkout) if played.checkout else None
        print(f"# {suite}: {SERVERS[suite][1]} {installed_version(suite)}")
        for server, connected in played.connected.items():
            print(
                f"# server {server}: {connected.name} {connected.version} (protocol {connected.protocol_version})"
            )
            print(f"# tools: {', '.join(played.tools[server])}")
        for scenario, calls in played.calls.items():
            print(f"## {scenario}")
            for call in calls:
                o = call.outcome
                answer = {
                    "tool": call.gold.tool,
                    "arguments": call.gold.arguments,
                    "text": o.content,
                    "is_error": o.is_error,
                    "error_type": o.error_type,
                    "structured": o.structured,
                    "notices": [n.method for n in o.notices],
                }
                text = json.dumps(answer, indent=1, ensure_ascii=False)
                print(text.replace(repo, "{REPO}") if repo else text)


if __name__ == "__main__":
    for name in sys.argv[1:] or sorted(SERVERS):
        observe(name)
