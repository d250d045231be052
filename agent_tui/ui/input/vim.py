"""Vim mode in the input: normal, insert and visual modes over the prompt's TextArea.

``/vim`` toggles it, ``editorMode: "vim"`` in the settings starts in it. :class:`Vim`
takes the keys it owns and hands back the rest (Enter still sends, Ctrl+... keys keep
their jobs). What it knows, as people use it daily:

- motions ``h j k l w b e 0 ^ $ gg G``, each with a count (``3w``);
- insert ``i a I A o O``; Esc leaves insert mode;
- ``x dd cc yy D C p P u`` (Ctrl+R redoes), operators ``d c y`` with a motion
  (``dw cw d$ 2dd y2j``); ``cw`` changes to the end of the word, as in Vim;
- ``v`` visual mode: motions extend the selection, ``d x y c`` act on it.

Esc is the stop key. In insert mode it leaves insert mode; on an empty input it goes on
to the app as well, so a lone Esc interrupts a running turn in either mode. In normal
mode Esc clears a pending operator or count, else it is the app's (interrupt, and
Esc Esc rewind) exactly as without vim mode.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any, Protocol

Location = tuple[int, int]
MAX_COUNT = 1000  # a count typed by mistake (99999999p) must not fill the memory


class VimMode(StrEnum):
    INSERT = "insert"
    NORMAL = "normal"
    VISUAL = "visual"


class VimArea(Protocol):
    """What vim mode edits (a Textual TextArea)."""

    @property
    def text(self) -> str: ...
    @property
    def cursor_location(self) -> Location: ...
    @property
    def selection(self) -> Any: ...
    @property
    def history(self) -> Any: ...
    def move_cursor(self, location: Location, select: bool = False) -> None: ...
    def replace(self, insert: str, start: Location, end: Location, *, maintain_selection_offset: bool = True) -> object: ...
    def undo(self) -> None: ...
    def redo(self) -> None: ...


def _offset(text: str, loc: Location) -> int:
    lines = text.split("\n")
    row = min(loc[0], len(lines) - 1)
    return sum(len(line) + 1 for line in lines[:row]) + min(loc[1], len(lines[row]))


def _location(text: str, offset: int) -> Location:
    before = text[:max(0, min(offset, len(text)))]
    row = before.count("\n")
    return row, len(before) - (before.rfind("\n") + 1)


def _kind(ch: str) -> int:
    """0 blank, 1 word character, 2 punctuation (Vim's word classes)."""
    if ch.isspace():
        return 0
    return 1 if ch.isalnum() or ch == "_" else 2


def word_forward(text: str, at: int) -> int:
    """``w``: the start of the next word."""
    n = len(text)
    if at < n and _kind(text[at]):
        kind = _kind(text[at])
        while at < n and _kind(text[at]) == kind:
            at += 1
    while at < n and not _kind(text[at]):
        at += 1
    return at


def word_end(text: str, at: int) -> int:
    """``e``: the last character of this word or the next."""
    n = len(text)
    at += 1
    while at < n and not _kind(text[at]):
        at += 1
    if at >= n:
        return max(0, n - 1)
    kind = _kind(text[at])
    while at + 1 < n and _kind(text[at + 1]) == kind:
        at += 1
    return at


def word_back(text: str, at: int) -> int:
    """``b``: the start of this word or the one before."""
    at -= 1
    while at > 0 and not _kind(text[at]):
        at -= 1
    if at <= 0:
        return 0
    kind = _kind(text[at])
    while at > 0 and _kind(text[at - 1]) == kind:
        at -= 1
    return at


class Vim:
    """The state of vim mode: the mode, a pending count and operator, the register."""

    def __init__(self, on_mode: Callable[[VimMode], None] = lambda _mode: None) -> None:
        self.mode = VimMode.INSERT
        self.on_mode = on_mode
        self.register = ""
        self.linewise = False  # the register holds whole lines
        self._count = ""
        self._pending = ""  # an operator (d c y) and/or g, waiting for the rest
        self._anchor = 0  # visual mode: where the selection started (an offset)
        self._visual_at = 0  # visual mode: the character the cursor is on (an offset)

    def set_mode(self, mode: VimMode) -> None:
        self.mode = mode
        self._count = self._pending = ""
        self.on_mode(mode)

    # -- keys ---------------------------------------------------------------------

    def key(self, area: VimArea, key: str, character: str | None) -> bool:
        """Act on one key; True when vim mode took it."""
        if self.mode is VimMode.INSERT:
            if key != "escape":
                return False
            self.set_mode(VimMode.NORMAL)
            row, col = area.cursor_location
            area.move_cursor((row, max(0, col - 1)))
            return bool(area.text)  # on an empty input Esc goes on to the app
        if key == "escape":
            if self.mode is VimMode.VISUAL:
                self.set_mode(VimMode.NORMAL)
                area.move_cursor(area.cursor_location)
                return True
            busy = bool(self._count or self._pending)
            self._count = self._pending = ""
            return busy
        if key == "ctrl+r":
            area.redo()
            return True
        if character is None or not character.isprintable() or len(character) != 1:
            return False  # Enter, arrows, Ctrl+... keep their jobs
        self._normal(area, character)
        return True

    def _normal(self, area: VimArea, ch: str) -> None:
        if ch.isdigit() and (self._count or ch != "0") and not self._pending.endswith("g"):
            self._count += ch
            return
        count = min(int(self._count or "1"), MAX_COUNT)
        explicit = bool(self._count)
        text = area.text
        here = _offset(text, area.cursor_location)
        if self.mode is VimMode.VISUAL:
            here = self._visual_at
        area.history.checkpoint()  # each command is one step for u
        if self._pending.endswith("g"):
            self._pending = self._pending[:-1]
            if ch != "g":
                self._count = self._pending = ""
                return
            ch = "gg"
        elif ch == "g":
            self._pending += "g"
            return
        operator = self._pending
        if operator and ch == operator:  # dd cc yy
            self._count = self._pending = ""
            self._lines(area, operator, count)
            return
        target = self._motion(text, here, ch, count, explicit)
        if target is not None:
            self._count = ""
            if operator:
                self._pending = ""
                self._operate(area, operator, here, target, ch, count)
            elif self.mode is VimMode.VISUAL:
                self._select(area, text, target)
            else:
                area.move_cursor(_location(text, self._rest(text, target)))
            return
        self._count = self._pending = ""
        if self.mode is VimMode.VISUAL:
            self._visual_command(area, ch)
        else:
            self._command(area, ch, here, count)

    def _motion(self, text: str, at: int, ch: str, count: int, explicit: bool) -> int | None:
        row, col = _location(text, at)
        lines = text.split("\n")
        start = at - col
        end = start + len(lines[row])
        match ch:
            case "h":
                return max(start, at - count)
            case "l":
                return min(end, at + count)
            case "0":
                return start
            case "^":
                return start + len(lines[row]) - len(lines[row].lstrip())
            case "$":
                return end
            case "j" | "k":
                new = min(len(lines) - 1, row + count) if ch == "j" else max(0, row - count)
                return _offset(text, (new, col))
            case "G" | "gg":
                default = len(lines) - 1 if ch == "G" else 0
                return _offset(text, (min(count - 1, len(lines) - 1) if explicit else default, 0))
        step = {"w": word_forward, "e": word_end, "b": word_back}.get(ch)
        if step is None:
            return None
        for _ in range(count):
            at = step(text, at)
        return at

    def _rest(self, text: str, at: int) -> int:
        """Normal mode rests on a character, never past a line's end."""
        row, col = _location(text, at)
        line = text.split("\n")[row]
        return at - 1 if line and col >= len(line) else at

    def _select(self, area: VimArea, text: str, target: int) -> None:
        self._visual_at = target
        if target >= self._anchor:  # the selection includes the character under the cursor
            area.move_cursor(_location(text, self._anchor))
            area.move_cursor(_location(text, min(len(text), target + 1)), select=True)
        else:
            area.move_cursor(_location(text, self._anchor + 1))
            area.move_cursor(_location(text, target), select=True)

    # -- edits ----------------------------------------------------------------------

    def _cut(self, area: VimArea, start: int, end: int, *, keep: bool = False,
             linewise: bool = False) -> None:
        text = area.text
        self.register, self.linewise = text[start:end], linewise
        if not keep:
            area.replace("", _location(text, start), _location(text, end))
        after = area.text
        area.move_cursor(_location(after, self._rest(after, start) if self.mode is not VimMode.INSERT
                                   else start))

    def _lines(self, area: VimArea, operator: str, count: int) -> None:
        text = area.text
        lines = text.split("\n")
        row = area.cursor_location[0]
        last = min(len(lines) - 1, row + count - 1)
        start = _offset(text, (row, 0))
        end = _offset(text, (last, len(lines[last])))
        if operator == "c":
            self._cut(area, start, end, linewise=True)
            self.set_mode(VimMode.INSERT)
            return
        if operator == "y":
            self.register, self.linewise = text[start:end] + "\n", True
            return
        self.register, self.linewise = text[start:end] + "\n", True
        if end < len(text):
            end += 1  # the newline after the last line goes too
        elif start > 0:
            start -= 1  # the last line: the newline before it
        area.replace("", _location(text, start), _location(text, end))
        after = area.text
        new_row = min(row, after.count("\n"))
        area.move_cursor((new_row, 0))

    def _operate(self, area: VimArea, operator: str, here: int, target: int, motion: str,
                 count: int) -> None:
        text = area.text
        if motion in ("j", "k", "G", "gg"):  # linewise
            first, last = sorted((_location(text, here)[0], _location(text, target)[0]))
            area.move_cursor((first, 0))
            self._lines(area, operator, last - first + 1)
            return
        if operator == "c" and motion == "w" and here < len(text) and _kind(text[here]):
            target = here  # cw: to the end of the word, as ce
            for _ in range(count):
                target = word_end(text, target)
            motion = "e"
        if motion == "w":  # dw stops at the end of the line
            line_end = text.find("\n", here)
            if line_end != -1 and target > line_end:
                target = line_end
        start, end = sorted((here, target))
        if motion == "e":
            end += 1  # inclusive
        if operator == "y":
            self._cut(area, start, end, keep=True)
            return
        if operator == "c":
            self.set_mode(VimMode.INSERT)
        self._cut(area, start, end)

    def _command(self, area: VimArea, ch: str, here: int, count: int) -> None:
        text = area.text
        row, col = area.cursor_location
        line = text.split("\n")[row]
        match ch:
            case "i":
                self.set_mode(VimMode.INSERT)
            case "a":
                self.set_mode(VimMode.INSERT)
                area.move_cursor((row, min(len(line), col + 1)))
            case "I" | "A":
                self.set_mode(VimMode.INSERT)
                area.move_cursor((row, 0 if ch == "I" else len(line)))
            case "o" | "O":
                self.set_mode(VimMode.INSERT)
                at = (row, len(line)) if ch == "o" else (row, 0)
                area.replace("\n", at, at)
                area.move_cursor((row + 1, 0) if ch == "o" else (row, 0))
            case "x":
                if line:
                    self._cut(area, here, min(here + count, here - col + len(line)))
            case "D" | "C":
                if ch == "C":
                    self.set_mode(VimMode.INSERT)
                self._cut(area, here, here - col + len(line))
            case "d" | "c" | "y":
                self._pending = ch
                self._count = str(count) if count > 1 else ""
            case "p" | "P":
                self._put(area, ch == "p", count)
            case "u":
                for _ in range(count):
                    area.undo()
            case "v":
                self._anchor = here
                self.set_mode(VimMode.VISUAL)
                self._select(area, text, here)

    def _visual_command(self, area: VimArea, ch: str) -> None:
        text = area.text
        start, end = sorted(_offset(text, at) for at in area.selection)
        match ch:
            case "d" | "x" | "c":
                self.set_mode(VimMode.INSERT if ch == "c" else VimMode.NORMAL)
                self._cut(area, start, end)
            case "y":
                self.set_mode(VimMode.NORMAL)
                self._cut(area, start, end, keep=True)
            case "v":
                self.set_mode(VimMode.NORMAL)
                area.move_cursor(_location(text, start))

    def _put(self, area: VimArea, after: bool, count: int) -> None:
        if not self.register:
            return
        text = area.text
        row, col = area.cursor_location
        lines = text.split("\n")
        if self.linewise:
            body = self.register.rstrip("\n")
            block = "\n".join([body] * count)
            if after:
                at = (row, len(lines[row]))
                area.replace("\n" + block, at, at)
                area.move_cursor((row + 1, 0))
            else:
                area.replace(block + "\n", (row, 0), (row, 0))
                area.move_cursor((row, 0))
            return
        at = (row, min(len(lines[row]), col + 1)) if after and lines[row] else (row, col)
        area.replace(self.register * count, at, at)
        end = _offset(area.text, at) + len(self.register) * count - 1
        area.move_cursor(_location(area.text, max(0, end)))
