"""A tool definition a model's API refuses stops the run before its first trial (exit 2).

The server is real: tests/reference_servers/union_schema_server.mjs publishes a zod union as
its schema's root ``anyOf``, which the Anthropic API refuses for every request of the arm.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from proctor.app.cli import main
from proctor.store.read.reader import StoreReader
from tests.fakes import fake_anthropic as fa
from tests.fakes import fake_openai as fo

SERVER = Path(__file__).resolve().parents[2] / "reference_servers" / "union_schema_server.mjs"
pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="needs node")


def write_suite(root: Path, model: str) -> Path:
    (root / "scenarios").mkdir(parents=True)
    (root / "suite.yaml").write_text(
        f"""name: catalog
mcpServers:
  catalog:
    command: node
    args: ["{SERVER}"]
arms:
  catalog:
    servers: [catalog]
models: ["{model}"]
"""
    )
    (root / "scenarios" / "find.yaml").write_text(
        "id: find\nprompt: Find the catalog resource of group/app.\n"
    )
    return root


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[fa.FakeAnthropic, fo.FakeOpenAI]]:
    with fa.FakeAnthropic() as anthropic, fo.FakeOpenAI() as openai:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-PREFLIGHT-0123456789")
        monkeypatch.setenv("OPENAI_BASE_URL", openai.openai_base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-PREFLIGHT-0123456789")
        yield anthropic, openai


def test_a_root_anyof_stops_an_anthropic_run_before_any_request_naming_server_tool_field_and_fix(
    tmp_path: Path, keys: tuple[fa.FakeAnthropic, fo.FakeOpenAI], capsys: pytest.CaptureFixture[str]
) -> None:
    anthropic, _ = keys
    suite = write_suite(tmp_path / "suite", "anthropic:claude-sonnet-4-5")
    db = tmp_path / "r.db"
    code = main(["run", str(suite), "--headless", "--db", str(db)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "server 'catalog', tool 'get_catalog_resource', field 'input_schema'" in err
    assert "leave this server out of the arms run with anthropic: models" in err
    assert anthropic.requests == []
    with StoreReader(db) as reader:
        assert all(t.status == "queued" for t in reader.trials())


def test_the_same_server_runs_with_an_openai_model(
    tmp_path: Path, keys: tuple[fa.FakeAnthropic, fo.FakeOpenAI], capsys: pytest.CaptureFixture[str]
) -> None:
    _, openai = keys
    openai.enqueue(fo.completion_reply(text=["It is group/app's resource."]))
    suite = write_suite(tmp_path / "suite", "openai:gpt-4.1")
    code = main(["run", str(suite), "--headless", "--db", str(tmp_path / "r.db")])
    assert code == 0, capsys.readouterr().err
    assert len(openai.requests) == 1
    with StoreReader(tmp_path / "r.db") as reader:
        run = reader.run()
        (trial,) = reader.trials()
    assert run is not None and run.config["prices"]["library"] == "genai-prices"
    assert run.config["prices"]["version"] == "0.2.3" and run.config["prices"]["price_date"]
    assert trial.cost_usd is not None and trial.cost_usd > 0  # gpt-4.1 behind a gateway: OpenAI's price
