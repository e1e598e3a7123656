"""Lexical relevance of tools to a task (BM25 over names and descriptions).

LiveMCPBench's route step ranks tools by the similarity of the task to server and tool
descriptions. BM25 needs no model download and is deterministic, which the offline agent and
top-k tool retrieval both depend on.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Sequence

from proctor.engine.tools.toolbox import ToolSpec

_WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|\d+")
_STOP = frozenset(
    "a an and are as at be by do does for from how i in is it its of on or that the this to what when where "
    "which who why with you your me my we our can should would could please find tell show give".split()
)


def words(text: str) -> list[str]:
    """Lower-case word stems; splits snake_case and CamelCase so ``find_definition`` ~ "definition"."""
    return list(_words(text))


@functools.lru_cache(maxsize=8192)
def _words(text: str) -> tuple[str, ...]:
    out = []
    for w in _WORD.findall(text):
        lw = w.lower()
        if lw in _STOP or len(lw) < 2:
            continue
        out.append(_stem(lw))
    return tuple(out)


def _stem(w: str) -> str:
    """A light stemmer: ``retried``/``retries``/``retry``, ``computed``/``compute``,
    ``used``/``uses``/``use`` and ``lines``/``line`` meet.

    A final ``e`` always goes, so a word and its ``-es``/``-ed`` forms share a stem; a two-letter
    stem is allowed after ``-ing``/``-ed``/``-es`` when it ends vowel-consonant (``used`` -> ``us``), not
    otherwise (``need`` stays whole).
    """
    if len(w) > 4 and w.endswith(("ied", "ies")):
        return w[:-3] + "y"
    for suffix in ("ing", "ed", "es", "s"):
        if not w.endswith(suffix):
            continue
        stem = w[: -len(suffix)]
        short_ok = (
            suffix in ("ing", "ed", "es")
            and len(stem) == 2
            and stem[0] in "aeiou"
            and stem[1] not in "aeiouy"
        )
        if len(stem) >= 3 or short_ok:
            w = stem
            if len(w) >= 4 and w[-1] == w[-2] and w[-1] not in "aeiouls":
                w = w[:-1]
            break
    return w[:-1] if len(w) >= 3 and w.endswith("e") else w


def tool_document(tool: ToolSpec) -> list[str]:
    """The words a tool is known by: its name twice (names matter most), description, server."""
    params = " ".join(tool.input_schema.get("properties", {}).keys())
    return words(
        f"{tool.name} {tool.name} {tool.description} {params} {tool.server} {tool.server_description}"
    )


def bm25_rank(
    query: str, tools: Sequence[ToolSpec], *, k1: float = 1.2, b: float = 0.75
) -> list[tuple[float, ToolSpec]]:
    """Tools by descending BM25 score for ``query``; ties keep the input order."""
    docs = [tool_document(t) for t in tools]
    if not docs:
        return []
    avg_len = sum(len(d) for d in docs) / len(docs) or 1.0
    df: Counter[str] = Counter()
    for d in docs:
        df.update(set(d))
    n = len(docs)
    q = words(query)
    scored = []
    for i, (doc, tool) in enumerate(zip(docs, tools, strict=True)):
        tf = Counter(doc)
        score = 0.0
        for term in q:
            f = tf.get(term, 0)
            if not f:
                continue
            idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
            score += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * len(doc) / avg_len))
        scored.append((score, -i, tool))
    scored.sort(key=lambda x: (x[0], x[1]), reverse=True)
    return [(s, t) for s, _, t in scored]
