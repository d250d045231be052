"""Completion in the input: which menu the text at the cursor asks for, and the keys
while it is open.

``/`` at the very start of the input, with no space typed yet, opens the command menu
(filtered by what follows the slash); ``@`` at the start of a word opens the file
picker (filtered by what follows it). While a menu is open: ↑ ↓ move, Tab completes,
Enter completes (a command that needs nothing more runs at once; a custom command's
name typed in full runs as typed, as in Claude Code), Esc closes it until the text
changes. A name typed in full is always the first item, so Enter on ``/commit`` never
runs ``/commit-push-pr``.

Each menu's items come from a :class:`Source`; a source may answer later (the file
picker searches on a thread) and is told when its menu closes, so it can stop.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from agent_tui.files import shell_words
from agent_tui.ui.widgets.prompt_input import PromptInput
from agent_tui.ui.widgets.suggestions import Suggestion, SuggestionList

_AT = re.compile(r"(?:^|(?<=\s))@")
_COMMAND_WORD = re.compile(r"/[A-Za-z0-9_.:-]*")  # a path (/etc/hosts) is not one


class MenuKind(StrEnum):
    COMMAND = "command"
    FILE = "file"


@dataclass(frozen=True)
class Span:
    """The text a menu was opened for: ``row``, columns ``start`` to ``end``."""

    kind: MenuKind
    row: int
    start: int
    end: int
    query: str


@dataclass(frozen=True)
class Accepted:
    """What accepting an item does: ``text`` replaces the span; ``submit`` sends the
    input right after."""

    text: str
    submit: bool = False


class Source(Protocol):
    @property
    def title(self) -> str: ...

    def search(self, query: str, show: ShowFn) -> None:
        """Find items for ``query`` and call ``show(items, empty_text)`` (now or later,
        on the UI's thread; a later call for an older query is ignored)."""

    def accept(self, item: Suggestion, *, enter: bool) -> Accepted: ...

    def cancel(self) -> None:
        """The menu closed: stop any search still running."""


class ShowFn(Protocol):
    def __call__(self, items: list[Suggestion], empty: str, *, query: str) -> None: ...


def span_at(text: str, row: int, col: int) -> Span | None:
    lines = text.split("\n")
    if row >= len(lines):
        return None
    line = lines[row]
    left = line[:col]
    if row == 0 and line.startswith("/") and not any(c.isspace() for c in left):
        word = line.split()[0] if line.split() else line
        if _COMMAND_WORD.fullmatch(word):
            return Span(MenuKind.COMMAND, 0, 0, len(word), left[1:])
        return None
    # The last ``@`` that starts a word and whose word (a path written as a shell
    # would, spaces escaped or quoted) runs on to the cursor.
    for at in reversed([m.start() for m in _AT.finditer(left)]):
        query = shell_words.partial(left[at + 1 :])
        if query is not None:
            end = max(col, shell_words.word_end(line, at + 1))
            return Span(MenuKind.FILE, row, at, end, query)
    return None


class Completion:
    def __init__(self, prompt: PromptInput, menu: SuggestionList, sources: dict[MenuKind, Source]) -> None:
        self.prompt = prompt
        self.menu = menu
        self.sources = sources
        self.span: Span | None = None
        self.shown_query: str | None = None  # the query the menu shows items for
        self._dismissed: str | None = None  # the text Esc closed the menu on

    # -- following the input --------------------------------------------------------

    def update(self) -> None:
        """The text or the cursor moved: open, filter or close the menu."""
        text = self.prompt.text
        if self._dismissed is not None and text != self._dismissed:
            self._dismissed = None
        row, col = self.prompt.cursor_location
        span = span_at(text, row, col) if self._dismissed is None else None
        source = self.sources.get(span.kind) if span is not None else None
        if span is None or source is None:
            self.close()
            return
        if self.span is not None and self.span.kind is not span.kind:
            self.sources[self.span.kind].cancel()
        same = self.span == span  # (a cursor move after the text changed: asked already)
        self.span = span
        if not same:
            source.search(span.query, self._show)

    def refresh(self) -> None:
        """What the sources list changed (an MCP server came up): search again."""
        span = self.span
        if span is not None and self.menu.is_open:
            self.sources[span.kind].search(span.query, self._show)

    def _show(self, items: list[Suggestion], empty: str, *, query: str) -> None:
        span = self.span
        if span is None or span.query != query:
            return  # an answer for text that has changed since
        self.menu.show(items, title=self.sources[span.kind].title, empty=empty)
        self.shown_query = query

    def close(self) -> None:
        if self.span is not None:
            self.sources[self.span.kind].cancel()
        self.span = None
        self.shown_query = None
        if self.menu.is_open:
            self.menu.close()

    @property
    def is_open(self) -> bool:
        return self.span is not None and self.menu.is_open

    # -- keys --------------------------------------------------------------------------

    def key(self, key: str) -> bool:
        """Handle ``key`` if the menu is open and takes it; True when handled."""
        if not self.is_open:
            return False
        if key in ("up", "down"):
            self.menu.move(-1 if key == "up" else 1)
            return True
        if key == "escape":
            self._dismissed = self.prompt.text
            self.close()
            return True
        if key in ("tab", "enter"):
            # Keys typed just before may not have reached update() yet (their Changed
            # messages queue behind this key): follow the text as it is now, and never
            # accept an item shown for an older query.
            self.update()
            if not self.is_open or self.span is None or self.shown_query != self.span.query:
                if key == "tab":
                    return True  # the items for this text have not come yet
                self.close()
                return False  # Enter sends what was typed (a command is run as typed)
            item = self.menu.current
            if item is None:
                if key == "tab":
                    return True  # nothing to complete
                self.close()
                return False  # Enter sends what was typed (an unknown command is reported)
            self.accept(item, enter=key == "enter")
            return True
        return False

    def accept(self, item: Suggestion, *, enter: bool) -> None:
        span = self.span
        if span is None:
            return
        done = self.sources[span.kind].accept(item, enter=enter)
        lines = self.prompt.text.split("\n")
        line = lines[span.row]
        lines[span.row] = line[: span.start] + done.text + line[span.end :]
        self.close()
        self.prompt.text = "\n".join(lines)
        self.prompt.move_cursor((span.row, span.start + len(done.text)))
        if done.submit:
            self.prompt.action_submit()
        else:
            self.update()
