"""Align two trials' tool-call sequences by call (pure functions, no I/O).

A call's *signature* is its tool name and its arguments normalized as the tool-call match score
normalizes them (``engine.scoring.normalize.normalize_arguments``: key order is irrelevant, a null
argument counts as absent, strings are whitespace-collapsed, ``"5"`` == ``5`` == ``5.0``, ...), so
"the same call" here means what it means for TFS. The server is not part of the signature: two
arms reach the same tool through different servers (the baseline's ``grep`` and an MCP server's
``grep``), so calls pair by tool name and a pair whose servers differ says so. A call of the
router's ``execute`` (an arm with top-k tool retrieval) counts as the tool it executed, as the
scorers count it (``engine.grading.evaluation.digest_of``); ``route`` lookups stay calls.

Scoring (a global alignment, Needleman–Wunsch style, solved by dynamic programming):

* exact match (same tool, same normalized arguments): cost 0;
* partial match (same tool, different arguments), a substitution: cost 3;
* gap (a call the other side has no partner for): cost 2 per call;
* different tools never pair: they are always two gaps.

A substitution (3) thus costs more than a match (0) and less than the two gaps it replaces (4),
so same-tool calls pair up rather than drift apart, but never at the price of an exact match.
Since every call is either paired or a gap, the total cost is ``2·(n+m) − 4·exact − partial``:
minimizing it is maximizing ``4·exact + partial``, which is what the table below holds (one
exact match outweighs up to four partial ones; five partial pairs win over one exact).

Ties are broken deterministically and toward the start of both transcripts: the table holds the
best score of every pair of *suffixes*, and the path is read forward from the first calls,
preferring a pair, then a left-only call, then a right-only call. Repeated identical calls thus
pair in order (first with first) and surplus ones show at the end. A leading run of identical
calls is paired without entering the table (pairing them is always optimal, being the heaviest
pairs, and it is also what the forward reading would choose).

Cost: O(n·m) time and memory: a table of (n+1)·(m+1) 16-bit integers (32-bit past 16k calls a
side), 8 MB for 2,000 × 2,000 calls. Each row is a handful of numpy operations over the
same-tool columns and a running maximum, so 2,000 × 2,000 calls take well under a second.
Past ``MAX_CELLS`` (5,000 × 5,000) the table is not built whole: difflib's longest runs of
identical calls anchor the alignment and each stretch between them is aligned exactly, which is
no longer guaranteed optimal (``exact_alignment``).

After the alignment, a call left unpaired whose exact twin is also unpaired on the other side
(two calls made in a different order) gets the row of that twin (``twin``), so a reordering is
shown as one rather than as two unrelated gaps.
"""

from __future__ import annotations

import difflib
import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from proctor.app.views.transcript_state import CallView
from proctor.engine.scoring.normalize import Norm, normalize_arguments, normalize_value
from proctor.engine.tools.retrieval import EXECUTE

MATCH_COST = 0
PARTIAL_COST = 3
GAP_COST = 2
# The table maximizes 2·GAP − cost per pair: the weight of an exact and of a partial pair.
EXACT_WEIGHT = 2 * GAP_COST - MATCH_COST
PARTIAL_WEIGHT = 2 * GAP_COST - PARTIAL_COST

MAX_CELLS = 25_000_000  # 50 MB of table; past it, alignment goes block by block

RowKind = Literal["same", "args", "left", "right"]


@dataclass(frozen=True)
class CallSig:
    """What alignment compares: the tool and the normalized arguments (never the server)."""

    tool: str
    arguments: Norm


def parse_arguments(arguments: str) -> Any:
    """The arguments JSON as recorded, or the raw text when it does not parse."""
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments


@dataclass(frozen=True)
class Effective:
    """The call as the scorers see it: a call of the router's ``execute`` (top-k tool retrieval)
    is the tool it executed, with that tool's arguments (``via_router``)."""

    tool: str
    arguments: Any
    via_router: bool = False

    @property
    def arguments_text(self) -> str:
        return _compact(self.arguments)


