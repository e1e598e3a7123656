"""The report's "tool surface" section: each arm's tool definitions, what they cost in tokens on
every turn, the pass rate against that cost, and whether they still match the suite's tool lock.

A lock (``SUITE/tools.lock.json``, written by ``proctor tools lock``) pins what was reviewed. A
run whose servers listed something else is flagged here, in the console and by ``proctor gate``:
a description changed after review is how a tool gets poisoned. Only the servers the run used are
compared (an arm left out of a run is no difference); a server missing from the lock is one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proctor.engine.reports.md_format import cell
from proctor.engine.reports.report_model import Report
from proctor.engine.reports.tools_model import SurfaceArm, SurfaceChange, SurfaceLock, ToolSurfaceSection
from proctor.engine.tools.definition_tokens import TOKENIZER
from proctor.engine.tools.run_surface import Listing, RunSurface, listing_of
from proctor.engine.tools.surface import Surface
from proctor.engine.tools.surface_diff import SurfaceDiff, ToolChange, diff_surfaces
from proctor.engine.tools.surface_lock import ToolLockError, lock_path, read_lock
from proctor.engine.tools.surface_render import KINDS, change_summary
from proctor.store.display_text import one_line
from proctor.store.event_structs import ReportEvent, ToolsListedStruct
from proctor.store.read.reader import StoreReader, TrialRecord

TOKENS_NOTE = (
    "definition tokens per turn: each offered tool's name, description and input schema as compact "
    f"JSON, counted with {TOKENIZER}; providers render tools in their own formats (and Anthropic adds "
    "a tool-use system prompt per request), so this estimates the definitions' share (README: Tool surface)"
)


@dataclass(frozen=True)
class LockCheck:
    """A run's surface against its suite's lock (``diff`` is empty when they match)."""

    path: str
    diff: SurfaceDiff
    error: str = ""  # the lock could not be read: the check failed

    @property
    def holds(self) -> bool:
        return not self.error and self.diff.same

    def summary_lines(self) -> list[str]:
        if self.error:
            return [f"tool lock {one_line(self.path, 200)} unreadable: {one_line(self.error, 300)}"]
        return [change_summary(c) for c in self.diff.changes]


def _listing(event: ReportEvent) -> Listing | None:
    return listing_of(event.tools) if isinstance(event, ToolsListedStruct) else None


def read_run_surface(reader: StoreReader, upper: int) -> RunSurface:
    surface = RunSurface()
    for trial_id, _attempt, abandoned, listing in reader.extract(
        ("tools_listed",), upper, _listing, repeated=("tools_listed",)
    ):
        surface.add(trial_id, abandoned, listing)
    return surface


def check_lock(used: Surface, lock_file: Path) -> LockCheck | None:
    """The run's servers against ``lock_file`` (None when there is no lock, or the run was offered
    no MCP tool: nothing to compare, which must not read as a lock that holds)."""
    if not lock_file.is_file() or not used:
        return None
    try:
        locked = read_lock(lock_file)
    except ToolLockError as exc:
        return LockCheck(str(lock_file), SurfaceDiff(), error=str(exc))
    return LockCheck(str(lock_file), diff_surfaces({s: locked.get(s, {}) for s in used}, used))


def suite_lock_file(config: dict[str, Any]) -> Path | None:
    """The lock beside the run's suite, if the run recorded where its suite is."""
    suite_dir = config.get("suite_dir")
    return lock_path(Path(suite_dir)) if isinstance(suite_dir, str) else None


def surface_report(
    reader: StoreReader, upper: int, trials: list[TrialRecord], config: dict[str, Any]
) -> ToolSurfaceSection:
    """The section for a stored run, its lock found beside the suite the run recorded."""
    run = read_run_surface(reader, upper)
    lock_file = suite_lock_file(config)
    lock = None if lock_file is None else check_lock(run.surface(), lock_file)
    return tool_surface_section(run, trials, lock)


