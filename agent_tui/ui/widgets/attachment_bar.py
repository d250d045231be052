"""The chips above the input: what the message being written will carry.

Each ``@`` chip is a file (with its size), a folder (with its entry count) or an
image (its type and size). A chip whose ``@path`` is no longer in the input goes; all
go when the message is sent. Image files the text names (a pasted or dragged path)
show as image chips too, and those that would be refused as a warning chip with the
reason; they follow the text as it changes (``set_named``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

from agent_tui.ui.input.attachments import IMAGE_MARK, Attachment, AttachmentKind, kept
from agent_tui.ui.render.safe_text import clean
from agent_tui.ui.render.states import role_style
from agent_tui.units import format_bytes

if TYPE_CHECKING:
    from agent_tui.files.image_paths import Probed

_MARKS = {AttachmentKind.FOLDER: "▣ folder", AttachmentKind.FILE: "▤ file",
          AttachmentKind.IMAGE: f"{IMAGE_MARK} image"}


class AttachmentBar(Static):
    DEFAULT_CSS = """
    AttachmentBar { height: auto; padding: 0 1; }
    AttachmentBar.-empty { display: none; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, classes="-empty")
        self.items: list[Attachment] = []
        self.named: list[Probed] = []  # image files the text names
        self.refused: list[str] = []  # ... and those it names that would be refused: why

    def add(self, item: Attachment) -> None:
        self.items = [i for i in self.items if i.path != item.path] + [item]
        self._show()

    def prune(self, text: str) -> None:
        still = kept(text, self.items)
        if len(still) != len(self.items):
            self.items = still
            self._show()

    def set_named(self, named: list[Probed], refused: list[str]) -> None:
        if (named, refused) != (self.named, self.refused):
            self.named, self.refused = named, refused
            self._show()

    def clear(self) -> None:
        self.items, self.named, self.refused = [], [], []
        self._show()

    def _chip(self, line: Text, mark: str, path: str, size: str) -> None:
        if line:
            line.append("  ")
        line.append(f" {mark} ", style="reverse")
        line.append(f" {clean(path)} ", style="bold reverse")
        line.append(f" {size} ", style="dim reverse")

    def _show(self) -> None:
        self.set_class(not (self.items or self.named or self.refused), "-empty")
        line = Text()
        for item in self.items:
            self._chip(line, _MARKS[item.kind], item.path, item.size)
        for image in self.named:
            self._chip(line, _MARKS[AttachmentKind.IMAGE], image.shown,
                       f"{image.media_type}, {format_bytes(image.size)}")
        for reason in self.refused:
            line.append("\n" if line else "")
            line.append(f"✗ not attached: {clean(reason)}",
                        style=role_style(self.app.theme_variables, "warning", bold=True))
        self.update(line)
