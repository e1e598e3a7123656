"""A run records each offered tool's definition tokens in its ``tools_listed`` event, so a report
reads them instead of loading the tokenizer (about 0.16 s of CPU); what it counts from an older
run's or an import's definitions is the same number.

The tools are those the reference servers list (fixtures dumped by the real servers with
tests/engine/fixtures/reference_tools/dump_tools.py); the run is a real offline run of a demo scenario, every arm.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from proctor.engine.runs.options import RunOptions
from proctor.engine.runs.session import run_suite
from proctor.engine.tools import run_surface
from proctor.engine.tools.definition_tokens import TokenizerUnavailable, definition_tokens
from proctor.engine.tools.run_surface import listing_of, with_definition_tokens
from proctor.scenarios.demo import SUITE_DIR
from proctor.scenarios.loader import load_suite
from proctor.store.events import ListedTool

SCENARIO = "retry-delay-cap"  # a demo scenario: every arm offers tools, MCP and built-in
FIXTURES = Path(__file__).parents[1] / "fixtures" / "reference_tools"


def _listed(server: str, dump: str) -> list[ListedTool]:
    tools = json.loads((FIXTURES / dump).read_text())["tools"]
    return [
        ListedTool(
            name=t["name"], server=server, description=t.get("description", ""), input_schema=t["inputSchema"]
        )
        for t in tools
    ]


def test_a_run_records_what_the_report_would_count() -> None:
    listed = _listed("time", "time-2026.10.19.json") + _listed("git", "git-2026.10.19.json")
    recorded = with_definition_tokens(listed)
    assert [t.model_copy(update={"definition_tokens": None}) for t in recorded] == listed
    counted = listing_of(listed)  # no recorded counts: counted as before
    assert [t.definition_tokens for t in recorded] == list(counted.tokens)
    assert all(n > 0 for n in counted.tokens)


def test_a_report_reads_the_recorded_count_and_counts_what_is_missing() -> None:
    listed = _listed("time", "time-2026.10.19.json")
    first = listed[0].model_copy(update={"definition_tokens": 7})  # not what it costs: proves it is read
    listing = listing_of([first, *listed[1:]])
    assert listing.tokens[0] == 7
    assert list(listing.tokens[1:]) == [definition_tokens(d) for d in listing.tools[1:]]
    as_dicts = [t.model_dump() for t in [first, *listed[1:]]]  # payload dicts read alike
    assert listing_of(as_dicts).tokens == listing.tokens


def test_without_the_tokenizer_a_run_records_no_count(monkeypatch: pytest.MonkeyPatch) -> None:
    def unavailable(text: str) -> int:
        raise TokenizerUnavailable("the cl100k_base vocabulary is not usable (test)")

    monkeypatch.setattr(run_surface, "count_tokens", unavailable)
    run_surface._tokens_of_text.cache_clear()
    try:
        listed = _listed("memory", "memory-2026.8.31.json")
        assert with_definition_tokens(iter(listed)) == listed
    finally:
        run_surface._tokens_of_text.cache_clear()


def test_a_run_s_report_loads_no_tokenizer_and_says_what_it_said_counting(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    status = asyncio.run(run_suite(load_suite(SUITE_DIR), RunOptions(db=db, epochs=1, scenarios=[SCENARIO])))
    assert status == "finished"
    with sqlite3.connect(db) as conn:
        payloads = [
            json.loads(p) for (p,) in conn.execute("SELECT payload FROM events WHERE kind = 'tools_listed'")
        ]
    assert payloads and all(t["definition_tokens"] > 0 for p in payloads for t in p["tools"])
    stripped = tmp_path / "stripped.db"
    with sqlite3.connect(db) as src, sqlite3.connect(stripped) as dst:
        src.backup(dst)
        rows = dst.execute("SELECT id, payload FROM events WHERE kind = 'tools_listed'").fetchall()
        for event_id, payload in rows:
            data = json.loads(payload)
            for t in data["tools"]:
                del t["definition_tokens"]
            dst.execute("UPDATE events SET payload = ? WHERE id = ?", (json.dumps(data).encode(), event_id))
    script = (
        "import sys, orjson\n"
        "from pathlib import Path\n"
        "from proctor.engine.reports.report import build_report, report_json\n"
        "surface = orjson.loads(report_json(build_report(Path(sys.argv[1]))))['tool_surface']\n"
        "sys.stdout.buffer.write(orjson.dumps({'tokenizer': 'tiktoken' in sys.modules, 'surface': surface}))\n"
    )
    recorded, counted = (
        json.loads(
            subprocess.run([sys.executable, "-c", script, str(d)], capture_output=True, check=True).stdout
        )
        for d in (db, stripped)
    )
    assert recorded["tokenizer"] is False and counted["tokenizer"] is True
    assert recorded["surface"] == counted["surface"]
