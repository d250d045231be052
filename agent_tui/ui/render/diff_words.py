"""Which words changed inside a changed line: the removed and added lines of one change
are paired in order, and each pair compared word by word. A pair with little in
common is a new line, not an edited one: no words are marked in it."""

from __future__ import annotations

import difflib
import re

Spans = tuple[tuple[int, int], ...]

_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")
MIN_SHARED = 0.4  # below this share of common text, a pair is not an edit of one line


def _tokens(line: str) -> list[str]:
    return _TOKEN.findall(line)


def _spans(tokens: list[str], ranges: list[tuple[int, int]]) -> Spans:
    """Character spans of the token ranges (merged where they touch)."""
    starts = [0]
    for token in tokens:
        starts.append(starts[-1] + len(token))
    spans: list[tuple[int, int]] = []
    for a, b in ranges:
        if a == b:
            continue
        start, end = starts[a], starts[b]
        if spans and spans[-1][1] == start:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return tuple(spans)


def line_pair(old: str, new: str) -> tuple[Spans, Spans]:
    """The changed words of ``old`` and of ``new`` (none when they share little)."""
    a, b = _tokens(old), _tokens(new)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if matcher.ratio() < MIN_SHARED:
        return (), ()
    gone: list[tuple[int, int]] = []
    come: list[tuple[int, int]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            gone.append((i1, i2))
            come.append((j1, j2))
    return _spans(a, gone), _spans(b, come)


def changed_spans(gone: list[str], come: list[str]) -> tuple[list[Spans], list[Spans]]:
    """For one change (lines removed, lines added): each line's changed words."""
    old: list[Spans] = [()] * len(gone)
    new: list[Spans] = [()] * len(come)
    for k in range(min(len(gone), len(come))):
        old[k], new[k] = line_pair(gone[k], come[k])
    return old, new
