"""The HTML report: one self-contained page, names escaped, and it renders in a real browser.

The browser test runs Debian's Chromium headless (``make test`` installs it when missing and run
as root); without it the test skips and says so. The run it renders is a real offline run of the
demo suite's baseline and code-intelligence arms on two scenarios, with hostile names put into the
stored run the way a suite or an imported file would carry them.
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
import tempfile
from pathlib import Path

import pytest

from proctor.app.cli import main
from proctor.engine.reports.md_format import cell
from proctor.engine.reports.report import build_report
from proctor.engine.reports.report_html import failed_trial_events, markdown_to_html, render_html

pytest.importorskip("matplotlib", reason="the html extra (matplotlib) is not installed")

DEMO = Path(__file__).resolve().parents[3] / "scenarios" / "demo"
CHROMIUM = Path("/usr/bin/chromium")
HOSTILE_ARM = "<script>alert(1)</script>\x1b]8;;http://evil.example\x07arm"


@pytest.fixture(scope="module")
def run_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("html") / "r.db"
    code = main(
        [
            "run",
            str(DEMO),
            "--headless",
            "--db",
            str(db),
            "--arms",
            "baseline,codeintel",
            "--scenarios",
            "retry-delay-cap,backoff-callers",
        ]
    )
    assert code == 0
    conn = sqlite3.connect(db)
    conn.execute("UPDATE trials SET arm = ? WHERE arm = 'codeintel'", (HOSTILE_ARM,))
    conn.commit()
    conn.close()
    return db


@pytest.fixture(scope="module")
def page(run_db: Path) -> str:
    data = build_report(run_db)
    return render_html(data, failed_trial_events(run_db, data))


def test_the_page_loads_nothing_from_elsewhere(page: str) -> None:
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "<script" not in page.lower()
    assert "default-src 'none'" in page


def test_names_from_the_run_are_escaped_and_control_sequences_dropped(page: str) -> None:
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "\x1b" not in page and "\x07" not in page


def test_the_page_has_verdict_intervals_frontier_tables_and_failed_trial_excerpts(page: str) -> None:
    for heading in (
        "Verdict",
        "Against the baseline",
        "Per scenario",
        "Failure modes",
        "Tools",
        "Cost vs fairness",
    ):
        assert f"<h2>{heading}</h2>" in page
    assert page.count('<div class="chart') == 2  # Δ fairness forest and the cost frontier, as SVG
    assert "95% CI" in page and "<table>" in page
    folds = re.findall(r'<details class="trial"><summary>(.*?)</summary>', page)
    assert folds and all("epoch" in f for f in folds)
    assert "→ " in page and "answer:" in page  # a transcript: calls and the final answer


def test_escaped_text_in_a_cell_is_shown_as_written_and_never_read_as_markup() -> None:
    """Lines of the demo repository as the hallucinated-citations table quotes them: ``->``, ``<``
    and backticks are the code's own characters, not a backslash and an entity, nor a code span."""
    lines = (DEMO / "repo" / "tinyq" / "retry.py").read_text(encoding="utf-8").splitlines()
    quoted = [lines[74].strip(), lines[76].strip(), "**not bold** x_y_z"]
    md = "| line |\n|---|\n" + "\n".join(f"| {cell(q)} |" for q in quoted)
    page = "\n".join(markdown_to_html(md, {}))
    assert ":data:`MAX_RETRY_DELAY`. With the defaults" in page
    assert "if attempt &lt; 1:" in page
    assert "**not bold** x_y_z" in page
    assert "\\" not in page and "<code>" not in page and "<strong>" not in page


def test_html_format_writes_one_file(run_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    assert main(["report", str(run_db), "--format", "html", "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def _chromium(*args: str, profile: Path, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--enable-logging=stderr",
        "--v=0",
    ]
    return subprocess.run(
        [str(CHROMIUM), *flags, *args], capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="no /usr/bin/chromium: run `make test` as root (it installs Debian's chromium) or apt-get install chromium",
)
def test_chromium_renders_the_page_with_its_charts_and_no_console_errors(page: str, tmp_path: Path) -> None:
    html_file = tmp_path / "report.html"
    html_file.write_text(page, encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="proctor-chromium-") as profile:
        dom = _chromium("--dump-dom", html_file.as_uri(), profile=Path(profile))
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "Uncaught" not in dom.stderr and "CONSOLE" not in dom.stderr, dom.stderr[-2000:]
    charts = re.findall(r'<div class="chart (forest|frontier)"><svg', dom.stdout)
    assert sorted(charts) == ["forest", "frontier"]
    assert dom.stdout.count("<path") > 10  # the charts' marks were parsed as SVG, not text
    shot = tmp_path / "report.png"
    with tempfile.TemporaryDirectory(prefix="proctor-chromium-") as profile:
        done = _chromium(
            f"--screenshot={shot}", "--window-size=1280,2000", html_file.as_uri(), profile=Path(profile)
        )
    assert done.returncode == 0 and shot.stat().st_size > 10_000, done.stderr[-2000:]


def test_each_failed_trial_says_why_without_opening_its_fold(page: str) -> None:
    folds = re.findall(r'<details class="trial"><summary>(.*?)</summary>', page)
    assert folds and all(" — failed on " in f or " — error: " in f for f in folds)
    assert any("failed on judged claims coverage 0.50 &lt; 0.75" in f for f in folds)
    assert page.count("<h2>Failed trials</h2>") == 1  # the Markdown's table is not repeated


def test_the_verdict_leads_with_what_happened_then_what_the_test_can_say(page: str) -> None:
    sentence = next(m for m in re.findall(r"<li>(.*?)</li>", page) if "against the baseline" in m)
    assert re.match(
        r"<strong>.*</strong> passed \d+/\d+ against the baseline&#x27;s \d+/\d+ and scored ", sentence
    )
    assert sentence.index("passed") < sentence.index("chance") and "95% CI" in sentence
    lead = re.search(r"<h2>Verdict</h2>\s*<p>(.*?)</p>", page)
    assert lead is not None and lead.group(1).startswith("Against the baseline: ")
    verdict = page[page.index("<h2>Verdict</h2>") : page.index("<h2>Caveats</h2>")]
    assert "no evidence of a difference" not in verdict
