"""Untrusted text for the console's widgets: the store's one sanitizer, wrapped in ``Text``.

Cleaned text must still be rendered as ``rich.text.Text``, never parsed as markup.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from proctor.store.display_text import one_line, sanitize


def safe_text(text: str, style: str | Style = "", *, no_wrap: bool = False) -> Text:
    """A plain ``Text`` of sanitized ``text``: brackets are literal characters, never markup."""
    return Text(sanitize(text), style=style, no_wrap=no_wrap, end="")


__all__ = ["one_line", "safe_text", "sanitize"]
