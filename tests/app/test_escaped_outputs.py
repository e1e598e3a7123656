"""Names from a suite reach the terminal and report files only as the console shows them:
no escape sequence, control or bidi character survives (an OSC in an arm name cleared the pane
and retitled the terminal through the headless summary and ``report --format csv``)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from proctor.app.cli import main
from proctor.app.headless import summary_table
from proctor.store.events import TrialFinished, TrialStarted, Usage
from proctor.store.write.writer import StoreWriter, TrialRow

ARM = "\x1b]0;pwned-title\x07\x1b[2J\x1b[Harm\u202eevil"
MODEL = "offline:\x9b31mdefault\x1bP+q\x1b\\"
SCENARIO = "scen\x1b[8m"
FORBIDDEN = ("\x1b]", "\x07", "\x1b[2J", "\x1b[H", "\u202e", "\x9b", "\x1bP", "pwned-title")


def _assert_clean(text: str) -> None:
    for bad in FORBIDDEN:
        assert bad not in text, f"{bad!r} reached the output"
    assert "armevil" in text.replace(" ", "") or "arm" in text


@pytest.fixture
async def hostile_db(tmp_path: Path) -> Path:
    db = tmp_path / "hostile.db"
    w = await StoreWriter.open(db, flush_interval_s=0.001)
    await w.create_run("r", "suite\x1b]2;x\x07", {})
    await w.add_trials("r", [TrialRow(SCENARIO, ARM, MODEL, 0, 1)])
    w.emit(
        "r",
        TrialStarted(scenario=SCENARIO, arm=ARM, model=MODEL, epoch=0, seed=1, attempt=1),
        trial_id=1,
        attempt=1,
    )
    w.emit(
        "r",
        TrialFinished(
            status="finished",
            stop="end_turn",
            final_answer="ok",
            tool_calls=0,
            usage=Usage(),
            cost_usd=0,
            wall_s=0,
        ),
        trial_id=1,
        attempt=1,
    )
    await w.close()
    return db


def test_the_headless_summary_prints_arm_and_model_names_escaped(hostile_db: Path) -> None:
    buffer = io.StringIO()
    Console(file=buffer, force_terminal=True, width=200, color_system="truecolor").print(
        summary_table(hostile_db)
    )
    out = buffer.getvalue()
    _assert_clean(out)
    assert "armevil" in out and "offline:defaul" in out


@pytest.mark.parametrize("fmt", ["csv", "md", "junit"])
def test_report_files_carry_no_escape_characters(
    hostile_db: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(hostile_db), "--format", fmt]) == 0
    out = capsys.readouterr().out
    _assert_clean(out)
    assert "\x1b" not in out
    assert "armevil" in out.replace("\\", "")


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_exports_carry_no_character_a_terminal_acts_on(hostile_db: Path, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"events.{fmt}"
    assert main(["export", str(hostile_db), "--format", fmt, "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    for bad in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert bad not in text, f"{bad!r} reached the export"
    if fmt == "csv":  # name columns read as the console shows them
        assert ",armevil,offline:default," in text
    else:  # the data keeps the raw name, written as JSON escapes
        rows = [json.loads(line) for line in text.splitlines()]
        assert any(r.get("arm") == ARM for r in rows)


def test_an_error_message_quoting_a_name_is_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "s"
    (suite / "scenarios").mkdir(parents=True)
    arms = f"  base: {{baseline: true}}\n  {json.dumps(ARM)}: {{servers: [nope]}}\n"
    (suite / "suite.yaml").write_text("name: t\narms:\n" + arms)
    (suite / "scenarios" / "one.yaml").write_text("id: one\nprompt: hi\n")
    code = main(["run", str(suite), "--headless", "--db", str(tmp_path / "r.db")])
    err = capsys.readouterr().err
    assert code == 2 and "unknown server 'nope'" in err
    _assert_clean(err)
