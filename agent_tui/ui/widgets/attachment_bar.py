"""The chips above the input: what ``@`` attached to the message being written.

Each chip is a file (with its size) or a folder (with its entry count). A chip whose
``@path`` is no longer in the input goes; all go when the message is sent.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from agent_tui.ui.attachments import Attachment, AttachmentKind, mentions
from agent_tui.ui.safe_text import clean


class AttachmentBar(Static):
    DEFAULT_CSS = """
    AttachmentBar { height: auto; padding: 0 1; }
    AttachmentBar.-empty { display: none; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, classes="-empty")
        self.items: list[Attachment] = []

    def add(self, item: Attachment) -> None:
        self.items = [i for i in self.items if i.path != item.path] + [item]
        self._show()

    def prune(self, text: str) -> None:
        named = mentions(text)
        kept = [i for i in self.items if i.path in named]
        if len(kept) != len(self.items):
            self.items = kept
            self._show()

    def clear(self) -> None:
        self.items = []
        self._show()

    def _show(self) -> None:
        self.set_class(not self.items, "-empty")
        line = Text()
        for item in self.items:
            if line:
                line.append("  ")
            mark = "▣ folder" if item.kind is AttachmentKind.FOLDER else "▤ file"
            line.append(f" {mark} ", style="reverse")
            line.append(f" {clean(item.path)} ", style="bold reverse")
            line.append(f" {item.size} ", style="dim reverse")
        self.update(line)