def gate_tool_lock(db: Path, lock_file: Path | None = None) -> LockCheck | None:
    """``proctor gate``'s check: the run's tools against ``lock_file`` or, by default, the lock
    beside the run's suite (None when there is none: nothing to check)."""
    if lock_file is not None and not lock_file.is_file():
        raise ToolLockError(
            f"--tools-lock {lock_file}: no such file; write one with proctor tools lock SUITE"
        )
    with StoreReader(db) as reader:
        run = reader.run()
        found = lock_file or suite_lock_file(run.config if run is not None else {})
        if found is None or not found.is_file():
            return None
        used = read_run_surface(reader, reader.max_event_id()).surface()
    return check_lock(used, found)


def tool_surface_section(
    run: RunSurface, trials: list[TrialRecord], lock: LockCheck | None
) -> ToolSurfaceSection:
    """The report's ``tool_surface`` key."""
    return {
        "tokenizer": TOKENIZER,
        "note": TOKENS_NOTE,
        "lock": _lock_json(lock),
        "changed_during_run": [f"{s}/{t}" for s, t in run.changed_during_run()],
        "arms": _arms(run, trials),
        "tools": [
            {
                "server": d.server,
                "tool": d.name,
                "sha256": d.sha256(),
                "tokens": tokens,
            }
            for d, tokens in _tool_tokens(run)
        ],
    }


def change_json(c: ToolChange) -> SurfaceChange:
    """One tool's change as the report and ``proctor tools diff --format json`` write it."""
    out: SurfaceChange = {"server": c.server, "tool": c.tool, "change": c.kind, "breaking": c.breaking}
    if c.old_name:
        out["old_name"] = c.old_name
    if c.schema:
        out["input_schema"] = [{"path": s.path, "change": s.change, "breaking": s.breaking} for s in c.schema]
    if c.description is not None:
        out["description"] = [{"op": op, "words": words} for op, words in c.description.ops]
    if c.other:
        out["changed"] = list(c.other)
    return out


def diff_json(diff: SurfaceDiff) -> dict[str, Any]:
    """``proctor tools diff --format json`` (less the two sides' names)."""
    return {
        "same": diff.same,
        "breaking": diff.breaking,
        "counts": {k: sum(c.kind == k for c in diff.changes) for k in KINDS},
        "changes": [change_json(c) for c in diff.changes],
    }


def _lock_json(lock: LockCheck | None) -> SurfaceLock:
    if lock is None:
        return {"status": "none", "file": None, "changes": []}
    status = "unreadable" if lock.error else "holds" if lock.holds else "differs"
    out: SurfaceLock = {
        "status": status,
        "file": lock.path,
        "changes": [change_json(c) for c in lock.diff.changes],
    }
    if lock.error:
        out["error"] = lock.error
    return out


def _tool_tokens(run: RunSurface) -> list[tuple[Any, int]]:
    seen: dict[tuple[str, str], tuple[Any, int]] = {}
    for listing in run.distinct():
        for d, n in zip(listing.tools, listing.tokens, strict=True):
            seen[(d.server, d.name)] = (d, n)
    return [seen[k] for k in sorted(seen)]


def _arms(run: RunSurface, trials: list[TrialRecord]) -> list[SurfaceArm]:
    """Per arm × model: definition tokens per turn (mean over trials, by server) and pass rate.
    Trials are counted per distinct listing (an arm's trials share one or a few)."""
    groups: dict[tuple[str, str], _Group] = {}
    listings = run.listings
    for t in trials:
        listing = listings.get(t.id)
        if listing is None:
            continue
        g = groups.get((t.arm, t.model))
        if g is None:  # not setdefault: it would build a group per trial to throw away
            g = groups[(t.arm, t.model)] = _Group()
        counted = g.listings.get(id(listing))
        g.listings[id(listing)] = (listing, 1 if counted is None else counted[1] + 1)
        if t.passed is not None:
            g.judged += 1
            g.passed += bool(t.passed)
    rows: list[SurfaceArm] = []
    for (arm, model), g in sorted(groups.items()):
        n = sum(count for _, count in g.listings.values())
        by_server: dict[str, int] = {}
        for listing, count in g.listings.values():
            for server, tokens in listing.by_server:
                by_server[server] = by_server.get(server, 0) + tokens * count
        rows.append(
            {
                "arm": arm,
                "model": model,
                "trials": n,
                "tools": round(sum(len(lst.tools) * c for lst, c in g.listings.values()) / n, 2),
                "tokens_per_turn": round(sum(lst.total * c for lst, c in g.listings.values()) / n, 1),
                "by_server": {s: round(v / n, 1) for s, v in sorted(by_server.items())},
                "passed": g.passed,
                "judged": g.judged,
                "pass_rate": round(g.passed / g.judged, 4) if g.judged else None,
            }
        )
    return rows


