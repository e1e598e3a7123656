"""What the offline agent reads out of a task and out of tool results.

Tasks name identifiers (``compute_backoff``, ``RetryPolicy``) and concepts; tool results point
at code as ``path:line`` references and numbered source lines. These parsers are the agent's
eyes, kept apart from its policy so both can be tested on their own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from proctor.engine.tools.ranking import words

_BACKTICK = re.compile(r"`([^`\n]{1,80})`")
_IDENT = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\b")
_PATH_REF = re.compile(
    r"(?P<path>(?:[\w.-]+/)*[\w.-]+\.[A-Za-z0-9]{1,6}):(?P<line>\d{1,7})(?:-(?P<end>\d{1,7}))?(?::\s?(?P<rest>.*))?"
)
_NUMBERED = re.compile(r"^\s*(?P<line>\d{1,7})\s*[|:]\s?(?P<text>.*)$")
_DEFINES = re.compile(r"(?:(?:async\s+)?def|class|function|method|class|constant|variable)\s+([\w.]+)")
_HEADER = re.compile(r"^(?P<path>(?:[\w.-]+/)*[\w.-]+\.[A-Za-z0-9]{1,6}):(?P<start>\d+)-(?P<end>\d+)\b")


@dataclass(frozen=True)
class Evidence:
    """One line of code the agent saw, where it saw it, and which tool call showed it."""

    path: str
    line: int
    text: str
    symbol: str = ""
    is_location: bool = False
    call_index: int = 0


def task_identifiers(task: str) -> list[str]:
    """Code-like names in a task, most specific first: backticked, then snake_case / CamelCase."""
    found: list[str] = []
    for m in _BACKTICK.finditer(task):
        token = m.group(1).strip().rstrip("()")
        if _IDENT.fullmatch(token) and token not in found:
            found.append(token)
    for m in _IDENT.finditer(task):
        token = m.group(1)
        looks_like_code = "_" in token or (token[:1].isupper() and any(c.isupper() for c in token[1:]))
        if looks_like_code and token not in found and ("_" in token or not token.isupper()):
            found.append(token)
    return found


def concept_query(task: str, limit: int = 12) -> str:
    """The task's content words, for tools that search by description."""
    seen: list[str] = []
    for w in words(task):
        if w not in seen and not w.isdigit():
            seen.append(w)
    return " ".join(seen[:limit])


def parse_result(text: str, call_index: int) -> list[Evidence]:
    """Every code location and numbered source line in a tool result."""
    out: list[Evidence] = []
    current_path = ""
    for raw in text.splitlines():
        line = raw.rstrip()
        header = _HEADER.match(line)
        if header:
            current_path = header.group("path")
            rest = line[header.end() :].strip(" :")
            out.append(
                Evidence(current_path, int(header.group("start")), rest, _symbol_of(rest), True, call_index)
            )
            continue
        numbered = _NUMBERED.match(line)
        if numbered and current_path:
            out.append(
                Evidence(
                    current_path, int(numbered.group("line")), numbered.group("text"), "", False, call_index
                )
            )
            continue
        ref = _PATH_REF.search(line)
        if ref:
            rest = (ref.group("rest") or "").strip()
            current_path = ref.group("path")
            out.append(
                Evidence(current_path, int(ref.group("line")), rest, _symbol_of(rest), True, call_index)
            )
    return out


def _symbol_of(text: str) -> str:
    """``function tinyq.retry.compute_backoff`` -> ``compute_backoff``; ``def f(x):`` -> ``f``."""
    m = _DEFINES.match(text)
    if m:
        return m.group(1).rsplit(".", 1)[-1]
    return ""
