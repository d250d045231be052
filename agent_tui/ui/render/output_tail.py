"""The bounded tail of a tool call's output, kept for the expanded view.

Output arrives in pieces and may be endless: only the last ``max_lines`` lines and
``max_chars`` characters are kept (and counted when dropped, so the view can say how
much is not shown). The raw text is kept and cleaned when shown, so an escape
sequence split across two pieces is still removed whole.
"""

from __future__ import annotations

from agent_tui.ui.render.safe_text import clean

MAX_LINES = 200
MAX_CHARS = 64 * 1024


class OutputTail:
    def __init__(self, max_lines: int = MAX_LINES, max_chars: int = MAX_CHARS) -> None:
        self.max_lines = max_lines
        self.max_chars = max_chars
        self._raw = ""
        self.total_chars = 0

    def append(self, text: str) -> None:
        self.total_chars += len(text)
        self._raw += text
        # Trim the raw text now and then (at twice the bound), not on every piece.
        if len(self._raw) > 2 * self.max_chars:
            self._raw = self._raw[-self.max_chars - 1024 :]

    def __bool__(self) -> bool:
        return bool(self._raw)

    def tail(self) -> tuple[str, bool]:
        """The cleaned tail and whether anything before it was left out."""
        text = clean(self._raw)
        cut = self.total_chars > len(self._raw)
        if len(text) > self.max_chars:
            text, cut = text[-self.max_chars :], True
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if len(lines) > self.max_lines:
            lines, cut = lines[-self.max_lines :], True
        return "\n".join(lines), cut