@dataclass
class _Group:
    listings: dict[int, tuple[Listing, int]] = field(default_factory=dict)  # id -> (listing, trials)
    passed: int = 0
    judged: int = 0


def tool_surface_markdown(report: Report) -> list[str]:
    """The Markdown section (names escaped by the report's ``cell``)."""
    section = report["tool_surface"]
    if not section["arms"] and section["lock"]["status"] == "none":
        return []  # no tool lists recorded (an import) and no lock: nothing to say
    escape = cell
    lines = ["## Tool surface", ""]
    lock = section["lock"]
    if lock["status"] == "none":
        lines.append(
            "No tool lock checked: none beside the suite (`proctor tools lock SUITE` writes one), "
            "or the run was offered no MCP tool."
        )
    elif lock["status"] == "holds":
        lines.append(f"Tool lock `{escape(lock['file'])}`: every tool the run was offered matches it.")
    elif lock["status"] == "unreadable":
        lines.append(
            f"**Tool lock `{escape(lock['file'])}` could not be read:** {escape(lock.get('error', ''))}"
        )
    else:
        lines.append(f"**The run's tools differ from the tool lock `{escape(lock['file'])}`:**")
        lines.append("")
        lines += [f"- {escape(_change_line(c))}" for c in lock["changes"]]
    for moved in section["changed_during_run"]:
        lines.append(f"- {escape(moved)}: its definition changed during the run")
    lines += [
        "",
        "| arm | model | trials | tools | definition tokens / turn | by server | passed | pass rate |",
    ]
    lines.append("|---|---|---:|---:|---:|---|---:|---:|")
    for a in sorted(section["arms"], key=lambda r: (r["tokens_per_turn"], r["arm"], r["model"])):
        servers = ", ".join(f"{escape(s)} {n:,.0f}" for s, n in a["by_server"].items())
        rate = "—" if a["pass_rate"] is None else f"{a['pass_rate']:.0%}"
        lines.append(
            f"| {escape(a['arm'])} | {escape(a['model'])} | {a['trials']} | {a['tools']:g} | "
            f"{a['tokens_per_turn']:,.0f} | {servers} | {a['passed']}/{a['judged']} | {rate} |"
        )
    if section["tools"]:
        lines += ["", "| server/tool | definition tokens | sha256 |", "|---|---:|---|"]
        for t in section["tools"]:
            lines.append(
                f"| {escape(t['server'])}/{escape(t['tool'])} | {t['tokens']} | `{t['sha256'][:12]}` |"
            )
    lines += ["", f"{section['note'][0].upper()}{section['note'][1:]}."]
    return lines


def _change_line(c: SurfaceChange) -> str:
    name = f"{c['server']}/{c['tool']}"
    if c["change"] == "renamed":
        return f"{name}: renamed from {c.get('old_name', '')}"
    if c["change"] in ("added", "removed"):
        return f"{name}: {'not in the lock' if c['change'] == 'added' else 'in the lock, not offered'}"
    parts = []
    if "description" in c:
        added = " … ".join(w["words"] for w in c["description"] if w["op"] == "+")
        removed = " … ".join(w["words"] for w in c["description"] if w["op"] == "-")
        words = [f'added "{added}"' if added else "", f'removed "{removed}"' if removed else ""]
        parts.append(f"description changed ({'; '.join(w for w in words if w)})")
    parts += [
        f"{s['path']} {s['change']}" + (" (breaking)" if s["breaking"] else "")
        for s in c.get("input_schema", [])
    ]
    parts += [f"{label} changed" for label in c.get("changed", [])]
    return f"{name}: " + "; ".join(parts)


__all__ = [
    "TOKENS_NOTE",
    "LockCheck",
    "change_json",
    "check_lock",
    "diff_json",
    "gate_tool_lock",
    "read_run_surface",
    "suite_lock_file",
    "surface_report",
    "tool_surface_markdown",
    "tool_surface_section",
]