def effective(call: CallView) -> Effective:
    parsed = parse_arguments(call.arguments)
    if call.tool == EXECUTE.name and call.server == EXECUTE.server and isinstance(parsed, dict):
        inner, args = parsed.get("tool"), parsed.get("arguments")
        if isinstance(inner, str) and isinstance(args, dict):
            return Effective(inner, args, via_router=True)
    return Effective(call.tool, parsed)


def signature(call: CallView) -> CallSig:
    eff = effective(call)
    args = eff.arguments
    norm = normalize_arguments(args) if isinstance(args, dict) else (normalize_value(args),)
    return CallSig(eff.tool, norm)


@dataclass(frozen=True)
class Pair:
    """One aligned row: indexes into the left and right call lists (None for a gap)."""

    left: int | None
    right: int | None
    kind: RowKind
    twin: int | None = None  # for a gap: the row of the unpaired identical call on the other side


def align_signatures(left: Sequence[CallSig], right: Sequence[CallSig]) -> list[Pair]:
    """The minimum-cost alignment of two signature sequences (scoring in the module docstring)."""
    return _link_twins(_align(left, right, 0, 0, split=True), left, right)


def _align(a: Sequence[CallSig], b: Sequence[CallSig], da: int, db: int, *, split: bool) -> list[Pair]:
    """Align ``a`` with ``b``; ``da`` and ``db`` are their offsets in the whole sequences."""
    start = 0
    while start < len(a) and start < len(b) and a[start] == b[start]:
        start += 1
    rows = [Pair(da + k, db + k, "same") for k in range(start)]
    a, b, da, db = a[start:], b[start:], da + start, db + start
    n, m = len(a), len(b)
    if n * m > MAX_CELLS:
        return rows + (_align_in_blocks(a, b, da, db) if split else _gaps(n, m, da, db))
    i = j = 0
    if n and m:
        table = _table(a, b)
        while i < n and j < m:
            if a[i].tool == b[j].tool:
                exact = a[i] == b[j]
                weight = EXACT_WEIGHT if exact else PARTIAL_WEIGHT
                if table[i, j] == table[i + 1, j + 1] + weight:
                    rows.append(Pair(da + i, db + j, "same" if exact else "args"))
                    i, j = i + 1, j + 1
                    continue
            if table[i, j] == table[i + 1, j]:
                rows.append(Pair(da + i, None, "left"))
                i += 1
            else:
                rows.append(Pair(None, db + j, "right"))
                j += 1
    return rows + _gaps(n - i, m - j, da + i, db + j)


def exact_alignment(n: int, m: int) -> bool:
    """Whether ``n`` × ``m`` calls are aligned optimally (else block by block, see the docstring)."""
    return n * m <= MAX_CELLS


def _gaps(n: int, m: int, da: int, db: int) -> list[Pair]:
    return [Pair(da + k, None, "left") for k in range(n)] + [Pair(None, db + k, "right") for k in range(m)]


