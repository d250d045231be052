"""Words written as a shell writes them: quoted (``'my file.png'``, ``"my file.png"``)
or with backslash escapes (``my\\ file.png``, as a terminal pastes a dragged file).

One grammar for the image paths a message names (``files/image_paths.py``) and the
``@`` mentions of the TUI's picker (``ui/input/attachments.py``, ``ui/input/completion.py``): the
patterns are built here, a match is read back with :func:`word`, and a path is written
with :func:`escape` so that it reads back as itself.
"""

from __future__ import annotations

import re

_ESCAPED = re.compile(r"\\(.)")
_SPECIAL = re.compile(r"([\s\\'\"])")  # what a bare word must escape to read back as itself


def quoted(tail: str = "") -> str:
    """A quoted word whose text ends with the pattern ``tail``: groups ``single`` and
    ``double`` (alternatives; wrap the result in a group to combine it)."""
    return rf"'(?P<single>[^'\n]+?{tail})'|\"(?P<double>[^\"\n]+?{tail})\""


def bare(tail: str = "", *, not_first: str = "", not_after: str = "") -> str:
    """A word with backslash escapes (group ``bare``): no unescaped whitespace or
    backslash, nor the characters ``not_first`` (a regex class body) at its start or
    ``not_after`` after it. With a ``tail`` it ends at the first place the tail fits."""
    more = "*?" if tail else "*"
    return rf"(?P<bare>(?:\\.|[^\s\\{not_first}])(?:\\.|[^\s\\{not_after}]){more}{tail})"


def word(match: re.Match[str]) -> str:
    """The word a match of :func:`quoted` / :func:`bare` wrote: unquoted, unescaped."""
    if match["bare"] is not None:
        return _ESCAPED.sub(r"\1", match["bare"])
    return match["single"] if match["single"] is not None else match["double"]


def escape(text: str) -> str:
    """``text`` as a bare word: whitespace, backslashes and quotes escaped."""
    return _SPECIAL.sub(r"\\\1", text)


_WORD = re.compile(rf"{quoted()}|{bare()}")
# A word being typed, up to the cursor: a quote not closed yet, or escapes so far (a
# backslash at the very end waits for the character it escapes).
_PARTIAL = re.compile(
    r"(?:'(?P<single>[^'\n]*)|\"(?P<double>[^\"\n]*)"
    r"|(?P<bare>(?:(?:\\.|[^\s\\'\"])(?:\\.|[^\s\\])*)?)\\?)\Z"
)


def partial(text: str) -> str | None:
    """What a word that ``text`` ends in says so far (``None``: ``text`` does not end
    in one it could still be: a closed quote)."""
    match = _PARTIAL.match(text)
    return None if match is None else word(match)


def word_end(line: str, start: int) -> int:
    """Where the word starting at ``start`` of ``line`` ends (``start`` when none does)."""
    match = _WORD.match(line, start)
    if match is None:
        return start
    if match["bare"] is None or not line.startswith(("'", '"'), start):
        return match.end()
    # An unclosed quote: the word runs to the next whitespace.
    end = start
    while end < len(line) and not line[end].isspace():
        end += 1
    return end
