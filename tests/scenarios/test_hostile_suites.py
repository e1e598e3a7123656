"""Mutated suites that used to hang the loader or exhaust memory: each ends in exit 2 naming the file.

Each attack runs ``proctor run`` in a child process with a 1.5 GiB address-space limit and a
deadline, so a regression fails the test instead of taking the machine's memory with it.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from proctor.scenarios.loader import SuiteError, load_servers_file, load_suite
from proctor.scenarios.suite_text import MAX_YAML_DEPTH

SUITE = """
name: t
mcpServers:
  s1: {command: python, args: [-m, x]}
arms:
  baseline: {baseline: true}
  mcp: {servers: [s1]}
"""
SCENARIO = "id: one\nprompt: hello\nkeywords: {required: [hello]}\n"


def _with_arguments(value: str) -> str:
    """A scenario whose gold call's arguments (free-form in the schema) are ``value``, in flow style."""
    return SCENARIO + f"gold_tool_calls:\n  - - tool: probe\n      arguments: {value}\n"


def _with_block_arguments(lines: list[str]) -> str:
    return (
        SCENARIO
        + "gold_tool_calls:\n  - - tool: probe\n      arguments:\n"
        + "".join(f"        {x}\n" for x in lines)
    )


LAUGHS = "\n".join(
    ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 10)]
)


def _suite(root: Path, suite: str = SUITE, scenario: str = SCENARIO) -> Path:
    (root / "scenarios").mkdir(parents=True, exist_ok=True)
    (root / "suite.yaml").write_text(suite)
    (root / "scenarios" / "one.yaml").write_text(scenario)
    return root


