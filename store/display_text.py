"""Make untrusted text (model output, tool output, suite and server names) safe to display.

Terminal escape sequences would otherwise reach the real terminal (an OSC retitles it, a CSI
moves the cursor) and bidi controls can make text read differently from what it is. The store
keeps the raw text; only what is displayed or written for display (the console, the headless
summary, CSV and Markdown reports, CLI messages) is cleaned, and always by this one function.
It lives in the store, the lowest layer, so the console, the engine's reports and the CLI share it.
"""

from __future__ import annotations

import re

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


_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def escape_in_json(text: str) -> str:
    """JSON text (``ensure_ascii=False``) with C1 controls and bidi characters written as ``\\uXXXX``:
    the same JSON value, kept whole for data exports, yet nothing a terminal would act on. JSON
    already escapes C0 controls (ESC, BEL) itself."""
    if _JSON_UNSAFE.search(text) is None:
        return text
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def one_line(text: str, limit: int = 120) -> str:
    """Sanitized text squeezed onto one line and cut at ``limit`` characters (for titles, cells)."""
    flat = " ".join(sanitize(text[: limit * 4]).split())
    return flat if len(flat) <= limit else flat[: max(0, limit - 1)] + "…"


__all__ = ["escape_in_json", "one_line", "sanitize"]