def _align_in_blocks(a: Sequence[CallSig], b: Sequence[CallSig], da: int, db: int) -> list[Pair]:
    """Past ``MAX_CELLS``: anchor on difflib's longest runs of identical calls, then align each
    stretch between anchors exactly (or leave it as gaps if it is still too large)."""
    rows: list[Pair] = []
    matcher = difflib.SequenceMatcher(a=list(a), b=list(b), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            rows.extend(Pair(da + i1 + k, db + j1 + k, "same") for k in range(i2 - i1))
        else:
            rows.extend(_align(a[i1:i2], b[j1:j2], da + i1, db + j1, split=False))
    return rows


def _table(a: Sequence[CallSig], b: Sequence[CallSig]) -> NDArray[np.unsignedinteger[Any]]:
    """``table[i, j]``: the best ``4·exact + partial`` aligning ``a[i:]`` with ``b[j:]``."""
    n, m = len(a), len(b)
    sig_ids: dict[CallSig, int] = {}
    tool_ids: dict[str, int] = {}
    a_sig = [sig_ids.setdefault(s, len(sig_ids)) for s in a]
    a_tool = [tool_ids.setdefault(s.tool, len(tool_ids)) for s in a]
    b_sig = np.array([sig_ids.setdefault(s, len(sig_ids)) for s in b], dtype=np.int64)
    b_tool = np.array([tool_ids.get(s.tool, -1) for s in b], dtype=np.int64)
    columns = {t: np.flatnonzero(b_tool == t) for t in set(a_tool)}
    dtype = np.uint16 if EXACT_WEIGHT * min(n, m) < 2**16 else np.uint32
    table = np.zeros((n + 1, m + 1), dtype=dtype)
    for i in range(n - 1, -1, -1):
        below = table[i + 1]
        best = below.copy()  # skip a[i]
        cols = columns[a_tool[i]]
        if cols.size:  # or pair a[i] with a same-tool b[j]
            weights = np.where(b_sig[cols] == a_sig[i], EXACT_WEIGHT, PARTIAL_WEIGHT)
            best[cols] = np.maximum(best[cols], below[cols + 1] + weights)
        table[i] = np.maximum.accumulate(best[::-1])[::-1]  # or skip b[j]: the best to the right
    return table


def _link_twins(rows: list[Pair], left: Sequence[CallSig], right: Sequence[CallSig]) -> list[Pair]:
    waiting: dict[CallSig, list[int]] = defaultdict(list)
    for r, pair in enumerate(rows):
        if pair.kind == "right" and pair.right is not None:
            waiting[right[pair.right]].append(r)
    out = list(rows)
    for r, pair in enumerate(rows):
        if pair.kind == "left" and pair.left is not None:
            candidates = waiting.get(left[pair.left])
            if candidates:
                other = candidates.pop(0)
                out[r] = Pair(pair.left, None, "left", twin=other)
                out[other] = Pair(None, rows[other].right, "right", twin=r)
    return out


def align_calls(left: Sequence[CallView], right: Sequence[CallView]) -> list[Pair]:
    return align_signatures([signature(c) for c in left], [signature(c) for c in right])


# -- argument differences of a partial match -------------------------------------------------------


@dataclass(frozen=True)
class ArgChange:
    """One argument that differs: ``op`` is ``+`` (only right), ``-`` (only left) or ``~`` (changed)."""

    op: Literal["+", "-", "~"]
    key: str
    left: str = ""
    right: str = ""


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def argument_changes(left: CallView, right: CallView) -> list[ArgChange]:
    """Keys added, removed and changed between two calls' (effective) arguments, normalized as for
    matching (a null argument counts as absent). Arguments that are not JSON objects compare as
    one value."""
    a, b = effective(left).arguments, effective(right).arguments
    if not isinstance(a, dict) or not isinstance(b, dict):
        if normalize_value(a) == normalize_value(b):
            return []
        return [ArgChange("~", "(arguments)", _compact(a), _compact(b))]
    a = {str(k): v for k, v in a.items() if v is not None}
    b = {str(k): v for k, v in b.items() if v is not None}
    changes: list[ArgChange] = []
    for key in sorted(a.keys() | b.keys()):
        if key not in b:
            changes.append(ArgChange("-", key, left=_compact(a[key])))
        elif key not in a:
            changes.append(ArgChange("+", key, right=_compact(b[key])))
        elif normalize_value(a[key]) != normalize_value(b[key]):
            changes.append(ArgChange("~", key, _compact(a[key]), _compact(b[key])))
    return changes


__all__ = [
    "EXACT_WEIGHT",
    "GAP_COST",
    "MATCH_COST",
    "MAX_CELLS",
    "PARTIAL_COST",
    "PARTIAL_WEIGHT",
    "ArgChange",
    "CallSig",
    "Effective",
    "Pair",
    "RowKind",
    "align_calls",
    "align_signatures",
    "argument_changes",
    "effective",
    "exact_alignment",
    "parse_arguments",
    "signature",
]
