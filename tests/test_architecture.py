"""The layers the README promises, checked over every import in the source (top-level or not).

Packages depend one way (app -> widgets -> store, app -> engine -> scenarios / store); inside the
engine, each sub-package imports only from the layers below it; the engine, the store and the
scenarios never import Textual; and the commands that only read a run database load none of
the heavy libraries, so they answer at once.
"""

from __future__ import annotations

import ast
import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from proctor.store.events import Scored
from proctor.store.write.writer import StoreWriter, TrialRow

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("app", "widgets", "engine", "scenarios", "store")
MAY_IMPORT = {
    "app": {"app", "widgets", "engine", "scenarios", "store"},
    "widgets": {"widgets", "store"},
    "engine": {"engine", "scenarios", "store"},
    "scenarios": {"scenarios"},
    "store": {"store"},
}
# Top to bottom; a sub-package may import its own layer's package and the layers below it.
# The engine's own modules (engine/*.py) sit below every layer.
ENGINE_LAYERS: tuple[tuple[str, ...], ...] = (
    ("runs", "replay"),
    ("reports", "authoring"),
    ("grading",),
    ("judges",),
    ("providers",),
    ("tools", "scoring", "stats", "drift"),
)
NO_TEXTUAL = ("engine", "store", "scenarios", "app.views")
STORE_WINGS = ("read", "write")


def _modules() -> Iterator[tuple[str, Path, set[str]]]:
    """(dotted module, file, every proctor or third-party module it imports)."""
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "demo/repo" in path.as_posix():
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            imported: set[str] = set()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    imported.add(node.module)
                elif isinstance(node, ast.Import):
                    imported.update(alias.name for alias in node.names)
            yield ".".join(parts), path, imported


def _layer(sub: str) -> int:
    for index, layer in enumerate(ENGINE_LAYERS):
        if sub in layer:
            return index
    return len(ENGINE_LAYERS)  # engine/*.py modules


def test_packages_depend_one_way() -> None:
    wrong = [
        f"{path.relative_to(ROOT)} imports {name}"
        for module, path, imported in _modules()
        for name in imported
        if name.startswith("proctor.") and name.split(".")[1] not in MAY_IMPORT[module.split(".")[0]]
    ]
    assert wrong == []


def test_engine_sub_packages_import_only_lower_layers() -> None:
    wrong: list[str] = []
    for module, path, imported in _modules():
        parts = module.split(".")
        if parts[0] != "engine" or len(parts) < 3:
            continue
        mine = _layer(parts[1])
        for name in imported:
            target = name.split(".")
            if target[:2] != ["proctor", "engine"] or len(target) < 4:
                continue
            theirs = _layer(target[2])
            if target[2] != parts[1] and theirs <= mine:
                wrong.append(f"{path.relative_to(ROOT)} imports {name}")
    assert wrong == []


def test_engine_store_and_scenarios_never_import_textual() -> None:
    wrong = [
        f"{path.relative_to(ROOT)} imports {name}"
        for module, path, imported in _modules()
        for name in imported
        if module.startswith(NO_TEXTUAL) and name.split(".")[0] == "textual"
    ]
    assert wrong == []


def _store_wing(dotted: str) -> str:
    """``read``, ``write`` or ``bottom`` for a store module (``store.x`` or ``proctor.store.x``)."""
    parts = dotted.removeprefix("proctor.").split(".")
    return parts[1] if len(parts) > 1 and parts[1] in STORE_WINGS else "bottom"


def test_store_wings_stand_on_the_bottom_and_not_on_each_other() -> None:
    """Reading a run never loads the writer (its queue, its thread pool), and neither wing is
    reached from the shared bottom modules (events, scores, schema, codec, redaction, ...)."""
    wrong = [
        f"{path.relative_to(ROOT)} ({_store_wing(module)}) imports {name}"
        for module, path, imported in _modules()
        if module.startswith("store.")
        for name in imported
        if name.startswith("proctor.store.")
        and _store_wing(name) != "bottom"
        and _store_wing(name) != _store_wing(module)
    ]
    assert wrong == []


