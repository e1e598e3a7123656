"""Make untrusted text (model output, tool output, file contents) safe to put on a terminal.

Terminal escape sequences in a tool result would otherwise reach the real terminal through the
compositor (an OSC retitles it, a CSI moves the cursor) and bidi controls can make text read
differently from what it is. The store keeps the raw text; only what is displayed is cleaned.
Cleaned text must still be rendered as ``rich.text.Text``, never parsed as markup.
"""

from __future__ import annotations

import re

from rich.style import Style
from rich.text import Text

_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI, 7- or 8-bit; a truncated one is dropped too
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]).*?(?:\x07|\x1b\\|\x9c|\Z)"  # OSC DCS SOS PM APC .. ST/BEL
    r"|\x1b[ -/]*[0-~]?",  # any other escape (charset designation, keypad mode, RIS, ...)
    re.DOTALL,
)
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def sanitize(text: str) -> str:
    """Remove ESC/CSI/OSC/DCS sequences, C0 controls except newline and tab, C1 controls and bidi
    overrides, marks and isolates. CRLF becomes LF."""
    if _CONTROLS.search(text) is None:
        return text
    text = text.replace("\r\n", "\n")
    text = _SEQUENCE.sub("", text)
    return _CONTROLS.sub("", text)


def safe_text(text: str, style: str | Style = "", *, no_wrap: bool = False) -> Text:
    """A plain ``Text`` of sanitized ``text``: brackets are literal characters, never markup."""
    return Text(sanitize(text), style=style, no_wrap=no_wrap, end="")


def one_line(text: str, limit: int = 120) -> str:
    """Sanitized text squeezed onto one line and cut at ``limit`` characters (for titles, cells)."""
    flat = " ".join(sanitize(text[: limit * 4]).split())
    return flat if len(flat) <= limit else flat[: max(0, limit - 1)] + "…"


__all__ = ["one_line", "safe_text", "sanitize"]
