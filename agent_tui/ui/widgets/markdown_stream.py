"""Streamed Markdown cut into pieces that are rendered once.

Model text arrives a few characters at a time. Rendering all of it again on every
flush would cost more the longer the answer grows, so :class:`MarkdownStream` cuts it:
text up to the last blank line outside a code fence is *settled* (handed out once, as
a :class:`Piece`, to be rendered once); only the live tail after it is rendered again
on each flush (and, inside an open code fence, without syntax colours until the fence
is closed). Text is settled only where Markdown starts a new block, so the pieces
together look like the whole text rendered at once; only a paragraph or code block
longer than ``LIVE_LIMIT`` is split at a line end (a code block is closed there and
opened again after).

Pure text in, pieces out: no rendering here (see ``transcript_blocks.TextBlock``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Past this many characters the live tail is settled at a line end even inside a
# paragraph, so that a flush costs the same however long the answer grows.
LIVE_LIMIT = 2000

# A fence line (CommonMark): up to 3 spaces, then ``` or ~~~ (3 or more), then an
# info string (no backtick in it for a backtick fence).
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})([^\n]*)$")

# Where text may be settled: after a blank line, at a line that starts a paragraph,
# a heading or a code fence, and not after a table or a rule. Lists, quotes, tables
# and rules render with blank lines of their own (and an indented line or a list
# item may continue the list above), so they stay in one piece with their
# neighbours: then the pieces look like the whole text rendered at once.
_STARTS_PLAIN_BLOCK = re.compile(r"(?!\d+[.)](\s|$)|[-*+](\s|$)|[>|<]|([-*_])\s*\3\s*\3)[^\s]")
_ENDS_WITH_RULE = re.compile(r"\s*([|]|([-*_])\s*\2\s*\2)")


@dataclass(frozen=True)
class Piece:
    """Settled Markdown, rendered once; ``gap``: a blank line before it."""

    source: str
    gap: bool


@dataclass(frozen=True)
class LiveTail:
    """The unsettled end of the text, as it should be rendered now ("" when none)."""

    source: str
    gap: bool  # a blank line between the settled pieces and this tail


class MarkdownStream:
    def __init__(self, live_limit: int = LIVE_LIMIT) -> None:
        self.live_limit = live_limit
        self.text = ""  # all of it
        self.ended = False
        self._settled: list[Piece] = []  # pieces not yet taken
        self._any_settled = False
        self._done = 0  # text[:_done] is settled
        self._reopen = ""  # a fence line the live tail continues (split inside a fence)
        self._joined = False  # the live tail continues the settled piece before it
        # The line scanner: lines of text[:_scan] are scanned.
        self._scan = 0
        self._fence: str | None = None  # the open fence's marker (``` or ~~~~ ...)
        self._fence_line = ""  # and its line
        self._fence_at = -1  # where that line starts in text (-1: before _done)
        self._prev_blank = False
        self._prev_line = ""  # the last line that was not blank
        self._boundary = 0  # the latest block start after a blank line, outside fences

    def append(self, text: str) -> None:
        self.text += text

    def end(self) -> None:
        """No more text: the tail renders as settled text would (code in colour)."""
        self.ended = True

    def advance(self) -> tuple[list[Piece], LiveTail]:
        """Settle what can be settled; the new pieces, and the live tail to show."""
        self._scan_lines()
        if self._boundary > self._done:
            self._settle(self._boundary, joined_after=False)
        if len(self._reopen) + len(self.text) - self._done > self.live_limit:
            self._split_long_tail()
        pieces, self._settled = self._settled, []
        return pieces, self._live()

    # -- settling ------------------------------------------------------------------

    def _scan_lines(self) -> None:
        text = self.text
        end = text.rfind("\n") + 1  # only whole lines
        i = self._scan
        while i < end:
            j = text.index("\n", i)
            line = text[i:j]
            if self._fence is not None:
                close = line.strip()
                if close.startswith(self._fence) and close.strip(self._fence[0]) == "" \
                        and len(line) - len(line.lstrip(" ")) < 4:
                    self._fence = None
                self._prev_blank = False
            elif not line.strip():
                self._prev_blank = True
            else:
                if self._prev_blank and _STARTS_PLAIN_BLOCK.match(line) \
                        and not _ENDS_WITH_RULE.match(self._prev_line):
                    self._boundary = i
                self._prev_blank = False
                self._prev_line = line
                match = _FENCE.match(line)
                if match and not (match[1][0] == "`" and "`" in match[2]):
                    self._fence, self._fence_line, self._fence_at = match[1], line, i
            i = j + 1
        self._scan = end

    def _split_long_tail(self) -> None:
        """Settle a tail longer than the limit at its last line end (a long paragraph
        or code block); a code block is closed there and opened again after."""
        text = self.text
        cut = self._scan
        if cut <= self._done:  # no line end: cut a paragraph at a space, else anywhere
            if self._fence is not None:
                return
            space = text.rfind(" ", self._done, len(text) - 1)
            cut = space + 1 if space >= self._done else self._done + self.live_limit
        if self._fence is not None:
            marker = self._fence
            self._settle(cut, joined_after=True, suffix=marker[0] * len(marker) + "\n")
            self._reopen = self._fence_line + "\n"
            self._fence_at = -1
        else:  # after a blank line the next block starts anyway: no join
            self._settle(cut, joined_after=not text.endswith("\n\n", 0, cut))

    def _settle(self, end: int, *, joined_after: bool, suffix: str = "") -> None:
        source = self._reopen + self.text[self._done : end] + suffix
        if source.strip():
            self._settled.append(Piece(source, gap=self._any_settled and not self._joined))
            self._any_settled = True
        self._done = end
        self._reopen = ""
        self._joined = joined_after
        if self._fence_at < end:
            self._fence_at = -1

    def _live(self) -> LiveTail:
        source = self._reopen + self.text[self._done :]
        if not source.strip():
            return LiveTail("", gap=False)
        gap = self._any_settled and not self._joined
        if self._fence is not None and not self.ended:
            # An open code block: no syntax colours until it is closed (colouring
            # costs far more than the rest of a render).
            line = self._fence_line
            plain = line[: len(line) - len(line.lstrip(" "))] + self._fence
            if self._fence_at >= 0:
                at = len(self._reopen) + self._fence_at - self._done
                source = source[:at] + plain + source[at + len(line) :]
            else:
                source = plain + source[len(line) :]
        return LiveTail(source, gap=gap)
