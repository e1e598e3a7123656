"""Where a definition starts and ends, read from the text alone (no parser, any language).

A line *defines* a name when the words before it on that line end in a definition keyword
(``def class func fn struct enum trait impl interface fun val var const type object ...``,
or ``impl ... for``), or, C-family style, a return type and modifiers precede a name followed by
``(`` or ``<`` (``public void service(``). Member access (``obj.name``), an ``=`` or a control
word (``return if new ...``) before the name make it a use, not a definition.

From the definition the header is read on (across lines while brackets are open, a line ends
in a continuation such as ``,`` ``->`` ``where`` or the next line is indented deeper) to the first of: a ``{`` (a brace block, to its
matching ``}``; strings, char literals and comments skipped), a ``:`` ending the line (a Python
block: the lines indented deeper than the header), or the end of the statement (``;``, or a line
that does not continue). The extent is the header line to the block's last line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_DEF_WORDS = frozenset(
    "def class func fn struct enum trait impl interface fun val var const type object mod let static "
    "record union macro_rules function module protocol extension typealias".split()
)
_CONTROL = frozenset(
    "return if elif else while for switch case new throw await yield match when catch assert raise "
    "not and or in is go defer".split()
)
_PREFIX_CHARS = re.compile(r"[\w\s@*&\[\],?:!]*")
_GO_RECEIVER = re.compile(r"\s*func\s*\(\s*\w+\s+\*?\s*$")
_WORD = re.compile(r"@?[A-Za-z_]\w*")
_GROUP = re.compile(r"<[^<>]*>|\([^()]*\)")
_CONTINUES = re.compile(r"(?:,|\(|\[|=|->|=>|:|\bwhere|\+|\||&|\.|\\)\s*$")
_CONTINUED = re.compile(r"^\s*(?:where\b|\{|\.|->|:|throws\b|extends\b|implements\b|\)|\]|=)")
_HEADER_LINES = 40


def defines(line: str, col: int, name_end: int) -> bool:
    """Whether the name at ``line[col:name_end]`` is being defined there (see the module docstring)."""
    prefix = line[:col]
    if _GO_RECEIVER.match(prefix):
        return True  # func (c *Context) Next(): a method is inside its receiver's type
    if prefix.rstrip().endswith((".", "::", "->")):
        return False
    reduced = prefix
    for _ in range(4):  # generic arguments, Go receivers, pub(crate)
        reduced = _GROUP.sub(" ", reduced)
    if "=" in reduced or not _PREFIX_CHARS.fullmatch(reduced):
        return False
    words = [w for w in _WORD.findall(reduced) if not w.startswith("@")]
    if any(w in _CONTROL for w in words):
        return words[-1:] == ["for"] and "impl" in words
    if words and words[-1] in _DEF_WORDS:
        return True
    rest = line[name_end:].lstrip()
    return bool(words) and rest.startswith(("(", "<")) and words[-1] not in _DEF_WORDS


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


class _Scanner:
    """Walks the code from a position, skipping strings, char literals and comments."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = lines
        self.in_block_comment = False
        self.in_triple: str | None = None

    def chars(self, n: int, start: int) -> list[tuple[int, str]]:
        """(column, char) of line ``n`` (0-based) from ``start`` that are code."""
        text = self.lines[n]
        out: list[tuple[int, str]] = []
        i = start
        while i < len(text):
            if self.in_block_comment:
                j = text.find("*/", i)
                if j < 0:
                    return out
                self.in_block_comment, i = False, j + 2
                continue
            if self.in_triple is not None:
                j = text.find(self.in_triple, i)
                if j < 0:
                    return out
                i, self.in_triple = j + len(self.in_triple), None
                continue
            ch = text[i]
            if text.startswith("/*", i):
                self.in_block_comment, i = True, i + 2
            elif text.startswith("//", i) or (ch == "#" and text[i + 1 : i + 2] in ("", " ")):
                return out
            elif text.startswith('"""', i) or ch == "`":
                self.in_triple, i = ('"""' if ch == '"' else "`"), i + (3 if ch == '"' else 1)
            elif ch == '"':
                i = _string_end(text, i, '"')
            elif ch == "'":
                if re.match(r"'[A-Za-z_]\w*(?!['\w])", text[i:]):  # a Rust lifetime or label
                    i += 1
                else:
                    i = _string_end(text, i, "'")
            else:
                out.append((i, ch))
                i += 1
        return out


def _string_end(text: str, i: int, quote: str) -> int:
    j = i + 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
            continue
        if text[j] == quote:
            return j + 1
        j += 1
    return i + 1  # no closing quote on this line: not a string after all


def extent_from(lines: Sequence[str], n: int, col: int) -> tuple[int, int]:
    """The 1-based (first, last) lines of the definition whose name ends at ``lines[n-1][col]``."""
    scan = _Scanner(lines)
    depth = 0
    row, start = n - 1, col
    last_row = min(len(lines), row + _HEADER_LINES)
    while row < last_row:
        code = scan.chars(row, start)
        for pos, ch in code:
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth = max(0, depth - 1)
            elif depth == 0 and ch == "{":
                return n, _brace_end(scan, row, pos)
            elif depth == 0 and ch == ";":
                return n, row + 1
            elif depth == 0 and ch == ":" and pos == code[-1][0]:
                return n, _indent_end(lines, n - 1, row)
        text = lines[row]
        following = lines[row + 1] if row + 1 < len(lines) else ""
        deeper = bool(following.strip()) and _indent(following) > _indent(lines[n - 1])
        if depth == 0 and not _CONTINUES.search(text) and not _CONTINUED.match(following) and not deeper:
            return n, row + 1
        row, start = row + 1, 0
    return n, n


def _brace_end(scan: _Scanner, row: int, pos: int) -> int:
    depth = 0
    start = pos
    for r in range(row, len(scan.lines)):
        for _, ch in scan.chars(r, start):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    return r + 1
        start = 0
    return row + 1  # unbalanced: claim no body rather than the rest of the file


def _indent_end(lines: Sequence[str], header: int, colon_row: int) -> int:
    base = _indent(lines[header])
    last = colon_row + 1
    for r in range(colon_row + 1, len(lines)):
        text = lines[r]
        if not text.strip():
            continue
        if _indent(text) <= base:
            break
        last = r + 1
    return last


def definition_extents(lines: Sequence[str], name: str, rows: Sequence[int]) -> list[tuple[int, int]]:
    """Extents of the definitions of ``name`` (case-insensitive) among the 1-based ``rows``."""
    pattern = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])", re.IGNORECASE)
    out: list[tuple[int, int]] = []
    for n in rows:
        text = lines[n - 1]
        for m in pattern.finditer(text):
            if defines(text, m.start(), m.end()):
                out.append(extent_from(lines, n, m.end()))
                break
    return out


def block_at(lines: Sequence[str], n: int) -> tuple[int, int] | None:
    """The extent of the definition that line ``n`` (1-based) opens, if it opens one."""
    text = lines[n - 1]
    for m in _WORD.finditer(text):
        if defines(text, m.start(), m.end()) and m.group(0) not in _DEF_WORDS:
            first, last = extent_from(lines, n, m.end())
            return (first, last) if last > first else None
    return None


__all__ = ["block_at", "defines", "definition_extents", "extent_from"]
