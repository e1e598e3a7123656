"""A ``Static`` for frequently updated text that only asks for a layout when its height changes.

``Static.update`` re-lays out the whole screen by default; for a panel refreshed several times
a second that costs tens of milliseconds per update. Text is always a ``rich.text.Text`` here,
so nothing in it is parsed as markup.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


class TextPanel(Static):
    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._shown: Text | None = None
        self._height = -1

    def show_text(self, text: Text) -> None:
        if self._shown is not None and text.plain == self._shown.plain and text.spans == self._shown.spans:
            return
        width = self.content_region.width or self.size.width
        height = len(text.wrap(self.app.console, width)) if width > 0 else -2
        self.update(text, layout=height != self._height)
        self._shown, self._height = text, height

    def on_resize(self) -> None:
        self._height = -1
        if self._shown is not None:
            shown, self._shown = self._shown, None
            self.show_text(shown)


__all__ = ["TextPanel"]