def _private_imports(path: Path) -> Iterator[str]:
    """Each name ``path`` imports from a third-party package that the package keeps private: a
    module or name with a leading underscore (``scipy.special._ufuncs``, ``from x import _y``)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            dotted = [node.module + "." + alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            dotted = [alias.name for alias in node.names]
        else:
            continue
        for name in dotted:
            top, *rest = name.split(".")
            if top == "proctor" or top in sys.stdlib_module_names or top == "__future__":
                continue
            if top.startswith("_") or any(part.startswith("_") for part in rest):
                yield name


# The mcp SDK 2.x gives its transport's stream types no public home (mcp.client re-exports only
# ``Transport``; the streams live in mcp.client._transport and mcp.shared._stream_protocols), and
# proctor's own stdio reader and traffic watch hand the SDK those streams. Nothing else may.
PRIVATE_BUT_NO_PUBLIC_HOME = {
    "engine/tools/jsonrpc_watch.py imports mcp.client._transport.ReadStream",
    "engine/tools/jsonrpc_watch.py imports mcp.client._transport.Transport",
    "engine/tools/jsonrpc_watch.py imports mcp.client._transport.TransportStreams",
    "engine/tools/jsonrpc_watch.py imports mcp.client._transport.WriteStream",
    "engine/tools/stdio_lines.py imports mcp.client._transport.TransportStreams",
}


def test_no_module_imports_a_private_name_of_a_dependency() -> None:
    # A private name changes without notice in any release: call the public API (scipy.stats,
    # not scipy.special._ufuncs), and where none does the job, list it above with why.
    found = {
        f"{path.relative_to(ROOT)} imports {name}"
        for _module, path, _imported in _modules()
        for name in _private_imports(path)
    }
    assert found - PRIVATE_BUT_NO_PUBLIC_HOME == set()


def test_the_private_import_check_sees_both_forms(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import scipy.special._ufuncs\nfrom scipy.special import _ufuncs\nfrom pydantic_core import from_json\n"
        "from proctor.store import _private\nfrom os import _exit\nfrom . import _local\n"
    )
    assert list(_private_imports(probe)) == ["scipy.special._ufuncs", "scipy.special._ufuncs"]


HEAVY = ("textual", "mcp", "numpy", "anthropic", "openai", "ray", "aiosqlite", "proctor.store.write")


def _siblings_imported(child: Path, prefix: str) -> set[str]:
    """The siblings (modules or sub-packages of one package) that ``child`` imports, in any form."""
    files = sorted(child.rglob("*.py")) if child.is_dir() else [child]
    names: set[str] = set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
                names.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
    return {n[len(prefix) :].split(".")[0] for n in names if n.startswith(prefix)}


def _package_cycles(package: Path) -> list[str]:
    """Import cycles among one package's modules and sub-packages (each sub-package one node)."""
    prefix = "proctor." + ".".join(package.relative_to(ROOT).parts) + "."
    children = {
        c.stem: c
        for c in package.iterdir()
        if (c.suffix == ".py" and c.name != "__init__.py") or (c / "__init__.py").is_file()
    }
    graph = {
        name: sorted(_siblings_imported(c, prefix) & set(children) - {name}) for name, c in children.items()
    }
    cycles: list[str] = []
    state: dict[str, str] = {}

    def visit(name: str, path: list[str]) -> None:
        state[name] = "open"
        for target in graph[name]:
            if state.get(target) == "open":
                cycles.append(prefix + " -> ".join([*path[path.index(target) :], name, target]))
            elif target not in state:
                visit(target, [*path, name])
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [])
    return cycles


def test_no_package_has_an_import_cycle_even_for_the_type_checker() -> None:
    # Imports under TYPE_CHECKING and inside functions count: a cycle there is still two
    # modules that cannot be understood, changed or moved one without the other.
    packages = [p for top in PACKAGES for p in [ROOT / top, *sorted((ROOT / top).rglob("*"))]]
    cycles = [c for p in packages if (p / "__init__.py").is_file() for c in _package_cycles(p)]
    assert cycles == []


HEAVY = ("textual", "mcp", "numpy", "anthropic", "openai", "ray", "aiosqlite")
PROBE = """
import json, sys
from proctor.app.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(m for m in {heavy} if m in sys.modules)), file=sys.stderr)
"""


def _loaded_by(*argv: str, modules: tuple[str, ...] = HEAVY) -> list[str]:
    probe = PROBE.format(heavy=modules)
    out = subprocess.run(
        [sys.executable, "-c", probe, *argv], capture_output=True, text=True, timeout=60, check=False
    )
    loaded: list[str] = json.loads(out.stderr.strip().splitlines()[-1])
    return loaded


@pytest.fixture
def small_run(tmp_path: Path) -> Path:
    db = tmp_path / "run.db"

    async def build() -> None:
        writer = await StoreWriter.open(db)
        try:
            await writer.create_run("r", "suite", {})
            await writer.add_trials("r", [TrialRow("s", "baseline", "offline:default", 0, 1)])
            writer.emit("r", Scored(name="fairness", value=0.5, details={}), trial_id=1)
        finally:
            await writer.close()

    asyncio.run(build())
    return db


@pytest.mark.slow
def test_help_and_export_load_no_heavy_library(small_run: Path) -> None:
    assert _loaded_by("--help") == []
    assert _loaded_by("export", str(small_run), "-o", str(small_run.with_suffix(".jsonl"))) == []


@pytest.mark.slow
def test_report_loads_no_console_mcp_or_provider_sdk(small_run: Path) -> None:
    # Its statistics come from scipy, which brings numpy: everything else, the store's write wing
    # included, stays out.
    assert set(_loaded_by("report", str(small_run))) <= {"numpy"}


@pytest.mark.slow
def test_report_loads_no_scorer_and_no_event_loop(small_run: Path) -> None:
    # A report reads what the scorers and the tools stored: the scorers' modules and asyncio
    # (with ssl) cost a tenth of a second to load and are never called.
    loaded = _loaded_by("report", str(small_run), modules=("proctor.engine.scoring", "asyncio", "ssl"))
    assert loaded == []