def _limit_memory() -> None:
    cap = 1536 * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def _run(suite: Path, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    cmd = [
        sys.executable,
        "-m",
        "proctor.app.cli",
        "run",
        str(suite),
        "--headless",
        "--db",
        str(tmp_path / "r.db"),
    ]
    try:
        return subprocess.run(
            [*cmd, *extra], capture_output=True, text=True, timeout=60, preexec_fn=_limit_memory, check=False
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"proctor run did not finish within 60 s on {suite}")


def _assert_refused(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr
    for needle in needles:
        assert needle in done.stderr, done.stderr[-2000:]


def test_a_fifo_among_the_scenarios_is_refused_not_waited_on(tmp_path: Path) -> None:
    root = _suite(tmp_path / "s")
    os.mkfifo(root / "scenarios" / "two.yaml")
    _assert_refused(_run(root, tmp_path), "two.yaml", "not a regular file")


def test_a_scenario_linked_to_dev_zero_is_refused(tmp_path: Path) -> None:
    root = _suite(tmp_path / "s")
    (root / "scenarios" / "zero.yaml").symlink_to("/dev/zero")
    _assert_refused(_run(root, tmp_path), "zero.yaml", "not a regular file")


def test_servers_file_dev_zero_is_refused(tmp_path: Path) -> None:
    root = _suite(tmp_path / "s", SUITE.replace("mcpServers:", "servers_file: /dev/zero\nmcpServers:"))
    _assert_refused(_run(root, tmp_path), "/dev/zero", "not a regular file")


def test_an_oversized_scenario_file_is_refused_naming_the_limit(tmp_path: Path) -> None:
    root = _suite(tmp_path / "s")
    big = root / "scenarios" / "big.yaml"
    with big.open("wb") as f:
        f.truncate(17 * 1024 * 1024)  # sparse: costs no disk
    with pytest.raises(SuiteError, match=r"big\.yaml: larger than 16 MiB"):
        load_suite(root)


def test_billion_laughs_in_a_scenario_is_refused_quickly(tmp_path: Path) -> None:
    root = _suite(tmp_path / "s", scenario=_with_block_arguments(LAUGHS.splitlines()))
    _assert_refused(_run(root, tmp_path), "one.yaml", "expands to more than")


def test_billion_laughs_in_a_yaml_servers_file_is_refused(tmp_path: Path) -> None:
    root = _suite(tmp_path / "s", SUITE.replace("mcpServers:", "servers_file: servers.yaml\nmcpServers:"))
    (root / "servers.yaml").write_text(LAUGHS + "\nmcpServers: {s2: {command: python, args: *a9}}\n")
    _assert_refused(_run(root, tmp_path), "servers.yaml", "expands to more than")


@pytest.mark.parametrize("text", ["{v: " + "[" * 50_000 + "]" * 50_000 + "}", "{v: " * 500 + "1" + "}" * 500])
def test_deep_nesting_is_refused_with_the_depth_limit(tmp_path: Path, text: str) -> None:
    root = _suite(tmp_path / "s", scenario=_with_arguments(text))
    with pytest.raises(SuiteError) as info:
        load_suite(root)
    assert "one.yaml" in str(info.value) and f"deeper than {MAX_YAML_DEPTH}" in str(info.value)


def test_deep_nesting_through_aliases_is_refused(tmp_path: Path) -> None:
    chain = ["a0: &a0 [x]"] + [f"a{i}: &a{i} [[[[[[*a{i - 1}]]]]]]" for i in range(1, 40)]
    root = _suite(tmp_path / "s", scenario=_with_block_arguments(chain))
    with pytest.raises(SuiteError, match="deeper than"):
        load_suite(root)


def test_a_deeply_nested_json_servers_file_is_an_error_not_a_recursion_error(tmp_path: Path) -> None:
    servers = tmp_path / "servers.json"
    servers.write_text('{"mcpServers": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(SuiteError, match=r"servers\.json"):
        load_servers_file(servers)


def test_a_recursive_alias_is_refused(tmp_path: Path) -> None:
    root = _suite(tmp_path / "s", scenario=_with_arguments("&m {self: *m}"))
    with pytest.raises(SuiteError, match="refers to itself"):
        load_suite(root)


@pytest.mark.parametrize(
    ("file", "suite", "scenario", "line", "key"),
    [
        ("suite.yaml", SUITE + "arms:\n  other: {baseline: true}\n", SCENARIO, 8, "arms"),
        (
            "suite.yaml",
            SUITE.replace("  s1: {command: python", "  s1: {command: node, command: python"),
            SCENARIO,
            4,
            "command",
        ),
        ("one.yaml", SUITE, SCENARIO + "prompt: goodbye\n", 4, "prompt"),
    ],
)
def test_a_duplicate_key_is_an_error_naming_file_line_and_key(
    tmp_path: Path, file: str, suite: str, scenario: str, line: int, key: str
) -> None:
    root = _suite(tmp_path / "s", suite, scenario)
    with pytest.raises(SuiteError) as info:
        load_suite(root)
    text = str(info.value)
    assert file in text and f"line {line}" in text and f"duplicate key {key!r}" in text, text


def test_a_merge_key_may_still_override_what_it_brings_in(tmp_path: Path) -> None:
    scenario = _with_block_arguments(["base: &b {x: 1, y: 2}", "more: {<<: *b, x: 3}"])
    loaded = load_suite(_suite(tmp_path / "s", scenario=scenario))
    assert loaded.scenarios[0].gold_tool_calls[0][0].arguments["more"] == {"x": 3, "y": 2}


def test_legitimate_aliases_still_load(tmp_path: Path) -> None:
    suite = SUITE.replace(
        "  s1: {command: python, args: [-m, x]}", "  s1: &srv {command: python, args: [-m, x]}\n  s2: *srv"
    )
    loaded = load_suite(_suite(tmp_path / "s", suite))
    assert loaded.servers["s1"] == loaded.servers["s2"]


def test_a_huge_epoch_count_is_refused_before_the_matrix_is_built(tmp_path: Path) -> None:
    done = _run(_suite(tmp_path / "s"), tmp_path, "--epochs", "100000000")
    _assert_refused(done, "200,000,000 trials", "limits.max_trials = 1,000,000", "--epochs")
    assert not (tmp_path / "r.db").exists()


def test_the_matrix_bound_is_the_suites_to_raise_and_holds_in_the_engine_too(tmp_path: Path) -> None:
    from proctor.engine.runs.matrix import expand

    loaded = load_suite(_suite(tmp_path / "s", SUITE + "limits: {max_trials: 10}\n"))
    assert len(expand(loaded, models=["offline:default"], epochs=5)) == 10
    with pytest.raises(SuiteError, match=r"12 trials .*max_trials = 10"):
        expand(loaded, models=["offline:default"], epochs=6)


def _read_common(path: Path) -> object:
    from proctor.scenarios.importers.common import read_text

    return read_text(path)


def _read_atlas(path: Path) -> object:
    from proctor.scenarios.importers.mcp_atlas import read_rows

    return read_rows(path)


@pytest.mark.parametrize(
    ("name", "read"),
    [("tasks.json", _read_common), ("sample_tasks.csv", _read_atlas)],
    ids=["json", "mcp-atlas-csv"],
)
def test_an_import_source_that_is_a_fifo_is_refused(
    tmp_path: Path, name: str, read: Callable[[Path], object]
) -> None:
    import threading

    os.mkfifo(tmp_path / name)
    outcome: list[object] = []

    def read_it() -> None:  # in a daemon thread: a regression blocks it, not the test run
        try:
            outcome.append(read(tmp_path / name))
        except Exception as exc:
            outcome.append(exc)

    reader = threading.Thread(target=read_it, daemon=True)
    reader.start()
    reader.join(10)
    assert outcome, "reading a FIFO blocked"
    assert f"{name}: not a regular file" in str(outcome[0])
